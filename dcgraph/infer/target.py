"""Log-density targets on unconstrained R^d.

A *target* is anything the samplers can evaluate: it has ``logdensity(theta)``
returning a float and, for gradient-based kernels, ``logdensity_and_grad(theta)``
returning ``(float, ndarray of shape (d,))``.  :func:`as_target` turns callables
or arbitrary objects with those methods into a :class:`Target` and
:func:`check_point` validates a point with a message that names the problem.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

__all__ = ["Target", "as_target", "with_autodiff", "AutoGradient", "check_point", "InvalidPointError", "NUMERIC_ERRORS"]

#: Exceptions from a log density that samplers treat as "log density is -inf here"
#: once sampling has started (at the initial point they propagate).
NUMERIC_ERRORS = (ArithmeticError, ValueError)


class InvalidPointError(ValueError):
    """The log density (or its gradient) is unusable at a point."""


class Target:
    """A log density on R^d with an optional gradient.

    ``logdensity(theta) -> float``; ``logdensity_and_grad(theta) -> (float, grad)``
    with ``grad`` a float ndarray of shape ``(d,)``.  Either function may be
    omitted: the log density alone is derived from the gradient function, and
    gradient-based kernels refuse a target without one.  The user's functions
    are stored as the instance's attributes, so the integrators call them
    with no wrapper in between.  ``dim`` is optional and only used to draw
    random initial points.
    """

    def __init__(
        self,
        logdensity: Callable[[np.ndarray], float] | None = None,
        logdensity_and_grad: Callable[[np.ndarray], tuple[float, np.ndarray]] | None = None,
        dim: int | None = None,
    ):
        if logdensity is None and logdensity_and_grad is None:
            raise TypeError("Target needs logdensity, logdensity_and_grad, or both")
        for name, fn in (("logdensity", logdensity), ("logdensity_and_grad", logdensity_and_grad)):
            if fn is not None and not callable(fn):
                raise TypeError(f"{name} must be callable, got {type(fn).__name__}")
        self.has_grad = logdensity_and_grad is not None
        self.logdensity = logdensity if logdensity is not None else _ValueOf(logdensity_and_grad)
        self.logdensity_and_grad = logdensity_and_grad if logdensity_and_grad is not None else _no_gradient
        self.dim = None if dim is None else int(dim)

    def __repr__(self) -> str:
        return f"Target(dim={self.dim}, has_grad={self.has_grad})"


class _ValueOf:
    """The log density taken from a ``logdensity_and_grad`` function (picklable)."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, theta):
        return self.fn(theta)[0]


def _no_gradient(theta):
    raise TypeError(
        "this target has no gradient: pass logdensity_and_grad, or use a "
        "gradient-free kernel (RandomWalkMetropolis, Slice)"
    )


class AutoGradient:
    """``theta -> (logdensity, gradient)`` for a plain log density, by :func:`dcgraph.value_and_grad`.

    Picklable when the log density is (the compiled gradient is rebuilt in
    the process that uses it).
    """

    def __init__(self, logdensity: Callable[[np.ndarray], float]):
        self.logdensity = logdensity
        self._compiled = None

    def __call__(self, theta):
        if self._compiled is None:
            from ..ad.api import sampling_value_and_grad

            self._compiled = sampling_value_and_grad(self.logdensity)
        try:
            value, grad = self._compiled(theta)
        except TypeError:
            try:
                _scalar(self.logdensity(theta), f"point theta={_short(np.asarray(theta))}")
            except InvalidPointError as exc:  # a TypeError, so that samplers never take it for a divergence
                raise TypeError(str(exc)) from None
            raise
        return value, np.asarray(grad, dtype=float)

    def __getstate__(self):
        return {"logdensity": self.logdensity, "_compiled": None}


def with_autodiff(target: Target) -> Target:
    """``target`` with a gradient from :func:`dcgraph.value_and_grad` of its log density."""
    if target.has_grad:
        return target
    return Target(target.logdensity, AutoGradient(target.logdensity), target.dim)


