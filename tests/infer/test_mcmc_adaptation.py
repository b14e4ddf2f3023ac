"""Warm-up machinery: window schedule, dual averaging, Welford estimates, step-size heuristic."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dcgraph.infer import HMCState, Metric, dual_averaging_init, dual_averaging_update, find_reasonable_step_size, warmup_windows
from dcgraph.infer.adaptation import (
    covariance_adapt_init,
    covariance_adapt_update,
    welford_covariance,
    welford_init,
    welford_update,
)


def test_windows_match_stans_default_schedule():
    # Stan, 1000 warm-up: buffer 75, windows 25, 50, 100, 200, 500, terminal buffer 50.
    assert warmup_windows(1000) == ((75, 100), (100, 150), (150, 250), (250, 450), (450, 950))


def test_short_warmup_uses_proportional_buffers_and_tiny_warmup_none():
    assert warmup_windows(100) == ((15, 90),)
    assert warmup_windows(19) == ()


@given(st.integers(min_value=20, max_value=20_000))
@settings(max_examples=200, deadline=None)
def test_windows_tile_the_slow_phase(n):
    windows = warmup_windows(n)
    assert windows, n
    for (a, b), (c, d) in zip(windows, windows[1:]):
        assert b == c and b - a <= d - c
    assert windows[-1][1] <= n and windows[0][0] >= 0


def test_dual_averaging_finds_the_step_with_target_acceptance():
    # Acceptance exp(-eps): the step with mean acceptance 0.8 is -log(0.8).
    rng = np.random.default_rng(0)
    state = dual_averaging_init(1.0)
    for _ in range(3000):
        accept = min(1.0, math.exp(-state.step_size) + 0.05 * rng.standard_normal())
        state = dual_averaging_update(state, accept, target_accept=0.8)
    assert state.final_step_size == pytest.approx(-math.log(0.8), rel=0.05)


def test_dual_averaging_treats_nan_as_rejection():
    state = dual_averaging_update(dual_averaging_init(1.0), float("nan"))
    assert state.step_size < 1.0 * 10  # moved away from mu = log(10), towards smaller steps
    assert math.isfinite(state.log_step)


def test_welford_matches_numpy_and_regularises():
    x = np.random.default_rng(1).standard_normal((200, 3)) @ np.array([[1.0, 0.5, 0.0], [0.0, 2.0, 0.3], [0.0, 0.0, 0.1]])
    dense, diag = welford_init(3, True), welford_init(3, False)
    for row in x:
        dense, diag = welford_update(dense, row), welford_update(diag, row)
    np.testing.assert_allclose(welford_covariance(dense, regularize=False), np.cov(x.T), rtol=1e-10)
    np.testing.assert_allclose(welford_covariance(diag, regularize=False), x.var(axis=0, ddof=1), rtol=1e-10)
    n = 200
    expected = n / (n + 5) * np.cov(x.T) + 1e-3 * 5 / (n + 5) * np.eye(3)
    np.testing.assert_allclose(welford_covariance(dense), expected, rtol=1e-10)


def test_covariance_adaptation_reports_estimates_at_window_ends():
    state = covariance_adapt_init(2, 1000, dense=False)
    rng = np.random.default_rng(2)
    ends = []
    for i in range(1000):
        state, cov = covariance_adapt_update(state, rng.standard_normal(2) * [1.0, 3.0])
        if cov is not None:
            ends.append(i + 1)
            last = cov
    assert ends == [100, 150, 250, 450, 950]
    np.testing.assert_allclose(last, [1.0, 9.0], rtol=0.2)  # 500 draws in the last window


def test_step_size_heuristic_scales_with_the_target():
    rng = np.random.default_rng(3)
    steps = []
    for sd in (0.01, 1.0, 100.0):
        ldg = lambda q, s=sd: (-0.5 * q.dot(q) / s**2, -q / s**2)  # noqa: E731
        q = np.full(4, sd)
        steps.append(find_reasonable_step_size(rng, ldg, Metric.identity(4), HMCState(q, *ldg(q))))
    assert steps[0] < 0.1 < steps[1] < 10 < steps[2]
    assert steps[2] / steps[0] == pytest.approx(1e4, rel=3)


def test_step_size_heuristic_refuses_an_improper_flat_target():
    flat = lambda q: (0.0, np.zeros_like(q))  # noqa: E731
    q = np.zeros(2)
    with pytest.raises(ValueError, match="improper"):
        find_reasonable_step_size(np.random.default_rng(0), flat, Metric.identity(2), HMCState(q, *flat(q)))
