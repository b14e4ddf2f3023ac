"""Incremental ``update``/``regenerate`` from the recorded tape.

The changed inputs (arguments, constrained or selected choices, sub-calls with constraints or
selections) seed a forward pass over the trace's tape in execution order: each node reached is
recomputed from its inputs' current values, and only nodes whose value changed pass the change
on. A choice whose distribution changed is re-scored; a choice's value changes only when it is
constrained or selected; a traced call whose arguments changed is updated through the GFI. The
new trace shares the tape and keeps the changed values in ``values``.

Anything the pass cannot redo exactly gives up (returns None) and the caller runs the function
again: a branch or loop exit that would go the other way, an iterator, a method call, a call of
a function not known to be pure, a container some node mutates, constraints at addresses the
run did not visit, or active messengers. Score and weight add the same per-choice terms in the
same order as the full run (``execution``), so both give bit-identical results.
"""
from __future__ import annotations

import heapq
import operator

import numpy as np

from ..dist import Distribution
from .address import Address
from .choicemap import ChoiceMap
from .execution import NO_CHANGE as _NO_CHANGE
from .execution import UNKNOWN, draw, logpdf, same_args
from .generative import GenerativeFunction, Invocation
from .runtime import state
from .selection import StaticSelection
from .tapeindex import call_site, choice_site, index_of
from .trace import ChoiceRecord, DynamicTrace

__all__ = ["try_update", "try_regenerate", "worth_trying"]

_BRANCH_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
               "==": operator.eq, "!=": operator.ne, "is": operator.is_,
               "is not": operator.is_not}
_PURE_BUILTINS = frozenset({abs, min, max, float, int, bool, round, len, sum, pow, divmod, tuple,
                            complex})
_PURE_MODULES = frozenset({"_operator", "operator", "math", "cmath"})
_IMPURE = frozenset({operator.setitem, operator.delitem})
_MUTABLE = (list, dict, set, np.ndarray)
_LAST = 1 << 60


class GiveUp(Exception):
    """The incremental pass cannot reproduce the full run; run the function again."""


def _pure(fn) -> bool:
    """Is ``fn`` known to compute its result from its arguments alone?"""
    try:
        if fn in _IMPURE:
            return False
        if fn in _PURE_BUILTINS or type(fn) is np.ufunc:
            return True
    except TypeError:          # unhashable callable
        return False
    if isinstance(fn, type):
        return issubclass(fn, Distribution)
    module = getattr(fn, "__module__", None) or ""
    if module in _PURE_MODULES:
        return True
    if module.startswith("numpy") and not module.startswith("numpy.random"):
        return True
    return getattr(fn, "__name__", "") == "build_tuple" and module.startswith("dcgraph")


def _key(node) -> tuple:
    key = node.order_key()
    return key + (_LAST,) if node.kind == "NestedCall" else key