def as_target(obj: Any, logdensity_and_grad: Callable | None = None, dim: int | None = None) -> Target:
    """Coerce ``obj`` into a :class:`Target`.

    Accepts a :class:`Target`; an object with a ``logdensity`` and/or
    ``logdensity_and_grad`` method (and optionally ``dim``); or a callable
    log density, with the gradient function as second argument.
    """
    if isinstance(obj, Target) and logdensity_and_grad is None:
        if dim is not None and obj.dim is None:
            return Target(obj.logdensity, obj.logdensity_and_grad if obj.has_grad else None, dim)
        return obj
    ld = getattr(obj, "logdensity", None)
    ldg = getattr(obj, "logdensity_and_grad", None)
    if (ld is not None or ldg is not None) and not isinstance(obj, Target):
        dim = dim if dim is not None else getattr(obj, "dim", None)
        return Target(ld if callable(ld) else None, logdensity_and_grad or (ldg if callable(ldg) else None), dim)
    if callable(obj) or obj is None:
        return Target(obj, logdensity_and_grad, dim)
    raise TypeError(
        f"cannot use {type(obj).__name__} as a target: pass a callable log density, "
        "or an object with logdensity / logdensity_and_grad methods"
    )


def check_point(target: Target, theta: np.ndarray, need_grad: bool, where: str = "initial point"):
    """Evaluate ``target`` at ``theta`` and validate the result.

    Returns ``(logdensity, grad)`` as ``(float, float64 array)`` (``grad`` is
    ``None`` when ``need_grad`` is false).  Raises :class:`InvalidPointError`
    naming the problem: non-finite log density, wrong gradient shape,
    non-finite gradient entries, non-scalar log density.
    """
    theta = np.asarray(theta, dtype=float)
    if theta.ndim != 1:
        raise InvalidPointError(f"{where} must be a 1-D vector, got shape {theta.shape}")
    if not np.all(np.isfinite(theta)):
        raise InvalidPointError(f"{where} has non-finite coordinates: {theta}")
    grad = None
    if need_grad and isinstance(target.logdensity_and_grad, AutoGradient):
        _scalar(target.logdensity(theta), where)  # before differentiating: a clear message for None or arrays
    if need_grad:
        out = target.logdensity_and_grad(theta)
        if not isinstance(out, tuple) or len(out) != 2:
            raise InvalidPointError(
                "logdensity_and_grad must return a (logdensity, gradient) pair, "
                f"got {type(out).__name__}"
            )
        lp, grad = out
        if not isinstance(grad, np.ndarray) or grad.dtype.kind != "f":
            raise InvalidPointError(
                "gradient must be a float numpy array of shape "
                f"{theta.shape}, got {type(grad).__name__}"
                + (f" of dtype {grad.dtype}" if isinstance(grad, np.ndarray) else "")
            )
        if grad.shape != theta.shape:
            raise InvalidPointError(
                f"gradient has shape {grad.shape} at the {where}, expected {theta.shape} "
                "(one entry per coordinate of theta)"
            )
    else:
        lp = target.logdensity(theta)
    lp = _scalar(lp, where)
    if math.isnan(lp):
        raise InvalidPointError(f"log density is NaN at the {where} theta={_short(theta)}")
    if math.isinf(lp):
        raise InvalidPointError(f"log density is {lp} at the {where} theta={_short(theta)}")
    if grad is not None and not np.all(np.isfinite(grad)):
        bad = np.flatnonzero(~np.isfinite(grad))
        raise InvalidPointError(f"gradient has non-finite entries at indices {bad.tolist()[:10]} at the {where}")
    return lp, grad


def _scalar(lp, where: str) -> float:
    """The log density as a float, or an :class:`InvalidPointError` saying what it was instead."""
    if isinstance(lp, (float, int)) and not isinstance(lp, bool):
        return float(lp)
    if lp is None:
        raise InvalidPointError(
            f"log density returned None at the {where}: the function must return a float (a missing return?)"
        )
    if isinstance(lp, np.ndarray) and lp.shape != ():
        raise InvalidPointError(
            f"log density must be a scalar, got an array of shape {lp.shape} at the {where} "
            "(sum the terms of the log density into one number)"
        )
    if isinstance(lp, (np.floating, np.integer, np.ndarray)) and np.asarray(lp).dtype.kind in "fiu":
        return float(lp)
    try:
        if isinstance(lp, (str, bytes)):
            raise TypeError
        return float(lp)
    except (TypeError, ValueError):
        raise InvalidPointError(
            f"log density must be a scalar float, got {type(lp).__name__} at the {where}"
        ) from None


def _short(theta: np.ndarray) -> str:
    return np.array2string(theta[:6], precision=4) + (" ..." if theta.size > 6 else "")
