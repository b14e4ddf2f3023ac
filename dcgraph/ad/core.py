"""The reverse sweep over a (nested) tape.

Adjoints are kept per node object for the whole run (``Sweep.adj``), because inputs may be
nodes of other tapes earlier in execution (closure cells, containers a callee mutated). A tape
is swept in reverse; at a ``NestedCall`` the call's adjoint seeds the child's returned node, the
child is swept, and its ``Argument`` adjoints flow to their sources in the caller. Phis pass
adjoints to their sources, branches carry none, constants absorb them. A ``PrimitiveCall`` with
an adjoint is pulled back through its rule (``registry``); without a rule it is an error, unless
the call does not depend on the differentiated arguments at all (``active``, module ``activity``).
"""
from __future__ import annotations

import sys
from types import FunctionType

import numpy as np

from ..tracer.ops import out_position
from ..tracer.summary import require_values
from ..tape import Argument, Constant, NestedCall, Phi, PrimitiveCall, Return
from .activity import Activity
from .dunders import DUNDERS, pull_through_python, python_operator
from .registry import RULES, MissingRuleError, load_deferred, lookup, primitive_name
from .values import SCALARS, Sparse, carries, dense_array
from .versions import Versions

__all__ = ["Sweep"]

_MUTABLE = (np.ndarray, list, dict)
_FAST = SCALARS | {int, bool}
ndarray = np.ndarray


def _writes_out(node) -> bool:
    """A call that wrote its result into ``out=`` (or a positional out): pulled back like the
    plain call; the out array's earlier contents get no adjoint."""
    if "out" in node.kwargs:
        return node.mutates is not None or type(node.fn) is np.ufunc
    return _positional_out(node) is not None


def _positional_out(node) -> int | None:
    """Position of the out array among ``node.args`` (a ufunc's, ``np.dot(a, b, out)``)."""
    fn, n = node.fn, len(node.args)
    if type(fn) is np.ufunc:
        return fn.nin if n > fn.nin else None
    k = out_position(fn) if n > 2 and node.mutates is not None else None
    return k if k is not None and k < n and node.args[k].value is node.mutates else None


_NOT_REAL = (str, bytes, bytearray, memoryview)


