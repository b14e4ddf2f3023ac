"""VJP rules for numpy reductions (with ``axis``/``keepdims``), reshaping, transposition,
concatenation, stacking, indexing functions and sorting; functions and ``ndarray`` methods.
"""
from __future__ import annotations

import math

import numpy as np

from .registry import defnode, defvjp
from .values import Sparse, as_adjoint, unbroadcast


_SMALL = 1 << 14          # operands up to this size get a filled adjoint, not a broadcast view


def _shape(x):
    return x.shape if type(x) is np.ndarray else np.shape(x)


def _out(x, grad):
    """The dense ``grad`` in the adjoint form of operand x (Sparse for lists)."""
    if type(x) is np.ndarray:
        return grad
    return as_adjoint(x, grad)


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(a % ndim for a in axis)
    return (axis % ndim,)


def _expand(g, shape, axis, keepdims):
    """Broadcast the adjoint of a reduction back to the operand's ``shape``."""
    g = np.asarray(g)
    if not g.ndim and len(shape) and (axis is None or len(shape) == 1) \
            and math.prod(shape) <= _SMALL:     # a full reduction: filling beats a view
        return np.full(shape, g)
    if not keepdims and shape:
        kept = [1 if i in _axes(axis, len(shape)) else n for i, n in enumerate(shape)]
        g = g.reshape(kept)
    return np.broadcast_to(g, shape)


def _count(shape, axis):
    return int(np.prod([shape[i] for i in _axes(axis, len(shape))])) if shape else 1


