"""Base handlers: one per GFI operation, each the semantics of ``dist @ addr`` and
``gf(args) @ addr`` for one run of a ``@gen`` function (Gen's dynamic-DSL states).

Every base handler keeps the new trace's ``entries`` (program order), ``score`` and ``weight``.
``update``/``regenerate`` start ``score`` at the previous trace's score and add, per choice,
``new - old`` log density in program order (``incremental`` adds the same nonzero terms in the
same order, so both give bit-identical results).
"""
from __future__ import annotations

from .choicemap import EMPTY, ChoiceMap
from .runtime import GenError, prefixed, user_location
from .trace import ChoiceRecord

__all__ = ["Execution", "Simulate", "Generate", "Assess", "Update", "Regenerate", "draw",
           "logpdf", "same_args"]


def draw(dist, rng):
    """A draw of ``dist`` as a Python scalar when it is one (else an array)."""
    fast = getattr(dist, "gen_sample", None)
    if fast is not None:
        v = fast(rng)
        if v is not None:
            return v
    v = dist.sample(rng)
    return v.item() if v.ndim == 0 else v


def logpdf(dist, value) -> float:
    """``dist``'s log density at ``value`` as a float (scalar fast path when it has one)."""
    fast = getattr(dist, "gen_logpdf", None)
    if fast is not None:
        return fast(value)
    return float(dist.logpdf(value))


def same_args(a: tuple, b: tuple) -> bool:
    """Are the argument tuples the same objects (or equal scalars)?"""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is y:
            continue
        if type(x) in (float, int, bool, str) and type(y) is type(x) and x == y:
            continue
        return False
    return True


class Execution:
    """Common bookkeeping; subclasses define ``choose`` and ``subcall``."""

    def __init__(self, gen_fn, rng, store, score=0.0):
        self.gen_fn, self.rng, self.store = gen_fn, rng, store
        self.entries: dict = {}
        self.score = score
        self.weight = 0.0

    def choice(self, addr, dist, msg):
        if addr in self.entries:
            raise GenError(f"address {addr} is used twice in one run of {self.gen_fn!r} "
                           f"(at {user_location(2)})")
        if msg is None:
            value, lp = self.choose(addr, dist, None, None, 1.0)
        else:
            value, lp = self.choose(addr, dist, msg.value if msg.has_value else None,
                                    msg.constrained if msg.has_value else None, msg.scale)
            msg.logpdf = lp
        self.entries[addr] = ChoiceRecord(value, dist, lp, 1.0 if msg is None else msg.scale)
        return value

    def call(self, addr, gen_fn, args, msg):
        if addr in self.entries:
            raise GenError(f"address {addr} is used twice in one run of {self.gen_fn!r} "
                           f"(at {user_location(2)})")
        with prefixed(addr):
            sub = self.subcall(addr, gen_fn, args)
        self.entries[addr] = sub
        return sub.get_retval()

    def param(self, name):
        try:
            return self.store.get_param(self.gen_fn, name)
        except GenError as exc:
            raise GenError(f"{exc} (at {user_location(2)})") from None

    def preset(self, dist, value, constrained, scale) -> tuple:
        """A value a messenger gave: weighted when it is a constraint."""
        lp = scale * logpdf(dist, value)
        self.score += lp
        if constrained:
            self.weight += lp
        return value, lp

    def finish(self) -> None:
        """Checks after the run (unvisited constraints, removed choices)."""

    def replaced(self, addr, prev) -> None:
        """The previous entry at ``addr`` leaves the trace (not visited, or replaced by one of
        another kind): out of the score; for ``update`` also out of the weight, into discard."""
        old = prev.score if type(prev) is ChoiceRecord else prev.get_score()
        self.score -= old
        discard = getattr(self, "discard", None)
        if discard is not None:
            self.weight -= old
            if type(prev) is ChoiceRecord:
                discard.set_value(addr, prev.value)
            elif not prev.get_choices().is_empty():
                discard.set_submap(addr, prev.get_choices())

    def previous_choice(self, addr):
        """The previous trace's choice at ``addr`` (``update``, ``regenerate``), or None: an
        entry of another kind leaves the trace first (``replaced``)."""
        prev = self.prev.get(addr)
        if prev is not None and type(prev) is not ChoiceRecord:
            self.replaced(addr, prev)
            return None
        return prev

    def rescored(self, prev, lp: float, weighed: bool, constrained) -> None:
        """A choice now scored ``lp`` in place of ``prev`` (``previous_choice``): the score
        moves by the change, and so does the weight when ``weighed``; a new choice adds
        ``lp``, to the weight too when ``constrained``."""
        if prev is not None:
            delta = lp - prev.score
            self.score += delta
            if weighed:
                self.weight += delta
        else:
            self.score += lp
            if constrained:
                self.weight += lp

    def generated(self, addr, prev, gen_fn, args, constraints):
        """A new sub-trace at ``addr`` by ``gen_fn.generate`` under ``constraints``, counted
        into the score and weight; ``prev``, the entry it stands for (None, a choice, or a call
        of another generative function), leaves the trace first (``replaced``)."""
        if prev is not None:
            self.replaced(addr, prev)
        sub, w = gen_fn.generate(args, constraints, rng=self.rng, store=self.store)
        self.score += sub.get_score()
        self.weight += w
        return sub

    def unvisited_replaced(self) -> None:
        """The entries of the previous trace (``self.prev``) this run did not visit leave it
        (``replaced``)."""
        for addr, e in self.prev.items():
            if addr not in self.entries:
                self.replaced(addr, e)


