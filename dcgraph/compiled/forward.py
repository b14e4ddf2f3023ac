"""The forward half of compiled replay: straight-line Python source for one recorded path.

``PathCode(tape, plan, lengths).run() -> (lines, namespace, nodes, big)``: the body of
``compiled(_a, _kw)``, which recomputes every node of the path in execution order (nested calls
inlined; phis and bound arguments are aliases; lists built on the path are built again, with
their ``append``/``extend`` calls) and raises ``_GF(k)`` where the arguments would send control
elsewhere (branches, loop exits, caught exceptions of another class, rebound globals, other
callables, value types that later code relies on). Int arithmetic and comparisons on ints known
when compiling (literals, steps of constant ranges) are folded, and items of tuple displays are
read directly (unpacking); which types and ints are known without a guard: ``known_scalars``.
A ``raise`` in traced code is not executed: the path already continues at the handler that
caught it, whose match is guarded. Inline forms may add lines that run after the forward code
(``closing``, ``inline.Site.closing``).

Subclasses add a backward pass (``dcgraph.ad.codegen.GradientCode``) through three hooks:
``tail(ret, result)`` (lines after the forward code and the returned expression),
``guards_callee(node)``, ``relevant`` (nodes whose runtime type must be the recorded one) and
``implied`` (nodes among them whose type guards the backward pass adds imply).
``nodes[k]`` is node ``k``; ``big`` names variables holding large arrays; ``plan`` maps root
arguments (and globals) to expressions (``plan``); ``lengths`` is ``check_supported``'s result.
Only ast-safe text goes into the source: generated names, reprs of numbers, identifiers checked
with ``str.isidentifier``; every other object is bound in the namespace under a generated name.
"""
from __future__ import annotations

import builtins
import keyword
import math
import operator
import re

import numpy as np

from ..tape import Argument, Branch, Constant, NestedCall, Node, Phi, PrimitiveCall, Return
from ..tape.printing import BINARY_SYMBOLS
from ..tracer import ops
from .expressions import inline, tuple_item
from .inline import inline_call, recorded_callee
from .known_scalars import FAST, fixed_int, folds, int_range, known_scalars, range_step, \
    stable_type
from .support import NotCompilable, symbol, unalias, where

__all__ = ["PathCode", "ENTER", "NODE", "DONE", "inline", "tuple_item", "FAST"]

ENTER, NODE, DONE = 0, 1, 2              # event phases: a nested call is entered, then done
_COMPARE = {"<", "<=", "==", "!=", ">", ">="}
_FOLDED = _COMPARE | {"is", "is not", "in", "not in"}
_METHODS = {list.append: "append", list.extend: "extend"}
_BIG = 1 << 16                           # bytes: arrays at least this large are freed early
_LOCAL = re.compile(r"[vg]\d+$")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*$")


