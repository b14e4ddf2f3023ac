"""VJP rules for the ``math`` module: every differentiable function of Python 3.11.

``ceil``, ``floor``, ``trunc`` return ints (no adjoint); predicates return bools.
"""
from __future__ import annotations

import math

from .registry import defnode, defvjp, defzero
from .rules_operator import pow_vjp_0, pow_vjp_1
from .values import Sparse

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def sin_vjp(g, ans, x):
    return g * math.cos(x)


def cos_vjp(g, ans, x):
    return -g * math.sin(x)


def tan_vjp(g, ans, x):
    return g * (1.0 + ans * ans)


def _over(g, d):
    """``g / d``, infinite where ``d`` is 0 (as ``x ** 0.5`` at 0: the slope is vertical)."""
    return g / d if d else g * math.copysign(math.inf, d)


def asin_vjp(g, ans, x):
    return _over(g, math.sqrt(1.0 - x * x))


def acos_vjp(g, ans, x):
    return _over(-g, math.sqrt(1.0 - x * x))


def atan_vjp(g, ans, x):
    return g / (1.0 + x * x)


def atan2_vjp_0(g, ans, y, x):
    return g * x / (x * x + y * y)


def atan2_vjp_1(g, ans, y, x):
    return -g * y / (x * x + y * y)


def sinh_vjp(g, ans, x):
    return g * math.cosh(x)


def cosh_vjp(g, ans, x):
    return g * math.sinh(x)


def tanh_vjp(g, ans, x):
    return g * (1.0 - ans * ans)


def asinh_vjp(g, ans, x):
    return g / math.sqrt(x * x + 1.0)


def acosh_vjp(g, ans, x):
    return _over(g, math.sqrt(x * x - 1.0))


def atanh_vjp(g, ans, x):
    return g / (1.0 - x * x)


def exp_vjp(g, ans, x):
    return g * ans


def exp2_vjp(g, ans, x):
    return g * ans * _LN2


def expm1_vjp(g, ans, x):
    return g * (ans + 1.0)


def log_vjp_0(g, ans, x, base=math.e):
    return g / (x * math.log(base)) if base != math.e else g / x


def log_vjp_1(g, ans, x, base=math.e):
    lb = math.log(base)
    return -g * math.log(x) / (base * lb * lb)


def log2_vjp(g, ans, x):
    return g / (x * _LN2)


def log10_vjp(g, ans, x):
    return g / (x * _LN10)


def log1p_vjp(g, ans, x):
    return g / (1.0 + x)


def sqrt_vjp(g, ans, x):
    return _over(g, 2.0 * ans)


def cbrt_vjp(g, ans, x):
    return _over(g, 3.0 * ans * ans)


def erf_vjp(g, ans, x):
    return g * _TWO_OVER_SQRT_PI * math.exp(-x * x)


def erfc_vjp(g, ans, x):
    return -g * _TWO_OVER_SQRT_PI * math.exp(-x * x)


def gamma_vjp(g, ans, x):
    from scipy.special import digamma
    return g * ans * float(digamma(x))


def lgamma_vjp(g, ans, x):
    from scipy.special import digamma
    return g * float(digamma(x))


def fabs_vjp(g, ans, x):
    return g if x > 0 else -g if x < 0 else 0.0 * g


def copysign_vjp_0(g, ans, x, y):
    return g * math.copysign(1.0, x) * math.copysign(1.0, y)


def fmod_vjp_0(g, ans, x, y):
    return g


def fmod_vjp_1(g, ans, x, y):
    return -g * float(math.trunc(x / y))


def remainder_vjp_1(g, ans, x, y):
    return -g * round((x - ans) / y)


def ldexp_vjp_0(g, ans, x, i):
    return g * math.ldexp(1.0, i)


def degrees_vjp(g, ans, x):
    return g * (180.0 / math.pi)


def radians_vjp(g, ans, x):
    return g * (math.pi / 180.0)


def hypot_rule(sweep, node, g):
    """``hypot(*coordinates)``: each coordinate c gets g * c / ans."""
    ans = node.value
    for a in node.args:
        if sweep.wants(a):
            sweep.add(a, g * a.value / ans if ans != 0 else 0.0 * g)


