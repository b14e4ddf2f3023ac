"""Generalised families from OpenBUGS: GeneralizedGamma, GeneralizedExtremeValue, GeneralizedPareto,
and LogLikelihoodTerm (BUGS ``dloglik``).

* ``GeneralizedGamma(r, mu, beta)``: ``beta mu^(beta r) x^(beta r - 1) exp(-(mu x)^beta) / Gamma(r)``
  on ``x > 0`` (BUGS ``dggamma``/``dgen.gamma``; scipy ``gengamma(a=r, c=beta, scale=1/mu)``).
* ``GeneralizedExtremeValue(mu, sigma, eta)``: with ``t = 1 + eta (x - mu)/sigma > 0``,
  ``log p = -log sigma - (1 + 1/eta) log t - t^(-1/eta)`` (Gumbel at ``eta = 0``)
  (BUGS ``dgev``; scipy ``genextreme(c=-eta, loc=mu, scale=sigma)``).
* ``GeneralizedPareto(mu, sigma, eta)``: ``log p = -log sigma - (1 + 1/eta) log t`` on ``x >= mu``, ``t > 0``
  (exponential at ``eta = 0``) (BUGS ``dgpar``; scipy ``genpareto(c=eta, loc=mu, scale=sigma)``).
* ``LogLikelihoodTerm(loglik)``: ``log p(x) = loglik`` for every finite ``x``: a likelihood written
  directly (the "zeros trick"); it has no sampling distribution.
"""
from __future__ import annotations

import numpy as np
from scipy.special import digamma, gamma as gamma_fn, gammainc, gammaincc, gammaincinv, gammaln

from ._math import log1mexp
from .base import Distribution, Univariate
from .support import Interval, Positive, Real

__all__ = ["GeneralizedGamma", "GeneralizedExtremeValue", "GeneralizedPareto", "LogLikelihoodTerm"]


class GeneralizedGamma(Univariate):
    """GeneralizedGamma(r, mu, beta): shape ``r > 0``, rate ``mu > 0``, power ``beta > 0`` (module docstring).

    ``(mu X)^beta ~ Gamma(r, 1)``; ``beta = 1`` is ``Gamma(r, mu)``.
    """

    params = ("r", "mu", "beta")
    support = Positive()

    def __init__(self, r, mu, beta):
        self._set_params(r=(r, "positive"), mu=(mu, "positive"), beta=(beta, "positive"))

    def _t(self, x):
        return (self.mu * x) ** self.beta

    def _logpdf(self, x):
        r, b = self.r, self.beta
        return np.log(b) + b * r * np.log(self.mu) + (b * r - 1.0) * np.log(x) - self._t(x) - gammaln(r)

    def _grad_logpdf(self, x):
        r, b, mu = self.r, self.beta, self.mu
        lt, t = np.log(mu * x), self._t(x)
        return {"x": (b * r - 1.0 - b * t) / x, "r": b * lt - digamma(r),
                "mu": b * (r - t) / mu, "beta": 1.0 / b + r * lt - t * lt}

    def _logcdf(self, x):
        return np.log(gammainc(self.r, self._t(x)))

    def _logsf(self, x):
        return np.log(gammaincc(self.r, self._t(x)))

    def _ppf(self, q):
        return gammaincinv(self.r, q) ** (1.0 / self.beta) / self.mu

    def _isf(self, q):
        return gammaincinv(self.r, 1.0 - q) ** (1.0 / self.beta) / self.mu

    def _sample(self, rng, size):
        return rng.gamma(np.broadcast_to(self.r, size)) ** (1.0 / self.beta) / self.mu

    def _moment(self, k):
        return np.exp(gammaln(self.r + k / self.beta) - gammaln(self.r)) / self.mu**k

    @property
    def mean(self):
        return self._full(self._moment(1))

    @property
    def var(self):
        return self._full(self._moment(2) - self._moment(1) ** 2)


class _LocScaleShape(Univariate):
    params = ("mu", "sigma", "eta")

    def __init__(self, mu, sigma, eta):
        self._set_params(mu=(mu, "real"), sigma=(sigma, "positive"), eta=(eta, "real"))

    def _parts(self, x):
        """z, t = 1 + eta z, log t, and eta with zeros replaced (for the eta != 0 formulas)."""
        z = (x - self.mu) / self.sigma
        eta = self.eta
        e = np.where(eta == 0, 1.0, eta)
        t = 1.0 + eta * z
        return z, t, np.log(t), e


