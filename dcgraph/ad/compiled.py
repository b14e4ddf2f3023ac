"""Compiled gradients (DESIGN.md §4, compiled replay): a recorded path of ``f`` turned into one
straight-line Python function for the forward value and the backward pass, reused while its
guards hold.

``compile_gradient(tape, wrt, args, kwargs)`` compiles the path ``tape`` recorded
(``codegen`` writes the source); the result ``cg(args, kwargs) -> (value, {node: adjoint})``
gives the same adjoints as ``Sweep`` on a fresh trace, or raises ``GuardFailed`` when these
arguments take another path. Supported: tapes without container mutation, without exceptions
(raised or caught), without generators, and whose made functions are only called;
``check_supported`` raises ``NotCompilable`` with the reason otherwise. ``structure_key``
is what ``value_and_grad`` keys a function's compiled paths by.

Callables looked up by name when ``f`` was traced (``helper(x)``, ``math.sin``) are bound
then, like the functions of a closure: rebinding such a global later is not seen. Data
globals and closure cells are checked on every call, and so is a function called through a
value (``fns[i](x)``, an argument) unless it was made inside the call.
"""
from __future__ import annotations

import dis
import re
import types

import numpy as np

from ..tracer import ops
from ..tape import Argument, Constant, NestedCall, PrimitiveCall, Raise, Return
from .codegen import NotCompilable, generate, symbol, unalias, where
from .codegen_backward import literal_list
from ..tracer.summary import require_values
from .core import Sweep
from .effects import effect_of
from .values import Sparse, carries, dense_array

__all__ = ["compile_gradient", "CompiledGradient", "GuardFailed", "NotCompilable",
           "check_supported", "structure_key"]

NO_VALUE = object()
_VAR = re.compile(r"\b[vg]\d+\b")
_GEN_FLAGS = 0x20 | 0x80 | 0x100 | 0x200   # generator, coroutine, async generator
_EXC_CONSTANTS = {"exception", "matched exceptions", "unmatched exceptions"}
_NEVER_RERUN = {ops.match_class: "a match statement with a class pattern",
                ops.call_result: "a mutating call's result",
                ops.view_of: "array aliasing", ops.write_through_view: "array aliasing"}


class GuardFailed(Exception):
    """These arguments take another path than the compiled one (``args[0]``: the number of
    the guarding node, -1 for an iterator that ran out early; ``CompiledGradient.describe``)."""


class StaleAccess(NotCompilable):
    """A rule read more of a node than compiled replay provides (its inputs' own inputs)."""


# -- what the generated code calls -----------------------------------------------------------
def accumulate(old, g, owner):
    """``Sweep.add``'s accumulation: the new adjoint of ``owner`` (a node) given its old one."""
    if g is None:
        return old
    if old is None:
        if type(g) is Sparse and g.owner is None:
            g.owner = owner
        return g
    if type(old) is Sparse and type(g) is Sparse:
        if old.owner is not owner:
            old = Sparse(old)
            old.owner = owner
        old.merge(g)
        return old
    return old + g


def add_item(old, key, g, container, owner):
    """``accumulate(old, Sparse({key: g}), owner)`` without building the Sparse; a negative
    ``key`` counts from the end of ``container``."""
    if key < 0:
        key += len(container)
    if type(old) is Sparse and old.owner is owner:      # the common case first
        prev = old.get(key)
        old[key] = g if prev is None else prev + g
        return old
    if old is None:
        old = Sparse({key: g})
        old.owner = owner
        return old
    if type(old) is not Sparse:
        return old + Sparse({key: g})
    if old.owner is not owner:
        old = Sparse(old)
        old.owner = owner
    prev = old.get(key)
    old[key] = g if prev is None else prev + g
    return old


class Live:
    """A node's stand-in for a rule at run time: this call's ``value`` (and, for the node the
    rule pulls back through, its ``args``/``kwargs`` as stand-ins); ``act``: does the node
    depend on the differentiated arguments. Other attributes are the recorded node's."""

    __slots__ = ("node", "value", "act", "args", "kwargs")

    def __init__(self, node, value, act, args=None, kwargs=None):
        self.node, self.value, self.act = node, value, act
        if args is not None:
            self.args, self.kwargs = args, kwargs

    def __getattr__(self, name):
        if name in ("args", "kwargs", "inputs", "result", "child", "source"):
            raise StaleAccess(f"a rule read the {name} of an input ({where(self.node)})")
        return getattr(self.node, name)


class LiveSweep(Sweep):
    """The part of ``Sweep`` rules use, over ``Live`` stand-ins: adjoints are kept per
    recorded node; nothing is mutated, so values are as recorded in this call."""

    def __init__(self):
        self.root, self.wrt, self.adj, self._active, self._versions = None, None, {}, {}, None

    @property
    def versions(self):
        raise StaleAccess("a rule asked for container versions")

    def value(self, node):
        return node.value

    def length(self, node) -> int:
        return len(node.value)

    def wants(self, node) -> bool:
        return node.act and carries(node.value)

    def active(self, node) -> bool:
        return node.act

    def add(self, node, g) -> None:
        if g is None or not node.act or not carries(node.value):
            return
        key = node.node
        self.adj[key] = accumulate(self.adj.get(key), g, key)


