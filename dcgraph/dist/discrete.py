"""Discrete univariate families: Bernoulli, Binomial, Poisson, Categorical, Geometric,
NegativeBinomial, BetaBinomial.

``logpmf`` (alias of ``logpdf``) is ``-inf`` for values off the support, including
non-integers. ``grad_logpdf`` differentiates with respect to the continuous parameters
only (no ``'x'`` key; integer counts ``n`` of Binomial/BetaBinomial are not differentiated).
"""
from __future__ import annotations

import numpy as np
from scipy.special import bdtr, bdtrc, betainc, betaln, digamma, gammaln, pdtr, pdtrc, xlog1py

from ._math import log1mexp
from .base import Univariate
from .kernels import bernoulli_logpmf, bernoulli_logpmf_grad, binomial_logpmf, poisson_logpmf, poisson_logpmf_grad
from .support import IntegerInterval, NonNegativeInteger
from .validation import check_prob_vector

__all__ = ["Bernoulli", "Binomial", "Poisson", "Categorical", "Geometric", "NegativeBinomial", "BetaBinomial"]


def _lookup(table, x):
    """``table[..., x]`` with ``x`` (integer-valued floats) broadcast against the batch of ``table``."""
    m = table.shape[-1]
    x = np.asarray(x, dtype=float)
    shape = np.broadcast_shapes(table.shape[:-1], x.shape)
    idx = np.where(np.isfinite(x), np.clip(x, 0, m - 1), 0).astype(np.int64)
    idx = np.broadcast_to(idx, shape)[..., None]
    return np.take_along_axis(np.broadcast_to(table, shape + (m,)), idx, axis=-1)[..., 0]


def _log_choose(n, k):
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)


class _Discrete(Univariate):
    is_discrete = True


class Bernoulli(_Discrete):
    """Bernoulli(p): ``P(X=1) = p``, ``P(X=0) = 1-p``; ``p`` in ``[0, 1]``; support ``{0, 1}``."""

    params = ("p",)
    support = IntegerInterval(0, 1)

    def __init__(self, p, validate_args=None):
        self._set_params(validate_args, p=(p, "probability"))

    def _logpdf(self, x):
        return bernoulli_logpmf(x, self.p)

    def _grad_logpdf(self, x):
        return {"p": bernoulli_logpmf_grad(x, self.p)[1]}

    def _logcdf(self, x):
        return np.where(x >= 1, 0.0, np.log1p(-self.p))

    def _logsf(self, x):
        return np.where(x >= 1, -np.inf, np.log(self.p))

    def _sample(self, rng, size):
        return rng.random(size) < self.p

    @property
    def mean(self):
        return self._full(self.p)

    @property
    def var(self):
        return self._full(self.p * (1.0 - self.p))


class Binomial(_Discrete):
    """Binomial(n, p): successes in ``n`` (non-negative integer) trials with probability ``p`` in ``[0, 1]``.

    ``log p(k) = log C(n, k) + k log p + (n-k) log(1-p)`` on ``{0, ..., n}``.
    """

    params = ("n", "p")

    def __init__(self, n, p, validate_args=None):
        self._set_params(validate_args, n=(n, "nonnegative_integer"), p=(p, "probability"))

    @property
    def support(self):
        return IntegerInterval(0, self.n)

    def _logpdf(self, x):
        return binomial_logpmf(x, self.n, self.p)

    def _grad_logpdf(self, x):
        return {"p": x / self.p - (self.n - x) / (1.0 - self.p)}

    def _logcdf(self, x):
        return np.log(bdtr(x, self.n, self.p))

    def _logsf(self, x):
        return np.log(bdtrc(x, self.n, self.p))

    def _sample(self, rng, size):
        return rng.binomial(self.n, self.p, size)

    @property
    def mean(self):
        return self._full(self.n * self.p)

    @property
    def var(self):
        return self._full(self.n * self.p * (1.0 - self.p))


class Poisson(_Discrete):
    """Poisson(rate): ``log p(k) = k log(rate) - rate - log k!`` on ``{0, 1, ...}``; ``rate >= 0``."""

    params = ("rate",)
    support = NonNegativeInteger()

    def __init__(self, rate, validate_args=None):
        self._set_params(validate_args, rate=(rate, "nonnegative"))

    def _logpdf(self, x):
        return poisson_logpmf(x, self.rate)

    def _grad_logpdf(self, x):
        return {"rate": poisson_logpmf_grad(x, self.rate)[1]}

    def _logcdf(self, x):
        return np.log(pdtr(x, self.rate))

    def _logsf(self, x):
        return np.log(pdtrc(x, self.rate))

    def _sample(self, rng, size):
        return rng.poisson(self.rate, size)

    @property
    def mean(self):
        return self._full(self.rate)

    @property
    def var(self):
        return self._full(self.rate)


class Categorical(_Discrete):
    """Categorical(p): ``P(X = k) = p[..., k]`` for ``k`` in ``{0, ..., K-1}``.

    ``p`` has shape ``batch + (K,)``, non-negative, each row summing to 1 (to 1e-8);
    it is not renormalised.
    """

    params = ("p",)
    param_event_dims = {"p": 1}

    def __init__(self, p):
        self._set_params(p=(check_prob_vector(self.name, "p", p), "probability"))
        self._cum = np.cumsum(self.p, axis=-1)
        self._tail = np.cumsum(self.p[..., ::-1], axis=-1)[..., ::-1]  # P(X >= k)

    @property
    def support(self):
        return IntegerInterval(0, self.p.shape[-1] - 1)

    def _logpdf(self, x):
        return np.log(_lookup(self.p, x))

    def _grad_logpdf(self, x):
        k = self.p.shape[-1]
        onehot = np.asarray(x, dtype=float)[..., None] == np.arange(k)
        return {"p": onehot / self.p}

    def _logcdf(self, x):
        return np.log(np.minimum(_lookup(self._cum, x), 1.0))

    def _logsf(self, x):
        tail = np.concatenate([self._tail[..., 1:], np.zeros(self._tail.shape[:-1] + (1,))], axis=-1)
        return np.log(_lookup(tail, x))

    def _sample(self, rng, size):
        u = rng.random(size)[..., None]
        return np.minimum(np.sum(self._cum < u, axis=-1), self.p.shape[-1] - 1)

    @property
    def mean(self):
        return self._full(np.sum(np.arange(self.p.shape[-1]) * self.p, axis=-1))

    @property
    def var(self):
        k = np.arange(self.p.shape[-1])
        m = np.sum(k * self.p, axis=-1)
        return self._full(np.sum(k * k * self.p, axis=-1) - m * m)


