"""VJP rules for ``scipy.special`` and for the ``logpdf``/``logpmf`` of ``scipy.stats`` normal,
gamma, beta, exponential, Student t, Poisson and binomial distributions (with ``loc`` and
``scale`` where the distribution has them).

``scipy.stats.norm.logpdf(...)`` is recorded as ``rv_continuous.logpdf(norm, ...)``; its rule
is chosen by the type of argument 0 (``defdispatch``).
"""
from __future__ import annotations

import numpy as np
from scipy import special, stats
from scipy.stats import _continuous_distns as _cd
from scipy.stats import _discrete_distns as _dd

from .registry import defdispatch, defvjp
from .values import unbroadcast

_fit = unbroadcast
_SQRT_2_OVER_PI = np.sqrt(2.0 / np.pi)
_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)


# -- scipy.special ----------------------------------------------------------------------------
def gammaln_vjp(g, ans, x, **kw):
    return _fit(x, g * special.digamma(x))


def digamma_vjp(g, ans, x, **kw):
    return _fit(x, g * special.polygamma(1, x))


def polygamma_vjp_1(g, ans, n, x, **kw):
    return _fit(x, g * special.polygamma(np.add(n, 1), x))


def gamma_vjp(g, ans, x, **kw):
    return _fit(x, g * ans * special.digamma(x))


def expit_vjp(g, ans, x, **kw):
    d = np.subtract(1.0, ans)
    if type(d) is np.ndarray and d.shape == np.shape(g):
        d *= ans
        d *= g
        return _fit(x, d)
    return _fit(x, g * ans * d)


def log_expit_vjp(g, ans, x, **kw):
    return _fit(x, g * special.expit(np.negative(x)))


def logit_vjp(g, ans, x, **kw):
    x = np.asarray(x)
    return _fit(x, g / (x * (1.0 - x)))


def erf_vjp(g, ans, x, **kw):
    return _fit(x, g * (2.0 / np.sqrt(np.pi)) * np.exp(-np.square(x)))


def erfc_vjp(g, ans, x, **kw):
    return _fit(x, -g * (2.0 / np.sqrt(np.pi)) * np.exp(-np.square(x)))


def erfinv_vjp(g, ans, x, **kw):
    return _fit(x, g * (np.sqrt(np.pi) / 2.0) * np.exp(np.square(ans)))


def ndtr_vjp(g, ans, x, **kw):
    return _fit(x, g * _INV_SQRT_2PI * np.exp(-0.5 * np.square(x)))


def ndtri_vjp(g, ans, x, **kw):
    return _fit(x, g / (_INV_SQRT_2PI * np.exp(-0.5 * np.square(ans))))


def log_ndtr_vjp(g, ans, x, **kw):
    return _fit(x, g * np.exp(-0.5 * np.square(x) - 0.5 * np.log(2.0 * np.pi) - ans))


def xlogy_vjp_0(g, ans, x, y, **kw):
    return _fit(x, g * np.log(y))


def xlogy_vjp_1(g, ans, x, y, **kw):
    return _fit(y, g * np.asarray(x) / y)


def xlog1py_vjp_0(g, ans, x, y, **kw):
    return _fit(x, g * np.log1p(y))


def xlog1py_vjp_1(g, ans, x, y, **kw):
    return _fit(y, g * np.asarray(x) / (1.0 + np.asarray(y)))


def betaln_vjp_0(g, ans, a, b, **kw):
    return _fit(a, g * (special.digamma(a) - special.digamma(np.add(a, b))))


def betaln_vjp_1(g, ans, a, b, **kw):
    return _fit(b, g * (special.digamma(b) - special.digamma(np.add(a, b))))


