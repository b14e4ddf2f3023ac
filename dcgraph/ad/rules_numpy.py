"""VJP rules for numpy's elementwise functions: ufuncs, ``where``, ``clip``, conversions.

Every adjoint is un-broadcast to its operand's shape (a list operand gets a Sparse adjoint).
Ufuncs called with ``out=`` or ``where=`` are rejected by the sweep.
"""
from __future__ import annotations

import numpy as np

from .registry import defvjp, defzero
from .values import as_adjoint, unbroadcast

_fit = unbroadcast


def _safe(x, bad, fill=1.0):
    return np.where(bad, fill, x)


# -- unary ------------------------------------------------------------------------------------
def negative_vjp(g, ans, x, **kw):
    return _fit(x, -g)


def positive_vjp(g, ans, x, **kw):
    return _fit(x, g)


def exp_vjp(g, ans, x, **kw):
    return _fit(x, g * ans)


def exp2_vjp(g, ans, x, **kw):
    return _fit(x, g * ans * np.log(2.0))


def expm1_vjp(g, ans, x, **kw):
    return _fit(x, g * (ans + 1.0))


def log_vjp(g, ans, x, **kw):
    return _fit(x, g / x)


def log2_vjp(g, ans, x, **kw):
    return _fit(x, g / (x * np.log(2.0)))


def log10_vjp(g, ans, x, **kw):
    return _fit(x, g / (x * np.log(10.0)))


def log1p_vjp(g, ans, x, **kw):
    d = np.add(x, 1.0)
    if type(d) is np.ndarray:
        return _fit(x, np.divide(g, d, out=d) if d.shape == np.shape(g) else g / d)
    return _fit(x, g / d)


def sqrt_vjp(g, ans, x, **kw):
    return _fit(x, g * 0.5 / ans)


def cbrt_vjp(g, ans, x, **kw):
    return _fit(x, g / (3.0 * ans ** 2))


def square_vjp(g, ans, x, **kw):
    return _fit(x, g * 2.0 * np.asarray(x))


def reciprocal_vjp(g, ans, x, **kw):
    return _fit(x, -g * ans ** 2)


def sin_vjp(g, ans, x, **kw):
    return _fit(x, g * np.cos(x))


def cos_vjp(g, ans, x, **kw):
    return _fit(x, -g * np.sin(x))


def tan_vjp(g, ans, x, **kw):
    return _fit(x, g * (1.0 + ans ** 2))


def arcsin_vjp(g, ans, x, **kw):
    return _fit(x, g / np.sqrt(1.0 - np.square(x)))


def arccos_vjp(g, ans, x, **kw):
    return _fit(x, -g / np.sqrt(1.0 - np.square(x)))


def arctan_vjp(g, ans, x, **kw):
    return _fit(x, g / (1.0 + np.square(x)))


def sinh_vjp(g, ans, x, **kw):
    return _fit(x, g * np.cosh(x))


def cosh_vjp(g, ans, x, **kw):
    return _fit(x, g * np.sinh(x))


def tanh_vjp(g, ans, x, **kw):
    return _fit(x, g * (1.0 - ans ** 2))


def arcsinh_vjp(g, ans, x, **kw):
    return _fit(x, g / np.sqrt(np.square(x) + 1.0))


def arccosh_vjp(g, ans, x, **kw):
    return _fit(x, g / np.sqrt(np.square(x) - 1.0))


def arctanh_vjp(g, ans, x, **kw):
    return _fit(x, g / (1.0 - np.square(x)))


def absolute_vjp(g, ans, x, **kw):
    if np.iscomplexobj(x):
        return _fit(x, g * np.conj(x) / _safe(ans, ans == 0))
    return _fit(x, g * np.sign(x))


def deg2rad_vjp(g, ans, x, **kw):
    return _fit(x, g * (np.pi / 180.0))


def rad2deg_vjp(g, ans, x, **kw):
    return _fit(x, g * (180.0 / np.pi))


def sinc_vjp(g, ans, x, **kw):
    x = np.asarray(x, dtype=float)
    px = np.pi * x
    zero = x == 0
    d = np.where(zero, 0.0, (np.cos(px) - ans) / _safe(x, zero))
    return _fit(x, g * d)


def identity_vjp(g, ans, x, *args, **kw):
    """Conversions (``np.array``, ``asarray``, ``copy``, ``astype``...): same values."""
    return as_adjoint(x, g) if type(x) is not np.ndarray else np.reshape(g, x.shape)


def item_vjp(g, ans, x, *args):
    """``a.item()``: the one element of a (size-1) array."""
    return np.full(np.shape(x), g) if not args else _put(x, args, g)


def _put(x, index, g):
    out = np.zeros(np.shape(x))
    out[np.unravel_index(index[0], out.shape) if len(index) == 1 else index] = g
    return out