class Geometric(_Discrete):
    """Geometric(p): number of **failures** before the first success, support ``{0, 1, ...}``.

    ``log p(k) = log p + k log(1-p)``, ``p`` in ``(0, 1]``. scipy's ``geom`` counts trials
    (support from 1), so ``Geometric(p).logpmf(k) == geom(p).logpmf(k + 1)``.
    """

    params = ("p",)
    support = NonNegativeInteger()

    def __init__(self, p):
        self._set_params(p=(p, "open_closed_unit"))

    def _logpdf(self, x):
        return np.log(self.p) + xlog1py(x, -self.p)

    def _grad_logpdf(self, x):
        return {"p": 1.0 / self.p - x / (1.0 - self.p)}

    def _logsf(self, x):
        return (x + 1.0) * np.log1p(-self.p)

    def _logcdf(self, x):
        return log1mexp(self._logsf(x))

    def _sample(self, rng, size):
        return rng.geometric(self.p, size) - 1

    @property
    def mean(self):
        return self._full((1.0 - self.p) / self.p)

    @property
    def var(self):
        return self._full((1.0 - self.p) / self.p**2)


class NegativeBinomial(_Discrete):
    """NegativeBinomial(n, p): failures before the ``n``-th success; ``n > 0`` (real), ``p`` in ``(0, 1]``.

    ``log p(k) = lgamma(k+n) - lgamma(n) - log k! + n log p + k log(1-p)`` on ``{0, 1, ...}``
    (scipy ``nbinom(n, p)``, BUGS ``dnegbin(p, r)`` with ``n = r``).
    """

    params = ("n", "p")
    support = NonNegativeInteger()

    def __init__(self, n, p):
        self._set_params(n=(n, "positive"), p=(p, "open_closed_unit"))

    def _logpdf(self, x):
        n, p = self.n, self.p
        return gammaln(x + n) - gammaln(n) - gammaln(x + 1.0) + n * np.log(p) + xlog1py(x, -p)

    def _grad_logpdf(self, x):
        n, p = self.n, self.p
        return {"n": digamma(x + n) - digamma(n) + np.log(p), "p": n / p - x / (1.0 - p)}

    def _logcdf(self, x):
        return np.log(betainc(self.n, x + 1.0, self.p))

    def _logsf(self, x):
        return np.log(betainc(x + 1.0, self.n, 1.0 - self.p))

    def _sample(self, rng, size):
        return rng.negative_binomial(self.n, self.p, size)

    @property
    def mean(self):
        return self._full(self.n * (1.0 - self.p) / self.p)

    @property
    def var(self):
        return self._full(self.n * (1.0 - self.p) / self.p**2)


class BetaBinomial(_Discrete):
    """BetaBinomial(n, a, b): ``Binomial(n, P)`` with ``P ~ Beta(a, b)``; ``n`` a non-negative integer, ``a, b > 0``.

    ``log p(k) = log C(n, k) + log B(k+a, n-k+b) - log B(a, b)`` on ``{0, ..., n}``.
    """

    params = ("n", "a", "b")

    def __init__(self, n, a, b):
        self._set_params(n=(n, "nonnegative_integer"), a=(a, "positive"), b=(b, "positive"))

    @property
    def support(self):
        return IntegerInterval(0, self.n)

    def _logpdf(self, x):
        n, a, b = self.n, self.a, self.b
        return _log_choose(n, x) + betaln(x + a, n - x + b) - betaln(a, b)

    def _grad_logpdf(self, x):
        n, a, b = self.n, self.a, self.b
        common = digamma(a + b) - digamma(n + a + b)
        return {"a": digamma(x + a) - digamma(a) + common, "b": digamma(n - x + b) - digamma(b) + common}

    def _pmf_table(self):
        j = np.arange(int(np.max(self.n)) + 1, dtype=float)
        n, a, b = (np.asarray(v, dtype=float)[..., None] for v in (self.n, self.a, self.b))
        with np.errstate(all="ignore"):
            lp = _log_choose(n, j) + betaln(j + a, n - j + b) - betaln(a, b)
        return np.where(j <= n, np.exp(lp), 0.0)

    def _logcdf(self, x):
        return np.log(np.minimum(_lookup(np.cumsum(self._pmf_table(), axis=-1), x), 1.0))

    def _logsf(self, x):
        table = self._pmf_table()
        above = np.cumsum(table[..., ::-1], axis=-1)[..., ::-1] - table  # P(X > j)
        return np.log(np.maximum(_lookup(above, x), 0.0))

    def _sample(self, rng, size):
        return rng.binomial(self.n, rng.beta(self.a, self.b, size))

    @property
    def mean(self):
        return self._full(self.n * self.a / (self.a + self.b))

    @property
    def var(self):
        n, a, b = self.n, self.a, self.b
        return self._full(n * a * b * (a + b + n) / ((a + b) ** 2 * (a + b + 1.0)))
