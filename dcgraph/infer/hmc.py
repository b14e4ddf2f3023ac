"""Static Hamiltonian Monte Carlo: a fixed number of leapfrog steps, then a
Metropolis accept/reject on the energy error."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .adaptation import HMCTuning, hmc_tuning_update
from .hamiltonian import HMCState, Metric, leapfrog
from .hamiltonian_kernel import HamiltonianKernel, HMCParams

__all__ = ["HMC", "HMCInfo", "hmc_step"]


class HMCInfo(NamedTuple):
    """Statistics of one static-HMC transition."""

    accept_prob: float
    accepted: bool
    n_leapfrog: int
    divergent: bool
    energy: float
    step_size: float


def hmc_step(
    rng: np.random.Generator,
    grad_fn,
    state: HMCState,
    step_size: float,
    metric: Metric,
    n_steps: int,
    max_energy_error: float = 1000.0,
) -> tuple[HMCState, HMCInfo]:
    """One static HMC transition of ``n_steps`` leapfrog steps."""
    p0 = metric.sample_momentum(rng)
    h0 = metric.kinetic_energy(p0) - state.logdensity
    with np.errstate(over="ignore", invalid="ignore"):  # overflow shows up as a divergence
        q, p, logp, g = leapfrog(grad_fn, metric, state.position, p0, state.grad, step_size, n_steps)
        h = metric.kinetic_energy(p) - logp if math.isfinite(logp) else math.inf
    if h != h:
        h = math.inf
    dh = h0 - h
    accept_prob = 1.0 if dh > 0 else math.exp(dh)
    divergent = -dh > max_energy_error
    if not divergent and rng.random() < accept_prob:
        return HMCState(q, float(logp), g), HMCInfo(accept_prob, True, n_steps, False, float(h), step_size)
    return state, HMCInfo(accept_prob, False, n_steps, bool(divergent), float(h0), step_size)


class HMC(HamiltonianKernel):
    """Static HMC with ``n_steps`` leapfrog steps per transition.

    Warm-up adapts the step size by dual averaging towards ``target_accept``
    and, unless ``metric="unit"``, a diagonal or dense metric in windows
    (``metric_estimate`` as for :class:`NUTS`).
    """

    def __init__(
        self,
        n_steps: int = 20,
        target_accept: float = 0.8,
        metric: str = "diag",
        step_size: float | None = None,
        inverse_mass=None,
        max_energy_error: float = 1000.0,
        metric_estimate: str = "gradient",
    ):
        if int(n_steps) < 1:
            raise ValueError(f"n_steps must be at least 1, got {n_steps}")
        self.n_steps = int(n_steps)
        super().__init__(target_accept, metric, step_size, inverse_mass, max_energy_error, metric_estimate)

    def warmup_step(self, rng, target, state, tuning: HMCTuning):
        grad_fn = target.logdensity_and_grad
        state, info = hmc_step(rng, grad_fn, state, tuning.step_size, tuning.metric, self.n_steps, self.max_energy_error)
        return state, hmc_tuning_update(rng, grad_fn, state, tuning, info.accept_prob), info

    def step(self, rng, target, state, params: HMCParams):
        return hmc_step(rng, target.logdensity_and_grad, state, params.step_size, params.metric, self.n_steps, self.max_energy_error)
