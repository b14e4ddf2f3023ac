"""Straight-line Python source for one recorded path of a tape (``compiled`` runs it).

``generate(tape, wrt, plan, runtime) -> (lines, namespace, nodes, big)``: the body of
``compiled(_a, _kw) -> (value, adjoints)``, which recomputes every node of the path in execution
order (nested calls inlined; phis and bound arguments are aliases), raises ``_GF(k)`` where the
arguments would send control elsewhere (branches, loop exits, value types the backward code
relies on, rebound globals, other callables), then pulls the seed back as ``core.Sweep`` does,
node by node in the same order: scalar operators and ``math`` functions inline, other
primitives through their registered rules (value rules on values, node rules on ``Live``
stand-ins through a ``LiveSweep``). Nodes that do not depend on ``wrt`` get no backward code.
``adjoints`` are those of ``wrt``, in order (None where nothing flowed); ``nodes[k]`` is node
``k``; ``big`` names the variables holding large arrays; ``plan`` maps root arguments (and
globals) to expressions; ``runtime`` holds the helpers the code calls. What only emission
finds unsupported raises ``NotCompilable``.
"""
from __future__ import annotations

import builtins
import keyword
import math
import operator
import re
import types

import numpy as np

from .. import ops
from ..printing import BINARY_SYMBOLS, UNARY_SYMBOLS, format_node
from ..tape import Argument, Branch, Constant, NestedCall, Node, Phi, PrimitiveCall, Return
from .core import _FAST, Sweep
from .registry import _drop, load_deferred, lookup, primitive_name
from .rules_containers import getitem_rule
from .rules_iteration import next_item_rule
from .rules_math import (atan_vjp, cos_vjp, exp_vjp, expm1_vjp, log1p_vjp, log_vjp_0, sin_vjp,
                         sqrt_vjp, tan_vjp, tanh_vjp)
from .rules_operator import (add_scalar, mul_scalar_0, mul_scalar_1, neg_vjp, pos_vjp,
                             sub_scalar_1, truediv_scalar_0, truediv_scalar_1)
from .values import SCALARS, carries

__all__ = ["generate", "NotCompilable", "TEMPLATES", "where", "symbol"]


class NotCompilable(Exception):
    """The tape (or a rule met at run time) is outside what compiled replay handles."""


# (value rule, number of arguments) -> its arithmetic inline: same operations in the same order
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
NONE, MAYBE, SURE = 0, 1, 2              # is a node's adjoint variable set at this point?
ENTER, NODE, DONE = 0, 1, 2              # event phases: a nested call is entered, then done
_FOLDED = {"<", "<=", "==", "!=", ">", ">=", "is", "is not", "in", "not in"}
_STABLE_OPS = dict.fromkeys([operator.add, operator.sub, operator.mul, operator.truediv,
                             operator.floordiv, operator.mod, operator.neg, operator.pos,
                             operator.abs, operator.iadd, operator.isub, operator.imul,
                             operator.itruediv, operator.ifloordiv, operator.imod], True)
_FORMS = {ops.next_item: "_next({0})", operator.getitem: "{0}[{1}]",
          operator.contains: "{1} in {0}", ops.not_contains: "{1} not in {0}"}
_BIG = 1 << 16                           # bytes: arrays at least this large are freed early
_LOCAL = re.compile(r"[vg]\d+$")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*$")


def generate(tape, wrt, plan: dict, runtime: dict):
    """Body lines, namespace, numbered nodes and large-array variables (see the module)."""
    return _Gen(tape, list(wrt), plan, runtime).run()


