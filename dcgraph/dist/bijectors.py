"""Bijectors between unconstrained space and a support.

Convention: ``forward(y)`` maps unconstrained ``y`` to constrained ``x``;
``inverse(x)`` maps back; ``log_abs_det_jacobian(y)`` is ``log|det dx/dy|`` for one
event, returned with the batch shape of ``y`` (elementwise for scalar bijectors).
So a density ``p(x)`` becomes ``p(forward(y)) * exp(log_abs_det_jacobian(y))`` on ``y``.

``bijector_for(support)`` picks the bijector of a support.
"""
from __future__ import annotations

import abc

import numpy as np
from scipy.special import expit, log_expit, logit

from . import support as sp
from .validation import fmt_value

__all__ = [
    "Bijector", "Identity", "LowerBound", "Exp", "UpperBound", "LogitAffine",
    "StickBreaking", "CholeskyPD", "bijector_for",
]


class Bijector(abc.ABC):
    """Base class; ``event_dim`` is the number of trailing axes of one constrained value."""

    event_dim = 0

    @abc.abstractmethod
    def forward(self, y):
        """Unconstrained ``y`` to constrained ``x``."""

    @abc.abstractmethod
    def inverse(self, x):
        """Constrained ``x`` to unconstrained ``y``."""

    @abc.abstractmethod
    def log_abs_det_jacobian(self, y):
        """``log|det d forward(y) / dy|`` per event."""

    def __repr__(self):
        return f"{type(self).__name__}()"


class Identity(Bijector):
    """``x = y`` (Real and RealVector supports); the Jacobian term is zero."""

    def __init__(self, event_dim: int = 0):
        self.event_dim = event_dim

    def forward(self, y):
        return np.asarray(y, dtype=float)

    def inverse(self, x):
        return np.asarray(x, dtype=float)

    def log_abs_det_jacobian(self, y):
        y = np.asarray(y, dtype=float)
        return np.zeros(y.shape[: y.ndim - self.event_dim])


class LowerBound(Bijector):
    """``x = low + exp(y)`` onto ``(low, inf)``; ``log|dx/dy| = y``."""

    def __init__(self, low):
        self.low = np.asarray(low, dtype=float)

    def forward(self, y):
        with np.errstate(over="ignore"):
            return self.low + np.exp(np.asarray(y, dtype=float))

    def inverse(self, x):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(np.asarray(x, dtype=float) - self.low)

    def log_abs_det_jacobian(self, y):
        y = np.asarray(y, dtype=float)
        return np.broadcast_to(y, np.broadcast_shapes(y.shape, self.low.shape)).copy()

    def __repr__(self):
        return f"LowerBound({fmt_value(self.low)})"


class Exp(LowerBound):
    """``x = exp(y)`` onto ``(0, inf)``."""

    def __init__(self):
        super().__init__(0.0)

    def __repr__(self):
        return "Exp()"


class UpperBound(Bijector):
    """``x = high - exp(y)`` onto ``(-inf, high)``; ``log|dx/dy| = y``."""

    def __init__(self, high):
        self.high = np.asarray(high, dtype=float)

    def forward(self, y):
        with np.errstate(over="ignore"):
            return self.high - np.exp(np.asarray(y, dtype=float))

    def inverse(self, x):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(self.high - np.asarray(x, dtype=float))

    def log_abs_det_jacobian(self, y):
        y = np.asarray(y, dtype=float)
        return np.broadcast_to(y, np.broadcast_shapes(y.shape, self.high.shape)).copy()

    def __repr__(self):
        return f"UpperBound({fmt_value(self.high)})"


class LogitAffine(Bijector):
    """``x = low + (high - low) * sigmoid(y)`` onto ``(low, high)``."""

    def __init__(self, low, high):
        self.low = np.asarray(low, dtype=float)
        self.high = np.asarray(high, dtype=float)

    def forward(self, y):
        return self.low + (self.high - self.low) * expit(np.asarray(y, dtype=float))

    def inverse(self, x):
        with np.errstate(divide="ignore", invalid="ignore"):
            return logit((np.asarray(x, dtype=float) - self.low) / (self.high - self.low))

    def log_abs_det_jacobian(self, y):
        y = np.asarray(y, dtype=float)
        return np.log(self.high - self.low) + log_expit(y) + log_expit(-y)

    def __repr__(self):
        return f"LogitAffine({fmt_value(self.low)}, {fmt_value(self.high)})"


