"""Backward half of the straight-line code (``codegen``): adjoint variables and the pull-back
of each node, as ``core.Sweep`` would do it, node by node in reverse execution order.

Lists built on the path are pulled back through their ``append``/``extend`` rules with the
lengths ``dcgraph.compiled.support`` derived (the rule sees ``Live`` stand-ins knowing them);
a list version read by a rule that needs its contents must not grow afterwards."""
from __future__ import annotations

import re

import numpy as np

from ..compiled.forward import DONE, ENTER, NODE  # noqa: F401
from ..compiled.support import NotCompilable, literal_list, unalias, where
from ..tracer import ops
from ..tape import Argument, Constant, Node, Phi, PrimitiveCall, Return
from .core import _FAST
from .registry import _drop, load_deferred, lookup, primitive_name
from .rules_containers import add_array_read, getitem_rule
from .rules_iteration import next_item_rule
from .rules_math import (atan_vjp, cos_vjp, exp_vjp, expm1_vjp, log1p_vjp, log_vjp_0, sin_vjp,
                         sqrt_vjp, tan_vjp, tanh_vjp)
from .rules_operator import (add_scalar, mul_scalar_0, mul_scalar_1, neg_vjp, pos_vjp,
                             sub_scalar_1, truediv_scalar_0, truediv_scalar_1)
from .values import SCALARS, carries

__all__ = ["BackwardEmitter", "NotCompilable", "TEMPLATES", "where", "unalias", "literal_list"]


TEMPLATES = {
    (add_scalar, 2): "{g}", (sub_scalar_1, 2): "-{g}", (mul_scalar_0, 2): "{g} * {y}",
    (mul_scalar_1, 2): "{g} * {x}", (truediv_scalar_0, 2): "{g} / {y}",
    (truediv_scalar_1, 2): "-{g} * {ans} / {y}", (neg_vjp, 1): "-{g}", (pos_vjp, 1): "{g}",
    (sin_vjp, 1): "{g} * _cos({x})", (cos_vjp, 1): "-{g} * _sin({x})",
    (exp_vjp, 1): "{g} * {ans}", (log_vjp_0, 1): "{g} / {x}",
    (log1p_vjp, 1): "{g} / (1.0 + {x})", (sqrt_vjp, 1): "{g} / (2.0 * {ans})",
    (tanh_vjp, 1): "{g} * (1.0 - {ans} * {ans})", (expm1_vjp, 1): "{g} * ({ans} + 1.0)",
    (atan_vjp, 1): "{g} / (1.0 + {x} * {x})", (tan_vjp, 1): "{g} * (1.0 + {ans} * {ans})",
}
_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
NONE, MAYBE, SURE = 0, 1, 2              # is a node's adjoint variable set at this point?
UNIT = "1.0"                             # the seed of a real scalar output, handed on as text