def full_vjp_1(g, ans, shape, fill_value, *args, **kw):
    return _fit(fill_value, g)


# -- binary -----------------------------------------------------------------------------------
def add_vjp_0(g, ans, x, y, **kw):
    return _fit(x, g)


def add_vjp_1(g, ans, x, y, **kw):
    return _fit(y, g)


def subtract_vjp_1(g, ans, x, y, **kw):
    return _fit(y, -g)


def multiply_vjp_0(g, ans, x, y, **kw):
    return _fit(x, g * y)


def multiply_vjp_1(g, ans, x, y, **kw):
    return _fit(y, g * x)


def divide_vjp_0(g, ans, x, y, **kw):
    return _fit(x, g / y)


def divide_vjp_1(g, ans, x, y, **kw):
    return _fit(y, -g * ans / y)


def power_vjp_0(g, ans, x, y, **kw):
    from .rules_operator import pow_vjp_0
    return pow_vjp_0(g, np.asarray(ans), np.asarray(x), np.asarray(y))


def power_vjp_1(g, ans, x, y, **kw):
    from .rules_operator import pow_vjp_1
    return _fit(y, pow_vjp_1(g, np.asarray(ans), np.asarray(x), np.asarray(y)))


def _balanced(x, y, ans, first: bool):
    """Share of the adjoint of max/min going to x (first) or y: ties split evenly."""
    mine, other = (x, y) if first else (y, x)
    return np.where(mine == ans, np.where(other == ans, 0.5, 1.0), 0.0)


def maximum_vjp_0(g, ans, x, y, **kw):
    return _fit(x, g * _balanced(x, y, ans, True))


def maximum_vjp_1(g, ans, x, y, **kw):
    return _fit(y, g * _balanced(x, y, ans, False))


def logaddexp_vjp_0(g, ans, x, y, **kw):
    return _fit(x, g * np.exp(x - ans))


def logaddexp_vjp_1(g, ans, x, y, **kw):
    return _fit(y, g * np.exp(y - ans))


def logaddexp2_vjp_0(g, ans, x, y, **kw):
    return _fit(x, g * 2.0 ** (x - ans))


def logaddexp2_vjp_1(g, ans, x, y, **kw):
    return _fit(y, g * 2.0 ** (y - ans))


def arctan2_vjp_0(g, ans, y, x, **kw):
    return _fit(y, g * x / (np.square(x) + np.square(y)))


def arctan2_vjp_1(g, ans, y, x, **kw):
    return _fit(x, -g * y / (np.square(x) + np.square(y)))


def hypot_vjp_0(g, ans, x, y, **kw):
    return _fit(x, g * x / ans)


def hypot_vjp_1(g, ans, x, y, **kw):
    return _fit(y, g * y / ans)


def mod_vjp_1(g, ans, x, y, **kw):
    return _fit(y, -g * np.floor_divide(x, y))


def fmod_vjp_1(g, ans, x, y, **kw):
    return _fit(y, -g * np.trunc(np.divide(x, y)))


# -- selection --------------------------------------------------------------------------------
def where_vjp_1(g, ans, c, x=None, y=None):
    return _fit(x, np.where(c, g, 0.0))


def where_vjp_2(g, ans, c, x=None, y=None):
    return _fit(y, np.where(c, 0.0, g))


def clip_vjp_0(g, ans, a, a_min=None, a_max=None, *args, **kw):
    lo, hi = kw.get("min", a_min), kw.get("max", a_max)
    keep = np.ones(np.shape(ans), dtype=bool)
    if lo is not None:
        keep &= np.asarray(a) >= lo
    if hi is not None:
        keep &= np.asarray(a) <= hi
    return _fit(a, np.where(keep, g, 0.0))


def clip_vjp_1(g, ans, a, a_min=None, a_max=None, *args, **kw):
    below = np.asarray(a) < a_min
    if a_max is not None:
        below &= np.asarray(a_min) <= a_max
    return _fit(a_min, np.where(below, g, 0.0))


def clip_vjp_2(g, ans, a, a_min=None, a_max=None, *args, **kw):
    return _fit(a_max, np.where(np.asarray(a) > a_max, g, 0.0))


