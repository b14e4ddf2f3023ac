"""Matrix-valued family: Wishart (event_dim 2)."""
from __future__ import annotations

import numpy as np
from scipy.special import digamma, gammaln

from ._math import LOG_2
from .base import Distribution
from .support import PositiveDefinite
from .validation import broadcast_batch, check_matrix, check_param, fail

__all__ = ["Wishart"]


def _logdet(a):
    sign, ld = np.linalg.slogdet(a)
    return np.where(sign > 0, ld, np.nan)


class Wishart(Distribution):
    """Wishart(df, scale): distribution of ``sum_i z_i z_i^T``, ``z_i ~ MvNormal(0, scale)``, for ``df`` terms.

    ``scale`` is ``(..., p, p)`` symmetric positive definite, ``df > p - 1`` (real). Density, with
    respect to Lebesgue measure on the lower triangle (as scipy):
    ``log p(X) = (df-p-1)/2 log|X| - tr(scale^-1 X)/2 - df p/2 log 2 - df/2 log|scale| - log Gamma_p(df/2)``.
    Mean ``df * scale``; ``var[i, j] = df (scale_ij^2 + scale_ii scale_jj)``. Bijector: Cholesky.
    (BUGS ``dwish(R, k)`` is parameterised by the inverse scale: ``scale = inv(R)``.)
    """

    params = ("df", "scale")
    param_event_dims = {"scale": 2}
    event_dim = 2
    support = PositiveDefinite()

    def __init__(self, df, scale):
        s, chol = check_matrix(self.name, "scale", scale)
        p = s.shape[-1]
        d = check_param(self.name, "df", df, "real")
        if not np.all(d > p - 1):
            bad = d[tuple(np.argwhere(~(d > p - 1))[0])] if d.ndim else d
            fail(self.name, "df", f"greater than p - 1 = {p - 1} (p = {p})", bad)
        self.df, self.scale = d, s
        self._batch_shape = broadcast_batch(self.name, {"df": d.shape, "scale": s.shape[:-2]})
        self._event_shape = s.shape[-2:]
        self._chol = chol
        chol_inv = np.linalg.inv(chol)
        self._scale_inv = np.swapaxes(chol_inv, -1, -2) @ chol_inv
        self._logdet_scale = 2.0 * np.sum(np.log(np.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)

    @property
    def _p(self):
        return self._event_shape[0]

    def _log_multigamma(self, a):
        p = self._p
        j = np.arange(p)
        return 0.25 * p * (p - 1) * np.log(np.pi) + np.sum(gammaln(np.asarray(a)[..., None] - 0.5 * j), axis=-1)

    def _logpdf(self, x):
        nu, p = self.df, self._p
        tr = np.sum(self._scale_inv * x, axis=(-2, -1))
        return (0.5 * (nu - p - 1.0) * _logdet(x) - 0.5 * tr - 0.5 * nu * p * LOG_2
                - 0.5 * nu * self._logdet_scale - self._log_multigamma(0.5 * nu))

    def _grad_logpdf(self, x):
        nu, p = self.df, self._p
        ok = self.support.contains(x)
        x_safe = np.where(ok[..., None, None], x, np.eye(p))
        x_inv = np.linalg.inv(x_safe)
        s_inv = self._scale_inv
        nu_m = np.asarray(nu)[..., None, None]
        dnu = (0.5 * _logdet(x_safe) - 0.5 * p * LOG_2 - 0.5 * self._logdet_scale
               - 0.5 * np.sum(digamma(0.5 * np.asarray(nu)[..., None] - 0.5 * np.arange(p)), axis=-1))
        return {"x": 0.5 * (nu_m - p - 1.0) * x_inv - 0.5 * s_inv,
                "df": dnu,
                "scale": 0.5 * (s_inv @ x @ s_inv) - 0.5 * nu_m * s_inv}

    def _sample(self, rng, size):
        """Bartlett decomposition: ``X = L A A^T L^T`` with ``A`` lower triangular."""
        p = self._p
        nu = np.broadcast_to(self.df, size)[..., None]
        a = np.tril(rng.standard_normal(size + (p, p)), k=-1)
        diag = np.sqrt(rng.chisquare(nu - np.arange(p)))
        a = a + diag[..., None] * np.eye(p)
        la = self._chol @ a
        return la @ np.swapaxes(la, -1, -2)

    @property
    def mean(self):
        return self._full(np.asarray(self.df)[..., None, None] * self.scale)

    @property
    def var(self):
        s = self.scale
        d = np.diagonal(s, axis1=-2, axis2=-1)
        return self._full(np.asarray(self.df)[..., None, None] * (s**2 + d[..., :, None] * d[..., None, :]))