class StickBreaking(Bijector):
    """Stan's stick-breaking map from ``R^(K-1)`` onto the ``K``-simplex.

    ``z_k = sigmoid(y_k - log(K-1-k))``, ``x_k = z_k * (1 - sum_{j<k} x_j)``, the last
    coordinate takes the remaining stick. ``y = 0`` maps to the uniform vector. The
    Jacobian is that of ``y`` to the first ``K-1`` coordinates of ``x``.
    """

    event_dim = 1

    @staticmethod
    def _offsets(km1):
        return np.log(np.arange(km1, 0, -1, dtype=float))

    def forward(self, y):
        y = np.asarray(y, dtype=float)
        u = y - self._offsets(y.shape[-1])
        z = expit(u)
        rem = np.cumprod(expit(-u), axis=-1)  # remaining stick after each break
        head = z * np.concatenate([np.ones(y.shape[:-1] + (1,)), rem[..., :-1]], axis=-1)
        return np.concatenate([head, rem[..., -1:]], axis=-1)

    def inverse(self, x):
        x = np.asarray(x, dtype=float)
        rem = np.cumsum(x[..., ::-1], axis=-1)[..., ::-1]  # sum_{j>=k} x_j, accurate for small tails
        with np.errstate(divide="ignore", invalid="ignore"):
            z = x[..., :-1] / rem[..., :-1]
            return logit(z) + self._offsets(x.shape[-1] - 1)

    def log_abs_det_jacobian(self, y):
        y = np.asarray(y, dtype=float)
        u = y - self._offsets(y.shape[-1])
        log_rem = np.cumsum(log_expit(-u), axis=-1)
        log_rem_before = np.concatenate([np.zeros(y.shape[:-1] + (1,)), log_rem[..., :-1]], axis=-1)
        return np.sum(log_expit(u) + log_expit(-u) + log_rem_before, axis=-1)


def _dim_from_vech(m: int) -> int:
    p = int(round((np.sqrt(8 * m + 1) - 1) / 2))
    if p * (p + 1) // 2 != m or m == 0:
        raise ValueError(f"CholeskyPD: unconstrained length {m} is not p*(p+1)/2")
    return p


class CholeskyPD(Bijector):
    """Map ``R^(p(p+1)/2)`` onto ``p x p`` positive definite matrices.

    ``y`` fills the lower triangle of ``L`` row by row (``np.tril_indices`` order) with
    the diagonal exponentiated; ``x = L L^T``. The Jacobian is that of ``y`` to the lower
    triangle of ``x`` in the same order: ``p log 2 + sum_i (p - i + 1) y_ii`` (0-based i).
    """

    event_dim = 2

    def forward(self, y):
        y = np.asarray(y, dtype=float)
        p = _dim_from_vech(y.shape[-1])
        rows, cols = np.tril_indices(p)
        L = np.zeros(y.shape[:-1] + (p, p))
        L[..., rows, cols] = np.where(rows == cols, np.exp(y), y)
        return L @ np.swapaxes(L, -1, -2)

    def inverse(self, x):
        x = np.asarray(x, dtype=float)
        p = x.shape[-1]
        rows, cols = np.tril_indices(p)
        L = np.linalg.cholesky(x)
        v = L[..., rows, cols]
        with np.errstate(divide="ignore"):
            return np.where(rows == cols, np.log(np.where(rows == cols, v, 1.0)), v)

    def log_abs_det_jacobian(self, y):
        y = np.asarray(y, dtype=float)
        p = _dim_from_vech(y.shape[-1])
        rows, cols = np.tril_indices(p)
        diag = rows == cols
        weights = (p - rows + 1.0) * diag
        return p * np.log(2.0) + np.sum(weights * y, axis=-1)


def bijector_for(support: sp.Support) -> Bijector:
    """The bijector from unconstrained space onto ``support``.

    Raises ``TypeError`` for discrete supports and ``ValueError`` for interval
    arrays that mix finite and infinite bounds across elements.
    """
    if support.is_discrete:
        raise TypeError(f"{support!r} is discrete: there is no bijector to unconstrained space")
    if isinstance(support, sp.Simplex):
        return StickBreaking()
    if isinstance(support, sp.PositiveDefinite):
        return CholeskyPD()
    if isinstance(support, sp.RealVector):
        return Identity(event_dim=1)
    if isinstance(support, (sp.Positive, sp.NonNegative)):
        return Exp()
    lo_f, hi_f = np.isfinite(support.lower), np.isfinite(support.upper)
    for lo_case, hi_case, make in (
        (False, False, lambda: Identity()),
        (True, False, lambda: LowerBound(support.lower)),
        (False, True, lambda: UpperBound(support.upper)),
        (True, True, lambda: LogitAffine(support.lower, support.upper)),
    ):
        if np.all(lo_f == lo_case) and np.all(hi_f == hi_case):
            return make()
    raise ValueError(f"{support!r}: bounds mix finite and infinite values across elements; no single bijector")
