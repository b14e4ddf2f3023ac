"""VJP rules for writes into existing arrays and for arrays that share memory.

``np.copyto(dst, src)`` overwrites ``dst``; the replay's aliasing nodes make writes through
views explicit: ``view_of(base, positions)`` (a view's contents after its base was written)
and ``write_through_view(base, view, positions)`` (the base after a write through a view).

Copying writes (fancy ``a[idx] = v``, ``np.put``, ``np.place``, ``np.putmask``,
``np.fill_diagonal``, ``np.put_along_axis``, ``a.flat[k] = v``, ``copyto(where=)``) are pulled
back by running the same write on tags (``copy_sources``): which element of the value landed
where, with numpy's own rules for repeats (last writer wins), cycling and masks.
``np.add.at``/``np.subtract.at``/``np.multiply.at`` apply every repeat. ``possibly_written`` (an array handed to a
primitive of unknown effect) passes its adjoint on only when the array provably did not change.
"""
from __future__ import annotations

import numpy as np

from ..tracer import ops
from .registry import MissingRuleError, definplace, defvjp, primitive_name
from .values import as_adjoint, dense_array, unbroadcast
from .versions import StaleValueError

__all__ = ["copy_sources", "pull_copy"]


def copy_sources(sweep, node, target: int, value: int):
    """For a call that copied elements of argument ``value`` into argument ``target``: an int
    array shaped like the target, holding for each element the flat position in the value
    that was written there last (-1: kept its earlier content), and the value's shape. The
    call is re-run on tags with the recorded other arguments."""
    shape = np.shape(node.value)
    tags = np.full(shape, -1.0)
    vshape = np.shape(sweep.value(node.args[value]))
    source = np.arange(int(np.prod(vshape)), dtype=float).reshape(vshape)
    args = [tags if i == target else source if i == value else sweep.value(a)
            for i, a in enumerate(node.args)]
    kwargs = {k: sweep.value(a) for k, a in node.kwargs.items()}
    node.fn(*args, **kwargs)
    return tags.astype(np.intp), vshape


def pull_copy(sweep, node, g, target: int = 0, value: int = 1) -> None:
    """Adjoints of a copying write: kept elements to the earlier target, written ones to the
    value elements that were written last."""
    c, v = node.args[target], node.args[value]
    want_c, want_v = sweep.wants(c), sweep.wants(v)
    if not (want_c or want_v):
        return
    cv = node.value
    g = dense_array(cv.shape, g, cv.dtype)
    src, vshape = copy_sources(sweep, node, target, value)
    kept = src < 0
    if want_c:
        sweep.add(c, np.where(kept, g, 0.0))
    if want_v:
        hit = ~kept
        size = int(np.prod(vshape))
        gv = np.bincount(src[hit], weights=np.asarray(g, dtype=float)[hit], minlength=size)
        sweep.add(v, as_adjoint(sweep.value(v), gv.reshape(vshape)))


def _copy_rule(target: int, value: int):
    def copy_inplace(sweep, node, g):
        pull_copy(sweep, node, g, target, value)
    return copy_inplace


def ufunc_at_inplace(sweep, node, g):
    """``ufunc.at(a, indices, b)``, unbuffered: ``add``/``subtract``/``multiply`` apply every
    repeat; other ufuncs are refused."""
    uf, a, idx = node.args[0], node.args[1], node.args[2]
    b = node.args[3] if len(node.args) > 3 else None
    ufunc = uf.value
    if ufunc is np.multiply and b is not None and not node.kwargs:
        _multiply_at(sweep, node, g, a, idx, b)
        return
    if ufunc not in (np.add, np.subtract) or b is None or node.kwargs:
        sweep.unsupported(node, g, f"{getattr(ufunc, '__name__', ufunc)}.at is not "
                          f"differentiated (add, subtract and multiply are)")
        return
    av = node.value
    g = dense_array(av.shape, g, av.dtype)
    if sweep.wants(a):
        sweep.add(a, g)
    if sweep.wants(b):
        part = np.asarray(g)[sweep.value(idx)]
        part = -part if ufunc is np.subtract else part
        sweep.add(b, as_adjoint(sweep.value(b), unbroadcast(
            np.asarray(sweep.value(b), dtype=float), part)))


