"""Bijectors for ordered vectors and Cholesky factors of correlation matrices, and the
derivatives of every single-event bijector (for models that differentiate through them).

Same convention as ``dcgraph.dist.bijectors``: ``forward(y)`` maps unconstrained ``y`` (one
event, a 1-d vector for the vector and matrix bijectors) to constrained ``x``;
``log_abs_det_jacobian(y)`` is ``log|det|`` of ``y`` to the chart named in each class.

``jacobian(bijector, y)`` is ``d forward(y).ravel() / dy`` (a dense ``(x.size, y.size)`` matrix),
``forward_vjp(bijector, y, g)`` is ``J^T g`` shaped like ``y``, and
``grad_log_abs_det_jacobian(bijector, y)`` the gradient of the summed log-Jacobian; all three
are closed forms, kept per bijector type in ``DERIVATIVES`` (one registration a line).
"""
from __future__ import annotations

import numpy as np
from scipy.special import expit

from .bijectors import (Bijector, CholeskyPD, Exp, Identity, LogitAffine, LowerBound,
                        StickBreaking, UpperBound, _dim_from_vech)

__all__ = ["Ordered", "CorrCholesky", "jacobian", "forward_vjp", "grad_log_abs_det_jacobian",
           "DERIVATIVES", "corr_cholesky_dim"]