class Simulate(Execution):
    def choose(self, addr, dist, value, constrained, scale):
        if constrained is not None:
            return self.preset(dist, value, constrained, scale)
        value = draw(dist, self.rng)
        lp = scale * logpdf(dist, value)
        self.score += lp
        return value, lp

    def subcall(self, addr, gen_fn, args):
        sub = gen_fn.simulate(args, rng=self.rng, store=self.store)
        self.score += sub.get_score()
        return sub


class Generate(Execution):
    def __init__(self, gen_fn, rng, store, constraints: ChoiceMap):
        super().__init__(gen_fn, rng, store)
        self.constraints = constraints

    def choose(self, addr, dist, value, constrained, scale):
        c = self.constraints
        if c.has_value(addr):
            value = c.get_value(addr)
            lp = scale * logpdf(dist, value)
            self.score += lp
            self.weight += lp
            return value, lp
        if constrained is not None:
            return self.preset(dist, value, constrained, scale)
        return self.sample(addr, dist, scale)

    def sample(self, addr, dist, scale):
        value = draw(dist, self.rng)
        lp = scale * logpdf(dist, value)
        self.score += lp
        return value, lp

    def subcall(self, addr, gen_fn, args):
        return self.generated(addr, None, gen_fn, args, self.constraints.get_submap(addr))

    def finish(self):
        unvisited_constraints(self.constraints, self.entries, self.gen_fn, "generate")


class Assess(Generate):
    """``assess``: every choice must be given; the weight is the log joint density."""

    def sample(self, addr, dist, scale):
        raise GenError(f"assess({self.gen_fn!r}): the choice at address {addr} is not in the "
                       f"given choices (at {user_location(3)})")

    def subcall(self, addr, gen_fn, args):
        w, retval = gen_fn.assess(args, self.constraints.get_submap(addr), store=self.store)
        self.score += w
        self.weight += w
        return _Assessed(retval, w)


class _Assessed:
    """What ``Assess`` keeps of a sub-call: its return value and weight."""

    __slots__ = ("retval", "score")

    def __init__(self, retval, score):
        self.retval, self.score = retval, score

    def get_retval(self):
        return self.retval

    def get_score(self):
        return self.score


def unvisited_constraints(constraints: ChoiceMap, entries: dict, gen_fn, op: str) -> list:
    """Raise ``GenError`` naming the first constrained address the run never visited."""
    if constraints is EMPTY:
        return []
    for addr, _ in constraints.items():
        if not any(addr[:k] in entries for k in range(1, len(addr) + 1)):
            raise GenError(f"{op}({gen_fn!r}): the constraint at address {addr} was not "
                           f"visited by the run")
    return []


class Update(Execution):
    """``update``: constrained choices take new values, others keep theirs; ``discard``."""

    def __init__(self, gen_fn, rng, store, prev, constraints: ChoiceMap):
        super().__init__(gen_fn, rng, store, prev.score)
        self.prev, self.constraints = prev.entries, constraints
        self.discard = ChoiceMap()

    def choose(self, addr, dist, value, constrained, scale):
        c, prev = self.constraints, self.previous_choice(addr)
        if c.has_value(addr):
            value, constrained = c.get_value(addr), True
        elif constrained is None:
            if prev is not None:
                value, constrained = prev.value, False
            else:
                value = draw(dist, self.rng)
        lp = scale * logpdf(dist, value)
        if constrained and prev is not None:
            self.discard.set_value(addr, prev.value)
        self.rescored(prev, lp, constrained is not None, constrained)
        return value, lp

    def subcall(self, addr, gen_fn, args):
        prev = self.prev.get(addr)
        sub_c = self.constraints.get_submap(addr)
        if prev is not None and type(prev) is not ChoiceRecord and prev.get_gen_fn() is gen_fn:
            if sub_c.is_empty() and same_args(args, prev.get_args()):
                return prev
            sub, w, _, discard = gen_fn.update(prev, args, (UNKNOWN,) * len(args), sub_c,
                                               rng=self.rng)
            self.score += sub.get_score() - prev.get_score()
            self.weight += w
            if not discard.is_empty():
                self.discard.set_submap(addr, discard)
            return sub
        return self.generated(addr, prev, gen_fn, args, sub_c)

    def finish(self):
        unvisited_constraints(self.constraints, self.entries, self.gen_fn, "update")
        self.unvisited_replaced()


class Regenerate(Execution):
    """``regenerate``: selected choices are drawn again from their distributions."""

    def __init__(self, gen_fn, rng, store, prev, selection):
        super().__init__(gen_fn, rng, store, prev.score)
        self.prev, self.selection = prev.entries, selection

    def choose(self, addr, dist, value, constrained, scale):
        prev = self.previous_choice(addr)
        kept = prev is not None and addr not in self.selection
        if constrained is None:
            value = prev.value if kept else draw(dist, self.rng)
        lp = scale * logpdf(dist, value)
        self.rescored(prev, lp, kept or constrained, constrained)
        return value, lp

    def subcall(self, addr, gen_fn, args):
        prev = self.prev.get(addr)
        subsel = self.selection[addr]
        if prev is not None and type(prev) is not ChoiceRecord and prev.get_gen_fn() is gen_fn:
            if subsel.is_empty() and same_args(args, prev.get_args()):
                return prev
            sub, w, _ = gen_fn.regenerate(prev, args, (UNKNOWN,) * len(args), subsel,
                                          rng=self.rng)
            self.score += sub.get_score() - prev.get_score()
            self.weight += w
            return sub
        return self.generated(addr, prev, gen_fn, args, EMPTY)

    def finish(self):
        self.unvisited_replaced()


class _Diff:
    """An argument or return-value diff (Gen's ``NoChange`` / ``UnknownChange``)."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


NO_CHANGE = _Diff("NoChange()")
UNKNOWN = _Diff("UnknownChange()")