def _multiply_at(sweep, node, g, a, idx, b):
    """``np.multiply.at(a, indices, b)``: each element of ``a`` is multiplied by every ``b``
    element aimed at it (repeats included)."""
    before = np.asarray(sweep.value(a), dtype=float)
    g = np.asarray(dense_array(before.shape, g, before.dtype), dtype=float).reshape(-1)
    aimed = np.arange(before.size).reshape(before.shape)[sweep.value(idx)]
    bv = np.asarray(sweep.value(b), dtype=float)
    shape = np.broadcast_shapes(bv.shape, aimed.shape)
    positions = np.broadcast_to(aimed, shape).reshape(-1)
    factors = np.broadcast_to(bv, shape).reshape(-1)
    scale = np.ones(before.size)
    np.multiply.at(scale, positions, factors)
    if sweep.wants(a):
        sweep.add(a, (g * scale).reshape(before.shape))
    if sweep.wants(b):
        flat, k_all = before.reshape(-1), np.arange(factors.size)
        gb = np.array([g[p] * flat[p] * np.prod(factors[(positions == p) & (k_all != k)])
                       for k, p in enumerate(positions)])   # the others aimed at p
        sweep.add(b, as_adjoint(sweep.value(b), unbroadcast(bv, gb.reshape(shape))))


def possibly_written_inplace(sweep, node, g):
    """The array went into a primitive of unknown effect: pass the adjoint on when its state
    before equals its state after (both rebuilt); otherwise refuse."""
    array, call = node.args
    if not sweep.active(node):
        return
    try:
        same = np.array_equal(sweep.value(array), sweep.value(node), equal_nan=True)
    except (StaleValueError, TypeError, ValueError):
        same = False
    if same:
        sweep.add(array, g)
        return
    fn = getattr(call, "fn", None)
    raise MissingRuleError(
        f"dcgraph.ad: the array {array!r} was passed to {primitive_name(fn)} (called at "
        f"{node.loc}), whose effect is unknown: it may have written into it, and the gradient "
        f"depends on its contents afterwards; register a rule with dcgraph.ad.definplace, or "
        f"pass a copy")


def copyto_inplace(sweep, node, g):
    dst, src = node.args[0], node.args[1]
    if len(node.args) > 3 or "where" in node.kwargs:
        pull_copy(sweep, node, g, 0, 1)
        return
    cv = node.value
    g = dense_array(cv.shape, g, cv.dtype)
    if sweep.wants(src):
        sweep.add(src, unbroadcast(sweep.value(src), g))
    # every element of dst was overwritten: its earlier contents get no adjoint
    del dst


def _positions(positions):
    if positions is None:
        raise MissingRuleError(
            "dcgraph.ad: an array shares memory written through another object, and the "
            "positions of one in the other are unknown (a base that is not C-contiguous); "
            "copy the array before writing through a view")
    return np.asarray(positions).ravel()


def view_of_vjp_0(g, ans, base, positions):
    positions = _positions(positions)
    out = np.zeros(base.size, dtype=np.result_type(base.dtype, float))
    np.add.at(out, positions, np.asarray(g, dtype=float).ravel())
    return out.reshape(base.shape)


def write_through_view_vjp_0(g, ans, base, view, positions):
    positions = _positions(positions)
    out = np.array(g, dtype=np.result_type(np.asarray(g).dtype, float), copy=True).reshape(-1)
    out[positions] = 0.0
    return out.reshape(base.shape)


def write_through_view_vjp_1(g, ans, base, view, positions):
    return np.asarray(g).reshape(-1)[_positions(positions)].reshape(np.shape(view))


definplace(np.copyto, copyto_inplace)
definplace(np.fill_diagonal, _copy_rule(0, 1))
definplace(np.put, _copy_rule(0, 2))
definplace(np.ndarray.put, _copy_rule(0, 2))
definplace(np.place, _copy_rule(0, 2))
definplace(np.putmask, _copy_rule(0, 2))
definplace(np.put_along_axis, _copy_rule(0, 2))
definplace(ops.flat_setitem, _copy_rule(0, 2))
definplace(np.ufunc.at, ufunc_at_inplace)
definplace(ops.possibly_written, possibly_written_inplace)
defvjp(ops.view_of, view_of_vjp_0, None)
defvjp(ops.write_through_view, write_through_view_vjp_0, write_through_view_vjp_1, None)