class _Gen:
    def __init__(self, tape, wrt, plan, runtime):
        self.tape, self.wrt, self.plan = tape, wrt, plan
        self.activity = Sweep(tape, wrt=set(wrt))
        self.ns = dict(runtime, _type=type, _next=next, _cos=math.cos, _sin=math.sin)
        self.bound: dict = {}            # id(object) -> namespace name
        self.ids: dict = {}              # node -> number
        self.val: dict = {}              # node -> expression of its value
        self.events: list = []           # (node, phase) in execution order
        self.made: set = set()           # functions made inside f (and aliases): only called
        self.inplace: dict = {}          # in-place operator call -> its one-line form
        self.callee_guard: dict = {}     # call of a computed callable -> its guard
        self.relevant: set = set()       # nodes whose runtime type must be the recorded one
        self.state: dict = {}            # node -> NONE / MAYBE / SURE, in backward order
        self.gname: dict = {}            # node -> its adjoint variable (handed-on ones share)
        self.init, self.bwd = [], []
        self.giveable, self.indent, self.cond, self.uses_live = None, "", False, False

    def bind(self, obj, hint: str = "") -> str:
        """The namespace name bound to ``obj`` (its own name when usable; ``hint``s are ours)."""
        name = self.bound.get(id(obj))
        if name is None:
            base = hint or getattr(obj, "__name__", "")
            if not hint and (not isinstance(base, str) or not _NAME.match(base)
                             or keyword.iskeyword(base) or _LOCAL.match(base)
                             or builtins.__dict__.get(base, obj) is not obj):
                base = "c"
            name, k = base, 1
            while name in self.ns:
                name, k = f"{base}_{k}", k + 1
            self.ns[name], self.bound[id(obj)] = obj, name
        return name

    def ref(self, node) -> str:                  # the recorded node, e.g. as Sparse owner
        return self.bind(node, f"_n{self.ids.get(node, '')}")

    def v(self, node) -> str:
        """The expression of ``node``'s value."""
        if node in self.made:
            raise NotCompilable(f"a function made inside f is used as a value ({where(node)})")
        if type(node) is Constant and node.tape is None:
            value, t = node.value, type(node.value)
            if t in (int, bool, str) or value is None or (t is float and math.isfinite(value)):
                return f"({value!r})" if repr(value)[0] == "-" else repr(value)
            return self.bind(value, "_k")
        try:
            return self.val[node]
        except KeyError:
            raise NotCompilable(f"a value from outside the path is used ({where(node)})") from None

    def g(self, node) -> str:
        return self.gname.get(node) or f"g{self.ids[node]}"

    # -- assembly ------------------------------------------------------------------------
    def run(self):
        stack, calls = [iter(self.tape.nodes)], []
        while stack:                     # number the nodes, list the events in order
            for node in stack[-1]:
                self.ids[node] = len(self.ids)
                if type(node) is NestedCall:
                    self.events.append((node, ENTER))
                    stack.append(iter(node.child.nodes))
                    calls.append(node)
                    break
                if type(node) is PrimitiveCall and node.fn is ops.make_function:
                    self.made.add(node)
                    closure = node.args[-2] if len(node.args) > 1 else None
                    if type(closure) is PrimitiveCall and closure.fn is ops.build_tuple:
                        self.made.add(closure)    # the cells of a made function (read as
                                                  # recorded: its body reads them directly)
                self.events.append((node, NODE))
            else:
                stack.pop()
                if calls and len(stack) == len(calls):
                    self.events.append((calls.pop(), DONE))
        chunks = [self.forward(node, phase) for node, phase in self.events]
        ret = self.tape.returned.inputs[0]
        result = self.v(ret)
        self.add(ret, "_s", _mode(ret))           # Sweep.run seeds the returned node
        for node, phase in reversed(self.events):
            self.backward(node, phase)
        lines, known = [], set()
        for (node, phase), chunk in zip(self.events, chunks):
            if node in self.callee_guard and self.state.get(node):
                chunk = [self.callee_guard[node]] + chunk
            elif node in self.inplace and self.known(node.args, known):
                chunk = [self.inplace[node]]      # ``a += b`` is ``a + b`` on scalars
            lines += chunk
            if phase == NODE and type(node) is PrimitiveCall and node not in self.made \
                    and not self.stable(node, known):
                if node not in self.relevant:
                    continue
                lines.append(f"if _type(v{self.ids[node]}) is not "
                             f"{self.bind(type(node.value))}: raise _GF({self.ids[node]})")
            known.add(node)
        lines += [f"_s = _seed({result})"] + [f"{n} = None" for n in dict.fromkeys(self.init)]
        lines += (["_ls = _LS()"] if self.uses_live else []) + self.bwd
        outs = "".join((self.g(w) if self.state.get(w) else "None") + ", " for w in self.wrt)
        lines.append(f"return {result}, ({outs})")
        big = {name for node, k in self.ids.items() if type(node.value) is np.ndarray
               and node.value.nbytes >= _BIG for name in (f"v{k}", self.g(node))}
        return lines, self.ns, list(self.ids), big

    def stable(self, node, known) -> bool:
        """Is the type of this call's value fixed by its inputs' known types? (Arithmetic
        and ``math`` functions on real and integer scalars, steps of ``range`` loops.)"""
        fn = node.fn
        if fn is ops.next_item:
            it = unalias(node.args[0])
            return type(it) is PrimitiveCall and it.fn is iter and len(it.args) == 1 and \
                type(it.args[0]) is PrimitiveCall and it.args[0].fn is range and \
                type(it.value).__name__ == "range_iterator"
        if node.kwargs or node.fn_node is not None or not self.known(node.args, known):
            return False
        return symbol(_STABLE_OPS, fn) is not None or (
            type(fn) is types.BuiltinFunctionType and getattr(fn, "__module__", "") == "math")

    @staticmethod
    def known(nodes, known) -> bool:
        """Are these real or integer scalars whose runtime type is the recorded one?"""
        return all(type(x.value) in _FAST and (type(u) is Constant or u in known)
                   for x in nodes for u in (unalias(x),))

    # -- forward -------------------------------------------------------------------------
    def forward(self, node, phase) -> list:
        k, t = self.ids[node], type(node)
        if phase == ENTER:
            if node.method and node.args:
                self.mark(node.args[0])           # the method was looked up on its type
            fn = node.fn_node                     # a function value: the same object (its
            if fn is None or fn in self.made:     # cells are read as recorded); a function
                return self.name_guard(node, k)   # made in this call: the same code
            return [f"if {self.v(fn)} is not {self.bind(fn.value)}: raise _GF({k})"]
        if phase == DONE:
            self.alias(node, node.child.returned.inputs[0])
        elif t is Phi:
            self.alias(node, node.source)
        elif t is Argument:
            return self.argument(node, k)
        elif t is Constant and node.tape is not None:
            self.val[node] = f"v{k}"
            origin = self.plan.get(node)          # reads the global or cell again
            return [f"v{k} = {self.bind(node.value, f'_k{k}')}"] + (
                [f"if {origin(self)} is not v{k}: raise _GF({k})"] if origin else [])
        elif t is PrimitiveCall:
            return self.call(node, k)
        elif t is Branch:
            return [self.branch(node, k)]
        return []

    def alias(self, node, source) -> None:
        if source in self.made:
            self.made.add(node)
        else:
            self.val[node] = self.v(source)

    def argument(self, node, k) -> list:
        src = node.source
        if node.tape is self.tape:
            self.val[node] = f"v{k}"
            return [f"v{k} = {self.plan[node](self)}"]
        if isinstance(src, Node):
            self.alias(node, src)
        elif src is None:                         # a default value
            self.val[node] = self.bind(node.value, f"_k{k}")
        else:
            self.val[node] = f"v{k}"
            if isinstance(src, tuple):
                return [f"v{k} = ({''.join(self.v(s) + ', ' for s in src)})"]
            return [f"v{k} = {{{', '.join(f'{n!r}: {self.v(s)}' for n, s in src.items())}}}"]
        return []

    def name_guard(self, node, k) -> list:
        """A callable looked up by a global name (``helper(x)``, ``len(x)``) must still be the
        one the name gives: a rebinding (a redefined function in a notebook) re-traces."""
        name = getattr(node, "via", None)
        owner = getattr(node.tape.fn, "__func__", node.tape.fn) if node.tape is not None else None
        scope = getattr(owner, "__globals__", None)
        if name is None or scope is None:
            return []
        fallback = scope.get("__builtins__", builtins.__dict__)
        fallback = fallback if isinstance(fallback, dict) else vars(fallback)
        return [f"if {self.bind(scope, '_globals')}.get({name!r}, "
                f"{self.bind(fallback, '_builtins')}.get({name!r})) is not {self.bind(node.fn)}: "
                f"raise _GF({k})"]

    def call(self, node, k) -> list:
        if node in self.made:
            self.val[node] = self.bind(node.value, f"_k{k}")
            return []
        guard = self.name_guard(node, k)
        if guard:
            return guard + self.call_body(node, k)
        return self.call_body(node, k)

    def call_body(self, node, k) -> list:
        if node.method and node.args:
            self.mark(node.args[0])
        fn, a = node.fn, [self.v(x) for x in node.args]
        self.val[node] = f"v{k}"
        callee = None
        if node.fn_node is not None:              # guarded if its rule is used (``run``)
            callee = self.v(node.fn_node)
            self.callee_guard[node] = f"if {callee} != {self.bind(fn)}: raise _GF({k})"
        elif not node.kwargs:
            sym = symbol(BINARY_SYMBOLS, fn) if len(a) == 2 else None
            if sym is not None and sym[-1] == "=" and sym not in ("<=", ">=", "==", "!="):
                self.inplace[node] = f"v{k} = {a[0]} {sym[:-1]} {a[1]}"
                return [f"v{k} = {a[0]}", f"v{k} {sym} {a[1]}"]     # in-place operator
            expr = inline(fn, a, sym, node)
            if expr is not None:
                return [f"v{k} = {expr}"]
        kw = [f"{n}={self.v(x)}" if n.isidentifier() and not keyword.iskeyword(n)
              else f"**{{{n!r}: {self.v(x)}}}" for n, x in node.kwargs.items()]
        return [f"v{k} = {callee or self.bind(fn)}({', '.join(a + kw)})"]

    def branch(self, node, k) -> str:
        op, x = node.op, node.inputs
        if op == "exhausted":
            return f"if _next({self.v(x[0])}, _NO) is not _NO: raise _GF({k})"
        if op is None or op == "is None":
            test = self.v(x[0]) + (" is None" if op else "")
        elif op in _FOLDED:
            test = f"{self.v(x[0])} {op} {self.v(x[1])}"
        else:
            raise NotCompilable(f"a branch on {op!r} ({where(node)})")
        return f"if not ({test}): raise _GF({k})" if node.taken else f"if {test}: raise _GF({k})"

    # -- backward ------------------------------------------------------------------------
    def active(self, node) -> bool:
        return self.activity.active(node)

    def wants(self, node) -> bool:
        return type(node) is not Constant and carries(node.value) and self.active(node)

    def mark(self, node) -> None:
        self.relevant.add(unalias(node))

    def backward(self, node, phase) -> None:
        t = type(node)
        if phase == DONE:
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
        st = self.state.get(target, NONE)
        if st == NONE and not self.cond and mode == "scalar" and expr == self.giveable:
            self.gname[target], self.giveable = expr, None     # hand the variable on
            self.state[target] = SURE
            return
        name = self.g(target)
        if mode in ("item", "general"):
            fn = "_item" if mode == "item" else "_acc"
            line = f"{name} = {fn}({name if st else 'None'}, {expr}, {self.ref(target)})"
        elif mode == "replace" or st == NONE:
            line = f"{name} = {expr}"
        elif st == SURE:
            line = f"{name} = {name} + ({expr})"
        else:
            line = f"{name} = {expr} if {name} is None else {name} + ({expr})"
        if self.cond and st == NONE:
            self.init.append(name)
        sure = st == SURE or (mode not in ("general", "replace") and not self.cond)
        self.state[target] = SURE if sure else MAYBE
        self.emit(line)

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
        rule = lookup(fn) or (lookup(fn) if load_deferred() else None)
        if rule is None:
            raise NotCompilable(f"no VJP rule for {primitive_name(fn)} ({where(node)})")
        for x in list(args) + list(kwargs.values()):
            self.mark(x)
        ans, f2, f1 = f"v{self.ids[node]}", rule.fast2, rule.fast1
        vals = [self.v(x) for x in args]
        if f2 is not None and len(args) == 2 and not kwargs and \
                type(args[0].value) in _FAST and type(args[1].value) in _FAST:
            for i, x in enumerate(args):
                if type(x.value) in SCALARS and type(x) is not Constant:
                    self.add(x, self.vjp_text(f2[i], g, ans, vals), "scalar")
            return
        if f1 is not None and len(args) == 1 and not kwargs and \
                type(args[0].value) in SCALARS and type(args[0]) is not Constant:
            self.add(args[0], self.vjp_text(f1, g, ans, vals), "scalar")
            return
        if type(node.value) is np.ndarray and (rule.vjps is not None or not rule.sparse):
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

    def vjp_text(self, vjp, g, ans, vals) -> str:
        template = TEMPLATES.get((vjp, len(vals)))
        if template is None:
            return f"{self.bind(vjp)}({', '.join([g, ans] + vals)})"
        return template.format(g=g, ans=ans, x=vals[0], y=vals[-1])

    def node_rule(self, node, g, rule) -> None:
        args = node.args
        if rule.node is _drop:
            return
        if rule.node is getitem_rule and len(args) == 2 and type(args[1].value) is int \
                and type(args[0].value) in (list, tuple):
            self.add(args[0], f"{self.v(args[1])}, {g}, {self.v(args[0])}", "item")
            return
        if rule.node is next_item_rule and len(args) == 2:
            self.add(args[0], f"{self.v(args[1])}, {g}, None", "item")
            return
        self.uses_live = True
        inputs = dict.fromkeys(list(args) + list(node.kwargs.values()))
        targets = [x for x in inputs if type(x) is not Constant and self.active(x)]
        for x in targets:
            if self.state.get(x, NONE):
                self.emit(f"_ls.adj[{self.ref(x)}] = {self.g(x)}")

        def live(x):
            return f"_Live({self.ref(x)}, {self.v(x)}, {x in targets})"
        kw = ", ".join(f"{n!r}: {live(x)}" for n, x in node.kwargs.items())
        self.emit(f"{self.bind(rule.node)}(_ls, _Live({self.ref(node)}, v{self.ids[node]}, "
                  f"True, ({''.join(live(x) + ', ' for x in args)}), {{{kw}}}), {g})")
        for x in targets:
            self.add(x, f"_ls.adj.pop({self.ref(x)}, None)", "replace")


