"""Random-walk Metropolis with an adaptive proposal scale.

Proposals are ``x + scale * L z`` with ``z ~ N(0, I)`` and ``L L^T`` the
proposal covariance.  Warm-up tunes ``log(scale)`` by a Robbins-Monro
recursion ``log s += t^(-0.6) (a_t - target_accept)`` on the acceptance
probabilities ``a_t`` (target 0.44 in one dimension, 0.234 otherwise; a
single proposal's acceptance is too noisy for dual averaging), restarted
with larger steps whenever the proposal covariance changes, and, unless
``covariance="identity"``, estimates a diagonal or dense proposal covariance
in Stan-style windows.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.linalg import cholesky

from .adaptation import CovarianceAdaptState, covariance_adapt_init, covariance_adapt_update
from .kernel import KernelBase
from .target import NUMERIC_ERRORS, check_point

__all__ = ["RandomWalkMetropolis", "MHState", "MHInfo", "MHParams", "mh_step", "mh_init"]

_RESTART_COUNT = 10  # Robbins-Monro counter after a covariance update: steps of 10^-0.6 ~ 0.25


class MHState(NamedTuple):
    """A point and its log density (shared by the gradient-free kernels)."""

    position: np.ndarray
    logdensity: float


class MHParams(NamedTuple):
    """Proposal scale and factor ``L`` (vector: diagonal; matrix: lower triangular)."""

    scale: float
    factor: np.ndarray


class MHInfo(NamedTuple):
    accept_prob: float
    accepted: bool
    scale: float


class MHTuning(NamedTuple):
    params: MHParams
    count: int
    log_scale_sum: float
    n_summed: int
    covariance: CovarianceAdaptState
    target_accept: float
    adapt_scale: bool
    adapt_covariance: bool


def mh_init(target, position) -> MHState:
    """Validate ``position`` and evaluate the log density there (no gradient)."""
    position = np.array(position, dtype=float)
    logp, _ = check_point(target, position, need_grad=False)
    return MHState(position, logp)


def mh_step(rng: np.random.Generator, logdensity, state: MHState, params: MHParams) -> tuple[MHState, MHInfo]:
    """One random-walk Metropolis transition."""
    z = rng.standard_normal(state.position.shape[0])
    step = params.factor.dot(z) if params.factor.ndim == 2 else params.factor * z
    proposal = state.position + params.scale * step
    try:
        logp = float(logdensity(proposal))
    except NUMERIC_ERRORS:
        logp = -math.inf
    delta = logp - state.logdensity if logp == logp else -math.inf
    accept_prob = 1.0 if delta >= 0 else math.exp(delta)
    if rng.random() < accept_prob:
        return MHState(proposal, logp), MHInfo(accept_prob, True, params.scale)
    return state, MHInfo(accept_prob, False, params.scale)


class RandomWalkMetropolis(KernelBase):
    """Random-walk Metropolis; see the module docstring for the adaptation.

    ``scale``: initial (or, with ``adapt_scale=False``, fixed) proposal scale,
    default ``2.38 / sqrt(d)``.  ``covariance``: ``"diag"``, ``"dense"`` or
    ``"identity"``.
    """

    needs_gradient = False

    def __init__(
        self,
        scale: float | None = None,
        target_accept: float | None = None,
        covariance: str = "diag",
        adapt_scale: bool = True,
    ):
        if covariance not in ("diag", "dense", "identity"):
            raise ValueError(f"covariance must be 'diag', 'dense' or 'identity', got {covariance!r}")
        if scale is not None and not scale > 0:
            raise ValueError(f"scale must be positive, got {scale}")
        if target_accept is not None and not 0.0 < target_accept < 1.0:
            raise ValueError(f"target_accept must lie in (0, 1), got {target_accept}")
        self.scale = scale
        self.target_accept = target_accept
        self.covariance = covariance
        self.adapt_scale = bool(adapt_scale)

    def init(self, target, position) -> MHState:
        return mh_init(target, position)

    def start_warmup(self, rng, target, state, n_warmup) -> MHTuning:
        dim = state.position.shape[0]
        scale = self.scale if self.scale is not None else 2.38 / math.sqrt(dim)
        target_accept = self.target_accept or (0.44 if dim == 1 else 0.234)
        dense = self.covariance == "dense"
        factor = np.eye(dim) if dense else np.ones(dim)
        adapt_cov = self.covariance != "identity"
        # A long terminal buffer: the scale re-adapts to the final covariance and is averaged there.
        cov = covariance_adapt_init(dim, n_warmup if adapt_cov else 0, dense, term_buffer=max(50, n_warmup // 4))
        return MHTuning(MHParams(scale, factor), 0, 0.0, 0, cov, target_accept, self.adapt_scale, adapt_cov)

    def warmup_step(self, rng, target, state, tuning: MHTuning):
        state, info = mh_step(rng, target.logdensity, state, tuning.params)
        params, count = tuning.params, tuning.count + 1
        log_scale = math.log(params.scale)
        if tuning.adapt_scale:
            log_scale += count ** -0.6 * (info.accept_prob - tuning.target_accept)
            params = params._replace(scale=math.exp(log_scale))
        log_sum, n_summed = tuning.log_scale_sum + log_scale, tuning.n_summed + 1
        covariance, cov = covariance_adapt_update(tuning.covariance, state.position)
        if cov is not None:
            factor = cholesky(cov, lower=True) if cov.ndim == 2 else np.sqrt(cov)
            params = params._replace(factor=factor)
            # The scale compensated for the old factor: re-adapt quickly, restart the average.
            count, log_sum, n_summed = min(count, _RESTART_COUNT), 0.0, 0
        return state, tuning._replace(
            params=params, count=count, log_scale_sum=log_sum, n_summed=n_summed, covariance=covariance
        ), info

    def finish_warmup(self, tuning: MHTuning) -> MHParams:
        """The scale averaged (on the log scale) since the last covariance update."""
        if tuning.adapt_scale and tuning.n_summed > 0:
            return tuning.params._replace(scale=math.exp(tuning.log_scale_sum / tuning.n_summed))
        return tuning.params

    def step(self, rng, target, state, params: MHParams):
        return mh_step(rng, target.logdensity, state, params)
