"""The gamma family on the half-line: Gamma, InverseGamma, ChiSquared, and a Gamma log density
that stays finite for tiny and huge shapes."""
from __future__ import annotations

import numpy as np
from scipy.special import digamma, gammainc, gammaincc, gammainccinv, gammaincinv, gammaln, xlogy

from ._math import LOG_2, LOG_2PI
from .base import Univariate
from .support import NonNegative, Positive

__all__ = ["Gamma", "InverseGamma", "ChiSquared", "stable_gamma_logpdf"]


def _log1pmx(d):
    """``log(1 + d) - d``, accurate near 0."""
    d = np.asarray(d, dtype=float)
    series = d * d * (-1 / 2 + d * (1 / 3 + d * (-1 / 4 + d / 5)))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.abs(d) < 1e-4, series, np.log1p(d) - d)


def stable_gamma_logpdf(a, b, x):
    """Gamma(shape a, rate b) log density, finite wherever it is: ``lgamma(a)`` as
    ``lgamma(1 + a) - log a`` for tiny ``a``, and for ``a > 1e4`` Stirling's form
    ``a log1pmx(bx/a - 1) + log(a)/2 - log(2 pi)/2 - 1/(12a) - log x`` (no ``inf - inf``)."""
    a, b, x = np.asarray(a, dtype=float), np.asarray(b, dtype=float), np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lgamma_a = np.where(a < 1e-8, gammaln(a + 1.0) - np.log(a), gammaln(a))
        plain = a * np.log(b) - lgamma_a + xlogy(a - 1.0, x) - b * x
        big = np.maximum(a, 1e4)
        stirling = (big * _log1pmx((b / big) * x - 1.0) + 0.5 * np.log(big) - 0.5 * LOG_2PI
                    - 1.0 / (12.0 * big) - np.log(x))
        out = np.where(a > 1e4, stirling, plain)
    return out[()] if out.ndim == 0 else out


class Gamma(Univariate):
    """Gamma(shape, rate): ``log p(x) = shape log(rate) - lgamma(shape) + (shape-1) log x - rate x``.

    ``shape > 0``, ``rate > 0`` (an inverse scale: mean ``shape/rate``, as BUGS ``dgamma``);
    support ``[0, inf)``.
    """

    params = ("shape", "rate")
    support = NonNegative()

    def __init__(self, shape, rate, validate_args=None):
        self._set_params(validate_args, shape=(shape, "positive"), rate=(rate, "positive"))

    def _logpdf(self, x):
        return stable_gamma_logpdf(self.shape, self.rate, x)

    def _grad_logpdf(self, x):
        a, b = self.shape, self.rate
        return {"x": (a - 1.0) / x - b, "shape": np.log(b) - digamma(a) + np.log(x), "rate": a / b - x}

    def _logcdf(self, x):
        return np.log(gammainc(self.shape, self.rate * x))

    def _logsf(self, x):
        return np.log(gammaincc(self.shape, self.rate * x))

    def _ppf(self, q):
        return gammaincinv(self.shape, q) / self.rate

    def _isf(self, q):
        return gammainccinv(self.shape, q) / self.rate

    def _sample(self, rng, size):
        return rng.gamma(self.shape, 1.0 / self.rate, size)

    @property
    def mean(self):
        return self._full(self.shape / self.rate)

    @property
    def var(self):
        return self._full(self.shape / self.rate**2)


class InverseGamma(Univariate):
    """InverseGamma(shape, scale): ``1/X ~ Gamma(shape, rate=scale)``; ``shape, scale > 0``; support ``(0, inf)``.

    ``log p(x) = shape log(scale) - lgamma(shape) - (shape+1) log x - scale/x``. Mean
    ``scale/(shape-1)`` (``inf`` if ``shape <= 1``); variance ``inf`` for ``1 < shape <= 2``, NaN below.
    """

    params = ("shape", "scale")
    support = Positive()

    def __init__(self, shape, scale):
        self._set_params(shape=(shape, "positive"), scale=(scale, "positive"))

    def _logpdf(self, x):
        a, b = self.shape, self.scale
        return a * np.log(b) - gammaln(a) - (a + 1.0) * np.log(x) - b / x

    def _grad_logpdf(self, x):
        a, b = self.shape, self.scale
        return {"x": -(a + 1.0) / x + b / x**2, "shape": np.log(b) - digamma(a) - np.log(x), "scale": a / b - 1.0 / x}

    def _logcdf(self, x):
        return np.log(gammaincc(self.shape, self.scale / x))

    def _logsf(self, x):
        return np.log(gammainc(self.shape, self.scale / x))

    def _ppf(self, q):
        return self.scale / gammainccinv(self.shape, q)

    def _isf(self, q):
        return self.scale / gammaincinv(self.shape, q)

    def _sample(self, rng, size):
        return self.scale / rng.gamma(self.shape, 1.0, size)

    @property
    def mean(self):
        a = self.shape
        with np.errstate(divide="ignore", invalid="ignore"):
            return self._full(np.where(a > 1, self.scale / (a - 1.0), np.inf))

    @property
    def var(self):
        a, b = self.shape, self.scale
        with np.errstate(divide="ignore", invalid="ignore"):
            v = np.where(a > 2, b**2 / ((a - 1.0) ** 2 * (a - 2.0)), np.where(a > 1, np.inf, np.nan))
        return self._full(v)


class ChiSquared(Univariate):
    """ChiSquared(df): ``Gamma(df/2, rate=1/2)``; ``df > 0``; support ``[0, inf)``; mean ``df``, variance ``2 df``."""

    params = ("df",)
    support = NonNegative()

    def __init__(self, df):
        self._set_params(df=(df, "positive"))

    def _logpdf(self, x):
        h = 0.5 * self.df
        return xlogy(h - 1.0, x) - 0.5 * x - h * LOG_2 - gammaln(h)

    def _grad_logpdf(self, x):
        h = 0.5 * self.df
        return {"x": (h - 1.0) / x - 0.5, "df": 0.5 * (np.log(x) - LOG_2 - digamma(h))}

    def _logcdf(self, x):
        return np.log(gammainc(0.5 * self.df, 0.5 * x))

    def _logsf(self, x):
        return np.log(gammaincc(0.5 * self.df, 0.5 * x))

    def _ppf(self, q):
        return 2.0 * gammaincinv(0.5 * self.df, q)

    def _isf(self, q):
        return 2.0 * gammainccinv(0.5 * self.df, q)

    def _sample(self, rng, size):
        return rng.chisquare(self.df, size)

    @property
    def mean(self):
        return self._full(self.df)

    @property
    def var(self):
        return self._full(2.0 * self.df)
