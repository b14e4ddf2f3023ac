"""Continuous families on half-lines: HalfNormal, LogNormal, Exponential, Weibull, Pareto (the
gamma family is in ``gamma_family``)."""
from __future__ import annotations

import numpy as np
from scipy.special import erf, erfcinv, erfinv, gamma as gamma_fn, log_ndtr, ndtri, xlogy

from ._math import LOG_2, log1mexp
from .base import Univariate
from .kernels import exponential_logpdf, halfnormal_logpdf, lognormal_logpdf
from .support import Interval, NonNegative, Positive

__all__ = ["HalfNormal", "LogNormal", "Exponential", "Weibull", "Pareto"]


class HalfNormal(Univariate):
    """HalfNormal(scale): ``|Z| * scale`` for standard normal ``Z``; ``scale > 0``.

    ``log p(x) = log(2/pi)/2 - log(scale) - x^2/(2 scale^2)`` on ``[0, inf)``.
    """

    params = ("scale",)
    support = NonNegative()

    def __init__(self, scale, validate_args=None):
        self._set_params(validate_args, scale=(scale, "positive"))

    def _logpdf(self, x):
        return halfnormal_logpdf(x, self.scale)

    def _grad_logpdf(self, x):
        s = self.scale
        return {"x": -x / s**2, "scale": -1.0 / s + x * x / s**3}

    def _logcdf(self, x):
        return np.log(erf(x / (self.scale * np.sqrt(2.0))))

    def _logsf(self, x):
        return LOG_2 + log_ndtr(-x / self.scale)

    def _ppf(self, q):
        return self.scale * np.sqrt(2.0) * erfinv(q)

    def _isf(self, q):
        return self.scale * np.sqrt(2.0) * erfcinv(q)

    def _sample(self, rng, size):
        return self.scale * np.abs(rng.standard_normal(size))

    @property
    def mean(self):
        return self._full(self.scale * np.sqrt(2.0 / np.pi))

    @property
    def var(self):
        return self._full(self.scale**2 * (1.0 - 2.0 / np.pi))


class LogNormal(Univariate):
    """LogNormal(mu, sigma): ``log X ~ Normal(mu, sigma)``; ``mu`` real, ``sigma > 0``; support ``(0, inf)``.

    ``log p(x) = -log(x) - log(sigma) - log(2 pi)/2 - z^2/2`` with ``z = (log x - mu)/sigma``.
    """

    params = ("mu", "sigma")
    support = Positive()

    def __init__(self, mu, sigma, validate_args=None):
        self._set_params(validate_args, mu=(mu, "real"), sigma=(sigma, "positive"))

    def _z(self, x):
        return (np.log(x) - self.mu) / self.sigma

    def _logpdf(self, x):
        return lognormal_logpdf(x, self.mu, self.sigma)

    def _grad_logpdf(self, x):
        z, s = self._z(x), self.sigma
        return {"x": -(1.0 + z / s) / x, "mu": z / s, "sigma": (z * z - 1.0) / s}

    def _logcdf(self, x):
        return log_ndtr(self._z(x))

    def _logsf(self, x):
        return log_ndtr(-self._z(x))

    def _ppf(self, q):
        return np.exp(self.mu + self.sigma * ndtri(q))

    def _isf(self, q):
        return np.exp(self.mu - self.sigma * ndtri(q))

    def _sample(self, rng, size):
        return rng.lognormal(self.mu, self.sigma, size)

    @property
    def mean(self):
        return self._full(np.exp(self.mu + 0.5 * self.sigma**2))

    @property
    def var(self):
        s2 = self.sigma**2
        return self._full(np.expm1(s2) * np.exp(2.0 * self.mu + s2))


class Exponential(Univariate):
    """Exponential(rate): ``log p(x) = log(rate) - rate x`` on ``[0, inf)``; ``rate > 0`` (mean ``1/rate``)."""

    params = ("rate",)
    support = NonNegative()

    def __init__(self, rate, validate_args=None):
        self._set_params(validate_args, rate=(rate, "positive"))

    def _logpdf(self, x):
        return exponential_logpdf(x, self.rate)

    def _grad_logpdf(self, x):
        return {"x": -self.rate + 0.0 * x, "rate": 1.0 / self.rate - x}

    def _logcdf(self, x):
        return log1mexp(-self.rate * x)

    def _logsf(self, x):
        return -self.rate * x

    def _ppf(self, q):
        return -np.log1p(-q) / self.rate

    def _isf(self, q):
        return -np.log(q) / self.rate

    def _sample(self, rng, size):
        return rng.exponential(1.0 / self.rate, size)

    @property
    def mean(self):
        return self._full(1.0 / self.rate)

    @property
    def var(self):
        return self._full(1.0 / self.rate**2)