def logsumexp_vjp_0(g, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    if return_sign:
        raise NotImplementedError("dcgraph.ad: logsumexp(return_sign=True)")
    a0, a = a, np.asarray(a)
    full = _keep(ans, a.ndim, axis, keepdims)
    w = np.exp(a - full) if b is None else np.asarray(b) * np.exp(a - full)
    return _fit(a0, w * _keep(g, a.ndim, axis, keepdims))


def logsumexp_vjp_2(g, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    a = np.asarray(a)
    d = np.exp(a - _keep(ans, a.ndim, axis, keepdims)) * _keep(g, a.ndim, axis, keepdims)
    return _fit(b, d)


def _keep(v, ndim, axis, keepdims):
    """Re-insert the reduced axes of a logsumexp result so it broadcasts against ``a``."""
    v = np.asarray(v)
    if keepdims or ndim == 0:
        return v
    axes = tuple(range(ndim)) if axis is None else (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return np.expand_dims(v, tuple(a % ndim for a in axes))


def softmax_vjp(g, ans, x, axis=None):
    return ans * (g - np.sum(g * ans, axis=axis, keepdims=True))


def log_softmax_vjp(g, ans, x, axis=None):
    return g - np.exp(ans) * np.sum(g, axis=axis, keepdims=True)


defvjp(special.gammaln, gammaln_vjp)
defvjp(special.digamma, digamma_vjp)
defvjp(special.psi, digamma_vjp)
defvjp(special.polygamma, None, polygamma_vjp_1)
defvjp(special.gamma, gamma_vjp)
defvjp(special.expit, expit_vjp)
defvjp(special.log_expit, log_expit_vjp)
defvjp(special.logit, logit_vjp)
defvjp(special.erf, erf_vjp)
defvjp(special.erfc, erfc_vjp)
defvjp(special.erfinv, erfinv_vjp)
defvjp(special.ndtr, ndtr_vjp)
defvjp(special.ndtri, ndtri_vjp)
defvjp(special.log_ndtr, log_ndtr_vjp)
defvjp(special.xlogy, xlogy_vjp_0, xlogy_vjp_1)
defvjp(special.xlog1py, xlog1py_vjp_0, xlog1py_vjp_1)
defvjp(special.betaln, betaln_vjp_0, betaln_vjp_1)
defvjp(special.logsumexp, logsumexp_vjp_0, None, logsumexp_vjp_2, names=("a", "axis", "b"))
defvjp(special.softmax, softmax_vjp, names=("x", "axis"))
defvjp(special.log_softmax, log_softmax_vjp, names=("x", "axis"))


# -- scipy.stats log densities ----------------------------------------------------------------
# Each rule is ``(g, ans, dist, x, *shapes, loc, scale)`` -> adjoint of one parameter.
def _z(x, loc, scale):
    return (np.asarray(x) - loc) / scale


def norm_dx(g, ans, dist, x, loc=0.0, scale=1.0):
    return _fit(x, -g * _z(x, loc, scale) / scale)


def norm_dloc(g, ans, dist, x, loc=0.0, scale=1.0):
    return _fit(loc, g * _z(x, loc, scale) / scale)


def norm_dscale(g, ans, dist, x, loc=0.0, scale=1.0):
    z = _z(x, loc, scale)
    return _fit(scale, g * (z * z - 1.0) / scale)


def expon_dx(g, ans, dist, x, loc=0.0, scale=1.0):
    return _fit(x, -g / np.broadcast_to(scale, np.shape(ans)))


def expon_dloc(g, ans, dist, x, loc=0.0, scale=1.0):
    return _fit(loc, g / np.broadcast_to(scale, np.shape(ans)))


def expon_dscale(g, ans, dist, x, loc=0.0, scale=1.0):
    return _fit(scale, g * (_z(x, loc, scale) - 1.0) / scale)


def gamma_dx(g, ans, dist, x, a, loc=0.0, scale=1.0):
    y = _z(x, loc, scale)
    return _fit(x, g * ((np.asarray(a) - 1.0) / y - 1.0) / scale)


def gamma_da(g, ans, dist, x, a, loc=0.0, scale=1.0):
    return _fit(a, g * (np.log(_z(x, loc, scale)) - special.digamma(a)))


def gamma_dloc(g, ans, dist, x, a, loc=0.0, scale=1.0):
    return _fit(loc, -g * ((np.asarray(a) - 1.0) / _z(x, loc, scale) - 1.0) / scale)


def gamma_dscale(g, ans, dist, x, a, loc=0.0, scale=1.0):
    return _fit(scale, g * (_z(x, loc, scale) - a) / scale)


def beta_dy(x, a, b, loc, scale):
    y = _z(x, loc, scale)
    return y, (np.asarray(a) - 1.0) / y - (np.asarray(b) - 1.0) / (1.0 - y)


def beta_dx(g, ans, dist, x, a, b, loc=0.0, scale=1.0):
    return _fit(x, g * beta_dy(x, a, b, loc, scale)[1] / scale)


def beta_da(g, ans, dist, x, a, b, loc=0.0, scale=1.0):
    y = _z(x, loc, scale)
    return _fit(a, g * (np.log(y) - special.digamma(a) + special.digamma(np.add(a, b))))


def beta_db(g, ans, dist, x, a, b, loc=0.0, scale=1.0):
    y = _z(x, loc, scale)
    return _fit(b, g * (np.log1p(-y) - special.digamma(b) + special.digamma(np.add(a, b))))


def beta_dloc(g, ans, dist, x, a, b, loc=0.0, scale=1.0):
    return _fit(loc, -g * beta_dy(x, a, b, loc, scale)[1] / scale)


def beta_dscale(g, ans, dist, x, a, b, loc=0.0, scale=1.0):
    y, dy = beta_dy(x, a, b, loc, scale)
    return _fit(scale, -g * (y * dy + 1.0) / scale)


def t_dy(x, df, loc, scale):
    y = _z(x, loc, scale)
    return y, -(np.asarray(df) + 1.0) * y / (df + y * y)


def t_dx(g, ans, dist, x, df, loc=0.0, scale=1.0):
    return _fit(x, g * t_dy(x, df, loc, scale)[1] / scale)


def t_ddf(g, ans, dist, x, df, loc=0.0, scale=1.0):
    y = _z(x, loc, scale)
    df = np.asarray(df, dtype=float)
    d = 0.5 * (special.digamma((df + 1.0) / 2.0) - special.digamma(df / 2.0) - 1.0 / df
               - np.log1p(y * y / df) + (df + 1.0) * y * y / (df * (df + y * y)))
    return _fit(df, g * d)


def t_dloc(g, ans, dist, x, df, loc=0.0, scale=1.0):
    return _fit(loc, -g * t_dy(x, df, loc, scale)[1] / scale)


def t_dscale(g, ans, dist, x, df, loc=0.0, scale=1.0):
    y, dy = t_dy(x, df, loc, scale)
    return _fit(scale, -g * (y * dy + 1.0) / scale)


def poisson_dmu(g, ans, dist, k, mu, loc=0):
    return _fit(mu, g * ((np.asarray(k) - loc) / mu - 1.0))


def binom_dp(g, ans, dist, k, n, p, loc=0):
    k = np.asarray(k) - loc
    return _fit(p, g * (k / p - (np.asarray(n) - k) / (1.0 - np.asarray(p))))


_LOGPDF = stats.rv_continuous.logpdf
_LOGPMF = stats.rv_discrete.logpmf
defdispatch(_LOGPDF)
defdispatch(_LOGPMF)
defvjp((_LOGPDF, _cd.norm_gen), None, norm_dx, norm_dloc, norm_dscale,
       names=("self", "x", "loc", "scale"))
defvjp((_LOGPDF, _cd.expon_gen), None, expon_dx, expon_dloc, expon_dscale,
       names=("self", "x", "loc", "scale"))
defvjp((_LOGPDF, _cd.gamma_gen), None, gamma_dx, gamma_da, gamma_dloc, gamma_dscale,
       names=("self", "x", "a", "loc", "scale"))
defvjp((_LOGPDF, _cd.beta_gen), None, beta_dx, beta_da, beta_db, beta_dloc, beta_dscale,
       names=("self", "x", "a", "b", "loc", "scale"))
defvjp((_LOGPDF, _cd.t_gen), None, t_dx, t_ddf, t_dloc, t_dscale,
       names=("self", "x", "df", "loc", "scale"))
defvjp((_LOGPMF, _dd.poisson_gen), None, None, poisson_dmu, None,
       names=("self", "k", "mu", "loc"))
defvjp((_LOGPMF, _dd.binom_gen), None, None, None, binom_dp, None,
       names=("self", "k", "n", "p", "loc"))
