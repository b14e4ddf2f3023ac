"""MvStudentT: the multivariate Student t (BUGS ``dmt``), by scale (shape) matrix or precision."""
from __future__ import annotations

import numpy as np
from scipy.special import digamma, gammaln

from .base import Distribution
from .support import RealVector
from .validation import broadcast_batch, check_location_and_matrix, check_param

__all__ = ["MvStudentT"]


def _matvec(m, v):
    return (m @ v[..., None])[..., 0]


class MvStudentT(Distribution):
    """MvStudentT(df, loc, scale=None, precision=None): give exactly one of ``scale``/``precision``.

    ``df > 0``; ``loc`` has shape ``(..., k)``; ``scale`` (the shape matrix ``S``, scipy's
    ``multivariate_t(loc, shape=S, df=df)``) or ``precision = S^-1`` is ``(..., k, k)`` symmetric
    positive definite. With ``q = (x-loc)^T S^-1 (x-loc)``,
    ``log p(x) = lgamma((df+k)/2) - lgamma(df/2) - k/2 log(df pi) - log|S|/2 - (df+k)/2 log(1 + q/df)``.
    BUGS ``dmt(mu, T, k)`` is ``MvStudentT(k, mu, precision=T)``. Mean ``loc`` for ``df > 1``;
    variance ``diag(S) df/(df-2)`` for ``df > 2``. Support: real vectors, identity bijector.
    """

    param_event_dims = {"df": 0, "loc": 1, "scale": 2, "precision": 2}
    event_dim = 1
    support = RealVector()

    def __init__(self, df, loc, scale=None, precision=None):
        m, key, mat, chol = check_location_and_matrix(self.name, "loc", loc,
                                                      {"scale": scale, "precision": precision})
        self.params = ("df", "loc", key)
        self.df = check_param(self.name, "df", df, "positive")
        self.loc = m
        self._batch_shape = broadcast_batch(self.name, {"df": self.df.shape, "loc": m.shape[:-1],
                                                        key: mat.shape[:-2]})
        self._event_shape = m.shape[-1:]
        chol_inv = np.linalg.inv(chol)
        other = np.swapaxes(chol_inv, -1, -2) @ chol_inv
        other.flags.writeable = False
        half_logdet = np.sum(np.log(np.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
        if key == "scale":
            self.scale, self.precision = mat, other
            self._logdet_scale = 2.0 * half_logdet
            self._colour = chol
        else:
            self.precision, self.scale = mat, other
            self._logdet_scale = -2.0 * half_logdet
            self._colour = np.swapaxes(chol_inv, -1, -2)

    def _q(self, x):
        r = x - self.loc
        pr = _matvec(self.precision, r)
        return r, pr, np.sum(r * pr, axis=-1)

    def _logpdf(self, x):
        nu, k = self.df, self._event_shape[0]
        _, _, q = self._q(x)
        return (gammaln(0.5 * (nu + k)) - gammaln(0.5 * nu) - 0.5 * k * np.log(nu * np.pi)
                - 0.5 * self._logdet_scale - 0.5 * (nu + k) * np.log1p(q / nu))

    def _grad_logpdf(self, x):
        nu, k = self.df, self._event_shape[0]
        r, pr, q = self._q(x)
        w = (nu + k) / (nu + q)
        out = {"x": -w[..., None] * pr, "loc": w[..., None] * pr,
               "df": (0.5 * (digamma(0.5 * (nu + k)) - digamma(0.5 * nu)) - 0.5 * k / nu
                      - 0.5 * np.log1p(q / nu) + 0.5 * (nu + k) * q / (nu * (nu + q)))}
        if self.params[2] == "precision":
            out["precision"] = 0.5 * (self.scale - w[..., None, None] * r[..., :, None] * r[..., None, :])
        else:
            out["scale"] = 0.5 * (w[..., None, None] * pr[..., :, None] * pr[..., None, :] - self.precision)
        return out

    def _sample(self, rng, size):
        z = _matvec(self._colour, rng.standard_normal(size + self._event_shape))
        w = rng.chisquare(np.broadcast_to(self.df, size)) / self.df
        return self.loc + z / np.sqrt(w)[..., None]

    @property
    def mean(self):
        return self._full(np.where(self.df[..., None] > 1, self.loc, np.nan))

    @property
    def var(self):
        nu = self.df[..., None]
        d = np.diagonal(self.scale, axis1=-2, axis2=-1)
        with np.errstate(all="ignore"):
            v = np.where(nu > 2, d * nu / (nu - 2.0), np.where(nu > 1, np.inf, np.nan))
        return self._full(v)
