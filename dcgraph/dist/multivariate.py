"""Vector-valued families: Dirichlet, MvNormal, Multinomial (event_dim 1).

``x`` has shape ``(..., K)``; ``logpdf_elementwise`` returns one value per vector and
``var`` is the vector of marginal variances.
"""
from __future__ import annotations

import numpy as np
from scipy.special import digamma, gammaln, xlogy

from ._math import LOG_2PI
from .base import Distribution
from .support import IntegerSimplex, RealVector, Simplex
from .validation import broadcast_batch, check_location_and_matrix, check_param, check_prob_vector

__all__ = ["Dirichlet", "MvNormal", "Multinomial"]


def _matvec(m, v):
    return (m @ v[..., None])[..., 0]


class Dirichlet(Distribution):
    """Dirichlet(alpha): density ``prod x_i^(alpha_i - 1) / B(alpha)`` on the ``K``-simplex.

    ``alpha`` has shape ``batch + (K,)``, ``K >= 2``, entries ``> 0``. The density is with
    respect to Lebesgue measure on the first ``K-1`` coordinates (as scipy); ``grad_logpdf``'s
    ``'x'`` entry is the formal partial ``(alpha - 1)/x`` of that expression in all ``K`` coordinates.
    Bijector: stick-breaking from ``R^(K-1)``.
    """

    params = ("alpha",)
    param_event_dims = {"alpha": 1}
    event_dim = 1
    support = Simplex()

    def __init__(self, alpha):
        a = check_param(self.name, "alpha", alpha, "positive")
        if a.ndim < 1 or a.shape[-1] < 2:
            raise ValueError(f"{self.name}: parameter 'alpha' must have shape (..., K) with K >= 2, "
                             f"got shape {a.shape}")
        self._set_params(alpha=(a, "positive"))
        self._event_shape = a.shape[-1:]

    def _logpdf(self, x):
        a = self.alpha
        return (np.sum(xlogy(a - 1.0, x), axis=-1) + gammaln(a.sum(-1)) - np.sum(gammaln(a), axis=-1))

    def _grad_logpdf(self, x):
        a = self.alpha
        return {"x": (a - 1.0) / x, "alpha": np.log(x) + digamma(a.sum(-1))[..., None] - digamma(a)}

    def _sample(self, rng, size):
        if self.alpha.ndim == 1:
            return rng.dirichlet(self.alpha, size)
        g = rng.standard_gamma(np.broadcast_to(self.alpha, size + self.event_shape))
        return g / g.sum(-1, keepdims=True)

    @property
    def mean(self):
        return self._full(self.alpha / self.alpha.sum(-1, keepdims=True))

    @property
    def var(self):
        a = self.alpha
        a0 = a.sum(-1, keepdims=True)
        return self._full(a * (a0 - a) / (a0**2 * (a0 + 1.0)))


