"""VJP rules for writes into existing arrays and for arrays that share memory.

``np.copyto(dst, src)`` overwrites ``dst``; the replay's aliasing nodes make writes through
views explicit: ``view_of(base, positions)`` (a view's contents after its base was written)
and ``write_through_view(base, view, positions)`` (the base after a write through a view).
"""
from __future__ import annotations

import numpy as np

from ..tracer import ops
from .registry import MissingRuleError, definplace, defvjp
from .values import dense_array, unbroadcast

__all__ = []


def copyto_inplace(sweep, node, g):
    dst, src = node.args[0], node.args[1]
    if len(node.args) > 3 or "where" in node.kwargs:
        sweep.unsupported(node, g, "np.copyto with where=")
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
defvjp(ops.view_of, view_of_vjp_0, None)
defvjp(ops.write_through_view, write_through_view_vjp_0, write_through_view_vjp_1, None)
