"""Where the compiled code reads its inputs, and the argument structure paths are keyed by.

``plan(tape, f, nargs, kwnames)`` maps each root ``Argument`` to a function of the code
generator giving the expression of its value over ``_a`` (positional) and ``_kw`` (keyword
arguments), and each global or closure ``Constant`` to one that reads the name again (so a
rebound global fails a guard; not the cells a function's ``FIXED_CELLS`` attribute names).
``structure_key(args, kwargs)`` is the hashable description of
a call that paths are cached by: leaf types, array shapes and dtypes, lengths, dict keys.
"""
from __future__ import annotations

import types
import numpy as np

from ..tape import Constant, PrimitiveCall
from .support import NotCompilable

__all__ = ["plan", "structure", "structure_key", "NO_VALUE", "FIXED_CELLS"]

NO_VALUE = object()
#: function attribute: the names of its closure cells that nothing rebinds (a layer that makes
#: a function with cells of generated names, only its own code reads, may set it): read once,
#: when compiling, not again on each call
FIXED_CELLS = "__dcgraph_fixed_cells__"


def plan(tape, f, nargs: int, kwnames: tuple) -> dict:
    """Root Argument -> expression of its value over ``_a``/``_kw``; global or closure
    Constant -> expression that reads the name again (as functions of the generator)."""
    out = _root_plan(tape, f, nargs, kwnames)
    for node in tape.walk():
        if type(node) is Constant and node.tape is not None:
            origin = _origin(node)
            if origin is not None:
                out[node] = origin
    return out


def _root_plan(tape, f, nargs: int, kwnames: tuple) -> dict:
    arguments, nodes = tape.arguments, tape.nodes
    k = nargs + len(kwnames)
    call = nodes[k] if len(nodes) > k else None
    if type(call) is PrimitiveCall and call.fn is f and len(arguments) == k:   # f untraced
        out = {a: (lambda gen, i=i: f"_a[{i}]") for i, a in enumerate(arguments[:nargs])}
        for a, name in zip(arguments[nargs:], kwnames):
            out[a] = lambda gen, name=name: f"_kw[{gen.bind(name, '_key')}]"
        return out
    code = tape.code
    if code is None:
        raise NotCompilable("the root tape has no code object")
    argc, kwonly, flags = code.co_argcount, code.co_kwonlyargcount, code.co_flags
    offset = 1 if type(f) is types.MethodType else 0
    named = set(code.co_varnames[:argc + kwonly])
    out = {}
    for j, a in enumerate(arguments):
        name, q = a.name, j - offset
        if j < argc and 0 <= q < nargs:
            out[a] = lambda gen, q=q: f"_a[{q}]"
        elif j < argc + kwonly and name in kwnames:
            out[a] = lambda gen, name=name: f"_kw[{gen.bind(name, '_key')}]"
        elif j < argc + kwonly:          # self of a bound method, or a default value
            hint = "_self" if q < 0 else f"_default{j}"
            out[a] = lambda gen, v=a.value, hint=hint: gen.bind(v, hint)
        elif j == argc + kwonly and flags & 0x04:
            out[a] = lambda gen, s=argc - offset: f"_a[{s}:]"
        else:
            extra = [n for n in kwnames if n not in named]
            out[a] = lambda gen, extra=extra: "{" + ", ".join(
                f"{gen.bind(n, '_key')}: _kw[{gen.bind(n, '_key')}]" for n in extra) + "}"
    return out


def _origin(node):
    """How to read a global or closure Constant's name again (None when unknown)."""
    tape, name, value = node.tape, node.name, node.value
    fn = getattr(tape.fn, "__func__", tape.fn)
    if type(fn) is not types.FunctionType or fn.__code__ is not tape.code or name is None:
        return None
    code = fn.__code__
    if name in code.co_freevars and fn.__closure__:
        if name in getattr(fn, FIXED_CELLS, ()):
            return None                # cells the function's maker never rebinds: as read
        cell = fn.__closure__[code.co_freevars.index(name)]
        try:
            if cell.cell_contents is value:
                return lambda gen: f"{gen.bind(cell, '_cell')}.cell_contents"
        except ValueError:             # an empty cell
            return None
    if name in code.co_names and fn.__globals__.get(name, NO_VALUE) is value:
        return lambda gen: (f"{gen.bind(fn.__globals__, '_globals')}.get("
                            f"{gen.bind(name, '_key')}, _NO)")
    return None


# -- argument structure ------------------------------------------------------------------------
_SCALARS = frozenset({float, int, bool, np.float64, np.float32, np.int64, complex})


def structure(value):
    """A hashable description of a value's structure: its type; array shapes and dtypes; the
    lengths of lists and tuples, not their items (the compiled code guards the type of every
    item it reads, arrays' shapes and dtypes included, and ``densify`` looks at every item at
    run time, so calls differing only in items share a key); dict keys and values."""
    t = type(value)
    if t in _SCALARS:                        # the common cases first
        return t
    if t is np.ndarray:
        return t, value.shape, value.dtype
    if t is list or t is tuple:
        return t, len(value)
    if t is dict:
        return t, tuple(value), tuple(map(structure, value.values()))
    if isinstance(value, tuple):
        return t, tuple(map(structure, value))
    return t


def structure_key(args: tuple, kwargs: dict):
    """The cache key of a call: the structure of each argument and the keyword names (a
    call without keywords: the tuple of the arguments' structures alone; it never equals a
    key with keywords, whose second entry is a tuple of names)."""
    if not kwargs:
        return (structure(args[0]),) if len(args) == 1 else tuple(map(structure, args))
    return tuple(map(structure, args)), tuple(kwargs), tuple(map(structure, kwargs.values()))
