"""GeneralizedF(n, m, mu, tau): OpenBUGS's ``df(n, m, mu, tau)``, an F(n, m) law shifted to ``mu``
and scaled by ``1 / sqrt(tau)``: ``sqrt(tau) (X - mu) ~ F(n, m)`` on ``x > mu``.

``log p = lgamma((n+m)/2) - lgamma(n/2) - lgamma(m/2) + (n/2) log(n/m) + (n/2 - 1) log y
+ (1/2) log tau - ((n+m)/2) log(1 + n y / m)`` with ``y = sqrt(tau) (x - mu)`` (OpenBUGS ``GraphF``;
scipy ``f(dfn=n, dfd=m, loc=mu, scale=1/sqrt(tau))``).
"""
from __future__ import annotations

import numpy as np
from scipy.special import betainc, betaincinv, digamma, gammaln

from .base import Univariate
from .support import Interval

__all__ = ["GeneralizedF"]


class GeneralizedF(Univariate):
    """GeneralizedF(n, m, mu, tau): degrees of freedom ``n, m > 0``, location ``mu``, precision-like
    ``tau > 0`` (module docstring)."""

    params = ("n", "m", "mu", "tau")

    def __init__(self, n, m, mu, tau):
        self._set_params(n=(n, "positive"), m=(m, "positive"), mu=(mu, "real"), tau=(tau, "positive"))

    @property
    def support(self):
        return Interval(self.mu, np.inf)

    def _y(self, x):
        return np.sqrt(self.tau) * (x - self.mu)

    def _logpdf(self, x):
        n, m, y = self.n, self.m, self._y(x)
        return (gammaln((n + m) / 2.0) - gammaln(n / 2.0) - gammaln(m / 2.0) + n / 2.0 * np.log(n / m)
                + (n / 2.0 - 1.0) * np.log(y) + 0.5 * np.log(self.tau) - (n + m) / 2.0 * np.log1p(n * y / m))

    def _grad_logpdf(self, x):
        n, m, y, st = self.n, self.m, self._y(x), np.sqrt(self.tau)
        dy = (n / 2.0 - 1.0) / y - (n + m) / 2.0 * (n / m) / (1.0 + n * y / m)
        half = 0.5 * digamma((n + m) / 2.0)
        r = np.log1p(n * y / m)
        dn = (half - 0.5 * digamma(n / 2.0) + 0.5 * np.log(n / m) + 0.5 + 0.5 * np.log(y) - 0.5 * r
              - (n + m) / 2.0 * (y / m) / (1.0 + n * y / m))
        dm = (half - 0.5 * digamma(m / 2.0) - n / (2.0 * m) - 0.5 * r
              + (n + m) / 2.0 * (n * y / m**2) / (1.0 + n * y / m))
        return {"x": dy * st, "mu": -dy * st, "tau": dy * y / (2.0 * self.tau) + 0.5 / self.tau, "n": dn, "m": dm}

    def _logcdf(self, x):
        n, m, y = self.n, self.m, self._y(x)
        return np.log(betainc(n / 2.0, m / 2.0, n * y / (n * y + m)))

    def _logsf(self, x):
        n, m, y = self.n, self.m, self._y(x)
        return np.log(betainc(m / 2.0, n / 2.0, m / (n * y + m)))

    def _ppf(self, q):
        b = betaincinv(self.n / 2.0, self.m / 2.0, q)
        return self.mu + self.m * b / (self.n * (1.0 - b)) / np.sqrt(self.tau)

    def _isf(self, q):
        return self._ppf(1.0 - q)

    def _sample(self, rng, size):
        return self.mu + rng.f(np.broadcast_to(self.n, size), self.m, size) / np.sqrt(self.tau)

    @property
    def mean(self):
        m = self.m
        with np.errstate(all="ignore"):
            return self._full(np.where(m > 2, self.mu + m / (m - 2.0) / np.sqrt(self.tau), np.inf))

    @property
    def var(self):
        n, m = self.n, self.m
        with np.errstate(all="ignore"):
            v = 2.0 * m**2 * (n + m - 2.0) / (n * (m - 2.0) ** 2 * (m - 4.0)) / self.tau
        return self._full(np.where(m > 4, v, np.inf))