class MvNormal(Distribution):
    """MvNormal(mean, cov=None, precision=None): multivariate normal; give exactly one of ``cov``/``precision``.

    ``mean`` has shape ``(..., k)``; ``cov`` or ``precision`` is ``(..., k, k)`` symmetric positive
    definite. ``log p(x) = -(x-m)^T P (x-m)/2 + log|P|/2 - k log(2 pi)/2``. ``params`` is
    ``('mean', 'cov')`` or ``('mean', 'precision')`` after the parameterisation used; both
    ``cov`` and ``precision`` attributes are always available. Support: real vectors, identity bijector.
    """

    param_event_dims = {"mean": 1, "cov": 2, "precision": 2}
    event_dim = 1
    support = RealVector()

    def __init__(self, mean, cov=None, precision=None):
        m, key, mat, chol = check_location_and_matrix(self.name, "mean", mean,
                                                      {"cov": cov, "precision": precision})
        self.params = ("mean", key)
        self._mean_param = m
        self._batch_shape = broadcast_batch(self.name, {"mean": m.shape[:-1], key: mat.shape[:-2]})
        self._event_shape = m.shape[-1:]
        chol_inv = np.linalg.inv(chol)
        other = np.swapaxes(chol_inv, -1, -2) @ chol_inv
        other.flags.writeable = False
        self._logdet_cov = 2.0 * np.sum(np.log(np.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
        if key == "cov":
            self.cov, self.precision = mat, other
            self._whiten = chol_inv  # z = L^-1 (x - m) with L L^T = cov
            self._colour = chol
        else:
            self.precision, self.cov = mat, other
            self._logdet_cov = -self._logdet_cov
            self._whiten = np.swapaxes(chol, -1, -2)  # z = Lp^T (x - m) with Lp Lp^T = precision
            self._colour = np.swapaxes(chol_inv, -1, -2)

    def param_value(self, name):
        # ``mean`` the attribute is broadcast to batch_shape + event_shape; the parameter is as given.
        return self._mean_param if name == "mean" else super().param_value(name)

    @property
    def mean(self):
        return self._full(self._mean_param)

    def _logpdf(self, x):
        z = _matvec(self._whiten, x - self._mean_param)
        k = self._event_shape[0]
        return -0.5 * np.sum(z * z, axis=-1) - 0.5 * self._logdet_cov - 0.5 * k * LOG_2PI

    def _grad_logpdf(self, x):
        r = x - self._mean_param
        pr = _matvec(self.precision, r)
        out = {"x": -pr, "mean": pr}
        if self.params[1] == "cov":
            out["cov"] = 0.5 * (pr[..., :, None] * pr[..., None, :] - self.precision)
        else:
            out["precision"] = 0.5 * (self.cov - r[..., :, None] * r[..., None, :])
        return out

    def _sample(self, rng, size):
        z = rng.standard_normal(size + self._event_shape)
        return self._mean_param + _matvec(self._colour, z)

    @property
    def var(self):
        return self._full(np.diagonal(self.cov, axis1=-2, axis2=-1))


class Multinomial(Distribution):
    """Multinomial(n, p): counts in ``K`` categories from ``n`` draws with probabilities ``p``.

    ``n`` is a non-negative integer (batch), ``p`` has shape ``(..., K)`` and sums to 1.
    ``log p(x) = log n! - sum log x_i! + sum x_i log p_i`` on non-negative integer vectors
    summing to ``n``. Discrete: ``logpmf`` alias, no bijector.
    """

    params = ("n", "p")
    param_event_dims = {"p": 1}
    event_dim = 1
    is_discrete = True

    def __init__(self, n, p):
        p = check_prob_vector(self.name, "p", p)
        self._set_params(n=(n, "nonnegative_integer"), p=(p, "probability"))
        self._event_shape = p.shape[-1:]

    @property
    def support(self):
        return IntegerSimplex(self.n)

    def _logpdf(self, x):
        return gammaln(self.n + 1.0) - np.sum(gammaln(x + 1.0), axis=-1) + np.sum(xlogy(x, self.p), axis=-1)

    def _grad_logpdf(self, x):
        return {"p": x / self.p}

    def _sample(self, rng, size):
        p = np.broadcast_to(self.p, size + self._event_shape)
        left = np.broadcast_to(self.n, size).astype(np.int64)
        mass_left = np.ones(size)
        out = np.zeros(size + self._event_shape, dtype=np.int64)
        for j in range(self._event_shape[0] - 1):
            with np.errstate(divide="ignore", invalid="ignore"):
                q = np.clip(np.where(mass_left > 0, p[..., j] / mass_left, 0.0), 0.0, 1.0)
            out[..., j] = rng.binomial(left, q)
            left = left - out[..., j]
            mass_left = mass_left - p[..., j]
        out[..., -1] = left
        return out

    @property
    def mean(self):
        return self._full(self.n[..., None] * self.p)

    @property
    def var(self):
        return self._full(self.n[..., None] * self.p * (1.0 - self.p))
