"""VJP rules for the ``operator`` module (arithmetic, in-place and comparison operators) and
the builtins ``abs``, ``pow``, ``float``, ``sum``, ``min``, ``max``, ``round``.

Arithmetic rules work for Python scalars and numpy arrays alike (adjoints are un-broadcast to
each operand's shape); ``+`` and ``*`` on lists and tuples (concatenation, repetition) route
adjoints to positions. Item access lives in ``rules_containers``.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from .registry import definplace, defnode, defscalar, defvjp, defzero
from .values import Sparse, unbroadcast

_SEQ = (list, tuple)


def _scalar(t) -> bool:
    return t is float or t is np.float64


def _conj(y):
    """``y`` conjugated when complex (the adjoint of ``x * y`` in ``x`` is ``g * conj(y)``)."""
    t = type(y)
    if t is float or t is int or t is np.float64 or (t is np.ndarray and y.dtype.kind != "c"):
        return y
    return np.conj(y) if np.iscomplexobj(y) else y


# -- + - * / ------------------------------------------------------------------------------
def add_vjp_0(g, ans, x, y):
    if _scalar(type(ans)):
        return g
    if type(ans) in _SEQ:
        return _part(g, 0, len(x))
    return unbroadcast(x, g)


def add_vjp_1(g, ans, x, y):
    if _scalar(type(ans)):
        return g
    if type(ans) in _SEQ:
        return _part(g, len(x), len(y))
    return unbroadcast(y, g)


def _part(g, start: int, n: int) -> Sparse | None:
    """Positions ``start .. start+n`` of a sequence adjoint, renumbered from 0."""
    if type(g) is not Sparse:
        return None
    return Sparse({k - start: v for k, v in g.items() if type(k) is int and start <= k < start + n})


def sub_vjp_0(g, ans, x, y):
    return g if _scalar(type(ans)) else unbroadcast(x, g)


def sub_vjp_1(g, ans, x, y):
    if _scalar(type(ans)):
        return -g
    if _scalar(type(y)) and type(g) is np.ndarray:      # array - scalar: sum, then negate
        return -g.sum()
    return unbroadcast(y, -g)


def mul_vjp_0(g, ans, x, y):
    if _scalar(type(ans)):
        return g * y
    if type(ans) in _SEQ:
        return _repeated(g, x, len(x), len(ans)) if type(x) in _SEQ else None
    return unbroadcast(x, g * _conj(y))


def mul_vjp_1(g, ans, x, y):
    if _scalar(type(ans)):
        return g * x
    if type(ans) in _SEQ:
        return _repeated(g, y, len(y), len(ans)) if type(y) in _SEQ else None
    return unbroadcast(y, g * _conj(x))


def _repeated(g, seq, n: int, total: int) -> Sparse | None:
    """Adjoint of ``seq`` from the adjoint of ``seq * k`` (position p comes from p % n)."""
    if type(g) is not Sparse or n == 0:
        return None
    out = Sparse()
    for k, v in g.items():
        if type(k) is int and 0 <= k < total:
            j = k % n
            out[j] = v if j not in out else out[j] + v
    return out


def truediv_vjp_0(g, ans, x, y):
    return g / y if _scalar(type(ans)) else unbroadcast(x, g / y)


def truediv_vjp_1(g, ans, x, y):
    if _scalar(type(ans)):
        return -g * ans / y
    if _scalar(type(y)) and type(g) is np.ndarray:      # array / scalar: one reduction
        return -np.vdot(g, ans) / y if ans.dtype.kind == "f" == g.dtype.kind \
            else -(g * ans).sum() / y
    return unbroadcast(y, -g * ans / y)


def mod_vjp_0(g, ans, x, y):
    return g if _scalar(type(ans)) else unbroadcast(x, g)


def mod_vjp_1(g, ans, x, y):
    if _scalar(type(ans)):
        return -g * (x // y)
    return unbroadcast(y, -g * np.floor_divide(x, y))


def pow_vjp_0(g, ans, x, y, mod=None):
    if _scalar(type(ans)):
        if x == 0:
            return g * y * (0.0 if y > 1 else 1.0 if y == 1 else math.inf)
        return g * y * x ** (y - 1)
    x = np.asarray(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = np.where(y == 0, 0.0, y * np.power(x, np.subtract(y, 1), dtype=np.result_type(x, y, float)))
    return unbroadcast(x, g * d)


def pow_vjp_1(g, ans, x, y, mod=None):
    if _scalar(type(ans)):
        return g * ans * math.log(x) if x > 0 else 0.0 * g
    with np.errstate(divide="ignore", invalid="ignore"):
        logx = np.where(np.asarray(x) > 0, np.log(np.where(np.asarray(x) > 0, x, 1.0)), 0.0)
    return unbroadcast(y, g * ans * logx)


def neg_vjp(g, ans, x):
    return -g


def pos_vjp(g, ans, x):
    return g


def abs_vjp(g, ans, x):
    if _scalar(type(ans)):
        return g if x > 0 else -g if x < 0 else 0.0 * g
    if np.iscomplexobj(x):
        return g * np.conj(x) / np.where(ans == 0, 1.0, ans)
    return g * np.sign(x)


def float_vjp(g, ans, x=0.0):
    return unbroadcast(x, g)


defvjp(operator.add, add_vjp_0, add_vjp_1)
defvjp(operator.iadd, add_vjp_0, add_vjp_1)
defvjp(operator.sub, sub_vjp_0, sub_vjp_1)
defvjp(operator.isub, sub_vjp_0, sub_vjp_1)
defvjp(operator.mul, mul_vjp_0, mul_vjp_1)
defvjp(operator.imul, mul_vjp_0, mul_vjp_1)
defvjp(operator.truediv, truediv_vjp_0, truediv_vjp_1)
defvjp(operator.itruediv, truediv_vjp_0, truediv_vjp_1)
defvjp(operator.mod, mod_vjp_0, mod_vjp_1)
defvjp(operator.imod, mod_vjp_0, mod_vjp_1)
defvjp(operator.pow, pow_vjp_0, pow_vjp_1)
defvjp(operator.ipow, pow_vjp_0, pow_vjp_1)
defvjp(operator.neg, neg_vjp)
defvjp(operator.pos, pos_vjp)
defvjp(operator.abs, abs_vjp)
defvjp(abs, abs_vjp)
defvjp(pow, pow_vjp_0, pow_vjp_1, None, names=("base", "exp", "mod"))
defvjp(float, float_vjp, names=("x",))


# scalar-only versions for the sweep's fast path (both operands real scalars or ints)
def add_scalar(g, ans, x, y):
    return g


def sub_scalar_1(g, ans, x, y):
    return -g


def mul_scalar_0(g, ans, x, y):
    return g * y


def mul_scalar_1(g, ans, x, y):
    return g * x


def truediv_scalar_0(g, ans, x, y):
    return g / y


def truediv_scalar_1(g, ans, x, y):
    return -g * ans / y


defscalar(operator.add, add_scalar, add_scalar)
defscalar(operator.iadd, add_scalar, add_scalar)
defscalar(operator.sub, add_scalar, sub_scalar_1)
defscalar(operator.isub, add_scalar, sub_scalar_1)
defscalar(operator.mul, mul_scalar_0, mul_scalar_1)
defscalar(operator.imul, mul_scalar_0, mul_scalar_1)
defscalar(operator.truediv, truediv_scalar_0, truediv_scalar_1)
defscalar(operator.itruediv, truediv_scalar_0, truediv_scalar_1)
defzero(operator.floordiv)
defzero(operator.ifloordiv)
defzero(round)
defzero(operator.lt)
defzero(operator.le)
defzero(operator.gt)
defzero(operator.ge)
defzero(operator.eq)
defzero(operator.ne)
defzero(operator.not_)
defzero(operator.truth)
defzero(operator.is_)
defzero(operator.is_not)
defzero(operator.contains)
defzero(operator.and_)
defzero(operator.or_)
defzero(operator.xor)
defzero(operator.invert)
defzero(operator.lshift)
defzero(operator.rshift)
defzero(operator.iand)
defzero(operator.ior)
defzero(operator.ixor)
defzero(operator.ilshift)
defzero(operator.irshift)
defzero(operator.index)


# -- in-place operators that mutated an ndarray or a list ---------------------------------
def iadd_inplace(sweep, node, g):
    """``a += b`` that mutated ``a``: an ndarray update, or ``list += iterable`` (extend)."""
    prev, other = node.args
    if type(node.value) is list:
        _extend(sweep, node, g, prev, other)
        return
    sweep.add(prev, g)
    if sweep.wants(other):
        sweep.add(other, unbroadcast(sweep.value(other), _dense(node, g)))


def isub_inplace(sweep, node, g):
    prev, other = node.args
    sweep.add(prev, g)
    if sweep.wants(other):
        sweep.add(other, unbroadcast(sweep.value(other), -_dense(node, g)))


def imul_inplace(sweep, node, g):
    prev, other = node.args
    g = _dense(node, g)
    y = sweep.value(other)
    if sweep.wants(prev):
        sweep.add(prev, g * y)
    if sweep.wants(other):
        sweep.add(other, unbroadcast(y, g * sweep.value(prev)))


def itruediv_inplace(sweep, node, g):
    prev, other = node.args
    g = _dense(node, g)
    y = sweep.value(other)
    if sweep.wants(prev):
        sweep.add(prev, g / y)
    if sweep.wants(other):
        sweep.add(other, unbroadcast(y, -g * sweep.value(prev) / (np.asarray(y) ** 2)))


def ipow_inplace(sweep, node, g):
    prev, other = node.args
    g = _dense(node, g)
    x, y = sweep.value(prev), sweep.value(other)
    ans = x ** y
    if sweep.wants(prev):
        sweep.add(prev, pow_vjp_0(g, ans, x, y))
    if sweep.wants(other):
        sweep.add(other, pow_vjp_1(g, ans, x, y))


def _dense(node, g):
    from .values import dense_array
    return dense_array(node.value.shape, g, node.value.dtype) if type(g) is Sparse else g


def _extend(sweep, node, g, prev, other):
    n = sweep.length(prev)
    if type(g) is not Sparse:
        return
    sweep.add(prev, Sparse({k: v for k, v in g.items() if type(k) is int and k < n}))
    if sweep.wants(other):
        from .rules_containers import seq_adjoint_to
        seq_adjoint_to(sweep, other, _part(g, n, sweep.length(other)))


definplace(operator.iadd, iadd_inplace)
definplace(operator.isub, isub_inplace)
definplace(operator.imul, imul_inplace)
definplace(operator.itruediv, itruediv_inplace)
definplace(operator.ipow, ipow_inplace)


# -- sum, min, max --------------------------------------------------------------------------
def sum_rule(sweep, node, g):
    """``sum(iterable, start=0)``: every item gets ``g``."""
    it = node.args[0]
    start = node.args[1] if len(node.args) > 1 else node.kwargs.get("start")
    if start is not None:
        sweep.add(start, g)
    if not sweep.wants(it):
        return
    v = it.value
    if type(v) is np.ndarray:
        sweep.add(it, np.broadcast_to(g, v.shape).copy())
        return
    from .rules_iteration import item_count
    n = item_count(sweep, it)
    if n is None:
        sweep.unsupported(node, g, f"sum over a {type(v).__name__}" + (
            " (a generator expression's body runs inside sum, where the tracer cannot see it;"
            " sum a list instead)" if type(v).__name__ == "generator" else ""))
    else:
        sweep.add(it, Sparse({i: g for i in range(n)}))


def minmax_rule(sweep, node, g):
    """``min``/``max`` of several arguments or of one iterable: the chosen item gets ``g``."""
    ans = node.value
    args = node.args
    if len(args) == 1:
        it = args[0]
        items = sweep.value(it)
        if type(items) is np.ndarray:
            mask = items == ans
            sweep.add(it, np.where(mask, g / mask.sum(), 0.0))
            return
        from .rules_iteration import generator_items
        made = generator_items(it)               # a traced generator: its yields
        items = [s.value for s in made] if made is not None else list(items)
        i = _chosen(items, ans)
        sweep.add(it, Sparse({i: g}))
        return
    i = _chosen([sweep.value(a) for a in args], ans)
    sweep.add(args[i], g)


def _chosen(items, ans) -> int:
    for i, v in enumerate(items):
        if v is ans:
            return i
    for i, v in enumerate(items):
        if v == ans:
            return i
    raise ValueError("dcgraph.ad: min/max result not found among its arguments")


defnode(sum, sum_rule)
defnode(min, minmax_rule)
defnode(max, minmax_rule)
