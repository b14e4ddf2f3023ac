"""Compiled gradients (DESIGN.md §4, compiled replay): a recorded path of ``f`` turned into one
straight-line Python function for the forward value and the backward pass, reused while its
guards hold. The compiled replay itself is ``dcgraph.compiled``; this module adds the gradient.

``compile_gradient(tape, wrt, args, kwargs)`` compiles the path ``tape`` recorded
(``codegen.GradientCode`` writes the source); the result ``cg(args, kwargs) -> (value, {node:
adjoint})`` gives the same adjoints as ``Sweep`` on a fresh trace, or raises ``GuardFailed``
when these arguments take another path. What compiles is ``dcgraph.compiled.check_supported``'s
subset (lists built on the path and caught ``raise``s included); ``NotCompilable`` says why
not. ``structure_key`` is what ``value_and_grad`` keys a function's compiled paths by.

Callables looked up by name when ``f`` was traced (``helper(x)``, ``math.sin``) are bound
then, like the functions of a closure: rebinding such a global later is not seen. Data
globals and closure cells are checked on every call, and so is a function called through a
value (``fns[i](x)``, an argument) unless it was made inside the call.
"""
from __future__ import annotations

from ..compiled import CompiledPath, compile_path
from ..compiled.plan import NO_VALUE, structure, structure_key  # noqa: F401
from ..compiled.support import GuardFailed, NotCompilable, check_supported, where
from .codegen import GradientCode
from .core import Sweep
from numpy import ndarray

from .values import Sparse, carries, dense_array, densify

__all__ = ["compile_gradient", "CompiledGradient", "GuardFailed", "NotCompilable",
           "check_supported", "structure_key"]


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


def upto(g, n: int):
    """The entries of the Sparse ``g`` at positions below ``n`` (a list's length)."""
    return Sparse({k: a for k, a in g.items() if type(k) is int and k < n})


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
    depend on the differentiated arguments; ``n``: a list's length at the node (None: that of
    ``value``). Other attributes are the recorded node's."""

    __slots__ = ("node", "value", "act", "args", "kwargs", "n")

    def __init__(self, node, value, act, args=None, kwargs=None, n=None):
        self.node, self.value, self.act, self.n = node, value, act, n
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
        return len(node.value) if node.n is None else node.n

    def wants(self, node) -> bool:
        return node.act and carries(node.value)

    def active(self, node) -> bool:
        return node.act

    def add(self, node, g) -> None:
        if g is None or not node.act or not carries(node.value):
            return
        key = node.node
        self.adj[key] = accumulate(self.adj.get(key), g, key)


# -- compiled paths ----------------------------------------------------------------------------
def _unit_seed(value):
    return 1.0


class CompiledGradient(CompiledPath):
    """One compiled path: ``cg(args, kwargs) -> (value, {wrt node: adjoint})``; raises
    ``GuardFailed`` when the arguments take another path. ``source`` is the generated code."""

    def __init__(self, source: str, namespace: dict, wrt: list, nodes: list):
        super().__init__(source, namespace, nodes, "compiled gradient")
        self.wrt, self._slots = wrt, {}
        self.fresh = namespace.get("_fresh") or (False,) * len(wrt)   # arrays made per call

    def __call__(self, args, kwargs):
        value, adjoints = self._fn(args, kwargs)
        return value, dict(zip(self.wrt, adjoints))

    def gradient(self, adjoints: tuple, i: int, args: tuple, binding):
        """The dense gradient for positional argument ``i`` of ``args`` from ``adjoints``
        (this path's, in ``wrt`` order); ``binding``: the ``api._Binding`` of the path."""
        slots = self._slots
        if i in slots:
            k, pos, fresh = slots[i]
        else:
            node, pos = binding.slots[i]
            k = self.wrt.index(node) if node in self.wrt else None
            fresh = k is not None and pos is None and self.fresh[k]
            slots[i] = k, pos, fresh
        g = None if k is None else adjoints[k]
        if pos is not None:
            g = g.get(pos) if type(g) is Sparse else None
        value = args[i]
        if fresh and type(g) is ndarray and type(value) is ndarray and g.shape == value.shape \
                and g.dtype == value.dtype and value.dtype.kind == "f":
            return g                         # made by this call: no copy
        return densify(value, g)


def compile_gradient(tape, wrt=None, args=(), kwargs=None, f=None, seed=None) -> CompiledGradient:
    """Compile the path ``tape`` (a root tape of ``track``) recorded, with its gradient.

    ``wrt``: root Argument nodes to differentiate (None: all); ``args``/``kwargs``: the call
    that was traced (only their number and names are used); ``f``: the traced callable (default
    ``tape.fn``; pass it when it is a bound method); ``seed(value)``: the output adjoint
    (default 1.0). Raises ``NotCompilable`` for tapes outside the supported subset.
    """
    arguments = tape.arguments
    chosen = set(arguments if wrt is None else wrt)
    wrt = [a for a in arguments if a in chosen]
    runtime = {"_Sparse": Sparse, "_acc": accumulate, "_item": add_item, "_upto": upto,
               "_Live": Live, "_LS": LiveSweep, "_dense": dense_array,
               "_seed": seed if seed is not None else _unit_seed}
    from .api import _scalar_seed       # (api imports this module)
    unit = seed is None or seed is _unit_seed or seed is _scalar_seed    # 1.0 for a float
    return compile_path(tape, args, kwargs, f, backward=GradientCode, runtime=runtime,
                        cls=lambda source, ns, nodes: CompiledGradient(source, ns, wrt, nodes),
                        wrt=wrt, unit=unit)