# -- reductions -------------------------------------------------------------------------------
def sum_vjp(g, ans, a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    return _out(a, _expand(g, _shape(a), axis, keepdims))


def add_reduce_vjp(g, ans, array, axis=0, dtype=None, out=None, keepdims=False, **kw):
    """``np.add.reduce``: ``sum`` whose ``axis`` defaults to 0."""
    return sum_vjp(g, ans, array, axis, dtype, out, keepdims)


def mean_vjp(g, ans, a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    shape = _shape(a)
    return _out(a, _expand(g, shape, axis, keepdims) / _count(shape, axis))


def maxmin_vjp(g, ans, a, axis=None, out=None, keepdims=False, **kw):
    shape = _shape(a)
    a = np.asarray(a)
    hit = a == _expand(ans, shape, axis, keepdims)
    counts = hit.sum(axis=_axes(axis, a.ndim), keepdims=True)
    return _out(a, _expand(g, shape, axis, keepdims) * hit / counts)


def prod_vjp(g, ans, a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    a0, a = a, np.asarray(a, dtype=float)
    ge = _expand(g, a.shape, axis, keepdims)
    if axis is None or isinstance(axis, int):
        # product of all other factors, exact with zeros: exclusive prefix * suffix products
        ax = -1 if axis is None else axis
        x = a.reshape(-1) if axis is None else np.moveaxis(a, ax, -1)
        ones = np.ones(x.shape[:-1] + (1,))
        pre = np.cumprod(np.concatenate([ones, x[..., :-1]], axis=-1), axis=-1)
        suf = np.flip(np.cumprod(np.concatenate([ones, np.flip(x, -1)[..., :-1]], axis=-1),
                                 axis=-1), -1)
        others = pre * suf
        others = others.reshape(a.shape) if axis is None else np.moveaxis(others, -1, ax)
        return _out(a0, ge * others)
    return _out(a0, ge * _expand(ans, a.shape, axis, keepdims) / a)


def var_vjp(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
    a0, a = a, np.asarray(a)
    n = _count(a.shape, axis) - ddof
    centred = a - a.mean(axis=axis, keepdims=True)
    return _out(a0, _expand(g, a.shape, axis, keepdims) * 2.0 * centred / n)


def std_vjp(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
    a0, a = a, np.asarray(a)
    n = _count(a.shape, axis) - ddof
    centred = a - a.mean(axis=axis, keepdims=True)
    sd = _expand(ans, a.shape, axis, keepdims)
    return _out(a0, _expand(g, a.shape, axis, keepdims) * centred / (n * sd))


def cumsum_vjp(g, ans, a, axis=None, dtype=None, out=None):
    shape = _shape(a)
    if axis is None:
        return _out(a, np.flip(np.cumsum(np.flip(np.ravel(g)))).reshape(shape))
    return _out(a, np.flip(np.cumsum(np.flip(g, axis), axis), axis))


def norm_vjp(g, ans, x, ord=None, axis=None, keepdims=False):
    if ord not in (None, 2, "fro") or (ord == 2 and axis is None and np.ndim(x) > 1):
        raise NotImplementedError(f"dcgraph.ad: gradient of numpy.linalg.norm with ord={ord!r}")
    x = np.asarray(x)
    if axis is not None and not isinstance(axis, int) and len(axis) != x.ndim:
        raise NotImplementedError("dcgraph.ad: gradient of matrix norms over an axis pair")
    return _expand(g, x.shape, axis, keepdims) * x / _expand(np.where(ans == 0, 1.0, ans),
                                                              x.shape, axis, keepdims)


# -- shapes -----------------------------------------------------------------------------------
def reshape_vjp(g, ans, a, *args, **kw):
    return _out(a, np.reshape(g, _shape(a)))


def transpose_vjp(g, ans, a, *axes, **kw):
    axes = kw.get("axes", axes[0] if len(axes) == 1 else axes)
    if axes is None or len(axes) == 0:
        return _out(a, np.transpose(g))
    return _out(a, np.transpose(g, np.argsort(axes)))


def swapaxes_vjp(g, ans, a, axis1, axis2):
    return _out(a, np.swapaxes(g, axis1, axis2))


def moveaxis_vjp(g, ans, a, source, destination):
    return _out(a, np.moveaxis(g, destination, source))


def broadcast_to_vjp(g, ans, a, shape, **kw):
    return unbroadcast(a if type(a) is np.ndarray else np.asarray(a), g)


def flip_vjp(g, ans, a, axis=None):
    return _out(a, np.flip(g, axis))


def fliplr_vjp(g, ans, a):
    return _out(a, np.fliplr(g))


def flipud_vjp(g, ans, a):
    return _out(a, np.flipud(g))


def roll_vjp(g, ans, a, shift, axis=None):
    return _out(a, np.roll(g, np.negative(shift), axis))


def repeat_vjp(g, ans, a, repeats, axis=None):
    shape = _shape(a)
    if not isinstance(repeats, (int, np.integer)):
        raise NotImplementedError("dcgraph.ad: gradient of numpy.repeat with per-item repeats")
    if axis is None:
        return _out(a, np.reshape(g, (-1, repeats)).sum(axis=1).reshape(shape))
    axis %= len(shape)
    split = g.reshape(shape[:axis] + (shape[axis], repeats) + shape[axis + 1:])
    return _out(a, split.sum(axis=axis + 1))


def take_vjp(g, ans, a, indices, axis=None, **kw):
    shape = _shape(a)
    out = np.zeros(shape)
    if axis is None:
        np.add.at(out.reshape(-1), indices, g)
    else:
        moved = np.moveaxis(out, axis, 0)
        np.add.at(moved, indices, np.moveaxis(g, axis, 0) if np.ndim(indices) else g)
    return _out(a, out)


def diag_vjp(g, ans, v, k=0):
    if np.ndim(v) == 1:
        return _out(v, np.diagonal(g, k).copy())
    out = np.zeros(_shape(v))
    n = len(ans)
    rows = np.arange(n) + max(-k, 0)
    cols = np.arange(n) + max(k, 0)
    out[rows, cols] = g
    return out


def trace_vjp(g, ans, a, offset=0, **kw):
    return g * np.eye(*_shape(a)[:2], k=offset)


def sort_vjp(g, ans, a, axis=-1, **kw):
    a = np.asarray(a)
    if axis is None:
        perm = np.argsort(a, axis=None, kind="stable")
        out = np.zeros(a.size)
        out[perm] = g
        return out.reshape(a.shape)
    perm = np.argsort(a, axis=axis, kind="stable")
    out = np.zeros(a.shape)
    np.put_along_axis(out, perm, g, axis=axis)
    return out


def diff_vjp(g, ans, a, n=1, axis=-1, **kw):
    for _ in range(n):
        width = [(0, 0)] * np.ndim(g)
        lo, hi = list(width), list(width)
        lo[axis] = (1, 0)
        hi[axis] = (0, 1)
        g = np.pad(g, lo) - np.pad(g, hi)
    return _out(a, g)


# -- joining ----------------------------------------------------------------------------------
def _pieces(sweep, seq):
    items = sweep.value(seq)
    return list(items)


def concatenate_rule(sweep, node, g):
    """``concatenate(seq, axis=0)``: item i gets its slice along ``axis``."""
    seq = node.args[0]
    if not sweep.wants(seq):
        return
    axis = _arg(node, 1, "axis", 0)
    items = _pieces(sweep, seq)
    if axis is None:
        sizes = [np.size(x) for x in items]
        parts = np.split(np.ravel(g), np.cumsum(sizes)[:-1])
        sweep.add(seq, Sparse({i: _out(x, p.reshape(_shape(x))) for i, (x, p)
                               in enumerate(zip(items, parts))}))
        return
    sizes = [_shape(x)[axis] for x in items]
    parts = np.split(g, np.cumsum(sizes)[:-1], axis=axis)
    sweep.add(seq, Sparse({i: _out(x, p) for i, (x, p) in enumerate(zip(items, parts))}))


def stack_rule(sweep, node, g):
    """``stack(seq, axis=0)``: item i gets ``take(g, i, axis)``."""
    seq = node.args[0]
    if not sweep.wants(seq):
        return
    axis = _arg(node, 1, "axis", 0)
    items = _pieces(sweep, seq)
    parts = np.moveaxis(g, axis, 0)
    sweep.add(seq, Sparse({i: _out(x, parts[i]) for i, x in enumerate(items)}))


def vstack_rule(sweep, node, g):
    """``vstack(seq)``: rows of each (at least 2-D) item."""
    _joined(sweep, node, g, 0, np.atleast_2d)


def hstack_rule(sweep, node, g):
    """``hstack(seq)``: along axis 1, or 0 for 1-D items."""
    seq = node.args[0]
    items = _pieces(sweep, seq)
    axis = 0 if all(np.ndim(x) <= 1 for x in items) else 1
    _joined(sweep, node, g, axis, np.atleast_1d)


def _joined(sweep, node, g, axis, promote):
    seq = node.args[0]
    if not sweep.wants(seq):
        return
    items = _pieces(sweep, seq)
    sizes = [promote(np.asarray(x)).shape[axis] for x in items]
    parts = np.split(g, np.cumsum(sizes)[:-1], axis=axis)
    sweep.add(seq, Sparse({i: _out(x, p.reshape(_shape(x))) for i, (x, p)
                           in enumerate(zip(items, parts))}))


def append_vjp_0(g, ans, arr, values, axis=None):
    n = np.size(arr) if axis is None else _shape(arr)[axis]
    part = np.ravel(g)[:n] if axis is None else np.take(g, np.arange(n), axis=axis)
    return _out(arr, np.reshape(part, _shape(arr)))


def append_vjp_1(g, ans, arr, values, axis=None):
    n = np.size(arr) if axis is None else _shape(arr)[axis]
    m = np.shape(ans)[0] if axis is None else np.shape(ans)[axis]
    part = np.ravel(g)[n:] if axis is None else np.take(g, np.arange(n, m), axis=axis)
    return _out(values, np.reshape(part, _shape(values)))


def _arg(node, i, name, default):
    if len(node.args) > i:
        return node.args[i].value
    if name in node.kwargs:
        return node.kwargs[name].value
    return default


defvjp(np.sum, sum_vjp, names=("a", "axis", "dtype", "out", "keepdims"))
defvjp(np.ndarray.sum, sum_vjp, names=("a", "axis", "dtype", "out", "keepdims"))
defvjp(np.add.reduce, add_reduce_vjp, names=("array", "axis", "dtype", "out", "keepdims"))
defvjp(np.mean, mean_vjp, names=("a", "axis", "dtype", "out", "keepdims"))
defvjp(np.ndarray.mean, mean_vjp, names=("a", "axis", "dtype", "out", "keepdims"))
defvjp(np.max, maxmin_vjp, names=("a", "axis", "out", "keepdims"))
defvjp(np.min, maxmin_vjp, names=("a", "axis", "out", "keepdims"))
defvjp(np.amax, maxmin_vjp, names=("a", "axis", "out", "keepdims"))
defvjp(np.amin, maxmin_vjp, names=("a", "axis", "out", "keepdims"))
defvjp(np.ndarray.max, maxmin_vjp, names=("a", "axis", "out", "keepdims"))
defvjp(np.ndarray.min, maxmin_vjp, names=("a", "axis", "out", "keepdims"))
defvjp(np.prod, prod_vjp, names=("a", "axis", "dtype", "out", "keepdims"))
defvjp(np.ndarray.prod, prod_vjp, names=("a", "axis", "dtype", "out", "keepdims"))
defvjp(np.var, var_vjp, names=("a", "axis", "dtype", "out", "ddof", "keepdims"))
defvjp(np.ndarray.var, var_vjp, names=("a", "axis", "dtype", "out", "ddof", "keepdims"))
defvjp(np.std, std_vjp, names=("a", "axis", "dtype", "out", "ddof", "keepdims"))
defvjp(np.ndarray.std, std_vjp, names=("a", "axis", "dtype", "out", "ddof", "keepdims"))
defvjp(np.cumsum, cumsum_vjp, names=("a", "axis", "dtype", "out"))
defvjp(np.ndarray.cumsum, cumsum_vjp, names=("a", "axis", "dtype", "out"))
defvjp(np.linalg.norm, norm_vjp, names=("x", "ord", "axis", "keepdims"))
defvjp(np.reshape, reshape_vjp, names=("a", "shape"))
defvjp(np.ndarray.reshape, reshape_vjp)
defvjp(np.ravel, reshape_vjp, names=("a", "order"))
defvjp(np.ndarray.ravel, reshape_vjp)
defvjp(np.ndarray.flatten, reshape_vjp)
defvjp(np.squeeze, reshape_vjp, names=("a", "axis"))
defvjp(np.ndarray.squeeze, reshape_vjp)
defvjp(np.expand_dims, reshape_vjp, names=("a", "axis"))
defvjp(np.atleast_1d, reshape_vjp)
defvjp(np.atleast_2d, reshape_vjp)
defvjp(np.atleast_3d, reshape_vjp)
defvjp(np.transpose, transpose_vjp, names=("a", "axes"))
defvjp(np.ndarray.transpose, transpose_vjp)
defvjp(np.swapaxes, swapaxes_vjp, names=("a", "axis1", "axis2"))
defvjp(np.ndarray.swapaxes, swapaxes_vjp)
defvjp(np.moveaxis, moveaxis_vjp, names=("a", "source", "destination"))
defvjp(np.broadcast_to, broadcast_to_vjp, names=("array", "shape"))
defvjp(np.flip, flip_vjp, names=("m", "axis"))
defvjp(np.fliplr, fliplr_vjp)
defvjp(np.flipud, flipud_vjp)
defvjp(np.roll, roll_vjp, names=("a", "shift", "axis"))
defvjp(np.repeat, repeat_vjp, names=("a", "repeats", "axis"))
defvjp(np.ndarray.repeat, repeat_vjp)
defvjp(np.take, take_vjp, names=("a", "indices", "axis"))
defvjp(np.ndarray.take, take_vjp)
defvjp(np.diag, diag_vjp, names=("v", "k"))
defvjp(np.trace, trace_vjp, names=("a", "offset"))
defvjp(np.ndarray.trace, trace_vjp)
defvjp(np.sort, sort_vjp, names=("a", "axis"))
defvjp(np.diff, diff_vjp, names=("a", "n", "axis"))
defvjp(np.append, append_vjp_0, append_vjp_1, names=("arr", "values", "axis"))
defnode(np.concatenate, concatenate_rule)
defnode(np.stack, stack_rule)
defnode(np.vstack, vstack_rule)
defnode(np.hstack, hstack_rule)