# -- what compiles -----------------------------------------------------------------------------
def check_supported(tape) -> None:
    """Raise ``NotCompilable`` (with the reason) unless compiled replay handles ``tape``."""
    _check_tape(tape)
    for node in tape.walk():
        t = type(node)
        if t is NestedCall:
            _check_call(node)
            _check_tape(node.child)
        elif t is Raise:
            raise NotCompilable(f"an exception was raised ({where(node)})")
        elif t is Constant and node.tape is not None and node.name in _EXC_CONSTANTS:
            raise NotCompilable(f"an exception was caught ({where(node)})")
        elif t is PrimitiveCall:
            if node.mutates is not None and not literal_list(node):
                raise NotCompilable(f"container mutation ({where(node)})")
            why = symbol(_NEVER_RERUN, node.fn) or effect_of(node)
            if why is not None:      # a guard failing after it would make it happen twice
                raise NotCompilable(f"{why} ({where(node)})")


def _check_tape(tape) -> None:
    if tape.raised or type(tape.returned) is not Return:
        raise NotCompilable(f"{tape.name} raised an exception")
    code = tape.code
    if code is None:
        return
    if code.co_flags & _GEN_FLAGS:
        raise NotCompilable(f"{tape.name} is a generator or coroutine")
    for ins in dis.get_instructions(code):
        if ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL") or (
                ins.opname in ("STORE_DEREF", "DELETE_DEREF") and ins.argval in code.co_freevars):
            raise NotCompilable(f"{tape.name} assigns the global or nonlocal {ins.argval!r}")


def _check_call(node) -> None:
    child, fn_node = node.child, node.fn_node
    if child is None:
        raise NotCompilable(f"a traced call without a tape ({where(node)})")
    if fn_node is None:
        return
    if type(fn_node.value) is not types.FunctionType:
        raise NotCompilable(f"a traced call of a {type(fn_node.value).__name__} value "
                            f"({where(node)})")
    made = unalias(fn_node)
    if type(made) is PrimitiveCall and made.fn is ops.make_function and any(
            type(a) is Argument and a.source is None for a in child.nodes):
        raise NotCompilable(f"a function made inside f uses a default argument ({where(node)})")


# -- binding the call's arguments, reading globals again ---------------------------------------
def _plan(tape, f, nargs: int, kwnames: tuple) -> dict:
    """Root Argument -> expression of its value over ``_a``/``_kw``; global or closure
    Constant -> expression that reads the name again (as functions of the generator)."""
    plan = _root_plan(tape, f, nargs, kwnames)
    for node in tape.walk():
        if type(node) is Constant and node.tape is not None:
            origin = _origin(node)
            if origin is not None:
                plan[node] = origin
    return plan


def _root_plan(tape, f, nargs: int, kwnames: tuple) -> dict:
    arguments, nodes = tape.arguments, tape.nodes
    k = nargs + len(kwnames)
    call = nodes[k] if len(nodes) > k else None
    if type(call) is PrimitiveCall and call.fn is f and len(arguments) == k:   # f untraced
        plan = {a: (lambda gen, i=i: f"_a[{i}]") for i, a in enumerate(arguments[:nargs])}
        for a, name in zip(arguments[nargs:], kwnames):
            plan[a] = lambda gen, name=name: f"_kw[{name!r}]"
        return plan
    code = tape.code
    if code is None:
        raise NotCompilable("the root tape has no code object")
    argc, kwonly, flags = code.co_argcount, code.co_kwonlyargcount, code.co_flags
    offset = 1 if type(f) is types.MethodType else 0
    named = set(code.co_varnames[:argc + kwonly])
    plan = {}
    for j, a in enumerate(arguments):
        name, q = a.name, j - offset
        if j < argc and 0 <= q < nargs:
            plan[a] = lambda gen, q=q: f"_a[{q}]"
        elif j < argc + kwonly and name in kwnames:
            plan[a] = lambda gen, name=name: f"_kw[{name!r}]"
        elif j < argc + kwonly:          # self of a bound method, or a default value
            hint = "_self" if q < 0 else f"_default{j}"
            plan[a] = lambda gen, v=a.value, hint=hint: gen.bind(v, hint)
        elif j == argc + kwonly and flags & 0x04:
            plan[a] = lambda gen, s=argc - offset: f"_a[{s}:]"
        else:
            extra = [n for n in kwnames if n not in named]
            plan[a] = lambda gen, extra=extra: "{" + ", ".join(
                f"{n!r}: _kw[{n!r}]" for n in extra) + "}"
    return plan


