"""Raw log-density kernels: plain elementwise functions of arrays, one per family.

``normal_logpdf(x, loc, scale)`` and its siblings broadcast their arguments and return the
elementwise log density (not summed), with no validation and no objects: the cheap path that
generated code (BUGS models) calls directly and that the families' ``_logpdf`` use, so there is
one implementation. Contract: exact for valid parameters and ``x`` inside the support; outside
it the value is unspecified (the families mask it to ``-inf``). Arguments are in the families'
parametrisations and order (``x`` first, then ``Family.params``).

``<kernel>_grad(x, *params)`` returns the tuple of elementwise partial derivatives of the
kernel with respect to each argument (``None`` for the integer ``x`` of discrete families and
for integer counts); ``dcgraph.ad.rules_kernels`` registers them as VJP rules, so the kernels are
differentiable by ``dcgraph.grad``. ``KERNELS`` maps each kernel to ``(grad, argument names)``.
"""
from __future__ import annotations

from types import MappingProxyType

import numpy as np
from scipy.special import betaln, digamma, gammaln, xlog1py, xlogy

from ._math import LOG_2, LOG_2PI

__all__ = ["normal_logpdf", "studentt_logpdf", "cauchy_logpdf", "laplace_logpdf", "logistic_logpdf",
           "halfnormal_logpdf", "lognormal_logpdf", "exponential_logpdf", "gamma_logpdf", "beta_logpdf",
           "bernoulli_logpmf", "binomial_logpmf", "poisson_logpmf", "KERNELS"]

_HALF_LOG_2PI = 0.5 * LOG_2PI
_LOG_PI = float(np.log(np.pi))
_HALFNORMAL_CONST = 0.5 * (LOG_2 - _LOG_PI)


# -- real line ----------------------------------------------------------------------------------
def normal_logpdf(x, loc, scale):
    """``-z^2/2 - log(scale) - log(2 pi)/2``, ``z = (x - loc)/scale``."""
    z = (x - loc) / scale
    return -0.5 * (z * z) - np.log(scale) - _HALF_LOG_2PI


def normal_logpdf_grad(x, loc, scale):
    z = (x - loc) / scale
    dx = -z / scale
    return dx, -dx, (z * z - 1.0) / scale


def studentt_logpdf(x, df, loc, scale):
    """``lgamma((df+1)/2) - lgamma(df/2) - log(df pi)/2 - log(scale) - (df+1)/2 log(1 + z^2/df)``."""
    z = (x - loc) / scale
    return (gammaln(0.5 * (df + 1.0)) - gammaln(0.5 * df) - 0.5 * np.log(df * np.pi)
            - np.log(scale) - 0.5 * (df + 1.0) * np.log1p(z * z / df))


def studentt_logpdf_grad(x, df, loc, scale):
    z = (x - loc) / scale
    dz = -(df + 1.0) * z / (df + z * z)
    ddf = (0.5 * (digamma(0.5 * (df + 1.0)) - digamma(0.5 * df)) - 0.5 / df
           - 0.5 * np.log1p(z * z / df) + 0.5 * (df + 1.0) * z * z / (df * (df + z * z)))
    return dz / scale, ddf, -dz / scale, -(1.0 + z * dz) / scale


def cauchy_logpdf(x, loc, scale):
    """``-log(pi) - log(scale) - log(1 + z^2)``."""
    z = (x - loc) / scale
    return -_LOG_PI - np.log(scale) - np.log1p(z * z)


def cauchy_logpdf_grad(x, loc, scale):
    z = (x - loc) / scale
    dz = -2.0 * z / (1.0 + z * z)
    return dz / scale, -dz / scale, -(1.0 + z * dz) / scale


def laplace_logpdf(x, loc, scale):
    """``-log(2 scale) - |x - loc|/scale``."""
    return -np.log(2.0 * scale) - np.abs((x - loc) / scale)


def laplace_logpdf_grad(x, loc, scale):
    z = (x - loc) / scale
    sz = np.sign(z)
    return -sz / scale, sz / scale, (np.abs(z) - 1.0) / scale


def logistic_logpdf(x, loc, scale):
    """``-|z| - log(scale) - 2 log(1 + exp(-|z|))`` (the symmetric, overflow-free form)."""
    a = np.abs((x - loc) / scale)
    return -a - np.log(scale) - 2.0 * np.log1p(np.exp(-a))


def logistic_logpdf_grad(x, loc, scale):
    z = (x - loc) / scale
    dz = -np.tanh(0.5 * z)
    return dz / scale, -dz / scale, -(1.0 + z * dz) / scale


