"""Supports: the set a distribution puts its mass on.

Every support has ``contains(x)`` returning a boolean array over the *batch* part of
``x`` (the trailing ``event_dim`` axes are reduced), ``event_dim`` and ``is_discrete``.
Univariate supports also expose ``lower`` and ``upper`` (arrays, possibly infinite);
they are the bounds the unconstrained bijector maps onto.
"""
from __future__ import annotations

import numpy as np

from .validation import fmt_value

__all__ = [
    "Support", "Real", "RealVector", "Positive", "NonNegative", "Interval", "UnitInterval",
    "Simplex", "PositiveDefinite", "NonNegativeInteger", "IntegerInterval", "IntegerSimplex",
]

SIMPLEX_TOL = 1e-8


class Support:
    """Base class. ``contains(x)`` is a pure test: it never raises for wrong values."""

    event_dim = 0
    is_discrete = False
    lower = -np.inf
    upper = np.inf

    def contains(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        ok = np.isfinite(x) & (x >= self.lower) & (x <= self.upper)   # (NaN compares False, silently)
        if self.is_discrete:
            ok &= x == np.floor(x)
        return ok

    def __repr__(self):
        return f"{type(self).__name__}()"

    def __eq__(self, other):
        return type(self) is type(other) and repr(self) == repr(other)

    def __hash__(self):
        return hash(repr(self))


class Real(Support):
    """All finite reals."""


class RealVector(Support):
    """Vectors of finite reals (event_dim 1)."""

    event_dim = 1

    def contains(self, x):
        return np.all(np.isfinite(np.asarray(x, dtype=float)), axis=-1)


class Positive(Support):
    """The open half-line ``(0, inf)``."""

    lower = 0.0

    def contains(self, x):
        x = np.asarray(x, dtype=float)
        with np.errstate(invalid="ignore"):
            return np.isfinite(x) & (x > 0)


class NonNegative(Support):
    """The closed half-line ``[0, inf)``."""

    lower = 0.0


class Interval(Support):
    """The closed interval ``[low, high]``; either bound may be infinite, bounds may be arrays."""

    def __init__(self, low, high):
        self.lower = np.asarray(low, dtype=float)
        self.upper = np.asarray(high, dtype=float)

    def __repr__(self):
        return f"{type(self).__name__}({fmt_value(self.lower)}, {fmt_value(self.upper)})"


class UnitInterval(Interval):
    """``[0, 1]``."""

    def __init__(self):
        super().__init__(0.0, 1.0)

    def __repr__(self):
        return "UnitInterval()"


class Simplex(Support):
    """Non-negative vectors summing to one (to within 1e-8); event_dim 1."""

    event_dim = 1

    def contains(self, x):
        x = np.asarray(x, dtype=float)
        with np.errstate(invalid="ignore"):
            return np.all(np.isfinite(x) & (x >= 0), axis=-1) & (np.abs(x.sum(-1) - 1.0) <= SIMPLEX_TOL)


class PositiveDefinite(Support):
    """Symmetric positive definite matrices; event_dim 2."""

    event_dim = 2

    def contains(self, x):
        x = np.asarray(x, dtype=float)
        finite = np.all(np.isfinite(x), axis=(-1, -2))
        xs = np.where(finite[..., None, None], x, 1.0)
        sym = np.all(np.abs(xs - np.swapaxes(xs, -1, -2)) <= 1e-10 * np.maximum(1.0, np.abs(xs)), axis=(-1, -2))
        eig = np.linalg.eigvalsh(np.where((finite & sym)[..., None, None], xs, np.eye(x.shape[-1])))
        return finite & sym & (eig[..., 0] > 0)


class NonNegativeInteger(Support):
    """``{0, 1, 2, ...}``."""

    is_discrete = True
    lower = 0.0


class IntegerInterval(Support):
    """``{lo, lo + 1, ..., hi}``; bounds may be arrays."""

    is_discrete = True

    def __init__(self, lo, hi):
        self.lower = np.asarray(lo, dtype=float)
        self.upper = np.asarray(hi, dtype=float)

    def __repr__(self):
        return f"IntegerInterval({fmt_value(self.lower)}, {fmt_value(self.upper)})"


class IntegerSimplex(Support):
    """Non-negative integer vectors summing to ``total`` (Multinomial); event_dim 1."""

    event_dim = 1
    is_discrete = True

    def __init__(self, total):
        self.total = np.asarray(total, dtype=float)

    def contains(self, x):
        x = np.asarray(x, dtype=float)
        with np.errstate(invalid="ignore"):
            ints = np.all(np.isfinite(x) & (x >= 0) & (x == np.floor(x)), axis=-1)
            return ints & (x.sum(-1) == self.total)

    def __repr__(self):
        return f"IntegerSimplex({fmt_value(self.total)})"