class PathCode:
    """Generator of one path's straight-line code (see the module)."""

    def __init__(self, tape, plan: dict, lengths: dict, runtime: dict):
        self.tape, self.plan, self.lengths = tape, plan, lengths
        self.ns = dict(runtime, _type=type, _next=next, _cos=math.cos, _sin=math.sin,
                       _isinstance=isinstance)
        self.bound: dict = {}            # id(object) -> namespace name
        self.ids: dict = {}              # node -> number
        self.val: dict = {}              # node -> expression of its value
        self.events: list = []           # (node, phase) in execution order
        self.made: set = set()           # functions made inside f (and aliases): only called
        self.inplace: dict = {}          # in-place operator call -> its one-line form
        self.callee_guard: dict = {}     # call of a computed callable -> its guard
        self.relevant: set = set()       # nodes whose runtime type must be the recorded one
        self.implied: set = set()        # ... or whose type later guards imply
        self.steps: dict = {}            # next_item of a constant range -> its known int
        self.folded: set = set()         # iterators of constant ranges (steps known)
        self.seen: dict = {}             # reads done once: globals, list items, name guards
        self.fixed: set = set()          # calls an inline form gave as their recorded value
        self.typed: set = set()          # calls an inline form gave with the recorded type
        self.closing: list = []          # ``() -> lines`` after the forward code (inline forms)

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
            if t in (int, bool) or value is None or (t is float and math.isfinite(value)):
                return f"({value!r})" if repr(value)[0] == "-" else repr(value)
            return self.bind(value, "_k")
        try:
            return self.val[node]
        except KeyError:
            raise NotCompilable(f"a value from outside the path is used ({where(node)})") from None

    def mark(self, node) -> None:
        """Code after this point relies on ``node``'s type: guard it if it may change."""
        self.relevant.add(node if type(node) is PrimitiveCall else unalias(node))

    # -- hooks for a backward pass ---------------------------------------------------------
    def tail(self, ret, result: str) -> tuple:
        """Lines after the forward code, and the expression ``compiled`` returns."""
        return [], result

    def names_of(self, node, k) -> tuple:
        """The variables holding node ``k``'s arrays (freed after their last use)."""
        return (f"v{k}",)

    def guards_callee(self, node) -> bool:
        """Must a call through a computed callable check it is the recorded one?"""
        return True

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
        written, ends = [], []           # every event's lines, one list (few live objects)
        for node, phase in self.events:
            written += self.forward(node, phase)
            ends.append(len(written))
        closing = [line for make in self.closing for line in make()]
        ret = self.tape.returned.inputs[0]
        result = self.v(ret)
        tail, out = self.tail(ret, result)
        lines, known, guarded, start = [], set(), set(), 0
        for (node, phase), end in zip(self.events, ends):
            if node in self.callee_guard and self.guards_callee(node):
                lines.append(self.callee_guard[node])
                lines += written[start:end]
            elif node in self.inplace and known_scalars(node.args, known):
                lines.append(self.inplace[node])  # ``a += b`` is ``a + b`` on scalars
            elif end > start:
                lines += written[start:end]
            start = end
            if phase == NODE and type(node) is PrimitiveCall and node not in self.made \
                    and node.mutates is None \
                    and not stable_type(node, known, self.typed, self.steps):
                if node not in self.relevant or node in self.implied:
                    continue
                test = f"_type({self.v(node)}) is not {self.bind(type(node.value))}"
                if test not in guarded:           # a value read once, used by several nodes
                    guarded.add(test)
                    lines.append(f"if {test}: raise _GF({self.ids[node]})")
            known.add(node)
        lines += closing + tail + [f"return {out}"]
        big = {name for node, k in self.ids.items() if type(node.value) is np.ndarray
               and node.value.nbytes >= _BIG for name in self.names_of(node, k)}
        return lines, self.ns, list(self.ids), big

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
            if type(node.child.returned) is Return:   # else it raised: the path goes on at
                self.alias(node, node.child.returned.inputs[0])   # the handler
        elif t is Phi:
            self.alias(node, node.source)
        elif t is Argument:
            return self.argument(node, k)
        elif t is Constant and node.tape is not None:
            seen = self.global_read(node)
            if seen in self.seen:                 # the same global read again, same object:
                self.val[node] = self.seen[seen]  # nothing on the path rebinds it
                return []
            self.val[node] = f"v{k}"
            if seen is not None:
                self.seen[seen] = f"v{k}"
            origin = self.plan.get(node)          # reads the global or cell again
            return [f"v{k} = {self.bind(node.value, f'_k{k}')}"] + (
                [f"if {origin(self)} is not v{k}: raise _GF({k})"] if origin else [])
        elif t is PrimitiveCall:
            return self.call(node, k)
        elif t is Branch:
            return self.branch(node, k)
        return []

    @staticmethod
    def global_read(node):
        """A key for a Constant read from a module's globals (None for closure cells, whose
        cells differ between closures of one code object)."""
        code, fn = node.tape.code, getattr(node.tape.fn, "__func__", node.tape.fn)
        scope = getattr(fn, "__globals__", None)
        if code is None or scope is None or node.name in code.co_freevars:
            return None
        return node.name, id(node.value), id(scope)

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
            items = ", ".join(f"{self.bind(n, '_key')}: {self.v(s)}" for n, s in src.items())
            return [f"v{k} = {{{items}}}"]
        return []

    def name_guard(self, node, k) -> list:
        """A callable looked up by a global name (``helper(x)``, ``len(x)``) must still be the
        one the name gives: a rebinding (a redefined function in a notebook) re-traces."""
        name = getattr(node, "via", None)
        if type(name) is not str:
            return []
        owner = getattr(node.tape.fn, "__func__", node.tape.fn) if node.tape is not None else None
        scope = getattr(owner, "__globals__", None)
        if scope is None or (id(scope), name, id(node.fn)) in self.seen:
            return []
        self.seen[id(scope), name, id(node.fn)] = None
        fallback = scope.get("__builtins__", builtins.__dict__)
        fallback = fallback if isinstance(fallback, dict) else vars(fallback)
        key = self.bind(name, "_key")
        return [f"if {self.bind(scope, '_globals')}.get({key}, "
                f"{self.bind(fallback, '_builtins')}.get({key})) is not {self.bind(node.fn)}: "
                f"raise _GF({k})"]

    def call(self, node, k) -> list:
        if node in self.made:
            self.val[node] = self.bind(node.value, f"_k{k}")
            return []
        guard = self.name_guard(node, k)
        body = inline_call(self, node, k)
        return guard + (self.call_body(node, k) if body is None else body)

    def call_body(self, node, k) -> list:
        if node.method and node.args:
            self.mark(node.args[0])
        fn, a = node.fn, [self.v(x) for x in node.args]
        if node.mutates is not None:              # a list built on the path grows
            self.val[node] = a[0]
            n = self.lengths.checked.get(node)
            check = [f"if len({a[1]}) != {n}: raise _GF({k})"] if n is not None else []
            return check + [f"{a[0]}.{_METHODS[fn]}({a[1]})"]
        if fn is ops.next_item and type(node.value) is int and range_step(node) \
                and int_range(node):
            it = unalias(node.args[0])            # range(ints): the steps are known once
            guard = [] if it in self.folded else [   # its bounds are the recorded ones
                f"if {self.v(a)} != {a.value!r}: raise _GF({k})" for a in it.args[0].args
                if not (type(a) is Constant and a.tape is None)]
            self.steps[node] = node.value
            self.folded.add(it)
            self.val[node] = repr(node.value) if node.value >= 0 else f"({node.value!r})"
            return guard
        item = tuple_item(node) if fn is operator.getitem else None
        if item is not None and unalias(node.args[0]) not in self.made:
            self.alias(node, item)            # unpacking a tuple built on the path
            return []
        if type(node.value) is int and folds(node, self.steps):     # ints known at compile time
            self.steps[node] = node.value
            self.val[node] = repr(node.value) if node.value >= 0 else f"({node.value!r})"
            return []
        if fn is operator.getitem and len(a) == 2 and not node.kwargs and a[1].isdigit() \
                and type(node.args[0].value) in (list, tuple):
            seen = (a[0], a[1])                   # xs[3] read again: the same item (lists
            if seen in self.seen:                 # only grow on a compiled path)
                self.val[node] = self.seen[seen]
                return []
            self.seen[seen] = f"v{k}"
        self.val[node] = f"v{k}"
        callee = None
        if node.fn_node is not None:              # guarded if its rule is used (``run``)
            callee = self.v(node.fn_node)
            if not recorded_callee(node):
                self.callee_guard[node] = f"if {callee} != {self.bind(fn)}: raise _GF({k})"
        elif not node.kwargs:
            sym = symbol(BINARY_SYMBOLS, fn) if len(a) == 2 else None
            if sym is not None and sym[-1] == "=" and sym not in ("<=", ">=", "==", "!="):
                self.inplace[node] = f"v{k} = {a[0]} {sym[:-1]} {a[1]}"
                return [f"v{k} = {a[0]}", f"v{k} {sym} {a[1]}"]     # in-place operator
            expr = inline(fn, a, sym, node)
            if expr is not None:
                return [f"v{k} = {expr}"]
        if fn is np.sum and len(a) == 1 and not node.kwargs and callee is None \
                and type(node.args[0].value) is np.ndarray:
            self.mark(node.args[0])               # the method np.sum calls, without its
            return [f"v{k} = {a[0]}.sum()"]       # dispatch (the type is guarded)
        kw = [f"{n}={self.v(x)}" if n.isidentifier() and not keyword.iskeyword(n)
              else f"**{{{self.bind(n, '_key')}: {self.v(x)}}}" for n, x in node.kwargs.items()]
        return [f"v{k} = {callee or self.bind(fn)}({', '.join(a + kw)})"]

    def branch(self, node, k) -> list:
        op, x = node.op, node.inputs
        if op == "exhausted":
            if unalias(x[0]) in self.folded:
                return []                         # a constant range ends where it ended
            return [f"if _next({self.v(x[0])}, _NO) is not _NO: raise _GF({k})"]
        if op is None or op == "is None":
            test = self.v(x[0]) + (" is None" if op else "")
        elif op in _FOLDED:
            if op in _COMPARE and fixed_int(x[0], self.steps) and fixed_int(x[1], self.steps):
                return []                         # ints known when compiling: as recorded
            test = f"{self.v(x[0])} {op} {self.v(x[1])}"
        elif op == "matches":                     # an except clause: exception, class(es)
            test = f"_isinstance({self.v(x[0])}, {self.v(x[1])})"
        else:
            raise NotCompilable(f"a branch on {op!r} ({where(node)})")
        return [f"if not ({test}): raise _GF({k})" if node.taken else f"if {test}: raise _GF({k})"]
