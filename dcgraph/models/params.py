"""Parameters of expression models: ``param(...)`` declarations and their specifications.

Inside a ``@model`` function, ``w = param(shape=3, lower=0.0)`` is rewritten (``rewrite``) into
a read of the next coordinates of the unconstrained vector through the parameter's bijector;
``ParamSpec`` is what a declaration says: name, source line, shape, bounds, kind, and the
bijector from ``dcgraph.dist``. ``param`` called anywhere else is an error naming the line.
"""
from __future__ import annotations

import math
import sys

import numpy as np

from ..dist import bijectors as bj
from ..dist.bijectors_matrix import CorrCholesky, Ordered, corr_cholesky_dim

__all__ = ["param", "data", "ParamSpec", "ModelError", "KINDS"]

#: ``kind=`` values: None (real, or bounded by lower/upper), the matrix and vector constraints,
#: and "int" (a discrete parameter: the integers from lower to upper, sampled by Gibbs).
KINDS = (None, "cov", "corr_cholesky", "simplex", "ordered", "int")


class ModelError(ValueError):
    """A model that cannot be evaluated; the message names the file, line and statement."""


class ParamSpec:
    """One ``param(...)`` declaration as evaluated: ``name``, ``line``, constrained ``shape``,
    ``lower``/``upper``, ``kind``, ``bijector`` (None for discrete), ``size`` (coordinates of
    the unconstrained vector it takes) and ``support`` (the values of a discrete parameter)."""

    __slots__ = ("name", "line", "shape", "lower", "upper", "kind", "bijector", "size",
                 "support", "scalar", "vector")

    def __init__(self, name, line, shape=(), lower=None, upper=None, kind=None):
        self.name, self.line, self.kind = name, line, kind
        if kind not in KINDS:
            raise ModelError(f"line {line}: param {name!r}: kind must be one of "
                             f"{', '.join(repr(k) for k in KINDS)}, got {kind!r}")
        self.shape = _shape(shape, name, line)
        self.lower, self.upper = lower, upper
        self.support, self.scalar, self.vector = None, None, False
        if kind == "int":
            self._discrete()
            return
        if kind is not None and (lower is not None or upper is not None):
            raise ModelError(f"line {line}: param {name!r}: lower/upper do not combine with "
                             f"kind={kind!r}")
        self.bijector, self.size = self._continuous()
        self.scalar = _SCALAR.get(type(self.bijector)) if kind is None and self.shape == () else None
        #: an unconstrained vector: its value is a copy of its coordinates
        self.vector = kind is None and len(self.shape) == 1 and type(self.bijector) is bj.Identity

    def _discrete(self):
        if self.shape != () or self.lower is None or self.upper is None:
            raise ModelError(f"line {self.line}: param {self.name!r}: kind='int' needs a scalar "
                             f"with finite integer lower and upper bounds")
        lo, hi = int(self.lower), int(self.upper)
        if lo != self.lower or hi != self.upper or hi < lo:
            raise ModelError(f"line {self.line}: param {self.name!r}: integer bounds must be "
                             f"integers with lower <= upper, got {self.lower!r}, {self.upper!r}")
        self.support = np.arange(lo, hi + 1)
        self.bijector, self.size = None, 1

    def _continuous(self):
        kind, shape, n = self.kind, self.shape, math.prod(self.shape)
        if kind is None:
            lo = -np.inf if self.lower is None else np.asarray(self.lower, dtype=float)
            hi = np.inf if self.upper is None else np.asarray(self.upper, dtype=float)
            if np.any(np.asarray(hi) <= np.asarray(lo)):
                raise ModelError(f"line {self.line}: param {self.name!r}: upper must exceed lower")
            if self.lower is None and self.upper is None:
                return bj.Identity(event_dim=len(shape)), n
            if self.upper is None:
                return bj.LowerBound(lo), n
            if self.lower is None:
                return bj.UpperBound(hi), n
            return bj.LogitAffine(lo, hi), n
        if kind == "simplex" and len(shape) == 1 and shape[0] >= 2:
            return bj.StickBreaking(), shape[0] - 1
        if kind == "ordered" and len(shape) == 1 and shape[0] >= 1:
            return Ordered(), shape[0]
        if kind in ("cov", "corr_cholesky") and len(shape) == 2 and shape[0] == shape[1] >= 1:
            k = shape[0]
            if kind == "cov":
                return bj.CholeskyPD(), k * (k + 1) // 2
            if k >= 2:
                corr_cholesky_dim(k * (k - 1) // 2)
                return CorrCholesky(), k * (k - 1) // 2
        need = {"simplex": "a vector of length >= 2", "ordered": "a vector",
                "cov": "a square matrix", "corr_cholesky": "a square matrix of size >= 2"}[kind]
        raise ModelError(f"line {self.line}: param {self.name!r}: kind={kind!r} needs "
                         f"shape={need}, got shape={shape}")

    @property
    def discrete(self) -> bool:
        return self.kind == "int"

    def constrain(self, u):
        """The parameter's value for its unconstrained coordinates ``u`` (a 1-d slice)."""
        if self.scalar is not None:
            return self.scalar[0](self.bijector, float(u[0]))
        if self.discrete:
            return int(round(float(u[0])))
        if type(self.bijector) is bj.Identity:
            return np.array(u, dtype=float).reshape(self.shape)
        if self.kind is None:
            u = u.reshape(self.shape) if self.shape != () else u[0]
        return self.bijector.forward(u) if self.shape != () else float(self.bijector.forward(u))

    def log_jacobian(self, u) -> float:
        if self.scalar is not None:
            return self.scalar[1](self.bijector, float(u[0]))
        if self.discrete or type(self.bijector) is bj.Identity:
            return 0.0
        if self.kind is None:
            u = u.reshape(self.shape) if self.shape != () else u[0]
        return float(np.sum(self.bijector.log_abs_det_jacobian(u)))

    def initial(self) -> np.ndarray:
        """Unconstrained coordinates of the starting value: zeros (the centre of the support)
        for continuous parameters, ``lower`` for a discrete one."""
        if self.discrete:
            return np.array([float(self.support[0])])
        return np.zeros(self.size)

    def unconstrain(self, value) -> np.ndarray:
        """Unconstrained coordinates (1-d) of a constrained ``value``."""
        if self.discrete:
            return np.array([float(value)])
        return np.asarray(self.bijector.inverse(np.asarray(value, dtype=float)), dtype=float).reshape(-1)

    def key(self):
        return (self.name, self.line, self.shape, _hashable(self.lower), _hashable(self.upper),
                self.kind)

    def __repr__(self):
        extra = "".join(f", {k}={v!r}" for k, v in (("lower", self.lower), ("upper", self.upper),
                                                     ("kind", self.kind)) if v is not None)
        return f"ParamSpec({self.name!r}, shape={self.shape}{extra}, line {self.line})"


def _identity(b, u):
    return u


def _zero(b, u):
    return 0.0


def _one(b, u):
    return 1.0


def _lower(b, u):
    return float(b.low) + math.exp(u)


def _upper(b, u):
    return float(b.high) - math.exp(u)


def _interval(b, u):
    return float(b.low) + float(b.high - b.low) / (1.0 + math.exp(-u))


def _interval_logj(b, u):
    return math.log(float(b.high - b.low)) - abs(u) - 2.0 * math.log1p(math.exp(-abs(u)))


def _exp(b, u):
    return math.exp(u)


def _minus_exp(b, u):
    return -math.exp(u)


def _interval_slope(b, u):
    s = 1.0 / (1.0 + math.exp(-u))
    return float(b.high - b.low) * s * (1.0 - s)


def _interval_logj_slope(b, u):
    return 1.0 - 2.0 / (1.0 + math.exp(-u))


#: scalar bijector type -> (forward, log-Jacobian, d forward, d log-Jacobian) on Python floats
_SCALAR = {
    bj.Identity: (_identity, _zero, _one, _zero),
    bj.LowerBound: (_lower, _identity, _exp, _one),
    bj.UpperBound: (_upper, _identity, _minus_exp, _one),
    bj.LogitAffine: (_interval, _interval_logj, _interval_slope, _interval_logj_slope),
}


def _hashable(v):
    if isinstance(v, np.ndarray):
        return (v.shape, v.tobytes())
    return v


def _shape(shape, name, line) -> tuple:
    try:
        if np.ndim(shape) == 0:
            shape = (int(shape),) if shape != () else ()
        else:
            shape = tuple(int(s) for s in shape)
    except (TypeError, ValueError):
        raise ModelError(f"line {line}: param {name!r}: shape must be an int or a tuple of "
                         f"ints, got {shape!r}") from None
    if any(s < 0 for s in shape):
        raise ModelError(f"line {line}: param {name!r}: negative shape {shape}")
    return shape


def param(shape=(), lower=None, upper=None, kind=None, name=None):
    """Declare a parameter: ``w = param(shape=3)``, ``s = param(lower=0.0)``,
    ``S = param(shape=(2, 2), kind="cov")``, ``z = param(kind="int", lower=0, upper=2)``.
    Only meaningful as the right side of an assignment in a ``@model`` function (the name
    is the variable assigned, or ``name=``); called anywhere else it raises ``ModelError``."""
    caller = sys._getframe(1)
    raise ModelError(f"{caller.f_code.co_filename}:{caller.f_lineno}: param() must be assigned "
                     f"directly to a variable in a @model function (w = param(...))")


def data(value):
    """Mark ``value`` as data: a float array (or float) observed by ``value |= dist(...)``.
    Optional: numbers and numpy arrays are data anyway."""
    if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        return float(value) if not isinstance(value, (int, np.integer)) else value
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"data(): expected numbers, got an array of dtype {arr.dtype}")
    return arr