class Weibull(Univariate):
    """Weibull(shape, scale): ``P(X > x) = exp(-(x/scale)^shape)``; ``shape, scale > 0``; support ``[0, inf)``.

    ``log p(x) = log(shape/scale) + (shape-1) log(x/scale) - (x/scale)^shape`` (scipy ``weibull_min``;
    BUGS ``dweib(v, lambda)`` has ``scale = lambda^(-1/v)``).
    """

    params = ("shape", "scale")
    support = NonNegative()

    def __init__(self, shape, scale):
        self._set_params(shape=(shape, "positive"), scale=(scale, "positive"))

    def _logpdf(self, x):
        k, t = self.shape, x / self.scale
        return np.log(k) - np.log(self.scale) + xlogy(k - 1.0, t) - t**k

    def _grad_logpdf(self, x):
        k, lam = self.shape, self.scale
        t = x / lam
        tk, logt = t**k, np.log(t)
        return {"x": (k - 1.0) / x - k / lam * t ** (k - 1.0),
                "shape": 1.0 / k + logt - tk * logt,
                "scale": k / lam * (tk - 1.0)}

    def _logcdf(self, x):
        return log1mexp(-((x / self.scale) ** self.shape))

    def _logsf(self, x):
        return -((x / self.scale) ** self.shape)

    def _ppf(self, q):
        return self.scale * (-np.log1p(-q)) ** (1.0 / self.shape)

    def _isf(self, q):
        return self.scale * (-np.log(q)) ** (1.0 / self.shape)

    def _sample(self, rng, size):
        return self.scale * rng.weibull(self.shape, size)

    @property
    def mean(self):
        return self._full(self.scale * gamma_fn(1.0 + 1.0 / self.shape))

    @property
    def var(self):
        k = self.shape
        return self._full(self.scale**2 * (gamma_fn(1.0 + 2.0 / k) - gamma_fn(1.0 + 1.0 / k) ** 2))


class Pareto(Univariate):
    """Pareto(alpha, scale): ``P(X > x) = (scale/x)^alpha`` on ``[scale, inf)``; ``alpha, scale > 0``.

    ``log p(x) = log(alpha) + alpha log(scale) - (alpha+1) log x`` (scipy ``pareto(alpha, scale=scale)``,
    BUGS ``dpar(alpha, c)``). Mean ``inf`` for ``alpha <= 1``; variance ``inf`` for ``1 < alpha <= 2``, NaN below.
    """

    params = ("alpha", "scale")

    def __init__(self, alpha, scale):
        self._set_params(alpha=(alpha, "positive"), scale=(scale, "positive"))

    @property
    def support(self):
        return Interval(self.scale, np.inf)

    def _logpdf(self, x):
        a = self.alpha
        return np.log(a) + a * np.log(self.scale) - (a + 1.0) * np.log(x)

    def _grad_logpdf(self, x):
        a, m = self.alpha, self.scale
        return {"x": -(a + 1.0) / x, "alpha": 1.0 / a + np.log(m) - np.log(x), "scale": a / m + 0.0 * x}

    def _logsf(self, x):
        return self.alpha * (np.log(self.scale) - np.log(x))

    def _logcdf(self, x):
        return log1mexp(self._logsf(x))

    def _ppf(self, q):
        return self.scale * np.exp(-np.log1p(-q) / self.alpha)

    def _isf(self, q):
        return self.scale * np.exp(-np.log(q) / self.alpha)

    def _sample(self, rng, size):
        return self.scale * np.exp(rng.standard_exponential(size) / self.alpha)

    @property
    def mean(self):
        a = self.alpha
        with np.errstate(divide="ignore", invalid="ignore"):
            return self._full(np.where(a > 1, a * self.scale / (a - 1.0), np.inf))

    @property
    def var(self):
        a, m = self.alpha, self.scale
        with np.errstate(divide="ignore", invalid="ignore"):
            v = np.where(a > 2, m**2 * a / ((a - 1.0) ** 2 * (a - 2.0)), np.where(a > 1, np.inf, np.nan))
        return self._full(v)
