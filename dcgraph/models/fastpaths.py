"""Fast paths of ``x |= d`` statements on ``DistExpr`` families (see ``distributions``).

* ``SCALAR_LP`` / ``SCALAR_GRAD``: a family's log density / gradient on Python (or numpy)
  floats with ``math``, no numpy call;
* ``FUSED``: families evaluated fused on arrays: the forward pass keeps its intermediates on
  the expression (``normal``: ``z = (x - loc) / scale``) and the statement's rules compute only
  the partials they need, a scalar parameter's summed;
* ``STATEMENTS``: a statement's whole forward pass (parameter checks, shapes, log density) in
  one call for its commonest cases, None for the others (then the general path runs, which
  raises the canonical errors).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["SCALAR_LP", "SCALAR_GRAD", "FUSED", "STATEMENTS"]

LOG_2PI = math.log(2 * math.pi)
NEG_INF = -np.inf
_F8 = np.dtype(np.float64)
_REAL = (float, np.float64)


def _log(v):
    return math.log(v) if isinstance(v, float) and v > 0 else np.log(v)


def _normal_lp1(x, loc, scale):
    z = (x - loc) / scale
    return -0.5 * z * z - math.log(scale) - 0.5 * LOG_2PI


def _uniform_lp1(x, low, high):
    return -math.log(high - low) if low <= x <= high else NEG_INF


def _gamma_lp1(x, shape, rate):
    if not x > 0:
        return NEG_INF
    return shape * math.log(rate) - math.lgamma(shape) + (shape - 1) * math.log(x) - rate * x


def _exponential_lp1(x, rate):
    return math.log(rate) - rate * x if x >= 0 else NEG_INF


def _half_normal_lp1(x, scale):
    if not x >= 0:
        return NEG_INF
    return 0.5 * math.log(2 / math.pi) - math.log(scale) - x * x / (2 * scale * scale)


def _lognormal_lp1(x, mu, sigma):
    if not x > 0:
        return NEG_INF
    lx = math.log(x)
    return -lx - math.log(sigma) - 0.5 * LOG_2PI - (lx - mu) ** 2 / (2 * sigma * sigma)


def _beta_lp1(x, a, b):
    if not 0 < x < 1:
        return NEG_INF
    return ((a - 1) * math.log(x) + (b - 1) * math.log1p(-x) + math.lgamma(a + b) - math.lgamma(a)
            - math.lgamma(b))


def _bernoulli_lp1(x, p):
    if x == 1:
        return math.log(p) if p > 0 else NEG_INF
    if x == 0:
        return math.log1p(-p) if p < 1 else NEG_INF
    return NEG_INF


def _poisson_lp1(x, rate):
    if not (x >= 0 and x == math.floor(x)):
        return NEG_INF
    return x * math.log(rate) - rate - math.lgamma(x + 1.0)


def _uniform_grad1(x, low, high):
    w = 1.0 / (high - low)
    return {"x": 0.0, "low": w, "high": -w}


#: family -> its gradient on Python scalars (the families whose array gradient needs errstate)
SCALAR_GRAD = {"uniform": _uniform_grad1}

#: family -> its log density on Python scalars (math, no numpy overhead)
SCALAR_LP = {"normal": _normal_lp1, "uniform": _uniform_lp1, "gamma": _gamma_lp1,
             "exponential": _exponential_lp1, "half_normal": _half_normal_lp1,
             "lognormal": _lognormal_lp1, "beta": _beta_lp1, "bernoulli": _bernoulli_lp1,
             "poisson": _poisson_lp1}


def _scalar(v) -> bool:
    return type(v) is float or (type(v) is not np.ndarray and np.ndim(v) == 0) or \
        (type(v) is np.ndarray and v.ndim == 0)


def _normal_fused_lp(d, x):
    """Normal's summed log density on arrays. For a float vector ``x`` and a positive float
    ``scale`` it keeps ``(x, r, z @ z, 1 / scale, None)`` on the expression for the gradient,
    with the residual ``r = x - loc`` (``x`` itself for ``loc == 0.0``, a centred prior) and
    ``z = r / scale``; otherwise ``(x, z, None, None, None)``."""
    loc, scale = d.params
    ts = type(scale)
    if type(x) is np.ndarray and x.ndim == 1 and (x.dtype is _F8 or x.dtype == _F8) and \
            (ts is float or ts is np.float64) and scale > 0:
        inv = 1.0 / scale
        r = x if type(loc) is float and loc == 0.0 else x - loc
        if type(r) is np.ndarray and r.ndim == 1 and (r.dtype is _F8 or r.dtype == _F8):
            zz = float(r.dot(r)) * inv * inv
            d._cache = (x, r, zz, inv, None)
            return -0.5 * zz - r.size * (math.log(scale) + 0.5 * LOG_2PI)
    z = (x - loc) / scale
    d._cache = (x, z, None, None, None)
    if type(z) is np.ndarray and z.ndim == 1 and _scalar(scale):
        return -0.5 * float(z @ z) - z.size * (_log(scale) + 0.5 * LOG_2PI)
    return float(np.sum(-0.5 * z * z - np.log(scale) - 0.5 * LOG_2PI))


def _normal_partials(d, x, want_x: bool, want_params: bool) -> dict:
    """The wanted partials of normal's summed log density; a scalar parameter's partial comes
    summed (its adjoint is the sum anyway). ``z / scale`` is kept for the statement's other
    rule (a statement on a parameter asks twice: for ``x``, then for the parameters)."""
    loc, scale = d.params
    cache = d._cache
    if cache is not None and cache[0] is x and cache[3] is not None:     # the vector case
        r, zz, inv, iz = cache[1], cache[2], cache[3], cache[4]
        if iz is None and not want_params:                 # one product: d/dx = -z / scale
            return {"x": r * (-inv * inv)}
        if iz is None:
            iz = r * (inv * inv)
            d._cache = (x, r, zz, inv, iz)
        out = {"x": -iz} if want_x else {}
        if want_params:
            out["loc"] = float(iz.sum()) if _scalar(loc) else iz
            out["scale"] = (zz - x.size) * inv
        return out
    if cache is not None and cache[0] is x:
        z, iz = cache[1], cache[4]
    else:
        z, iz = (x - loc) / scale, None
    if iz is None:
        iz = z / scale
        d._cache = (x, z, None, None, iz)
    out = {}
    if want_x:
        out["x"] = -iz
    if want_params:
        flat = type(z) is np.ndarray and z.ndim == 1 and _scalar(scale)
        out["loc"] = float(iz.sum()) if flat and _scalar(loc) else iz
        out["scale"] = (float(z @ z) - z.size) / scale if flat else (z * z - 1.0) / scale
    return out


#: family -> (summed log density of arrays keeping intermediates on the expression,
#: partials(expression, x, want_x, want_params)): the families a statement evaluates fused
FUSED = {"normal": (_normal_fused_lp, _normal_partials)}


def _normal_statement(d, x):
    """``x |= normal(loc, scale)`` for a float ``x`` and float parameters, or a float64 vector
    ``x`` with a float ``scale`` and a float (or same-shape float64 vector) ``loc``."""
    loc, scale = d.params
    ts, tx = type(scale), type(x)
    if (ts is not float and ts is not np.float64) or not scale > 0:
        return None
    if tx is float or tx is np.float64:
        if type(loc) is float or type(loc) is np.float64:
            z = (float(x) - float(loc)) / float(scale)        # Python floats: faster math
            return -0.5 * z * z - math.log(scale) - 0.5 * LOG_2PI
        return None
    if tx is np.ndarray and x.ndim == 1 and (x.dtype is _F8 or x.dtype == _F8):
        tl = type(loc)                     # _normal_fused_lp's vector case, inline
        if tl is float and loc == 0.0:
            r = x
        elif tl is float or tl is np.float64 or (tl is np.ndarray and loc.shape == x.shape):
            r = x - loc
            if r.dtype is not _F8 and r.dtype != _F8:
                return None
        else:
            return None
        inv = 1.0 / scale
        zz = float(r.dot(r)) * inv * inv
        d._cache = (x, r, zz, inv, None)
        return -0.5 * zz - r.size * (math.log(scale) + 0.5 * LOG_2PI)
    return None


def _uniform_statement(d, x):
    """``x |= uniform(low, high)`` on floats."""
    low, high = d.params
    if type(x) in _REAL and type(low) in _REAL and type(high) in _REAL and low < high:
        return -math.log(high - low) if low <= x <= high else NEG_INF
    return None


#: family -> its statement's forward pass in one call (None: not this case)
STATEMENTS = {"normal": _normal_statement, "uniform": _uniform_statement}
