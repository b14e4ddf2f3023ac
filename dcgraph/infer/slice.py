"""Univariate slice sampling with stepping out and shrinkage (Neal 2003),
applied to each coordinate in turn."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .kernel import KernelBase
from .mh import MHState, mh_init
from .target import NUMERIC_ERRORS

__all__ = ["Slice", "SliceInfo", "SliceParams", "slice_step"]


class SliceParams(NamedTuple):
    """Initial interval width per coordinate and the cap on stepping-out steps."""

    widths: np.ndarray
    max_steps: int


class SliceInfo(NamedTuple):
    n_evals: int


class SliceTuning(NamedTuple):
    params: SliceParams
    jump_sum: np.ndarray
    count: int
    adapt: bool


def _safe(logdensity, x) -> float:
    """The log density at ``x``, with NaN and numeric exceptions read as ``-inf``."""
    try:
        logp = float(logdensity(x))
    except NUMERIC_ERRORS:
        return -math.inf
    return logp if logp == logp else -math.inf


def slice_step(rng: np.random.Generator, logdensity, state: MHState, params: SliceParams) -> tuple[MHState, SliceInfo]:
    """One sweep of univariate slice updates over all coordinates, in order."""
    x = state.position.copy()
    logp = state.logdensity
    n_evals = 0

    def at(i, value):
        nonlocal n_evals
        n_evals += 1
        x[i] = value
        return _safe(logdensity, x)

    for i in range(x.shape[0]):
        x0 = x[i]
        w = params.widths[i]
        level = logp - rng.standard_exponential()
        left = x0 - w * rng.random()
        right = left + w
        steps_left = int(params.max_steps * rng.random())
        steps_right = params.max_steps - 1 - steps_left
        while steps_left > 0 and at(i, left) > level:
            left -= w
            steps_left -= 1
        while steps_right > 0 and at(i, right) > level:
            right += w
            steps_right -= 1
        while True:
            candidate = left + (right - left) * rng.random()
            logp_new = at(i, candidate)
            if logp_new > level:
                logp = logp_new
                break
            if candidate < x0:
                left = candidate
            else:
                right = candidate
            if right - left <= 1e-300:  # cannot happen for a proper slice; guard against bad targets
                x[i] = x0
                break
    return MHState(x, logp), SliceInfo(n_evals)


class Slice(KernelBase):
    """Coordinate-wise slice sampler.

    ``width``: initial interval width (scalar or per coordinate); during
    warm-up each width becomes twice the mean absolute jump of its coordinate.
    ``max_steps``: cap on stepping-out steps per update (``m`` in Neal 2003).
    """

    needs_gradient = False

    def __init__(self, width=1.0, max_steps: int = 100, adapt_width: bool = True):
        if np.any(np.asarray(width) <= 0):
            raise ValueError(f"width must be positive, got {width}")
        if int(max_steps) < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        self.width = width
        self.max_steps = int(max_steps)
        self.adapt_width = bool(adapt_width)

    def init(self, target, position) -> MHState:
        return mh_init(target, position)

    def start_warmup(self, rng, target, state, n_warmup) -> SliceTuning:
        dim = state.position.shape[0]
        widths = np.broadcast_to(np.asarray(self.width, dtype=float), (dim,)).copy()
        return SliceTuning(SliceParams(widths, self.max_steps), np.zeros(dim), 0, self.adapt_width)

    def warmup_step(self, rng, target, state, tuning: SliceTuning):
        new_state, info = slice_step(rng, target.logdensity, state, tuning.params)
        if not tuning.adapt:
            return new_state, tuning, info
        jump_sum = tuning.jump_sum + np.abs(new_state.position - state.position)
        count = tuning.count + 1
        widths = tuning.params.widths
        if count >= 10:
            proposed = 2.0 * jump_sum / count
            widths = np.where(proposed > 0, proposed, widths)
        return new_state, SliceTuning(SliceParams(widths, tuning.params.max_steps), jump_sum, count, True), info

    def finish_warmup(self, tuning: SliceTuning) -> SliceParams:
        return tuning.params

    def step(self, rng, target, state, params: SliceParams):
        return slice_step(rng, target.logdensity, state, params)
