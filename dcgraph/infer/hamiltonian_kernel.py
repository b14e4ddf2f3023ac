"""What the Hamiltonian kernels (``HMC``, ``NUTS``) share: their warm-up and metric options,
checked the same way, a chain's start (``hmc_init``), the initial metric, warm-up's start and
the tuned parameters (``HMCParams``). A kernel adds its transition (``warmup_step``, ``step``)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .adaptation import STAN_WINDOWS, HMCTuning, hmc_tuning_finish, hmc_tuning_init
from .hamiltonian import HMCState, Metric
from .kernel import KernelBase
from .target import check_point

__all__ = ["HamiltonianKernel", "HMCParams", "hmc_init"]


class HMCParams(NamedTuple):
    """Tuned parameters of a Hamiltonian kernel."""

    step_size: float
    metric: Metric


def hmc_init(target, position) -> HMCState:
    """Validate ``position`` and evaluate the log density and gradient there."""
    position = np.array(position, dtype=float)
    logp, grad = check_point(target, position, need_grad=True)
    return HMCState(position, logp, grad)


class HamiltonianKernel(KernelBase):
    """Base of the Hamiltonian kernels. ``target_accept`` in (0, 1): dual averaging's target;
    ``metric``: ``"diag"``, ``"dense"`` or ``"unit"`` (not adapted); ``step_size``: fixed
    (positive), or None (found, then adapted); ``inverse_mass``: the initial ``M^{-1}``
    (identity if None); ``max_energy_error``: the energy error that is a divergence;
    ``metric_estimate``: ``"gradient"`` or ``"variance"``. Bad options raise ``ValueError``
    naming the option. ``adapt_windows``: the metric windows (Stan's here)."""

    needs_gradient = True
    adapt_windows = STAN_WINDOWS

    def __init__(self, target_accept, metric, step_size, inverse_mass, max_energy_error,
                 metric_estimate):
        if metric_estimate not in ("gradient", "variance"):
            raise ValueError(f"metric_estimate must be 'gradient' or 'variance', got {metric_estimate!r}")
        if metric not in ("diag", "dense", "unit"):
            raise ValueError(f"metric must be 'diag', 'dense' or 'unit', got {metric!r}")
        if not 0.0 < target_accept < 1.0:
            raise ValueError(f"target_accept must lie in (0, 1), got {target_accept}")
        if step_size is not None and not step_size > 0:
            raise ValueError(f"step_size must be positive, got {step_size}")
        self.target_accept = float(target_accept)
        self.metric = metric
        self.step_size = step_size
        self.inverse_mass = inverse_mass
        self.max_energy_error = float(max_energy_error)
        self.metric_estimate = metric_estimate

    def init(self, target, position) -> HMCState:
        return hmc_init(target, position)

    def initial_metric(self, dim: int) -> Metric:
        """``inverse_mass`` if given, else the identity (dense for ``metric="dense"``)."""
        if self.inverse_mass is not None:
            metric = Metric.from_inverse_mass(self.inverse_mass)
            if metric.inverse_mass.shape[0] != dim:
                raise ValueError(f"inverse_mass is for {metric.inverse_mass.shape[0]} dimensions, target has {dim}")
            return metric
        return Metric.identity(dim, dense=self.metric == "dense")

    def start_warmup(self, rng, target, state, n_warmup) -> HMCTuning:
        metric = self.initial_metric(state.position.shape[0])
        return hmc_tuning_init(
            rng, target.logdensity_and_grad, state, metric, n_warmup,
            self.target_accept, self.step_size, adapt_metric=self.metric != "unit",
            metric_from_gradients=self.metric_estimate == "gradient", windows=self.adapt_windows,
        )

    def finish_warmup(self, tuning: HMCTuning) -> HMCParams:
        return HMCParams(*hmc_tuning_finish(tuning))
