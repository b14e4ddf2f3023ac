"""Discrete families needed by BUGS: OneBasedCategorical, TrialsGeometric, NoncentralHypergeometric.

* ``OneBasedCategorical(p)``: ``P(X = k) = p[..., k-1]`` on ``{1, ..., K}`` (BUGS ``dcat``).
* ``TrialsGeometric(p)``: trials up to and including the first success, ``(1-p)^(k-1) p`` on
  ``{1, 2, ...}`` (BUGS ``dgeom``; scipy ``geom``).
* ``NoncentralHypergeometric(n1, n2, m1, psi)``: Fisher's noncentral hypergeometric,
  ``P(X = x) = C(n1, x) C(n2, m1-x) psi^x / sum_i C(n1, i) C(n2, m1-i) psi^i`` on
  ``{max(0, m1-n2), ..., min(n1, m1)}`` (JAGS ``dhyper``; scipy ``nchypergeom_fisher(n1+n2, n1, m1, psi)``;
  OpenBUGS ``dhyper(n, m, N, psi)`` is ``(n1, n2, m1) = (n, N-n, m)``).

Contracts as in ``dcgraph.dist.base``; ``grad_logpdf`` differentiates the continuous parameters.
"""
from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from ._math import log1mexp
from .discrete import Categorical, Geometric, _Discrete, _lookup
from .support import IntegerInterval
from .validation import fail

__all__ = ["OneBasedCategorical", "TrialsGeometric", "NoncentralHypergeometric"]


class OneBasedCategorical(Categorical):
    """OneBasedCategorical(p): ``P(X = k) = p[..., k-1]`` for ``k`` in ``{1, ..., K}`` (BUGS ``dcat``).

    ``p`` has shape ``batch + (K,)``, non-negative, each row summing to 1 (to 1e-8; not renormalised,
    as OpenBUGS). ``Categorical`` shifted up by one.
    """

    @property
    def support(self):
        return IntegerInterval(1, self.p.shape[-1])

    def _logpdf(self, x):
        return super()._logpdf(x - 1.0)

    def _grad_logpdf(self, x):
        return super()._grad_logpdf(np.asarray(x, dtype=float) - 1.0)

    def _logcdf(self, x):
        return super()._logcdf(x - 1.0)

    def _logsf(self, x):
        return super()._logsf(x - 1.0)

    def _sample(self, rng, size):
        return super()._sample(rng, size) + 1

    @property
    def mean(self):
        return super().mean + 1.0


class TrialsGeometric(Geometric):
    """TrialsGeometric(p): trials up to the first success, ``log p(k) = log p + (k-1) log(1-p)`` on ``{1, 2, ...}``.

    ``p`` in ``(0, 1]``; scipy ``geom(p)``; BUGS ``dgeom(p)``. Mean ``1/p``, variance ``(1-p)/p^2``.
    """

    support = IntegerInterval(1, np.inf)

    def _logpdf(self, x):
        return super()._logpdf(x - 1.0)

    def _grad_logpdf(self, x):
        return super()._grad_logpdf(np.asarray(x, dtype=float) - 1.0)

    def _logsf(self, x):
        return x * np.log1p(-self.p)

    def _logcdf(self, x):
        return log1mexp(self._logsf(x))

    def _sample(self, rng, size):
        return rng.geometric(self.p, size)

    @property
    def mean(self):
        return self._full(1.0 / self.p)


class NoncentralHypergeometric(_Discrete):
    """NoncentralHypergeometric(n1, n2, m1, psi): Fisher's noncentral hypergeometric (module docstring).

    ``n1, n2, m1`` non-negative integers with ``m1 <= n1 + n2``; odds ratio ``psi > 0``. The
    probabilities are tabulated once at construction (``O(min(n1, m1))`` per batch element).
    """

    params = ("n1", "n2", "m1", "psi")

    def __init__(self, n1, n2, m1, psi):
        self._set_params(n1=(n1, "nonnegative_integer"), n2=(n2, "nonnegative_integer"),
                         m1=(m1, "nonnegative_integer"), psi=(psi, "positive"))
        total = self.n1 + self.n2
        if np.any(self.m1 > total):
            bad = np.broadcast_to(self.m1 > total, self.batch_shape)
            idx = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else None
            fail(self.name, "m1", "at most n1 + n2", np.broadcast_to(self.m1, self.batch_shape)[idx or ()], idx)
        shape = self.batch_shape
        self._lo = np.broadcast_to(np.maximum(0, self.m1 - self.n2), shape).astype(float)
        self._hi = np.broadcast_to(np.minimum(self.n1, self.m1), shape).astype(float)
        k = np.arange(int(np.max(self._hi, initial=0)) + 1, dtype=float)
        n1, n2, m1, psi = (np.asarray(a, dtype=float)[..., None] for a in (self.n1, self.n2, self.m1, self.psi))
        inside = (k >= self._lo[..., None]) & (k <= self._hi[..., None])
        with np.errstate(all="ignore"):
            kk = np.where(inside, k, 0.0)
            logw = (gammaln(n1 + 1) - gammaln(kk + 1) - gammaln(n1 - kk + 1) + gammaln(n2 + 1)
                    - gammaln(m1 - kk + 1) - gammaln(n2 - m1 + kk + 1) + kk * np.log(psi))
        logw = np.where(inside, np.broadcast_to(logw, inside.shape), -np.inf)
        top = np.max(logw, axis=-1, keepdims=True)
        logp = logw - top - np.log(np.sum(np.exp(logw - top), axis=-1, keepdims=True))
        self._logp = logp
        self._p = np.exp(logp)
        self._k = k

    @property
    def support(self):
        return IntegerInterval(self._lo, self._hi)

    def _logpdf(self, x):
        return _lookup(self._logp, x)

    def _expected(self):
        return np.sum(self._k * self._p, axis=-1)

    def _grad_logpdf(self, x):
        return {"psi": (np.asarray(x, dtype=float) - self._expected()) / self.psi}

    def _logcdf(self, x):
        return np.log(np.minimum(_lookup(np.cumsum(self._p, axis=-1), x), 1.0))

    def _logsf(self, x):
        tail = np.cumsum(self._p[..., ::-1], axis=-1)[..., ::-1]
        tail = np.concatenate([tail[..., 1:], np.zeros(tail.shape[:-1] + (1,))], axis=-1)
        return np.log(np.minimum(_lookup(tail, x), 1.0))

    def _sample(self, rng, size):
        cum = np.cumsum(self._p, axis=-1)
        u = rng.random(size)[..., None]
        return np.minimum(np.sum(cum < u, axis=-1), self._hi).astype(np.int64)

    @property
    def mean(self):
        return self._full(self._expected())

    @property
    def var(self):
        m = self._expected()
        return self._full(np.sum(self._k**2 * self._p, axis=-1) - m * m)