defvjp(np.negative, negative_vjp)
defvjp(np.positive, positive_vjp)
defvjp(np.exp, exp_vjp)
defvjp(np.exp2, exp2_vjp)
defvjp(np.expm1, expm1_vjp)
defvjp(np.log, log_vjp)
defvjp(np.log2, log2_vjp)
defvjp(np.log10, log10_vjp)
defvjp(np.log1p, log1p_vjp)
defvjp(np.sqrt, sqrt_vjp)
defvjp(np.cbrt, cbrt_vjp)
defvjp(np.square, square_vjp)
defvjp(np.reciprocal, reciprocal_vjp)
defvjp(np.sin, sin_vjp)
defvjp(np.cos, cos_vjp)
defvjp(np.tan, tan_vjp)
defvjp(np.arcsin, arcsin_vjp)
defvjp(np.arccos, arccos_vjp)
defvjp(np.arctan, arctan_vjp)
defvjp(np.sinh, sinh_vjp)
defvjp(np.cosh, cosh_vjp)
defvjp(np.tanh, tanh_vjp)
defvjp(np.arcsinh, arcsinh_vjp)
defvjp(np.arccosh, arccosh_vjp)
defvjp(np.arctanh, arctanh_vjp)
defvjp(np.absolute, absolute_vjp)
defvjp(np.fabs, absolute_vjp)
defvjp(np.deg2rad, deg2rad_vjp)
defvjp(np.rad2deg, rad2deg_vjp)
defvjp(np.sinc, sinc_vjp)
defvjp(np.add, add_vjp_0, add_vjp_1)
defvjp(np.subtract, add_vjp_0, subtract_vjp_1)
defvjp(np.multiply, multiply_vjp_0, multiply_vjp_1)
defvjp(np.divide, divide_vjp_0, divide_vjp_1)
defvjp(np.power, power_vjp_0, power_vjp_1)
defvjp(np.float_power, power_vjp_0, power_vjp_1)
defvjp(np.maximum, maximum_vjp_0, maximum_vjp_1)
defvjp(np.minimum, maximum_vjp_0, maximum_vjp_1)
defvjp(np.fmax, maximum_vjp_0, maximum_vjp_1)
defvjp(np.fmin, maximum_vjp_0, maximum_vjp_1)
defvjp(np.logaddexp, logaddexp_vjp_0, logaddexp_vjp_1)
defvjp(np.logaddexp2, logaddexp2_vjp_0, logaddexp2_vjp_1)
defvjp(np.arctan2, arctan2_vjp_0, arctan2_vjp_1)
defvjp(np.hypot, hypot_vjp_0, hypot_vjp_1)
defvjp(np.remainder, add_vjp_0, mod_vjp_1)
defvjp(np.fmod, add_vjp_0, fmod_vjp_1)
defvjp(np.where, None, where_vjp_1, where_vjp_2, names=("condition", "x", "y"))
defvjp(np.clip, clip_vjp_0, clip_vjp_1, clip_vjp_2, names=("a", "a_min", "a_max"))
defvjp(np.ndarray.clip, clip_vjp_0, clip_vjp_1, clip_vjp_2, names=("a", "min", "max"))
defvjp(np.array, identity_vjp, names=("object",))
defvjp(np.asarray, identity_vjp, names=("a",))
defvjp(np.asanyarray, identity_vjp, names=("a",))
defvjp(np.ascontiguousarray, identity_vjp, names=("a",))
defvjp(np.copy, identity_vjp, names=("a",))
defvjp(np.ndarray.copy, identity_vjp)
defvjp(np.ndarray.astype, identity_vjp)
defvjp(np.ndarray.tolist, identity_vjp)
defvjp(np.ndarray.item, item_vjp)
defvjp(np.float64, identity_vjp)
defvjp(np.real, identity_vjp)
defvjp(np.full, None, full_vjp_1, names=("shape", "fill_value"))
defzero(np.sign)
defzero(np.floor)
defzero(np.ceil)
defzero(np.trunc)
defzero(np.rint)
defzero(np.round)
defzero(np.isnan)
defzero(np.isinf)
defzero(np.isfinite)
defzero(np.less)
defzero(np.less_equal)
defzero(np.greater)
defzero(np.greater_equal)
defzero(np.equal)
defzero(np.not_equal)
defzero(np.logical_and)
defzero(np.logical_or)
defzero(np.logical_not)
defzero(np.logical_xor)
defzero(np.floor_divide)
defzero(np.heaviside)
defzero(np.zeros)
defzero(np.ones)
defzero(np.empty)
defzero(np.zeros_like)
defzero(np.ones_like)
defzero(np.empty_like)
defzero(np.arange)
defzero(np.eye)
defzero(np.identity)
defzero(np.argmax)
defzero(np.argmin)
defzero(np.argsort)
defzero(np.nonzero)
defzero(np.shape)
defzero(np.size)
defzero(np.ndim)
defzero(np.allclose)
defzero(np.isclose)
defzero(np.any)
defzero(np.all)
defzero(np.ndarray.argmax)
defzero(np.ndarray.argmin)
defzero(np.ndarray.argsort)
defzero(np.ndarray.any)
defzero(np.ndarray.all)
defzero(np.ndarray.nonzero)