class Sweep(Activity):
    """One backward pass. ``wrt`` is the set of root ``Argument`` nodes being differentiated
    (None: every root argument); nodes that depend on none of them get no adjoints pulled back
    through array or container arguments. ``callers``: the frames between the user's call and
    ``run``'s (the entry point's own), which a rule that traces code gives back (``callers``)."""

    run_frame = None                     # ``run``'s frame while it runs

    def __init__(self, root, wrt=None, callers: int = 0):
        require_values(root, "the backward pass (grad, vjp, backward)")
        self.root = root
        self.adj: dict = {}
        self.wrt = wrt
        self.callers_above = callers
        self._active: dict = {}
        self._versions: Versions | None = None

    # -- public helpers for rules ----------------------------------------------------------
    @property
    def versions(self) -> Versions:
        if self._versions is None:
            self._versions = Versions(self.root.root)
        return self._versions

    def value(self, node):
        """``node``'s value as it was when recorded (containers mutated later are rebuilt)."""
        v = node.value
        if isinstance(v, _MUTABLE):
            return self.versions.value_at(node)
        return v

    def length(self, node) -> int:
        """``len`` of a list/dict node's value when it was recorded."""
        v = node.value
        if type(v) in (list, dict):
            return self.versions.length_at(node)
        return len(v)

    def wants(self, node) -> bool:
        """Should an adjoint be computed for input ``node``?"""
        if type(node) is Constant:
            return False
        v = node.value
        if type(v) in SCALARS:
            return True
        if carries(v):
            return self.active(node)
        if isinstance(v, _NOT_REAL) and self.active(node):
            self.cut(node)
        return False

    def callers(self, frame) -> int:
        """The frames between the user's call and ``frame`` (a rule's, or a helper's it called),
        ``frame`` included: what a rule passes to ``traced_call`` so that the code it traces
        gets the recursion depth it has called in the user's call's place (``headroom``); 0
        outside ``run`` (nothing given back)."""
        base, n = self.run_frame, 1
        while frame is not None and frame is not base:
            frame, n = frame.f_back, n + 1
        return n + self.callers_above if frame is not None else 0

    def cut(self, node) -> None:
        """A real value became text or bytes (``str``, ``repr``, formatting) and came back:
        the derivative through it is not zero but cannot be followed."""
        raise MissingRuleError(
            f"dcgraph.ad: the gradient passes through {node!r} (at {node.loc}), a "
            f"{type(node.value).__name__} made from a differentiated value; a value that leaves "
            f"the numbers (str, repr, formatting, bytes) and comes back cuts the gradient")

    def add(self, node, g) -> None:
        """Accumulate adjoint ``g`` into ``node`` (dropped for constants and non-numeric nodes)."""
        if g is None or type(node) is Constant:
            return
        if type(g) is Sparse and type(node) in _ROUTING_KINDS and _routes_items(node):
            self._route(node, g)
            return
        if not carries(node.value):
            if isinstance(node.value, _NOT_REAL) and self.active(node):
                self.cut(node)
            return
        adj = self.adj
        old = adj.get(node)
        if old is None:
            if type(g) is Sparse and g.owner is None:
                g.owner = node
            adj[node] = g
        elif type(old) is Sparse and type(g) is Sparse:
            if old.owner is not node:
                old = Sparse(old)
                old.owner = node
                adj[node] = old
            old.merge(g)
        else:
            adj[node] = old + g

    def _route(self, node, g) -> None:
        """Item adjoints of an iterator over traced generators go through at once: the
        generator's segments ran after the iterator was made, so the sweep meets them first."""
        t = type(node)
        if t is Argument or t is Phi:
            self.add(node.source if t is Phi else node.source, g)
        elif node._meta and "segments" in node._meta:
            from .rules_iteration import generator_rule
            generator_rule(self, node, g)
        else:
            RULES[node.fn].node(self, node, g)

    def missing(self, node, g, key=None) -> None:
        """No rule for ``node``: fine if it does not depend on the arguments, else an error.
        A function carrying its own node rule (``_dcgraph_vjp``: those ``grad`` returns) is
        pulled back through it."""
        if key is None and node._meta and "segments" in node._meta:
            from .rules_iteration import generator_rule
            generator_rule(self, node, g)            # a traced generator's items
            return
        own = node.fn.__dict__.get("_dcgraph_vjp") if type(node.fn) is FunctionType else None
        if own is not None and key is None:
            own(self, node, g)
            return
        if load_deferred():
            rule = lookup(key if key is not None else node.fn)
            if rule is not None:
                self.apply(node, rule, g) if node.mutates is None or rule.inplace is None \
                    else rule.inplace(self, node, g)
                return
        if not self.active(node):
            return
        loc = node.loc
        source = f": {loc.source}" if loc is not None and loc.source else ""
        name = primitive_name(key if key is not None else node.fn)
        raise MissingRuleError(f"dcgraph.ad: no VJP rule for {name} (called at {loc}{source});"
                               f" register one with dcgraph.ad.defvjp")

    # -- the sweep -------------------------------------------------------------------------
    def run(self, tape, seed) -> None:
        """Seed the node ``tape`` returned and sweep it."""
        ret = tape.returned
        if type(ret) is not Return:
            raise ValueError(f"dcgraph.ad: {tape.name} raised; nothing to differentiate")
        self.add(ret.inputs[0], seed)
        outer, self.run_frame = self.run_frame, sys._getframe()
        try:
            self.sweep(tape)
        finally:
            self.run_frame = outer

    def sweep(self, tape) -> None:
        """Pull the adjoints back through ``tape``'s nodes, last first, and through each nested
        call's tape where the call stands; nested tapes go on an explicit stack, so a tape as
        deep as the program's recursion needs no recursion depth here."""
        adj = self.adj
        get = adj.get
        rules = RULES
        fast = _FAST
        scalars = SCALARS
        stack = [reversed(tape.nodes)]
        while stack:
            for node in stack[-1]:
                g = get(node)
                t = type(node)
                if g is None:
                    if t is NestedCall and node.child is not None:
                        stack.append(reversed(node.child.nodes))
                        break
                    continue
                if t is PrimitiveCall:
                    try:
                        rule = rules.get(node.fn)
                    except TypeError:
                        rule = None
                    if rule is None:
                        self.missing(node, g)
                        continue
                    # fast paths: one or two positional real scalars (mutations never qualify)
                    f2 = rule.fast2
                    if f2 is not None:
                        args = node.args
                        if len(args) == 2 and not node.kwargs:
                            a, b = args
                            va = a.value
                            vb = b.value
                            ta = type(va)
                            tb = type(vb)
                            if ta in fast and tb in fast:
                                ans = node.value
                                if ta in scalars and type(a) is not Constant:
                                    ga = f2[0](g, ans, va, vb)
                                    old = get(a)
                                    adj[a] = ga if old is None else old + ga
                                if tb in scalars and type(b) is not Constant:
                                    gb = f2[1](g, ans, va, vb)
                                    old = get(b)
                                    adj[b] = gb if old is None else old + gb
                                continue
                    f1 = rule.fast1
                    if f1 is not None:
                        args = node.args
                        if len(args) == 1 and not node.kwargs:
                            a = args[0]
                            va = a.value
                            if type(va) in scalars and type(a) is not Constant:
                                ga = f1(g, node.value, va)
                                old = get(a)
                                adj[a] = ga if old is None else old + ga
                                continue
                    if type(g) is Sparse and not rule.sparse and type(node.value) is ndarray:
                        g = dense_array(node.value.shape, g, node.value.dtype)
                    if node.mutates is not None and not _writes_out(node):
                        if node.fn in DUNDERS and python_operator(node.fn, [a.value for a in node.args]):
                            pull_through_python(self, node, g)   # a user class's in-place method
                        elif rule.inplace is None:
                            self.missing(node, g)
                        else:
                            rule.inplace(self, node, g)
                    elif rule.vjps is None:
                        rule.node(self, node, g)
                    else:
                        self.apply(node, rule, g)
                elif t is Phi:
                    src = node.source
                    if type(src) is not Constant:
                        old = get(src)
                        adj[src] = g if old is None else old + g
                elif t is NestedCall:
                    if node.child is not None:
                        self.seed_child(node, g)
                        stack.append(reversed(node.child.nodes))
                        break
                elif t is Argument:
                    self.argument(node, g)
            else:
                stack.pop()          # this tape is done: back to the one that called it

    def apply(self, node, rule, g) -> None:
        """Pull ``g`` back through ``node`` with ``rule``'s value rules (general path)."""
        if rule.vjps is None:
            rule.node(self, node, g)
            return
        args, kwargs = node.args, node.kwargs
        if node.fn in DUNDERS and python_operator(node.fn, [a.value for a in args]):
            pull_through_python(self, node, g)       # a user class's operator method ran
            return
        ans = node.value
        if type(g) is Sparse and type(ans) is ndarray:
            g = dense_array(ans.shape, g, ans.dtype)
        if kwargs and type(node.fn) is np.ufunc and "where" in kwargs:
            self.unsupported(node, g, "ufunc called with where=")
            return
        vjps = rule.vjps
        vals = None
        out = _writes_out(node)
        k = _positional_out(node) if out else None
        if k is not None:
            args = args[:k]
        for i, a in enumerate(args):
            f = vjps[i] if i < len(vjps) else None
            if f is None or not self.wants(a):
                continue
            if vals is None:
                vals, kw = self._values(node)
            self.add(a, f(g, ans, *vals, **kw))
        for name, a in kwargs.items():
            if name == "out" and out:
                continue                 # overwritten: its earlier contents get no adjoint
            i = rule.index(name)
            f = vjps[i] if i is not None and i < len(vjps) else None
            if f is None:
                if self.wants(a):
                    self._no_keyword(node, name, a)
                continue
            if not self.wants(a):
                continue
            if vals is None:
                vals, kw = self._values(node)
            self.add(a, f(g, ans, *vals, **kw))

    def _values(self, node):
        value = self.value
        args = node.args
        if _writes_out(node):
            k = _positional_out(node)
            args = args if k is None else args[:k]
            kw = {k: value(a) for k, a in node.kwargs.items() if k != "out"}
        else:
            kw = {k: value(a) for k, a in node.kwargs.items()} if node.kwargs else {}
        return [value(a) for a in args], kw

    def unsupported(self, node, g, what: str) -> None:
        """``node``'s rule cannot handle this case: an error when the result matters."""
        if not self.active(node):
            return
        raise MissingRuleError(
            f"dcgraph.ad: {primitive_name(node.fn)} is not differentiable here: {what} "
            f"(called at {node.loc})")

    def _no_keyword(self, node, name, arg) -> None:
        if not self.active(arg):
            return
        raise MissingRuleError(
            f"dcgraph.ad: the rule for {primitive_name(node.fn)} cannot differentiate keyword "
            f"argument {name!r} (called at {node.loc}); pass it positionally or register a rule")

    def seed_child(self, node, g) -> None:
        """Give the value the nested call ``node``'s tape returned the call's adjoint ``g``."""
        if g is not None:
            ret = node.child.returned
            if isinstance(ret, Return) and ret.inputs:     # Return, or a segment's Yield
                self.add(ret.inputs[0], g)

    def argument(self, node, g) -> None:
        src = node.source
        if src is None:
            return
        t = type(src)
        if t is tuple:
            if type(g) is Sparse:
                for i, s in enumerate(src):
                    self.add(s, g.get(i))
        elif t is dict:
            if type(g) is Sparse:
                for k, s in src.items():
                    self.add(s, g.get(k))
        else:
            self.add(src, g)


def _routes_items(node) -> bool:
    """Does ``node`` hand item adjoints on to traced generators (it made one, or it is an
    ``iter``/``zip``/``enumerate`` over a value that is one or holds one)?"""
    while True:
        t = type(node)
        if t is Argument or t is Phi:
            node = node.source
            if type(node) not in _ROUTING_KINDS:
                return False
            continue
        if node._meta and "segments" in node._meta:
            return True
        if node.fn not in _ITEM_ROUTES:
            return False
        return any(_routes_items(a) for a in node.args if type(a) in _ROUTING_KINDS)


_ITEM_ROUTES = {iter, zip, enumerate}
_ROUTING_KINDS = {PrimitiveCall, Argument, Phi}
