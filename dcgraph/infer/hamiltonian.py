"""Hamiltonian dynamics on R^d: metric, states, leapfrog integration.

The Hamiltonian is ``H(q, p) = -log pi(q) + p^T M^{-1} p / 2``.  A
:class:`Metric` holds the inverse mass matrix ``M^{-1}`` (a vector when
diagonal, a matrix when dense), which warm-up sets to an estimate of the
posterior covariance.
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

import numpy as np
from scipy.linalg import cholesky, solve_triangular

from .target import NUMERIC_ERRORS

__all__ = ["Metric", "HMCState", "leapfrog", "find_reasonable_step_size"]

GradFn = Callable[[np.ndarray], tuple[float, np.ndarray]]


class Metric(NamedTuple):
    """Inverse mass matrix ``M^{-1}`` and the factor used to draw momenta.

    ``inverse_mass`` has shape ``(d,)`` (diagonal) or ``(d, d)`` (dense).
    ``momentum_factor`` maps standard normals to momenta ``p ~ N(0, M)``:
    ``1/sqrt(inverse_mass)`` when diagonal; when dense, the upper Cholesky
    factor ``U`` of ``M^{-1} = U^T U`` (momenta are ``U^{-1} z``).
    """

    inverse_mass: np.ndarray
    momentum_factor: np.ndarray

    @property
    def dense(self) -> bool:
        return self.inverse_mass.ndim == 2

    @classmethod
    def from_inverse_mass(cls, inverse_mass) -> "Metric":
        """Build a metric from ``M^{-1}`` (vector: diagonal, matrix: dense)."""
        inv = np.array(inverse_mass, dtype=float)
        if inv.ndim == 1:
            if not np.all(inv > 0) or not np.all(np.isfinite(inv)):
                raise ValueError("diagonal inverse mass must be finite and positive")
            return cls(inv, 1.0 / np.sqrt(inv))
        if inv.ndim != 2 or inv.shape[0] != inv.shape[1]:
            raise ValueError(f"inverse mass must be a vector or square matrix, got shape {inv.shape}")
        inv = 0.5 * (inv + inv.T)
        try:
            upper = cholesky(inv, lower=False)
        except np.linalg.LinAlgError as exc:
            raise ValueError("dense inverse mass matrix is not positive definite") from exc
        return cls(inv, upper)

    @classmethod
    def identity(cls, dim: int, dense: bool = False) -> "Metric":
        """The unit metric in ``dim`` dimensions."""
        return cls.from_inverse_mass(np.eye(dim) if dense else np.ones(dim))

    def sample_momentum(self, rng: np.random.Generator) -> np.ndarray:
        """Draw ``p ~ N(0, M)``."""
        z = rng.standard_normal(self.inverse_mass.shape[0])
        if self.dense:
            # M = (U^T U)^{-1} = U^{-1} U^{-T}; p = U^{-1} z has covariance M.
            return solve_triangular(self.momentum_factor, z, lower=False)
        return z * self.momentum_factor

    def velocity(self, p: np.ndarray) -> np.ndarray:
        """``M^{-1} p``, the time derivative of the position."""
        if self.dense:
            return self.inverse_mass.dot(p)
        return self.inverse_mass * p

    def kinetic_energy(self, p: np.ndarray) -> float:
        """``p^T M^{-1} p / 2``."""
        return 0.5 * float(p.dot(self.velocity(p)))


class HMCState(NamedTuple):
    """A point with its log density and gradient (shared by HMC and NUTS)."""

    position: np.ndarray
    logdensity: float
    grad: np.ndarray


def leapfrog(grad_fn: GradFn, metric: Metric, q, p, g, step_size: float, n_steps: int):
    """Integrate ``n_steps`` leapfrog steps of size ``step_size`` from ``(q, p)``.

    ``g`` is the gradient of the log density at ``q``.  Returns
    ``(q, p, logdensity, grad)`` at the end point; non-finite values propagate
    (callers treat them as a divergence); so does a numeric exception raised by
    ``grad_fn``, reported as a log density of ``-inf``.
    """
    half = 0.5 * step_size
    logp = math.nan
    p = p + half * g
    for i in range(n_steps):
        q = q + step_size * metric.velocity(p)
        try:
            logp, g = grad_fn(q)
        except NUMERIC_ERRORS:
            return q, p, -math.inf, g
        if not math.isfinite(logp):
            return q, p, -math.inf, g
        p = p + (step_size if i < n_steps - 1 else half) * g
    return q, p, logp, g


def find_reasonable_step_size(
    rng: np.random.Generator, grad_fn: GradFn, metric: Metric, state: HMCState, step_size: float = 1.0
) -> float:
    """Stan's step-size heuristic: double or halve until one leapfrog step's
    acceptance probability crosses 0.8."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _double_or_halve(rng, grad_fn, metric, state, step_size)


def _double_or_halve(rng, grad_fn, metric, state, step_size):
    log_target = math.log(0.8)
    direction = 0
    for _ in range(100):
        p = metric.sample_momentum(rng)
        h0 = metric.kinetic_energy(p) - state.logdensity
        _, p1, logp, _ = leapfrog(grad_fn, metric, state.position, p, state.grad, step_size, 1)
        h1 = metric.kinetic_energy(p1) - logp
        delta = h0 - h1 if math.isfinite(h1) else -math.inf
        up = delta > log_target
        if direction == 0:
            direction = 1 if up else -1
        elif (direction == 1 and not up) or (direction == -1 and up):
            break
        step_size = step_size * 2.0 if direction == 1 else step_size * 0.5
        if step_size > 1e7:
            raise ValueError("step size heuristic diverged upwards: the posterior appears improper (flat)")
        if step_size < 1e-12:
            raise ValueError(
                "step size heuristic collapsed to zero: the log density or its gradient is "
                "non-finite or extremely curved next to the current point"
            )
    return step_size