# -- half-lines ---------------------------------------------------------------------------------
def halfnormal_logpdf(x, scale):
    """``log(2/pi)/2 - log(scale) - x^2/(2 scale^2)`` on ``[0, inf)``."""
    z = x / scale
    return _HALFNORMAL_CONST - np.log(scale) - 0.5 * (z * z)


def halfnormal_logpdf_grad(x, scale):
    s2 = scale * scale
    return -x / s2, -1.0 / scale + x * x / (s2 * scale)


def lognormal_logpdf(x, mu, sigma):
    """``-log(x) - log(sigma) - log(2 pi)/2 - z^2/2``, ``z = (log x - mu)/sigma``."""
    lx = np.log(x)
    z = (lx - mu) / sigma
    return -lx - np.log(sigma) - _HALF_LOG_2PI - 0.5 * (z * z)


def lognormal_logpdf_grad(x, mu, sigma):
    z = (np.log(x) - mu) / sigma
    return -(1.0 + z / sigma) / x, z / sigma, (z * z - 1.0) / sigma


def exponential_logpdf(x, rate):
    """``log(rate) - rate x`` on ``[0, inf)``."""
    return np.log(rate) - rate * x


def exponential_logpdf_grad(x, rate):
    return -rate + 0.0 * x, 1.0 / rate - x


def gamma_logpdf(x, shape, rate):
    """``shape log(rate) - lgamma(shape) + (shape-1) log x - rate x`` (shape, rate = inverse scale)."""
    return shape * np.log(rate) - gammaln(shape) + xlogy(shape - 1.0, x) - rate * x


def gamma_logpdf_grad(x, shape, rate):
    return (shape - 1.0) / x - rate, np.log(rate) - digamma(shape) + np.log(x), shape / rate - x


# -- unit interval --------------------------------------------------------------------------------
def beta_logpdf(x, a, b):
    """``(a-1) log x + (b-1) log(1-x) - log B(a, b)`` on ``[0, 1]``."""
    return xlogy(a - 1.0, x) + xlog1py(b - 1.0, -x) - betaln(a, b)


def beta_logpdf_grad(x, a, b):
    dab = digamma(a + b)
    return ((a - 1.0) / x - (b - 1.0) / (1.0 - x), np.log(x) - digamma(a) + dab,
            np.log1p(-x) - digamma(b) + dab)


# -- discrete (x integer-valued; not differentiated) -----------------------------------------------
def bernoulli_logpmf(x, p):
    """``x log p + (1-x) log(1-p)`` on ``{0, 1}``."""
    return xlogy(x, p) + xlog1py(1.0 - x, -p)


def bernoulli_logpmf_grad(x, p):
    return None, x / p - (1.0 - x) / (1.0 - p)


def binomial_logpmf(x, n, p):
    """``log C(n, x) + x log p + (n-x) log(1-p)`` on ``{0, ..., n}``."""
    return (gammaln(n + 1.0) - gammaln(x + 1.0) - gammaln(n - x + 1.0)
            + xlogy(x, p) + xlog1py(n - x, -p))


def binomial_logpmf_grad(x, n, p):
    return None, None, x / p - (n - x) / (1.0 - p)


def poisson_logpmf(x, rate):
    """``x log(rate) - rate - log x!`` on ``{0, 1, ...}``."""
    return xlogy(x, rate) - rate - gammaln(x + 1.0)


def poisson_logpmf_grad(x, rate):
    return None, x / rate - 1.0


#: kernel -> (its partials function, argument names); the table ``rules_kernels`` registers.
KERNELS = MappingProxyType({
    normal_logpdf: (normal_logpdf_grad, ("x", "loc", "scale")),
    studentt_logpdf: (studentt_logpdf_grad, ("x", "df", "loc", "scale")),
    cauchy_logpdf: (cauchy_logpdf_grad, ("x", "loc", "scale")),
    laplace_logpdf: (laplace_logpdf_grad, ("x", "loc", "scale")),
    logistic_logpdf: (logistic_logpdf_grad, ("x", "loc", "scale")),
    halfnormal_logpdf: (halfnormal_logpdf_grad, ("x", "scale")),
    lognormal_logpdf: (lognormal_logpdf_grad, ("x", "mu", "sigma")),
    exponential_logpdf: (exponential_logpdf_grad, ("x", "rate")),
    gamma_logpdf: (gamma_logpdf_grad, ("x", "shape", "rate")),
    beta_logpdf: (beta_logpdf_grad, ("x", "a", "b")),
    bernoulli_logpmf: (bernoulli_logpmf_grad, ("x", "p")),
    binomial_logpmf: (binomial_logpmf_grad, ("x", "n", "p")),
    poisson_logpmf: (poisson_logpmf_grad, ("x", "rate")),
})
