"""``Unfold(kernel)``: a state-space chain (Gen's Unfold).

``Unfold(kernel)(n, init_state, *params)`` runs ``state_t = kernel(t, state_{t-1}, *params)``
for ``t = 1..n`` (``state_0 = init_state``), step ``t``'s choices at address ``t``, and returns
the list of states. ``update`` visits only constrained steps and the steps after them while the
state keeps changing (all steps when a parameter changes); extending the chain by ``k`` steps
makes ``k`` kernel calls (the particle-filter case).
"""
from __future__ import annotations

from ..address import as_address
from ..choicemap import ChoiceMap
from ..execution import NO_CHANGE, UNKNOWN
from ..generative import default_rng
from ..runtime import GenError, prefixed
from .interned import KernelCombinator
from .vector import VectorTrace, check_keys, element_changed, retdiff_of, value_changed

__all__ = ["Unfold"]


def _add(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b


class Unfold(KernelCombinator):
    """Gen's ``Unfold`` combinator over ``kernel(t, state, *params) -> new_state``."""

    def _n(self, args) -> int:
        if len(args) < 2:
            raise GenError(f"{self!r} takes (n, init_state, *params), got {len(args)} arguments")
        n = args[0]
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise GenError(f"{self!r}: the number of steps must be an int >= 0, got {n!r}")
        return n

    def _run(self, args, constraints, rng, store, subs, retval, start):
        """Generate steps ``start..n`` after ``subs``; ``-> (weight, score)``."""
        weight = score = 0.0
        params = args[2:]
        for t in range(start, args[0] + 1):
            state = args[1] if t == 1 else retval[t - 2]
            with prefixed(as_address(t)):
                sub, w = self.kernel.generate((t, state, *params), constraints.get_submap(t),
                                              rng=rng, store=store)
            subs.append(sub)
            retval.append(sub.get_retval())
            weight += w
            score += sub.get_score()
        return weight, score

    def simulate(self, args, rng=None, store=None):
        trace, _ = self.generate(args, ChoiceMap(), rng, store)
        return trace

    def generate(self, args, constraints, rng=None, store=None):
        n = self._n(args)
        check_keys(constraints, n, self, "generate")
        subs, retval = [], []
        weight, score = self._run(args, constraints, rng or default_rng(), store, subs, retval, 1)
        return VectorTrace(self, args, subs, retval, score, store), weight

    def _steps(self, trace, args, argdiffs, keys):
        """Steps to visit: ``(params_changed, init_changed, sorted steps)``."""
        prev = trace.args
        params_changed = any(element_changed(d, 0, a, b) for d, a, b in
                             zip(argdiffs[2:], args[2:], prev[2:]))
        init_changed = element_changed(argdiffs[1], 0, args[1], prev[1])
        m = min(args[0], len(trace))
        if params_changed:
            return True, init_changed, list(range(1, m + 1))
        if keys is None:
            return False, init_changed, list(range(1, m + 1))
        return False, init_changed, sorted(k for k in keys if k <= m)

    def _revisit(self, trace, args, argdiffs, keys, visit):
        """Walk the kept steps: listed ones and those after a changed state.
        ``visit(t, prev_sub, new_args, diffs) -> new_sub``; ``-> (subs, retval, changed)``."""
        params_changed, init_changed, pending = self._steps(trace, args, argdiffs, keys)
        n, m = args[0], min(args[0], len(trace))
        subs, retval = list(trace.subtraces[:n]), list(trace.retval[:n])
        pdiffs = tuple(UNKNOWN if params_changed else NO_CHANGE for _ in args[2:])
        chain = 1 if init_changed else None
        k, changed = 0, {}
        while True:
            t = min([x for x in (chain, pending[k] if k < len(pending) else None)
                     if x is not None], default=None)
            if t is None or t > m:
                break
            state_changed = chain == t
            while k < len(pending) and pending[k] <= t:
                k += 1
            state = args[1] if t == 1 else retval[t - 2]
            prev = subs[t - 1]
            diffs = (NO_CHANGE, UNKNOWN if state_changed else NO_CHANGE, *pdiffs)
            with prefixed(as_address(t)):
                sub = visit(t, prev, (t, state, *args[2:]), diffs)
            subs[t - 1], retval[t - 1] = sub, sub.get_retval()
            chain = None
            if value_changed(sub.get_retval(), prev.get_retval()):
                changed[t] = True
                chain = t + 1
        return subs, retval, changed

    def update(self, trace, args, argdiffs, constraints, rng=None):
        rng, n, prev_n = rng or default_rng(), self._n(args), len(trace)
        check_keys(constraints, n, self, "update")
        keys = [k for k, _ in constraints.get_submaps_shallow()]
        acc = {"w": 0.0, "s": trace.score}
        discard = ChoiceMap()

        def visit(t, prev, new_args, diffs):
            sub, w, _, disc = self.kernel.update(prev, new_args, diffs,
                                                 constraints.get_submap(t), rng)
            acc["w"] += w
            acc["s"] += sub.get_score() - prev.get_score()
            if not disc.is_empty():
                discard.set_submap(t, disc)
            return sub

        subs, retval, changed = self._revisit(trace, args, argdiffs, keys, visit)
        for t in range(n + 1, prev_n + 1):
            prev = trace.subtraces[t - 1]
            acc["w"] -= prev.get_score()
            acc["s"] -= prev.get_score()
            if not prev.get_choices().is_empty():
                discard.set_submap(t, prev.get_choices())
        w, s = self._run(args, constraints, rng, trace.store, subs, retval, prev_n + 1)
        new = VectorTrace(self, args, subs, retval, acc["s"] + s, trace.store)
        return new, acc["w"] + w, retdiff_of(changed, n, prev_n), discard

    def regenerate(self, trace, args, argdiffs, selection, rng=None):
        rng, n, prev_n = rng or default_rng(), self._n(args), len(trace)
        addrs = selection.addresses()
        keys = None if addrs is None else [a[0] for a in map(as_address, addrs) if len(a)]
        if keys is not None and any(not isinstance(k, int) for k in keys):
            keys = None
        acc = {"w": 0.0, "s": trace.score}

        def visit(t, prev, new_args, diffs):
            sub, w, _ = self.kernel.regenerate(prev, new_args, diffs, selection[t], rng)
            acc["w"] += w
            acc["s"] += sub.get_score() - prev.get_score()
            return sub

        subs, retval, changed = self._revisit(trace, args, argdiffs, keys, visit)
        for t in range(n + 1, prev_n + 1):
            acc["s"] -= trace.subtraces[t - 1].get_score()
        _, s = self._run(args, ChoiceMap(), rng, trace.store, subs, retval, prev_n + 1)
        new = VectorTrace(self, args, subs, retval, acc["s"] + s, trace.store)
        return new, acc["w"], retdiff_of(changed, n, prev_n)

    def _backward(self, trace, retgrad, step):
        """Reverse sweep: the state adjoint flows from step t to t-1; ``-> arg_grads``."""
        carried, pgrads = None, [None] * (len(trace.args) - 2)
        for t in range(len(trace), 0, -1):
            rg = _add(None if retgrad is None else retgrad[t - 1], carried)
            ag = step(t, trace.subtraces[t - 1], rg)
            carried = ag[1] if ag is not None and len(ag) > 1 else None
            for j in range(len(pgrads)):
                pgrads[j] = _add(pgrads[j], ag[2 + j] if ag is not None else None)
        return (None, carried, *pgrads)

    def choice_gradients(self, trace, selection, retgrad):
        values, grads = ChoiceMap(), ChoiceMap()

        def step(t, sub, rg):
            ag, v, g = self.kernel.choice_gradients(sub, selection[t], rg)
            if not v.is_empty():
                values.set_submap(t, v)
                grads.set_submap(t, g)
            return ag

        return self._backward(trace, retgrad, step), values, grads

    def accumulate_param_gradients(self, trace, retgrad, scale=1.0):
        return self._backward(
            trace, retgrad,
            lambda t, sub, rg: self.kernel.accumulate_param_gradients(sub, rg, scale))