class _Pass:
    """One incremental pass over ``trace``'s tape."""

    def __init__(self, trace, resample, rng):
        self.trace, self.rng, self.resample = trace, rng, resample
        try:
            self.index = index_of(trace)
        except Exception as exc:      # the tape could not be built: run the function again
            raise GiveUp(f"no tape: {exc!r}") from None
        self.vals = dict(trace.values)
        self.entries = dict(trace.entries)
        self.score, self.weight = trace.score, 0.0
        self.discard = ChoiceMap()
        self.heap: list = []
        self.count = 0
        self.queued: set = set()
        self.new_values: dict = {}     # choice node -> constrained value (None: resample)
        self.sub_changes: dict = {}    # call node -> sub constraints or sub-selection

    def cur(self, node):
        v = self.vals
        return v[node] if node in v else node.value

    def push(self, node) -> None:
        if node not in self.queued:
            self.queued.add(node)
            self.count += 1
            heapq.heappush(self.heap, (_key(node), self.count, node))

    def changed(self, node, value) -> None:
        self.vals[node] = value
        for u in self.index.users.get(node, ()):
            self.push(u)

    def run(self):
        heap = self.heap
        while heap:
            _, _, node = heapq.heappop(heap)
            self.queued.discard(node)
            self.visit(node)

    # -- per node kind --------------------------------------------------------------------------
    def visit(self, node) -> None:
        kind = node.kind
        if kind == "PrimitiveCall":
            fn = node.fn
            if fn is choice_site:
                self.choice(node)
            elif fn is call_site:
                self.call(node)
            else:
                self.primitive(node)
        elif kind == "Phi":
            self.changed(node, self.cur(node.source))
        elif kind == "Argument":
            src = node.source
            if not hasattr(src, "kind"):
                raise GiveUp("star arguments")
            self.changed(node, self.cur(src))
        elif kind == "Return":
            self.changed(node, self.cur(node.inputs[0]))
        elif kind == "NestedCall":
            self.changed(node, self.cur(node.child.returned))
        elif kind == "Branch":
            self.branch(node)
        else:
            raise GiveUp(kind)

    def primitive(self, node) -> None:
        fn = node.fn
        if node.fn_node is not None or node.method or node.mutates is not None:
            raise GiveUp("method or mutation")
        if isinstance(fn, GenerativeFunction):
            new = Invocation(fn, tuple(self.cur(a) for a in node.args))
            self.changed(node, new)
            return
        if not _pure(fn):
            raise GiveUp(f"{fn!r} is not known to be pure")
        args = [self.cur(a) for a in node.args]
        kwargs = {k: self.cur(a) for k, a in node.kwargs.items()}
        mutated = self.index.mutated
        for v in args:
            if isinstance(v, _MUTABLE) and id(v) in mutated:
                raise GiveUp("reads a mutated container")
        try:
            new = fn(*args, **kwargs)
        except Exception as exc:
            raise GiveUp(f"recomputation raised {exc!r}") from None
        old = self.cur(node)
        if new is old or (type(new) in (float, int, bool) and type(old) is type(new)
                          and new == old):
            return
        self.changed(node, new)

    def branch(self, node) -> None:
        op = node.op
        vals = [self.cur(i) for i in node.inputs]
        try:
            if op is None:
                truth = bool(vals[0])
            elif op == "is None":
                truth = vals[0] is None
            elif op in _BRANCH_OPS:
                truth = bool(_BRANCH_OPS[op](vals[0], vals[1]))
            else:
                raise GiveUp(f"branch {op}")
        except (TypeError, ValueError):
            raise GiveUp("branch condition") from None
        if truth != node.taken:
            raise GiveUp("branch flips")

    def choice(self, node) -> None:
        addr = _local(node.args[1].value)
        rec = self.trace.entries[addr]
        dist = self.cur(node.args[0])
        value = rec.value
        resampled = False
        if node in self.new_values:
            value = self.new_values[node]
            if value is _RESAMPLE:
                value, resampled = draw(dist, self.rng), True
            else:
                self.discard.set_value(addr, rec.value)
        lp = rec.scale * logpdf(dist, value)
        delta = lp - rec.score
        self.score += delta
        if not resampled:
            self.weight += delta
        self.entries[addr] = ChoiceRecord(value, dist, lp, rec.scale)
        if node in self.new_values:
            self.changed(node, value)

    def call(self, node) -> None:
        addr = _local(node.args[1].value)
        sub = self.trace.entries[addr]
        inv = self.cur(node.args[0])
        change = self.sub_changes.get(node)
        gf = inv.gen_fn
        if change is None and same_args(inv.args, sub.get_args()):
            return
        diffs = (UNKNOWN,) * len(inv.args)
        if self.resample:
            new, w, _ = gf.regenerate(sub, inv.args, diffs, change if change is not None
                                      else _EMPTY_SEL, rng=self.rng)
        else:
            new, w, _, discard = gf.update(sub, inv.args, diffs, change if change is not None
                                           else ChoiceMap(), rng=self.rng)
            if not discard.is_empty():
                self.discard.set_submap(addr, discard)
        self.score += new.get_score() - sub.get_score()
        self.weight += w
        self.entries[addr] = new
        if new.get_retval() is not sub.get_retval():
            self.changed(node, new.get_retval())

    # -- result ---------------------------------------------------------------------------------
    def trace_out(self, args) -> DynamicTrace:
        tr = self.trace
        ret = self.index.tape.returned
        retval = self.vals[ret] if ret is not None and ret in self.vals else tr.retval
        return DynamicTrace(tr.gen_fn, args, retval, self.entries, self.score, tr.store,
                            tr._tape, self.vals, self.index)


_RESAMPLE = object()
_EMPTY_SEL = StaticSelection()


def _local(a):
    return a if type(a) is Address else Address(*a) if isinstance(a, tuple) else Address(a)