class Ordered(Bijector):
    """``R^K`` onto increasing vectors (Stan): ``x_0 = y_0``, ``x_k = x_{k-1} + exp(y_k)``.
    ``log|det dx/dy| = sum_{k>=1} y_k``."""

    event_dim = 1

    def forward(self, y):
        y = np.asarray(y, dtype=float)
        steps = np.concatenate([y[..., :1], np.exp(y[..., 1:])], axis=-1)
        return np.cumsum(steps, axis=-1)

    def inverse(self, x):
        x = np.asarray(x, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.concatenate([x[..., :1], np.log(np.diff(x, axis=-1))], axis=-1)

    def log_abs_det_jacobian(self, y):
        y = np.asarray(y, dtype=float)
        return np.sum(y[..., 1:], axis=-1)


def corr_cholesky_dim(m: int) -> int:
    """``K`` such that ``K (K - 1) / 2 == m`` (the size of a correlation Cholesky factor)."""
    k = int(round((1 + np.sqrt(1 + 8 * m)) / 2))
    if k * (k - 1) // 2 != m:
        raise ValueError(f"CorrCholesky: unconstrained length {m} is not K*(K-1)/2")
    return k


def _corr_rows(y, derivatives: bool):
    """Stan's map of ``y`` (``np.tril_indices(K, -1)`` order) to the Cholesky factor ``L`` of
    a correlation matrix, its log-Jacobian and, if asked, ``dL/dy`` and ``d logJ/dy``."""
    y = np.asarray(y, dtype=float).reshape(-1)
    K = corr_cholesky_dim(y.size)
    z = np.tanh(y)
    L = np.zeros((K, K))
    L[0, 0] = 1.0
    a = np.abs(y)                          # log(1 - z^2), stable for large |y|
    log1mz2 = 2.0 * (np.log(2.0) - a - np.log1p(np.exp(-2.0 * a)))
    logj = float(np.sum(log1mz2))
    jac = np.zeros((K * K, y.size)) if derivatives else None
    glog = -2.0 * z if derivatives else None
    m = 0
    for i in range(1, K):
        # row i: 1 - sum_{k<j} L_ik^2 = prod_{k<j} (1 - z_k^2), so s_j = prod_{k<j} sech(y_k)
        logrest = np.concatenate([[0.0], np.cumsum(log1mz2[m:m + i])])
        s = np.exp(0.5 * logrest)
        zi = z[m:m + i]
        L[i, :i] = zi * s[:i]
        L[i, i] = s[i]
        logj += 0.5 * float(np.sum(logrest[:i]))
        if derivatives:
            for j in range(i + 1):             # d L_ij / d y_k = -z_k L_ij (k < j)
                jac[i * K + j, m:m + j] = -zi[:j] * L[i, j]
            jac[i * K + np.arange(i), m + np.arange(i)] = np.exp(log1mz2[m:m + i]) * s[:i]
            glog[m:m + i] -= zi * (i - 1 - np.arange(i))
        m += i
    return L, logj, jac, glog


class CorrCholesky(Bijector):
    """``R^(K(K-1)/2)`` onto lower-triangular ``L`` with positive diagonal and unit-length rows
    (``L L^T`` is a correlation matrix), as in Stan: ``z = tanh(y)`` fills the strictly lower
    triangle row by row, ``L_ij = z_ij sqrt(1 - sum_{k<j} L_ik^2)``, ``L_ii`` takes the rest.
    The Jacobian is that of ``y`` to the strictly lower entries of ``L`` (same order)."""

    event_dim = 2

    def forward(self, y):
        return _corr_rows(y, False)[0]

    def inverse(self, x):
        L = np.asarray(x, dtype=float)
        K = L.shape[-1]
        out = []
        for i in range(1, K):
            S = 0.0
            for j in range(i):
                out.append(np.arctanh(L[i, j] / np.sqrt(1.0 - S)))
                S += L[i, j] ** 2
        return np.asarray(out, dtype=float)

    def log_abs_det_jacobian(self, y):
        return _corr_rows(y, False)[1]


# -- derivatives ---------------------------------------------------------------------------------
def _elementwise_jacobian(dxdy):
    d = np.asarray(dxdy, dtype=float).reshape(-1)
    return np.diag(d)


def _identity_jac(b, y):
    return np.eye(np.size(y))


def _lower_jac(b, y):
    return _elementwise_jacobian(np.broadcast_to(np.exp(y), np.shape(b.forward(y))))


def _upper_jac(b, y):
    return _elementwise_jacobian(np.broadcast_to(-np.exp(y), np.shape(b.forward(y))))


def _logit_jac(b, y):
    s = expit(y)
    return _elementwise_jacobian(np.broadcast_to((b.high - b.low) * s * (1 - s), np.shape(b.forward(y))))


def _stick_jac(b, y):
    y = np.asarray(y, dtype=float)
    km1 = y.size
    z = expit(y - b._offsets(km1))
    r = np.concatenate([[1.0], np.cumprod(1.0 - z)])      # stick left before break k
    J = np.zeros((km1 + 1, km1))
    for m in range(km1):
        J[m, m] = r[m] * z[m] * (1.0 - z[m])
        dr = -r[m] * z[m] * (1.0 - z[m])
        for k in range(m + 1, km1):
            J[k, m] = z[k] * dr
            dr *= 1.0 - z[k]
        J[km1, m] = dr
    return J


def _cholesky_pd_jac(b, y):
    y = np.asarray(y, dtype=float)
    p = _dim_from_vech(y.size)
    rows, cols = np.tril_indices(p)
    L = np.zeros((p, p))
    L[rows, cols] = np.where(rows == cols, np.exp(y), y)
    J = np.zeros((p * p, y.size))
    for m, (r, c) in enumerate(zip(rows, cols)):
        scale = L[r, c] if r == c else 1.0
        dX = np.zeros((p, p))
        dX[r, :] += L[:, c]
        dX[:, r] += L[:, c]
        J[:, m] = scale * dX.ravel()
    return J


def _ordered_jac(b, y):
    y = np.asarray(y, dtype=float)
    d = np.concatenate([[1.0], np.exp(y[1:])])
    return np.tril(np.ones((y.size, y.size))) * d


def _corr_jac(b, y):
    return _corr_rows(y, True)[2]


def _zero_glog(b, y):
    return np.zeros(np.shape(y))


def _ones_glog(b, y):
    return np.ones(np.shape(y))


def _logit_glog(b, y):
    return 1.0 - 2.0 * expit(y)


def _stick_glog(b, y):
    y = np.asarray(y, dtype=float)
    km1 = y.size
    s = expit(y - b._offsets(km1))
    return 1.0 - (km1 + 1 - np.arange(km1)) * s


def _cholesky_pd_glog(b, y):
    p = _dim_from_vech(np.size(y))
    rows, cols = np.tril_indices(p)
    return (p - rows + 1.0) * (rows == cols)


def _ordered_glog(b, y):
    g = np.ones(np.shape(y))
    g[..., 0] = 0.0
    return g


def _corr_glog(b, y):
    return _corr_rows(y, True)[3]


#: bijector type -> (Jacobian, gradient of the summed log-Jacobian)
DERIVATIVES = {}
DERIVATIVES[Identity] = (_identity_jac, _zero_glog)
DERIVATIVES[LowerBound] = (_lower_jac, _ones_glog)
DERIVATIVES[Exp] = (_lower_jac, _ones_glog)
DERIVATIVES[UpperBound] = (_upper_jac, _ones_glog)
DERIVATIVES[LogitAffine] = (_logit_jac, _logit_glog)
DERIVATIVES[StickBreaking] = (_stick_jac, _stick_glog)
DERIVATIVES[CholeskyPD] = (_cholesky_pd_jac, _cholesky_pd_glog)
DERIVATIVES[Ordered] = (_ordered_jac, _ordered_glog)
DERIVATIVES[CorrCholesky] = (_corr_jac, _corr_glog)


def _exp_slope(b, y):
    return np.exp(y)


def _minus_exp_slope(b, y):
    return -np.exp(y)


def _logit_slope(b, y):
    s = expit(y)
    return (b.high - b.low) * s * (1.0 - s)


#: elementwise bijector type -> dx/dy (same shape as y)
_ELEMENTWISE = {LowerBound: _exp_slope, Exp: _exp_slope, UpperBound: _minus_exp_slope,
                LogitAffine: _logit_slope}


def _entry(bijector):
    try:
        return DERIVATIVES[type(bijector)]
    except KeyError:
        raise TypeError(f"no derivatives known for the bijector {bijector!r}") from None


def jacobian(bijector, y):
    """``d forward(y).ravel() / dy`` for one event ``y`` (scalar ``y`` counts as one entry)."""
    return _entry(bijector)[0](bijector, np.asarray(y, dtype=float))


def forward_vjp(bijector, y, g):
    """``J^T g``: the adjoint of ``y`` given the adjoint ``g`` of ``forward(y)``."""
    y = np.asarray(y, dtype=float)
    t = type(bijector)
    if t in (Identity,):
        return np.broadcast_to(np.asarray(g, dtype=float), y.shape).copy()
    if t in _ELEMENTWISE:
        return _ELEMENTWISE[t](bijector, y) * np.asarray(g, dtype=float)
    J = jacobian(bijector, y)
    return (J.T @ np.asarray(g, dtype=float).reshape(-1)).reshape(y.shape)


def grad_log_abs_det_jacobian(bijector, y):
    """The gradient of ``sum(log_abs_det_jacobian(y))`` with respect to ``y``."""
    return _entry(bijector)[1](bijector, np.asarray(y, dtype=float))
