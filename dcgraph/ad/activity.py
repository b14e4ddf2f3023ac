"""Activity: which nodes of a tape depend on the differentiated arguments.

A node is *active* when its value is computed, along the tape's data flow (``_dependencies``:
inputs, argument sources in the caller, a nested call's returned node, a traced generator's
segments), from a root ``Argument`` in ``wrt`` (every root argument when ``wrt`` is None); a
call of a callable made in the trace that has no rule (``_opaque``: a closure, a generator
function run as a primitive) is assumed active. The backward pass (``Sweep``, module ``core``)
pulls adjoints back through array and container arguments of active nodes only, and a missing
rule is an error only for an active node.
"""
from __future__ import annotations

from ..tape import Argument, Constant, NestedCall, PrimitiveCall, Return
from .registry import RULES

__all__ = ["Activity"]


class Activity:
    """The activity part of a ``Sweep``: relative to ``self.wrt``, memoised in ``self._active``."""

    def active(self, node) -> bool:
        """Does ``node`` depend on a differentiated argument? (Memoised, iterative.)"""
        memo = self._active
        r = memo.get(node)
        if r is not None:
            return r
        wrt = self.wrt
        stack = [node]
        while stack:
            n = stack[-1]
            if n in memo:
                stack.pop()
                continue
            deps = _dependencies(n)
            todo = [d for d in deps if d not in memo]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            memo[n] = _own(n, deps, memo, wrt)
        return memo[node]

    def activate(self, nodes) -> None:
        """Memoise ``active`` for ``nodes`` in execution order (a tape's ``walk``): one visit
        per node whose dependencies are known by then (the others through ``active``)."""
        memo, wrt = self._active, self.wrt
        for n in nodes:
            if n in memo:
                continue
            deps = _dependencies(n)
            for d in deps:
                if d not in memo:
                    self.active(n)
                    break
            else:
                memo[n] = _own(n, deps, memo, wrt)


def _own(n, deps, memo, wrt) -> bool:
    """``n``'s activity once its dependencies ``deps`` have theirs in ``memo``."""
    if type(n) is Argument and n.source is None:
        return wrt is None or n in wrt
    if type(n) is PrimitiveCall and n.fn_node is not None and _opaque(n.fn):
        return True             # a callable made in the trace (closure): assume it depends
    for d in deps:
        if memo[d]:
            return True
    return False


def _opaque(fn) -> bool:
    """A callable without a rule whose dependencies the tape cannot show (a closure or a
    generator function run as a primitive)."""
    try:
        return fn not in RULES
    except TypeError:
        return True


def _dependencies(n) -> tuple:
    """What ``n``'s value is computed from (for activity)."""
    t = type(n)
    if t is Argument:
        return n.source_nodes()
    if t is Constant:
        return ()
    if t is NestedCall and n.child is not None:
        ret = n.child.returned
        return tuple(ret.inputs) if isinstance(ret, Return) else ()
    if t is PrimitiveCall:
        if n._meta and "segments" in n._meta:        # a traced generator: what it yielded
            return n.inputs + tuple(n._meta["segments"])
        if n.fn_node is not None:
            return n.inputs[1:]
        return n.inputs
    return n.inputs
