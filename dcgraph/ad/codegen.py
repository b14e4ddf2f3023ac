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

from ..tracer import ops
from ..tape.printing import BINARY_SYMBOLS, UNARY_SYMBOLS
from ..tape import Argument, Branch, Constant, NestedCall, Node, Phi, PrimitiveCall
from .core import _FAST, Sweep
from .codegen_backward import (DONE, ENTER, NODE, TEMPLATES, BackwardEmitter,  # noqa: F401
                               NotCompilable, _mode, literal_list, unalias, where)

__all__ = ["generate", "NotCompilable", "TEMPLATES", "where", "symbol"]


# (value rule, number of arguments) -> its arithmetic inline: same operations in the same order
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


class _Gen(BackwardEmitter):
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
        self.owned: set = set()          # nodes whose adjoint is a buffer made this call
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
        if literal_list(node):                    # [1.0, 2.0]: a fresh list, extended
            return [f"v{k} = {a[0]}", f"v{k}.extend({a[1]})"]
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
def symbol(table, fn):
    try:
        return table.get(fn)
    except TypeError:                    # an unhashable callable
        return None


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