def dist_rule(sweep, node, g):
    """``dist(p, q)``: Euclidean distance of two sequences."""
    p, q = node.args
    pv, qv, ans = list(sweep.value(p)), list(sweep.value(q)), node.value
    scale = g / ans if ans != 0 else 0.0 * g
    sweep.add(p, Sparse({i: scale * (a - b) for i, (a, b) in enumerate(zip(pv, qv))}))
    sweep.add(q, Sparse({i: -scale * (a - b) for i, (a, b) in enumerate(zip(pv, qv))}))


def fsum_rule(sweep, node, g):
    """``fsum(iterable)``: every item gets g."""
    from .rules_iteration import item_count
    it = node.args[0]
    n = item_count(sweep, it)
    if n is None:
        sweep.unsupported(node, g, f"fsum over a {type(it.value).__name__}")
    elif sweep.wants(it):
        sweep.add(it, Sparse({i: g for i in range(n)}))


def prod_rule(sweep, node, g):
    """``prod(iterable, start=1)``: item i gets g times the product of the others."""
    it = node.args[0]
    items = list(sweep.value(it))
    start = node.kwargs.get("start")
    s = start.value if start is not None else 1
    n = len(items)
    before, after = [s] * (n + 1), [1] * (n + 1)
    for i in range(n):
        before[i + 1] = before[i] * items[i]
    for i in range(n - 1, -1, -1):
        after[i] = after[i + 1] * items[i]
    if sweep.wants(it):
        sweep.add(it, Sparse({i: g * before[i] * after[i + 1] for i in range(n)}))
    if start is not None:
        sweep.add(start, g * after[0])


def modf_rule(sweep, node, g):
    """``modf(x) -> (fraction, integer part)``: only the fraction varies with x."""
    if type(g) is Sparse and 0 in g:
        sweep.add(node.args[0], g[0])


def frexp_rule(sweep, node, g):
    """``frexp(x) -> (m, e)`` with x = m * 2**e: dm/dx = 2**-e."""
    if type(g) is Sparse and 0 in g:
        sweep.add(node.args[0], g[0] * math.ldexp(1.0, -node.value[1]))


defvjp(math.sin, sin_vjp)
defvjp(math.cos, cos_vjp)
defvjp(math.tan, tan_vjp)
defvjp(math.asin, asin_vjp)
defvjp(math.acos, acos_vjp)
defvjp(math.atan, atan_vjp)
defvjp(math.atan2, atan2_vjp_0, atan2_vjp_1)
defvjp(math.sinh, sinh_vjp)
defvjp(math.cosh, cosh_vjp)
defvjp(math.tanh, tanh_vjp)
defvjp(math.asinh, asinh_vjp)
defvjp(math.acosh, acosh_vjp)
defvjp(math.atanh, atanh_vjp)
defvjp(math.exp, exp_vjp)
defvjp(math.exp2, exp2_vjp)
defvjp(math.expm1, expm1_vjp)
defvjp(math.log, log_vjp_0, log_vjp_1)
defvjp(math.log2, log2_vjp)
defvjp(math.log10, log10_vjp)
defvjp(math.log1p, log1p_vjp)
defvjp(math.sqrt, sqrt_vjp)
defvjp(math.cbrt, cbrt_vjp)
defvjp(math.pow, pow_vjp_0, pow_vjp_1)
defvjp(math.erf, erf_vjp)
defvjp(math.erfc, erfc_vjp)
defvjp(math.gamma, gamma_vjp)
defvjp(math.lgamma, lgamma_vjp)
defvjp(math.fabs, fabs_vjp)
defvjp(math.copysign, copysign_vjp_0, None)
defvjp(math.fmod, fmod_vjp_0, fmod_vjp_1)
defvjp(math.remainder, fmod_vjp_0, remainder_vjp_1)
defvjp(math.ldexp, ldexp_vjp_0, None)
defvjp(math.degrees, degrees_vjp)
defvjp(math.radians, radians_vjp)
defnode(math.hypot, hypot_rule)
defnode(math.dist, dist_rule)
defnode(math.fsum, fsum_rule)
defnode(math.prod, prod_rule)
defnode(math.modf, modf_rule)
defnode(math.frexp, frexp_rule)
defzero(math.ceil)
defzero(math.floor)
defzero(math.trunc)
defzero(math.isclose)
defzero(math.isfinite)
defzero(math.isinf)
defzero(math.isnan)
