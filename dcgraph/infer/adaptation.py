"""Warm-up adaptation: dual-averaging step size and windowed covariance estimation.

Follows Stan's scheme.  Dual averaging (Hoffman & Gelman 2014, section 3.2)
drives a step size (or proposal scale) towards a target mean acceptance
statistic.  Covariance is estimated in a fast initial buffer, then a
sequence of doubling "slow" windows, then a terminal buffer; at the end of
each window the estimate (shrunk towards ``1e-3 * I``) becomes the new
metric and the step size is re-initialised.  A diagonal metric can be
estimated from positions and gradients together (:func:`gradient_scaled_variance`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .hamiltonian import HMCState, Metric, find_reasonable_step_size

__all__ = [
    "DualAveragingState",
    "dual_averaging_init",
    "dual_averaging_update",
    "warmup_windows",
    "check_windows",
    "STAN_WINDOWS",
    "EARLY_WINDOWS",
    "WelfordState",
    "welford_init",
    "welford_update",
    "welford_covariance",
    "CovarianceAdaptState",
    "covariance_adapt_init",
    "covariance_adapt_update",
    "gradient_scaled_variance",
    "HMCTuning",
    "hmc_tuning_init",
    "hmc_tuning_update",
    "hmc_tuning_finish",
]


MIN_AVERAGED = 10  # dual-averaging updates needed before the averaged step size is trusted

# Metric-adaptation schedules as (initial buffer, first slow window, terminal buffer), in warm-up
# iterations (see ``warmup_windows``). Stan's waits 75 iterations before its first window; the
# early schedule estimates the first metric from iterations 10-25, so that badly scaled targets
# leave the unit metric (and its long trajectories) after 25 iterations instead of 100, and gives
# the step size 100 iterations with the final metric (Stan: 50), which ends nearer its target.
STAN_WINDOWS = (75, 25, 50)
EARLY_WINDOWS = (10, 15, 100)


class DualAveragingState(NamedTuple):
    """Dual-averaging iterate: ``log_step`` is the current value, ``log_step_avg``
    the averaged one used after warm-up."""

    log_step: float
    log_step_avg: float
    error_avg: float
    mu: float
    count: int
    log_step_init: float

    @property
    def step_size(self) -> float:
        return math.exp(self.log_step)

    @property
    def final_step_size(self) -> float:
        """The averaged step size; the initial one after fewer than ``MIN_AVERAGED`` updates,
        when the average is still dominated by the first, deliberately large, iterates."""
        return math.exp(self.log_step_avg if self.count >= MIN_AVERAGED else self.log_step_init)


def dual_averaging_init(step_size: float, shrink_factor: float = 10.0) -> DualAveragingState:
    """Start dual averaging at ``step_size``, shrinking towards ``log(shrink_factor * step_size)``
    (Stan's 10 favours exploring larger steps)."""
    log_step = math.log(step_size)
    return DualAveragingState(log_step, 0.0, 0.0, math.log(shrink_factor) + log_step, 0, log_step)


def dual_averaging_update(
    state: DualAveragingState,
    accept_stat: float,
    target_accept: float = 0.8,
    gamma: float = 0.05,
    t0: float = 10.0,
    kappa: float = 0.75,
) -> DualAveragingState:
    """One dual-averaging update from an observed acceptance statistic in [0, 1]."""
    if not accept_stat >= 0.0:  # NaN counts as a rejection
        accept_stat = 0.0
    accept_stat = min(1.0, accept_stat)
    count = state.count + 1
    eta = 1.0 / (count + t0)
    error_avg = (1.0 - eta) * state.error_avg + eta * (target_accept - accept_stat)
    log_step = state.mu - error_avg * math.sqrt(count) / gamma
    weight = count ** (-kappa)
    log_step_avg = (1.0 - weight) * state.log_step_avg + weight * log_step
    return DualAveragingState(log_step, log_step_avg, error_avg, state.mu, count, state.log_step_init)


def warmup_windows(
    n_warmup: int, init_buffer: int = 75, term_buffer: int = 50, base_window: int = 25
) -> tuple[tuple[int, int], ...]:
    """Slow-adaptation windows ``[start, end)`` as iteration indices.

    Windows double in size; the last one is stretched to the terminal buffer
    when the following one would not fit.  With fewer than 20 warm-up
    iterations there are no windows; when the default buffers do not fit,
    they become 15% / 75% / 10% of the warm-up, as in Stan.
    """
    if n_warmup < 20:
        return ()
    if init_buffer + base_window + term_buffer > n_warmup:
        init_buffer = int(0.15 * n_warmup)
        term_buffer = int(0.1 * n_warmup)
        base_window = n_warmup - (init_buffer + term_buffer)
    slow_end = n_warmup - term_buffer
    windows = []
    start, size = init_buffer, base_window
    while start < slow_end:
        end = start + size
        if end + 2 * size > slow_end:
            end = slow_end
        windows.append((start, end))
        start, size = end, 2 * size
    return tuple(windows)


def check_windows(windows) -> tuple[int, int, int]:
    """``windows`` as ``(init_buffer, base_window, term_buffer)`` ints; a ``ValueError`` names
    the problem (negative buffers, a first window shorter than one iteration, not three)."""
    try:
        init_buffer, base_window, term_buffer = (int(w) for w in windows)
    except (TypeError, ValueError):
        raise ValueError(f"adaptation windows must be (init_buffer, base_window, term_buffer), got {windows!r}") from None
    if init_buffer < 0 or term_buffer < 0 or base_window < 1:
        raise ValueError(f"adaptation windows need buffers >= 0 and a first window >= 1, got {windows!r}")
    return init_buffer, base_window, term_buffer


class WelfordState(NamedTuple):
    """Running mean and sum of squared deviations (vector, or matrix when dense)."""

    count: int
    mean: np.ndarray
    m2: np.ndarray


def welford_init(dim: int, dense: bool) -> WelfordState:
    """An empty estimator for ``dim``-vectors."""
    return WelfordState(0, np.zeros(dim), np.zeros((dim, dim)) if dense else np.zeros(dim))


def welford_update(state: WelfordState, x: np.ndarray) -> WelfordState:
    """Add one observation."""
    count = state.count + 1
    delta = x - state.mean
    mean = state.mean + delta / count
    if state.m2.ndim == 2:
        m2 = state.m2 + np.outer(x - mean, delta)
    else:
        m2 = state.m2 + (x - mean) * delta
    return WelfordState(count, mean, m2)


def welford_covariance(state: WelfordState, regularize: bool = True) -> np.ndarray:
    """Sample (co)variance; regularised as ``n/(n+5) S + 1e-3 * 5/(n+5) I``."""
    n = state.count
    if n < 2:
        raise ValueError("need at least two observations for a covariance")
    cov = state.m2 / (n - 1)
    if regularize:
        shrink = 5.0 / (n + 5.0)
        cov = (n / (n + 5.0)) * cov
        if cov.ndim == 2:
            cov = cov + 1e-3 * shrink * np.eye(cov.shape[0])
        else:
            cov = cov + 1e-3 * shrink
    return cov


def gradient_scaled_variance(positions: WelfordState, grads: WelfordState, regularize: bool = True) -> np.ndarray:
    """Diagonal inverse mass ``sqrt(Var[x] / Var[grad log p])`` per coordinate.

    The diagonal metric that minimises the Fisher divergence between the
    preconditioned target and a standard normal (the estimator of nutpie, and
    of PyMC's ``adapt_diag_grad``).  For any Gaussian with diagonal covariance
    it equals the variances exactly, whatever the sample, where the variances
    of a few hundred autocorrelated draws are off by 10-30% in some
    coordinates.  Coordinates whose gradient does not vary fall back to
    ``Var[x]``; the result is regularised as :func:`welford_covariance`.
    """
    n = positions.count
    if n < 2 or grads.count != n:
        raise ValueError("need at least two (position, gradient) observations")
    var_x = positions.m2 / (n - 1)
    var_g = grads.m2 / (n - 1)
    usable = (var_g > 0) & np.isfinite(var_g)
    est = np.where(usable, np.sqrt(var_x / np.where(usable, var_g, 1.0)), var_x)
    if regularize:
        est = (n / (n + 5.0)) * est + 1e-3 * 5.0 / (n + 5.0)
    return est


class CovarianceAdaptState(NamedTuple):
    """Position in the warm-up schedule and the current window's estimator."""

    windows: tuple
    estimator: WelfordState
    iteration: int
    grad_estimator: WelfordState | None = None


def covariance_adapt_init(
    dim: int, n_warmup: int, dense: bool, use_gradients: bool = False, **window_kwargs
) -> CovarianceAdaptState:
    """Start windowed covariance estimation for ``n_warmup`` iterations.

    ``use_gradients`` (diagonal only): estimate :func:`gradient_scaled_variance`
    from positions and gradients instead of the variances of the positions.
    """
    if use_gradients and dense:
        raise ValueError("gradient-scaled estimation is for diagonal metrics only")
    grads = welford_init(dim, False) if use_gradients else None
    return CovarianceAdaptState(warmup_windows(n_warmup, **window_kwargs), welford_init(dim, dense), 0, grads)


def covariance_adapt_update(state: CovarianceAdaptState, position: np.ndarray, grad: np.ndarray | None = None):
    """Record one warm-up draw (and its log-density gradient, when the state uses gradients).

    Returns ``(new_state, covariance)`` where ``covariance`` is the regularised
    estimate when a window just closed, else ``None``.
    """
    i = state.iteration
    estimator, grads = state.estimator, state.grad_estimator
    for start, end in state.windows:
        if start <= i < end:
            estimator = welford_update(estimator, position)
            if grads is not None:
                grads = welford_update(grads, grad)
            if i + 1 == end:
                cov = welford_covariance(estimator) if grads is None else gradient_scaled_variance(estimator, grads)
                dim, dense = position.shape[0], estimator.m2.ndim == 2
                fresh_grads = None if grads is None else welford_init(dim, False)
                return CovarianceAdaptState(state.windows, welford_init(dim, dense), i + 1, fresh_grads), cov
            break
    return CovarianceAdaptState(state.windows, estimator, i + 1, grads), None


class HMCTuning(NamedTuple):
    """Warm-up state of a Hamiltonian kernel: the step size and metric in use,
    the dual-averaging iterate and the covariance windows."""

    step_size: float
    metric: Metric
    dual: DualAveragingState
    covariance: CovarianceAdaptState
    target_accept: float
    adapt_step_size: bool
    adapt_metric: bool


def hmc_tuning_init(
    rng: np.random.Generator,
    grad_fn,
    state: HMCState,
    metric: Metric,
    n_warmup: int,
    target_accept: float = 0.8,
    step_size: float | None = None,
    adapt_metric: bool = True,
    metric_from_gradients: bool = False,
    windows: tuple = STAN_WINDOWS,
) -> HMCTuning:
    """Begin warm-up from ``state``.

    A ``step_size`` of ``None`` is found by :func:`find_reasonable_step_size` and
    then adapted; a given one is kept fixed.  ``adapt_metric`` estimates the
    metric (diagonal or dense, like ``metric``) in windows, scheduled by ``windows``
    ``= (init_buffer, base_window, term_buffer)`` (:func:`warmup_windows`);
    ``metric_from_gradients`` (diagonal only) estimates it with
    :func:`gradient_scaled_variance`.
    """
    init_buffer, base_window, term_buffer = check_windows(windows)
    adapt_step = step_size is None
    if adapt_step:
        step_size = find_reasonable_step_size(rng, grad_fn, metric, state)
    cov = covariance_adapt_init(
        state.position.shape[0], n_warmup if adapt_metric else 0, metric.dense, metric_from_gradients and not metric.dense,
        init_buffer=init_buffer, term_buffer=term_buffer, base_window=base_window,
    )
    return HMCTuning(float(step_size), metric, dual_averaging_init(step_size), cov, target_accept, adapt_step, adapt_metric)


def hmc_tuning_update(rng: np.random.Generator, grad_fn, state: HMCState, tuning: HMCTuning, accept_stat: float) -> HMCTuning:
    """Fold one warm-up transition (ending at ``state``) into the tuning."""
    step_size, metric, dual = tuning.step_size, tuning.metric, tuning.dual
    if tuning.adapt_step_size:
        dual = dual_averaging_update(dual, accept_stat, tuning.target_accept)
        step_size = dual.step_size
    covariance, cov = covariance_adapt_update(tuning.covariance, state.position, state.grad)
    if cov is not None:
        metric = Metric.from_inverse_mass(cov)
        if tuning.adapt_step_size:
            step_size = find_reasonable_step_size(rng, grad_fn, metric, state, step_size)
            dual = dual_averaging_init(step_size)
    return tuning._replace(step_size=step_size, metric=metric, dual=dual, covariance=covariance)


def hmc_tuning_finish(tuning: HMCTuning) -> tuple[float, Metric]:
    """The step size and metric to sample with after warm-up."""
    step = tuning.dual.final_step_size if tuning.adapt_step_size else tuning.step_size
    return step, tuning.metric