def worth_trying(trace) -> bool:
    """Try the incremental path? Always when the trace's tape is already indexed; on a fresh
    trace (building its tape costs more than a run) unless the function's incremental passes
    mostly gave up so far (``gen_fn.stats``)."""
    stats = getattr(trace.gen_fn, "stats", None)
    if trace.index is not None or stats is None:
        return True
    if stats["gave_up"] > 3 and stats["gave_up"] > stats["incremental"]:
        stats["skipped"] += 1
        return False
    return True


def _count(trace, outcome: str, why=None) -> None:
    stats = getattr(trace.gen_fn, "stats", None)
    if stats is not None:
        stats[outcome] += 1
        if why is not None:
            stats["last_reason"] = str(why)


def _usable(trace) -> bool:
    return (type(trace) is DynamicTrace and not state.messengers
            and getattr(trace.gen_fn, "incremental", True))


def _seed_args(p: _Pass, trace, args, argdiffs) -> None:
    old = trace.args
    if len(args) != len(old):
        raise GiveUp("argument count")
    changed = [i for i, (a, b) in enumerate(zip(args, old))
               if argdiffs[i] is not _NO_CHANGE and not same_args((a,), (b,))]
    if not changed:
        return
    arguments = p.index.tape.arguments
    if len(arguments) != len(args):
        raise GiveUp("arguments")
    for i in changed:
        p.changed(arguments[i], args[i])


def _find(p: _Pass, addr):
    """The choice node at ``addr``, or ``(call node, rest)`` for an address under a call."""
    idx = p.index
    node = idx.choices.get(addr)
    if node is not None:
        return node, None
    for k in range(len(addr), 0, -1):
        node = idx.calls.get(tuple.__new__(Address, addr[:k]))
        if node is not None:
            return node, tuple.__new__(Address, addr[k:])
    raise GiveUp(f"address {addr} not in the trace")


def _targets(p: _Pass, trace, selection) -> list:
    """``(node, rest)`` for the selected choices (rest None) and calls with a sub-selection."""
    listed = selection.addresses()
    out = []
    if listed is not None:
        for a in listed:
            try:
                out.append(_find(p, a))
            except GiveUp:
                out.extend(_find(p, e) for e in trace.entries if e[:len(a)] == a)
        return out
    for a, e in trace.entries.items():
        if type(e) is ChoiceRecord:
            if a in selection:
                out.append((p.index.choices[a], None))
        elif not selection[a].is_empty():
            out.append((p.index.calls[a], Address()))
    return out


def try_update(trace, args, argdiffs, constraints, rng=None):
    """The incremental ``update`` (``(trace, weight, retdiff, discard)``) or None; ``rng`` is
    passed on to sub-calls' updates (which may draw new choices)."""
    p = _incremental(trace, args, argdiffs, rng, False, _push_constraints, constraints)
    return None if p is None else (p.trace_out(args), p.weight, UNKNOWN, p.discard)


def try_regenerate(trace, args, argdiffs, selection, rng):
    """The incremental ``regenerate`` (``(trace, weight, retdiff)``) or None."""
    p = _incremental(trace, args, argdiffs, rng, True, _push_selected, selection)
    return None if p is None else (p.trace_out(args), p.weight, UNKNOWN)


def _incremental(trace, args, argdiffs, rng, regenerating: bool, push, change):
    """The incremental pass over ``trace`` run to its end, ``push(p, change)`` having pushed
    the nodes the change sets (after the arguments'), or None where it does not apply or gives
    up (counted)."""
    if not _usable(trace):
        return None
    try:
        p = _Pass(trace, regenerating, rng)
        if p.index.scaled:
            return None
        _seed_args(p, trace, args, argdiffs)
        push(p, change)
        p.run()
    except GiveUp as why:
        _count(trace, "gave_up", why)
        return None
    _count(trace, "incremental")
    return p


def _push_constraints(p, constraints) -> None:
    """``update``: the constrained choices take their new values (in sub-calls: as changes)."""
    for addr, value in constraints.items():
        node, rest = _find(p, addr)
        if rest is None:
            p.new_values[node] = value
        else:
            p.sub_changes.setdefault(node, ChoiceMap()).set_value(rest, value)
        p.push(node)


def _push_selected(p, selection) -> None:
    """``regenerate``: the selected choices are drawn again (in sub-calls: as selections)."""
    for node, rest in _targets(p, p.trace, selection):
        if rest is None:
            p.new_values[node] = _RESAMPLE
        else:
            p.sub_changes[node] = selection[_local(node.args[1].value)]
        p.push(node)
