"""Continuous families on bounded intervals: Beta, Uniform."""
from __future__ import annotations

import numpy as np
from scipy.special import betainc, betaincinv

from .base import Univariate
from .kernels import beta_logpdf, beta_logpdf_grad
from .support import Interval, UnitInterval
from .validation import check_ordered

__all__ = ["Beta", "Uniform"]


class Beta(Univariate):
    """Beta(a, b): ``log p(x) = (a-1) log x + (b-1) log(1-x) - log B(a, b)`` on ``[0, 1]``; ``a, b > 0``."""

    params = ("a", "b")
    support = UnitInterval()

    def __init__(self, a, b, validate_args=None):
        self._set_params(validate_args, a=(a, "positive"), b=(b, "positive"))

    def _logpdf(self, x):
        return beta_logpdf(x, self.a, self.b)

    def _grad_logpdf(self, x):
        return dict(zip(("x", "a", "b"), beta_logpdf_grad(x, self.a, self.b)))

    def _logcdf(self, x):
        return np.log(betainc(self.a, self.b, x))

    def _logsf(self, x):
        return np.log(betainc(self.b, self.a, 1.0 - x))

    def _ppf(self, q):
        return betaincinv(self.a, self.b, q)

    def _isf(self, q):
        return 1.0 - betaincinv(self.b, self.a, q)

    def _sample(self, rng, size):
        return rng.beta(self.a, self.b, size)

    @property
    def mean(self):
        return self._full(self.a / (self.a + self.b))

    @property
    def var(self):
        a, b = self.a, self.b
        return self._full(a * b / ((a + b) ** 2 * (a + b + 1.0)))


class Uniform(Univariate):
    """Uniform(low, high): constant density ``1/(high - low)`` on ``[low, high]``; finite ``low < high``."""

    params = ("low", "high")

    def __init__(self, low, high):
        self._set_params(low=(low, "real"), high=(high, "real"))
        check_ordered(self.name, self.low, self.high, self.batch_shape)

    @property
    def support(self):
        return Interval(self.low, self.high)

    def _width(self):
        return self.high - self.low

    def _logpdf(self, x):
        return -np.log(self._width()) + 0.0 * x

    def _grad_logpdf(self, x):
        w = self._width()
        return {"x": 0.0 * x, "low": 1.0 / w, "high": -1.0 / w}

    def _logcdf(self, x):
        return np.log((x - self.low) / self._width())

    def _logsf(self, x):
        return np.log((self.high - x) / self._width())

    def _ppf(self, q):
        return self.low + q * self._width()

    def _isf(self, q):
        return self.high - q * self._width()

    def _sample(self, rng, size):
        return rng.uniform(self.low, self.high, size)

    @property
    def mean(self):
        return self._full(0.5 * (self.low + self.high))

    @property
    def var(self):
        return self._full(self._width() ** 2 / 12.0)