class GeneralizedExtremeValue(_LocScaleShape):
    """GeneralizedExtremeValue(mu, sigma, eta): location, scale ``sigma > 0``, shape ``eta`` (module docstring)."""

    @property
    def support(self):
        with np.errstate(divide="ignore"):
            edge = self.mu - self.sigma / np.where(self.eta == 0, np.inf, self.eta)
        lo = np.where(self.eta > 0, edge, -np.inf)
        hi = np.where(self.eta < 0, edge, np.inf)
        return Real() if not self.batch_shape and self.eta == 0 else Interval(lo, hi)

    def _u(self, x):
        z, t, lt, e = self._parts(x)
        return np.where(self.eta == 0, np.exp(-z), np.exp(-lt / e))

    def _logpdf(self, x):
        z, t, lt, e = self._parts(x)
        u = self._u(x)
        core = np.where(self.eta == 0, -z, -(1.0 + 1.0 / e) * lt)
        return -np.log(self.sigma) + core - u

    def _grad_logpdf(self, x):
        z, t, lt, e = self._parts(x)
        s, eta, u = self.sigma, self.eta, self._u(x)
        t0 = np.where(eta == 0, 1.0, t)
        dx = (u - 1.0 - eta) / (s * t0)
        deta = np.where(eta == 0, 0.5 * z * z * (1.0 - u) - z,
                        (1.0 - u) * lt / e**2 + z * (u - 1.0 - eta) / (e * t0))
        return {"x": dx, "mu": -dx, "sigma": -1.0 / s - z * dx, "eta": deta}

    def _logcdf(self, x):
        return -self._u(x)

    def _logsf(self, x):
        return log1mexp(-self._u(x))

    def _ppf(self, q):
        e = np.where(self.eta == 0, 1.0, self.eta)
        y = -np.log(q)
        return self.mu + self.sigma * np.where(self.eta == 0, -np.log(y), np.expm1(-self.eta * np.log(y)) / e)

    def _isf(self, q):
        return self._ppf(1.0 - q)

    def _sample(self, rng, size):
        return self._ppf(rng.random(size))

    @property
    def mean(self):
        eta = self.eta
        e = np.where(eta == 0, 1.0, eta)
        with np.errstate(all="ignore"):
            m = self.mu + self.sigma * np.where(eta == 0, np.euler_gamma, (gamma_fn(1.0 - eta) - 1.0) / e)
        return self._full(np.where(eta < 1, m, np.inf))

    @property
    def var(self):
        eta = self.eta
        e = np.where(eta == 0, 1.0, eta)
        with np.errstate(all="ignore"):
            g1, g2 = gamma_fn(1.0 - eta), gamma_fn(1.0 - 2.0 * eta)
            v = np.where(eta == 0, np.pi**2 / 6.0, (g2 - g1 * g1) / e**2) * self.sigma**2
        return self._full(np.where(eta < 0.5, v, np.inf))


class GeneralizedPareto(_LocScaleShape):
    """GeneralizedPareto(mu, sigma, eta): location, scale ``sigma > 0``, shape ``eta`` (module docstring)."""

    @property
    def support(self):
        with np.errstate(divide="ignore"):
            hi = np.where(self.eta < 0, self.mu - self.sigma / np.where(self.eta < 0, self.eta, -1.0), np.inf)
        return Interval(self.mu, hi)

    def _logpdf(self, x):
        z, t, lt, e = self._parts(x)
        return -np.log(self.sigma) + np.where(self.eta == 0, -z, -(1.0 + 1.0 / e) * lt)

    def _grad_logpdf(self, x):
        z, t, lt, e = self._parts(x)
        s, eta = self.sigma, self.eta
        dx = -(1.0 + eta) / (s * np.where(eta == 0, 1.0, t))
        deta = np.where(eta == 0, 0.5 * z * z - z, lt / e**2 - (1.0 + 1.0 / e) * z / t)
        return {"x": dx, "mu": -dx, "sigma": -1.0 / s - z * dx, "eta": deta}

    def _logsf(self, x):
        z, t, lt, e = self._parts(x)
        return np.where(self.eta == 0, -z, -lt / e)

    def _logcdf(self, x):
        return log1mexp(self._logsf(x))

    def _isf(self, q):
        e = np.where(self.eta == 0, 1.0, self.eta)
        return self.mu + self.sigma * np.where(self.eta == 0, -np.log(q), np.expm1(-self.eta * np.log(q)) / e)

    def _ppf(self, q):
        return self._isf(1.0 - q)

    def _sample(self, rng, size):
        return self._isf(1.0 - rng.random(size))

    @property
    def mean(self):
        with np.errstate(all="ignore"):
            return self._full(np.where(self.eta < 1, self.mu + self.sigma / (1.0 - self.eta), np.inf))

    @property
    def var(self):
        eta = self.eta
        with np.errstate(all="ignore"):
            v = self.sigma**2 / ((1.0 - eta) ** 2 * (1.0 - 2.0 * eta))
        return self._full(np.where(eta < 0.5, v, np.inf))


class LogLikelihoodTerm(Distribution):
    """LogLikelihoodTerm(loglik): ``log p(x) = loglik`` for every finite ``x`` (BUGS ``dloglik``).

    Not a probability distribution: it adds ``loglik`` to a log density. ``sample`` raises
    ``NotImplementedError``; mean and variance are NaN.
    """

    params = ("loglik",)
    support = Real()

    def __init__(self, loglik):
        self._set_params(loglik=(loglik, "real"))

    def _logpdf(self, x):
        return self.loglik + 0.0 * x

    def _grad_logpdf(self, x):
        return {"x": np.zeros_like(x), "loglik": np.ones_like(x)}

    def _sample(self, rng, size):
        raise NotImplementedError(f"{self.name}: a log-likelihood term (BUGS dloglik) has no sampling distribution")

    @property
    def mean(self):
        return self._full(np.nan)

    @property
    def var(self):
        return self._full(np.nan)