def _origin(node):
    """How to read a global or closure Constant's name again (None when unknown)."""
    tape, name, value = node.tape, node.name, node.value
    fn = getattr(tape.fn, "__func__", tape.fn)
    if type(fn) is not types.FunctionType or fn.__code__ is not tape.code or name is None:
        return None
    code = fn.__code__
    if name in code.co_freevars and fn.__closure__:
        cell = fn.__closure__[code.co_freevars.index(name)]
        try:
            if cell.cell_contents is value:
                return lambda gen: f"{gen.bind(cell, '_cell')}.cell_contents"
        except ValueError:             # an empty cell
            return None
    if name in code.co_names and fn.__globals__.get(name, NO_VALUE) is value:
        return lambda gen: f"{gen.bind(fn.__globals__, '_globals')}.get({name!r}, _NO)"
    return None


# -- argument structure ------------------------------------------------------------------------
_NESTED = frozenset({list, tuple, dict, np.ndarray})
_LONG = 256


def structure(value):
    """A hashable description of a value's structure: leaf types, array shapes and dtypes,
    list/tuple lengths, dict keys (only the length of lists longer than ``_LONG``)."""
    t = type(value)
    if t is list or t is tuple:
        if len(value) > _LONG:               # element types are guarded where they are read
            return t, len(value)
        types_ = tuple(map(type, value))
        if _NESTED.isdisjoint(types_):
            return t, types_
        return t, tuple(map(structure, value))
    if t is np.ndarray:
        return t, value.shape, value.dtype.str
    if t is dict:
        return t, tuple(value), tuple(map(structure, value.values()))
    if isinstance(value, tuple):
        return t, tuple(map(structure, value))
    return t


def structure_key(args: tuple, kwargs: dict):
    """The cache key of a call: the structure of each argument and the keyword names."""
    return tuple(map(structure, args)), tuple(kwargs), tuple(map(structure, kwargs.values()))


# -- compiled paths ----------------------------------------------------------------------------
def _unit_seed(value):
    return 1.0


class CompiledGradient:
    """One compiled path: ``cg(args, kwargs) -> (value, {wrt node: adjoint})``; raises
    ``GuardFailed`` when the arguments take another path. ``source`` is the generated code."""

    def __init__(self, source: str, namespace: dict, wrt: list, nodes: list):
        self.source, self.wrt, self.nodes = source, wrt, nodes
        exec(compile(source, f"<dcgraph compiled gradient {id(self):#x}>", "exec"), namespace)
        self._fn = namespace["compiled"]

    def __call__(self, args, kwargs):
        value, adjoints = self._fn(args, kwargs)
        return value, dict(zip(self.wrt, adjoints))

    def describe(self, failure: GuardFailed) -> str:
        """The guard a ``GuardFailed`` of this path came from."""
        k = failure.args[0] if failure.args else -1
        return where(self.nodes[k]) if 0 <= k < len(self.nodes) else "an iterator ran out early"


def compile_gradient(tape, wrt=None, args=(), kwargs=None, f=None, seed=None) -> CompiledGradient:
    """Compile the path ``tape`` (a root tape of ``track``) recorded.

    ``wrt``: root Argument nodes to differentiate (None: all); ``args``/``kwargs``: the call
    that was traced (only their number and names are used); ``f``: the traced callable (default
    ``tape.fn``; pass it when it is a bound method); ``seed(value)``: the output adjoint
    (default 1.0). Raises ``NotCompilable`` for tapes outside the supported subset.
    """
    require_values(tape, "compiled replay (compile_gradient)")
    check_supported(tape)
    arguments = tape.arguments
    chosen = set(arguments if wrt is None else wrt)
    wrt = [a for a in arguments if a in chosen]
    kwargs = kwargs or {}
    plan = _plan(tape, tape.fn if f is None else f, len(args), tuple(kwargs))
    runtime = {"_GF": GuardFailed, "_Sparse": Sparse, "_acc": accumulate, "_item": add_item,
               "_Live": Live, "_LS": LiveSweep, "_dense": dense_array, "_NO": NO_VALUE,
               "_seed": seed if seed is not None else _unit_seed}
    lines, namespace, nodes, big = generate(tape, wrt, plan, runtime)
    source = ("def compiled(_a, _kw):\n    try:\n"
              + "".join(f"        {line}\n" for line in _free_arrays(lines, big))
              + "    except StopIteration:           # an iterator ran out early\n"
              + "        raise _GF(-1) from None\n")
    return CompiledGradient(source, namespace, wrt, nodes)


def _free_arrays(lines: list, big: set) -> list:
    """Delete the variables ``big`` after the statement that uses them last: arrays kept to
    the end of a call make malloc hand their pages back and fault them in on every call."""
    tops = [i for i, line in enumerate(lines) if line[0] != " "] + [len(lines)]
    last: dict = {}
    for top, end in zip(tops, tops[1:]):
        for name in _VAR.findall("\n".join(lines[top:end])):
            if name in big:
                last[name] = top
    after: dict = {}
    for name, top in last.items():
        after.setdefault(top, []).append(name)
    out = []
    for top, end in zip(tops, tops[1:]):
        out += lines[top:end] + ([f"del {', '.join(after[top])}"] if top in after else [])
    return out
