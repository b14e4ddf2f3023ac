"""Adjoint values: sparse container adjoints, accumulation, un-broadcasting, densifying.

An adjoint has the "shape" of the value it belongs to:

* a float (or numpy scalar) for a real scalar,
* an ndarray of the same shape for a float array, or a ``Sparse`` of index -> adjoint (int or
  tuple-of-int keys, written by element reads) that is densified on demand,
* a ``Sparse`` for a list, tuple, dict, iterator or object: position / key / attribute name ->
  adjoint of that element; absent entries are zero.

Integer, boolean, string and other non-numeric values carry no adjoint (``carries``).
"""
from __future__ import annotations

import types

import numpy as np

__all__ = ["Sparse", "RESULT", "carries", "unbroadcast", "densify", "dense_array", "as_adjoint",
           "add"]

ndarray = np.ndarray

# Values of these types never carry an adjoint.
_NO_ADJOINT = frozenset({int, bool, str, bytes, type(None), range, slice, type,
                         types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
                         types.MethodType, type(Ellipsis), np.dtype})
# real scalars: the sweep's fast paths and ``wants`` treat them without activity checks
SCALARS = frozenset({float, np.float64, np.float32, np.float16, np.longdouble})


class _Result:
    """Key of a mutation's *returned* value inside its Sparse adjoint (``list.pop`` ...)."""

    __slots__ = ()

    def __repr__(self):
        return "RESULT"


RESULT = _Result()


class Sparse(dict):
    """Sparse adjoint of a container: position / key / attribute / index -> adjoint.

    ``owner`` is the node whose adjoint this object is; only the owner merges in place
    (adjoints handed along unchanged, e.g. through a phi, are copied before merging).
    """

    owner = None                    # set on the instance when a node claims it
    __array_ufunc__ = None          # make ``ndarray + Sparse`` call ``Sparse.__radd__``

    def merge(self, other: "Sparse") -> None:
        """Add ``other`` into self (in place)."""
        for k, v in other.items():
            old = self.get(k)
            self[k] = v if old is None else add(old, v)

    def __add__(self, other):
        if type(other) is Sparse:
            out = Sparse(self)
            out.merge(other)
            return out
        if isinstance(other, ndarray):
            out = np.array(other, dtype=np.result_type(other.dtype, float), copy=True)
            _add_into(out, self)
            return out
        return NotImplemented

    __radd__ = __add__

    def __repr__(self):
        return f"Sparse({dict.__repr__(self)})"


def add(a, b):
    """``a + b`` for adjoints (never in place)."""
    return a + b


def carries(v) -> bool:
    """Can a value of this kind carry an adjoint? (Reals, float/complex arrays, containers.)"""
    t = type(v)
    if t is float or t is np.float64 or t is list or t is tuple or t is dict:
        return True
    if t is ndarray:
        return v.dtype.kind in "fcO"
    if t in _NO_ADJOINT:
        return False
    if isinstance(v, np.generic):
        return v.dtype.kind in "fc"
    if isinstance(v, (int, str, bytes, type, types.ModuleType, types.FunctionType,
                      types.BuiltinFunctionType, np.dtype)):
        return False
    return True


def _add_into(out: ndarray, sp: Sparse) -> None:
    for k, v in sp.items():
        if type(v) is Sparse:
            _add_into(out[k], v)
        else:
            out[k] += v


def dense_array(shape, sp, dtype=float) -> ndarray:
    """A dense array of ``shape`` from a Sparse of index -> adjoint (or pass arrays through)."""
    if type(sp) is not Sparse:
        return np.broadcast_to(sp, shape) if np.shape(sp) != tuple(shape) else sp
    out = np.zeros(shape, dtype=np.result_type(dtype, float))
    _add_into(out, sp)
    return out


def as_adjoint(value, g):
    """Give the dense gradient ``g`` (array-like) the adjoint form for ``value``: a Sparse
    (recursively) for a list or tuple, an ndarray of value's shape for arrays, a scalar for
    scalars."""
    t = type(value)
    if t is list or t is tuple:
        g = np.asarray(g)
        return Sparse({i: as_adjoint(v, g[i]) for i, v in enumerate(value) if carries(v)})
    if t is ndarray:
        return np.reshape(g, value.shape) if np.shape(g) != value.shape else g
    if isinstance(g, ndarray) and g.ndim == 0:
        return g[()]
    return g


