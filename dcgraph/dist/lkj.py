"""The LKJ distribution on Cholesky factors of correlation matrices (event_dim 2).

``LKJCholesky(dim, eta)``: ``L`` lower triangular with positive diagonal and unit-length rows,
``L L^T ~ LKJ(eta)`` (density ``det(L L^T)^(eta - 1)`` on correlation matrices). The density of
``L`` with respect to Lebesgue measure on its strictly lower entries (the chart of the
``CorrCholesky`` bijector) is, with ``K = dim`` and 0-based rows,

    log p(L) = sum_{k=1}^{K-1} (K - k - 1 + 2 (eta - 1)) log L_kk + log c_K(eta),
    log c_K(eta) = sum_{i=0}^{K-2} (K - 1 - i) (-(2 a_i - 1) log 2 - log B(a_i, a_i)),
    a_i = eta + (K - 2 - i) / 2,

from the C-vine construction (Lewandowski, Kurowicka and Joe 2009): the partial correlations
of column ``i`` are independent ``2 Beta(a_i, a_i) - 1``; ``L_ji = z_ji sqrt(1 - sum_{k<i} L_jk^2)``
(as Stan's ``lkj_corr_cholesky``). Sampling draws those partial correlations.
"""
from __future__ import annotations

import numpy as np
from scipy.special import betaln, digamma

from ._math import LOG_2
from .base import Distribution
from .bijectors_matrix import CorrCholesky
from .support import Support

__all__ = ["LKJCholesky", "CorrCholeskyFactors"]

UNIT_ROW_TOL = 1e-8


class CorrCholeskyFactors(Support):
    """Lower-triangular square matrices with a positive diagonal and rows of unit length (to
    within 1e-8): the Cholesky factors of correlation matrices; event_dim 2."""

    event_dim = 2

    def contains(self, x):
        x = np.asarray(x, dtype=float)
        if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
            return np.zeros(x.shape[:-2] if x.ndim >= 2 else (), dtype=bool)
        with np.errstate(invalid="ignore"):
            finite = np.all(np.isfinite(x), axis=(-2, -1))
            upper = np.all(np.triu(x, 1) == 0, axis=(-2, -1))
            diagonal = np.all(np.diagonal(x, axis1=-2, axis2=-1) > 0, axis=-1)
            rows = np.all(np.abs(np.sum(x * x, axis=-1) - 1.0) <= UNIT_ROW_TOL, axis=-1)
        return finite & upper & diagonal & rows


class LKJCholesky(Distribution):
    """LKJCholesky(dim, eta=1.0): see the module docstring. ``dim >= 2`` (an int), ``eta > 0``
    (batch). ``eta = 1`` is uniform over correlation matrices; larger ``eta`` concentrates
    near the identity. Bijector: ``CorrCholesky`` (Stan's). ``mean``/``var`` have no closed
    form and raise."""

    params = ("eta",)
    event_dim = 2
    support = CorrCholeskyFactors()

    def __init__(self, dim, eta=1.0):
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 2:
            raise ValueError(f"{self.name}: 'dim' must be an integer >= 2, got {dim!r}")
        self.dim = int(dim)
        self._set_params(eta=(eta, "positive"))
        self._event_shape = (self.dim, self.dim)

    @property
    def bijector(self):
        return CorrCholesky()

    def _alphas(self):
        """``a_i`` for columns ``i = 0 .. K-2`` (trailing axis) and their counts ``K - 1 - i``."""
        K = self.dim
        i = np.arange(K - 1)
        return np.asarray(self.eta, dtype=float)[..., None] + 0.5 * (K - 2 - i), K - 1.0 - i

    def _log_normalizer(self):
        a, count = self._alphas()
        return np.sum(count * (-(2.0 * a - 1.0) * LOG_2 - betaln(a, a)), axis=-1)

    def _coefficients(self):
        K = self.dim
        k = np.arange(1, K)
        return K - k - 1.0 + 2.0 * (np.asarray(self.eta, dtype=float)[..., None] - 1.0)

    def _logpdf(self, x):
        d = np.diagonal(x, axis1=-2, axis2=-1)[..., 1:]
        return np.sum(self._coefficients() * np.log(d), axis=-1) + self._log_normalizer()

    def _grad_logpdf(self, x):
        d = np.diagonal(x, axis1=-2, axis2=-1)[..., 1:]
        coef = np.broadcast_to(self._coefficients(), np.broadcast_shapes(
            np.shape(self._coefficients()), d.shape))
        gx = np.zeros(coef.shape[:-1] + (self.dim, self.dim))
        k = np.arange(1, self.dim)
        gx[..., k, k] = coef / d
        a, count = self._alphas()
        geta = np.sum(2.0 * np.log(d), axis=-1) + np.sum(
            count * (-2.0 * LOG_2 - 2.0 * digamma(a) + 2.0 * digamma(2.0 * a)), axis=-1)
        return {"x": gx, "eta": geta}

    def _sample(self, rng, size):
        K = self.dim
        a, _ = self._alphas()
        a = np.broadcast_to(a, size + (K - 1,))
        z = np.zeros(size + (K, K))
        for i in range(K - 1):                      # column i: rows i+1 .. K-1
            ai = a[..., i][..., None]
            z[..., i + 1:, i] = 2.0 * rng.beta(ai, ai, size + (K - 1 - i,)) - 1.0
        L = np.zeros(size + (K, K))
        L[..., 0, 0] = 1.0
        for j in range(1, K):
            left = np.ones(size)
            for i in range(j):
                L[..., j, i] = z[..., j, i] * np.sqrt(left)
                left = left - L[..., j, i] ** 2
            L[..., j, j] = np.sqrt(np.maximum(left, 0.0))
        return L

    @property
    def mean(self):
        raise NotImplementedError(f"{self.name}: the mean of the Cholesky factor has no closed "
                                  f"form (the mean of L L^T is the identity)")

    @property
    def var(self):
        raise NotImplementedError(f"{self.name}: the variance of the Cholesky factor has no "
                                  f"closed form")