class BackwardEmitter:
    """The backward methods of ``codegen._Gen`` (a mixin: it reads the generator's state)."""

    def active(self, node) -> bool:
        r = self.activity._active.get(node)          # memoised by ``Activity.active``
        return self.activity.active(node) if r is None else r

    def wants(self, node) -> bool:
        if type(node) is Constant or not carries(node.value):
            return False
        r = self.activity._active.get(node)
        return self.activity.active(node) if r is None else r

    def backward(self, node, phase) -> None:
        if not self.state.get(node) and node not in self.slots:
            return                       # no adjoint reached it (``block`` would skip it)
        t = type(node)
        if phase == DONE:
            if type(node.child.returned) is not Return:
                return                   # it raised: its value is used nowhere
            ret = node.child.returned.inputs[0]
            self.block(node, lambda g: self.add(ret, g, _mode(ret)))
        elif phase == NODE and t is PrimitiveCall:
            self.block(node, lambda g: self.pull(node, g))
        elif t is Phi and type(node.source) is not Constant:
            self.block(node, lambda g: self.add(node.source, g, "scalar"))
        elif t is Argument and node.tape is not self.tape and node.source is not None:
            self.block(node, lambda g: self.pass_argument(node, g))

    def block(self, node, body) -> None:
        """Emit ``body`` for a node with an adjoint (inside ``if g is not None`` if unsure)."""
        self.flush(node)
        st = self.state.get(node, NONE)
        if st == NONE:
            return
        g = self.giveable = self.g(node)
        self.mark(node)
        start, self.cond = len(self.bwd), st == MAYBE
        if self.cond:
            self.bwd.append(f"if {g} is not None:")
            self.indent = "    "
        body(g)
        if self.cond and len(self.bwd) == start + 1:
            self.bwd.pop()
        self.indent, self.cond, self.giveable = "", False, None

    def emit(self, line: str) -> None:
        self.bwd.append(self.indent + line)

    def add(self, target, expr: str, mode: str) -> None:
        """``adjoint(target) += expr`` as ``Sweep.add`` does it. ``mode``: 'scalar' (``expr``
        is never None: floats, phis), 'general' (anything), 'item' (``expr`` is ``key, g,
        container``: one entry of a Sparse adjoint), 'replace' (the whole new adjoint)."""
        if not self.wants(target):
            return
        self.mark(target)
        self.nonzero.pop(target, None)   # its buffer's positions: no longer known zero
        st = self.state.get(target, NONE)
        if mode == "array" and st == SURE and target in self.owned and target in self.dense:
            self.emit(f"{self.g(target)} += {expr}")     # into its own buffer
            return
        self.owned.discard(target)
        if mode == "array":              # an ndarray, never None (a template's)
            if st == NONE:
                self.dense.add(target)
            elif target not in self.dense:
                mode = "general"
        else:
            self.dense.discard(target)
        if st == NONE and not self.cond and mode == "scalar" and (
                expr == self.giveable or expr == UNIT):      # a literal is shared freely
            self.gname[target] = expr                        # hand the variable on
            self.giveable = None if expr != UNIT else self.giveable
            self.state[target] = SURE
            return
        name = lhs = self.g(target)
        if name == UNIT:                 # a unit adjoint handed on: its own variable now
            lhs = self.gname[target] = f"g{self.ids[target]}"
        if mode == "general" and st == NONE:   # _acc(None, g) is g (owning no Sparse: safe)
            line = f"{lhs} = {expr}"
        elif mode in ("item", "general"):
            fn = "_item" if mode == "item" else "_acc"
            line = f"{lhs} = {fn}({name if st else 'None'}, {expr}, {self.ref(target)})"
        elif mode == "replace" or st == NONE:
            line = f"{lhs} = {expr}"
        elif st == SURE:
            line = f"{lhs} = {name} + ({expr})"
        else:
            line = f"{lhs} = {expr} if {name} is None else {name} + ({expr})"
        if self.cond and st == NONE:
            self.init.append(name)
        sure = st == SURE or (mode not in ("general", "replace") and not self.cond)
        self.state[target] = SURE if sure else MAYBE
        self.emit(line)
        made = mode == "array" and (st == SURE or not _BARE.match(expr))
        if made and (not self.cond or st == NONE or target in self.fresh):
            self.fresh.add(target)       # an array made here, referenced by nothing else
        else:
            self.fresh.discard(target)

    def grown(self, node, g, rule) -> None:
        """Pull back through ``append``/``extend`` of a list built on the path. ``append`` at
        position ``p``: the item gets entry ``p``, the list before gets the adjoint itself
        (its entries from ``p`` on lie past its length, where its rules look no more), so
        no Sparse is copied per step. ``extend``: its rule, on the entries within the list."""
        c, x = node.args
        if node.fn is list.extend:
            self.emit(f"_t = _upto({g}, {self.lengths[node]}) if _type({g}) is _Sparse else {g}")
            self.live_rule(node, "_t", rule.inplace)
            return
        if not (self.wants(c) or self.wants(x)):
            return
        self.emit(f"if _type({g}) is _Sparse:")
        indent, cond = self.indent, self.cond
        self.indent, self.cond = indent + "    ", True
        self.add(x, f"{g}.get({self.lengths[unalias(c)]})", "general")
        self.add(c, g, "general")
        self.indent, self.cond = indent, cond

    def add_slot(self, target, key: int, g: str) -> None:
        """``adjoint(target)[key] += g`` into a scalar variable of its own (reads of a list
        at constant positions, e.g. in unrolled loops); ``flush`` makes them one Sparse."""
        if not self.wants(target):
            return
        self.mark(target)
        slots = self.slots.setdefault(target, {})
        name = slots.get(key)
        if name is None:
            name = slots[key] = f"g{self.ids[target]}_{key}"
            self.emit(f"{name} = {g}")
        else:
            self.emit(f"{name} = {name} + ({g})")

    def flush(self, target) -> None:
        """Add the scalar slots of ``target`` to its adjoint (before anything reads it)."""
        slots = self.slots.pop(target, None)
        if slots:
            items = ", ".join(f"{k}: {n}" for k, n in sorted(slots.items()))
            self.add(target, f"_Sparse({{{items}}})", "general")

    def pass_argument(self, node, g) -> None:
        """``Sweep.argument``: a bound argument's adjoint goes to the caller's node(s)."""
        src = node.source
        if isinstance(src, Node):
            self.add(src, g, _mode(src))
            return
        pairs = list(enumerate(src)) if isinstance(src, tuple) else list(src.items())
        if any(self.wants(s) for _, s in pairs):
            self.emit(f"if _type({g}) is _Sparse:")
            indent, cond = self.indent, self.cond
            self.indent, self.cond = indent + "    ", True
            for key, s in pairs:
                self.add(s, f"{g}.get({key!r})", "general")
            self.indent, self.cond = indent, cond

    def pull(self, node, g) -> None:
        """Pull ``g`` back through a primitive along the path ``Sweep.sweep`` takes."""
        fn, args, kwargs = node.fn, node.args, node.kwargs
        if fn is list.extend and literal_list(node):
            return                       # constants into a fresh list: nothing flows back
        rule = lookup(fn) or (lookup(fn) if load_deferred() else None)
        if rule is None:
            raise NotCompilable(f"no VJP rule for {primitive_name(fn)} ({where(node)})")
        if node.mutates is not None:     # a list built on the path grew
            self.grown(node, g, rule)
            return
        relevant = self.relevant          # ``mark`` of each argument, inline (hot)
        for x in args:
            relevant.add(x if type(x) is PrimitiveCall else unalias(x))
        for x in kwargs.values():
            self.mark(x)
        if self.may_template(node) and (
                self.array_template(node, g) or self.sum_template(node, g)
                or self.matmul_template(node, g) or self.unary_template(node, g)
                or self.power_template(node, g)):
            return
        if (rule.joint is not None and self.joint_rule(node, g, rule)) or \
                (rule.scatter is not None and self.scatter_rule(node, g, rule)):
            return
        if node in self.bcast:
            self.materialize(node, g)
        ans, f2, f1 = self.v(node), rule.fast2, rule.fast1
        vals = [self.v(x) for x in args]
        if f2 is not None and len(args) == 2 and not kwargs and \
                type(args[0].value) in _FAST and type(args[1].value) in _FAST:
            reals = self.reals(node, vals, ans) if g == UNIT else ()   # read for UNIT only
            for i, x in enumerate(args):
                if type(x.value) in SCALARS and type(x) is not Constant:
                    self.add(x, self.vjp_text(f2[i], g, ans, vals, reals), "scalar")
            return
        if f1 is not None and len(args) == 1 and not kwargs and \
                type(args[0].value) in SCALARS and type(args[0]) is not Constant:
            reals = self.reals(node, vals, ans) if g == UNIT else ()
            self.add(args[0], self.vjp_text(f1, g, ans, vals, reals), "scalar")
            return
        if type(node.value) is np.ndarray and (rule.vjps is not None or not rule.sparse) \
                and node not in self.dense:
            self.emit(f"if _type({g}) is _Sparse: {g} = _dense({ans}.shape, {g}, {ans}.dtype)")
        if rule.vjps is None:
            self.node_rule(node, g, rule)
            return
        if kwargs and type(fn) is np.ufunc and "where" in kwargs:
            raise NotCompilable(f"a ufunc called with where= ({where(node)})")
        call = ", ".join([g, ans] + vals + [f"**{{{n!r}: {self.v(x)}}}" for n, x in kwargs.items()])
        named = [(rule.index(n), x, True) for n, x in kwargs.items()
                 if not (n == "out" and type(fn) is np.ufunc)]
        for i, x, keyword_ in [(i, x, False) for i, x in enumerate(args)] + named:
            vjp = rule.vjps[i] if i is not None and i < len(rule.vjps) else None
            if self.wants(x) and (vjp is not None or keyword_):
                if vjp is None:
                    raise NotCompilable(f"a keyword argument of {primitive_name(fn)} has no rule")
                self.add(x, f"{self.bind(vjp)}({call})", "general")

    def vjp_text(self, vjp, g, ans, vals, reals=()) -> str:
        """A value rule's text; ``reals``: expressions whose runtime type is a real scalar
        (guarded), so ``1.0 * r`` may be written ``r`` when the adjoint is the unit seed."""
        template = TEMPLATES.get((vjp, len(vals)))
        if template is None:
            return f"{self.bind(vjp)}({', '.join([g, ans] + vals)})"
        text = template.format(g=g, ans=ans, x=vals[0], y=vals[-1])
        if g == UNIT:
            for lead, sign in (("1.0 * ", ""), ("-1.0 * ", "-")):
                rest = text[len(lead):]
                if text.startswith(lead) and (rest in reals or (
                        rest.startswith(("_cos(", "_sin(")) and rest.endswith(")")
                        and rest.count("(") == 1)):
                    return sign + rest
        return text

    @staticmethod
    def reals(node, vals, ans) -> set:
        """Which of these expressions hold real scalars (their types are guarded: ``mark``)."""
        out = {v for x, v in zip(node.args, vals) if type(x.value) in SCALARS}
        return out | {ans} if type(node.value) in SCALARS else out

    def node_rule(self, node, g, rule) -> None:
        args = node.args
        if rule.node is _drop:
            return
        if rule.node is getitem_rule and len(args) == 2 and type(args[1].value) is int \
                and type(args[0].value) is list and unalias(args[0]) in self.lengths:
            n = self.lengths[unalias(args[0])]   # a list built here: its length then
            self.add(args[0], f"{self.v(args[1])} % {n}, {g}, None", "item")
            return
        if rule.node is getitem_rule and self.tuple_item(node, g):
            return
        if rule.node is getitem_rule and len(args) == 2 and type(args[1].value) is int \
                and type(args[0].value) in (list, tuple):
            key = self.v(args[1])
            if key.isdigit() and not self.cond and type(node.value) in SCALARS:
                self.add_slot(args[0], int(key), g)     # a constant position: a scalar
                return
            self.add(args[0], f"{key}, {g}, {self.v(args[0])}", "item")
            return
        if rule.node is next_item_rule and len(args) == 2:
            self.add(args[0], f"{self.v(args[1])}, {g}, None", "item")
            return
        if rule.node is getitem_rule and len(args) == 2 and not node.kwargs \
                and type(args[0].value) is np.ndarray and args[0].value.dtype.kind in "fc":
            if self.wants(args[0]) and self.reshaping_read(node, args[0], args[1], g):
                return
            self.array_read(node, args[0], args[1], g)
            return
        self.live_rule(node, g, rule.node)

    def tuple_item(self, node, g) -> bool:
        """``t[k]`` of a tuple built on the path at a constant position (unpacking): the
        adjoint goes to the item itself, as ``build_seq_rule`` would pass it on."""
        c, key = node.args
        t = unalias(c)
        if not (type(key) is Constant and key.tape is None and type(key.value) is int
                and type(t) is PrimitiveCall and t.fn is ops.build_tuple and not t.kwargs
                and -len(t.args) <= key.value < len(t.args)):
            return False
        item = t.args[key.value]
        dense = node in self.dense and node not in self.bcast and not self.cond   # an ndarray
        self.add(item, g, "array" if dense else _mode(item))
        return True

    def live_rule(self, node, g, rule) -> None:
        """Emit a call of a node rule (or in-place rule) on ``Live`` stand-ins."""
        args, later = node.args, self.lengths.later
        for x in args:
            if unalias(x) in later and node.mutates is None:
                raise NotCompilable(f"a rule reads a list that grows afterwards ({where(node)})")
        self.uses_live = True
        inputs = dict.fromkeys(list(args) + list(node.kwargs.values()))
        targets = [x for x in inputs if type(x) is not Constant and self.active(x)]
        for x in targets:
            if self.state.get(x, NONE):
                self.emit(f"_ls.adj[{self.ref(x)}] = {self.g(x)}")

        def live(x):
            n = self.lengths.get(unalias(x))
            return f"_Live({self.ref(x)}, {self.v(x)}, {x in targets}, n={n})"
        kw = ", ".join(f"{self.bind(n, '_key')}: {live(x)}" for n, x in node.kwargs.items())
        self.emit(f"{self.bind(rule)}(_ls, _Live({self.ref(node)}, {self.v(node)}, "
                  f"True, ({''.join(live(x) + ', ' for x in args)}), {{{kw}}}), {g})")
        for x in targets:
            self.add(x, f"_ls.adj.pop({self.ref(x)}, None)", "replace")

    def array_read(self, node, a, key, g) -> None:
        """``a[key]`` pulled back into one buffer per array, added in place: the buffer is
        made by the first read (or by ``_acc`` over an adjoint from elsewhere, which copies)
        and is ``owned`` until another kind of adjoint is added to ``a``."""
        if not self.wants(a):
            return
        owned = self.owned
        st = self.state.get(a, NONE)
        fn = self.bind(add_array_read)
        expr = f"{fn}({self.g(a) if st else 'None'}, {self.v(a)}, {self.v(key)}, {g}, " \
               f"v{self.ids[node]})"
        if st == SURE and a in owned and type(key.value) in (int, slice) \
                and type(a.value) is np.ndarray:          # into the buffer, inline
            self.mark(key)
            if type(node.value) is np.ndarray and node not in self.dense:
                self.emit(f"if _type({g}) is _Sparse: {g} = _dense({self.v(node)}.shape, {g})")
            self.emit(self.buffer_write(a, self.v(key), g))
            return
        if st == NONE and not self.cond and type(key.value) in (int, slice) \
                and type(a.value) is np.ndarray and a.value.dtype == np.float64:
            self.know_shape(a)                            # a new buffer, inline
            self.mark(key)
            self.mark(a)
            if type(node.value) is np.ndarray and node not in self.dense:
                self.emit(f"if _type({g}) is _Sparse: {g} = _dense({self.v(node)}.shape, {g})")
            name = self.g(a)
            self.emit(f"{name} = {self.bind(np.zeros, '_zeros')}({a.value.shape!r})")
            self.emit(f"{name}[{self.v(key)}] = {g}")
            self.buffer_made(a, self.v(key))
            self.state[a] = SURE
            self.fresh.add(a)
            self.dense.add(a)
            owned.add(a)
            return
        if st and a not in owned:
            self.add(a, f"{fn}(None, {self.v(a)}, {self.v(key)}, {g}, v{self.ids[node]})",
                     "general")
        else:
            self.mark(a)
            self.nonzero.pop(a, None)
            name = self.g(a)
            if self.cond and st == NONE:
                self.init.append(name)
            self.state[a] = SURE if st == SURE or not self.cond else MAYBE
            self.emit(f"{name} = {expr}")
            self.fresh.add(a)
            self.dense.add(a)
        owned.add(a)


def _mode(node) -> str:
    return "scalar" if type(node.value) in SCALARS else "general"