def where(node) -> str:
    """A node's dump line, location and source line, for messages."""
    loc = node.loc
    if loc is None:
        return format_node(node)
    return f"{format_node(node)} at {loc}" + (f": {loc.source}" if loc.source else "")


def symbol(table, fn):
    try:
        return table.get(fn)
    except TypeError:                    # an unhashable callable
        return None


def _mode(node) -> str:
    return "scalar" if type(node.value) in SCALARS else "general"


def inline(fn, a, sym, node) -> str | None:
    """The Python expression of an operator-like call on argument expressions ``a``."""
    if sym is not None:
        return f"{a[0]} {sym} {a[1]}"
    usym = symbol(UNARY_SYMBOLS, fn) if len(a) == 1 else None
    if usym is not None:
        return f"{usym}{a[0]}"
    form = symbol(_FORMS, fn) if len(a) == 2 else None
    if form is not None:
        return form.format(*a)
    name = node.args[1].value if len(a) == 2 else None
    if fn is getattr and type(name) is str and name.isidentifier() and not keyword.iskeyword(name):
        return f"{a[0]}.{name}"
    if fn is ops.build_tuple:
        return f"({''.join(x + ', ' for x in a)})"
    return f"[{', '.join(a)}]" if fn is ops.build_list else None


def unalias(node):
    """The node holding the value an alias (phi, bound argument, nested call) stands for."""
    while True:
        t = type(node)
        if t is Phi or (t is Argument and isinstance(node.source, Node)):
            node = node.source
        elif t is NestedCall and node.child is not None and type(node.child.returned) is Return:
            node = node.child.returned.inputs[0]
        else:
            return node