def unbroadcast(x, g):
    """Sum the adjoint ``g`` of a broadcast result down to the shape of operand ``x``."""
    tx = type(x)
    if tx is ndarray:
        xs = x.shape
        if type(g) is not ndarray:
            return g if np.shape(g) == xs else np.full(xs, g)
        if g.shape == xs:                   # the common case: shapes already agree
            return g
        if g.ndim > x.ndim:
            g = g.sum(axis=tuple(range(g.ndim - x.ndim)))
        axes = tuple(i for i, n in enumerate(xs) if n == 1 and g.shape[i] != 1)
        if axes:
            g = g.sum(axis=axes, keepdims=True)
        return g if g.shape == xs else np.broadcast_to(g, xs).copy()
    if tx is float or tx is np.float64:
        return g if type(g) is not ndarray else g.sum()[()] if g.ndim else g[()]
    if tx is list or tx is tuple:
        return as_adjoint(x, unbroadcast(np.asarray(x, dtype=float), np.asarray(g)))
    if isinstance(x, np.generic) or isinstance(x, (int, float, complex)):
        return g.sum()[()] if type(g) is ndarray else g
    return g


def densify(value, adj):
    """The gradient of ``value`` in value's own structure, from its adjoint ``adj`` (None for
    zero). Integer and boolean leaves (and other non-numeric values) give None."""
    t = type(value)
    if t is float:                            # the common leaf first
        ta = type(adj)
        if ta is float or ta is np.float64:
            return float(adj)
        if adj is None:
            return 0.0
    elif t is list or isinstance(value, tuple):
        out = _real_items(value, adj) if type(adj) is Sparse else None
        if out is None:
            get = adj.get if type(adj) is Sparse else _none
            out = list(map(_leaf, value, map(get, range(len(value)))))
        if t is list or t is tuple:
            return out if t is list else tuple(out)
        return t(*out) if hasattr(value, "_fields") else tuple(out)
    if t is dict:
        get = adj.get if type(adj) is Sparse else _none
        return {k: densify(v, get(k)) for k, v in value.items()}
    if t is ndarray:
        if type(adj) is ndarray and adj.shape == value.shape and adj.dtype == value.dtype \
                and value.dtype.kind in "fc":       # the common case: one copy
            return adj.copy()
        if not carries(value):
            return None
        if adj is None:
            return np.zeros(value.shape, dtype=np.result_type(value.dtype, float))
        if type(adj) is Sparse:
            return dense_array(value.shape, adj, value.dtype)
        return np.array(np.broadcast_to(adj, value.shape), dtype=np.result_type(value.dtype, float))
    if not carries(value):
        return None
    if adj is None:
        return 0.0 if t is float else t(0) if isinstance(value, np.generic) else 0.0
    if type(adj) is ndarray:
        adj = adj.sum()[()] if adj.ndim else adj[()]
    if t is float and not isinstance(adj, complex) and not np.iscomplexobj(adj):
        return float(adj)
    return adj


_REAL_ADJOINTS = frozenset({float, np.float64})


def _real_items(value, adj: Sparse):
    """``densify`` of the items of a list or tuple of floats only (or of float64s only)
    whose adjoints in ``adj`` are all present and real scalars, in C-level calls (what
    ``_leaf`` gives item by item); None for any other items."""
    kinds = set(map(type, value))
    if len(kinds) != 1:
        return None
    kind = kinds.pop()
    if kind is not float and kind is not np.float64:
        return None
    adjs = list(map(adj.get, range(len(value))))
    if not _REAL_ADJOINTS.issuperset(map(type, adjs)):
        return None
    return list(map(float, adjs)) if kind is float else adjs


def _leaf(value, adj):
    """``densify`` of an element, short-cut for real leaves with real adjoints."""
    t, ta = type(value), type(adj)
    if ta is float or ta is np.float64:
        if t is float:
            return float(adj)
        if t is np.float64:
            return adj
    elif adj is None and t is float:
        return 0.0
    return densify(value, adj)


def _none(_key):
    return None
