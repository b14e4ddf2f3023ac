"""NUTS efficiency on the 100-d standard normal (issue 11): the gradient-scaled diagonal
metric and the ESS per gradient against NumPyro's figure."""

import numpy as np
import pytest

from dcgraph.infer import NUTS, Target, ess_bulk, sample, warmup_windows
from dcgraph.infer.adaptation import (
    EARLY_WINDOWS,
    STAN_WINDOWS,
    covariance_adapt_init,
    covariance_adapt_update,
    gradient_scaled_variance,
    welford_init,
    welford_update,
)


def std_normal(q):
    return -0.5 * q.dot(q), -q


def test_gradient_scaled_variance_is_exact_on_any_diagonal_gaussian_sample():
    rng = np.random.default_rng(0)
    sd = np.array([0.01, 1.0, 30.0])
    xs, gs = welford_init(3, False), welford_init(3, False)
    for _ in range(40):  # few, far from normal-looking draws: the estimate is exact anyway
        x = rng.standard_t(3, size=3) * sd + 5.0
        xs, gs = welford_update(xs, x), welford_update(gs, -(x - 5.0) / sd**2)
    np.testing.assert_allclose(gradient_scaled_variance(xs, gs, regularize=False), sd**2, rtol=1e-10)
    n = 40
    np.testing.assert_allclose(gradient_scaled_variance(xs, gs), n / (n + 5) * sd**2 + 1e-3 * 5 / (n + 5), rtol=1e-10)


def test_gradient_scaled_variance_falls_back_to_the_variance_where_the_gradient_is_constant():
    xs, gs = welford_init(2, False), welford_init(2, False)
    for x in ([0.0, 1.0], [2.0, 3.0], [4.0, 8.0]):
        xs, gs = welford_update(xs, np.array(x)), welford_update(gs, np.array([-1.0, -x[1]]))  # exponential tail in x[0]
    np.testing.assert_allclose(gradient_scaled_variance(xs, gs, regularize=False), [4.0, 1.0])


def test_windows_with_gradients_close_at_stans_ends():
    state = covariance_adapt_init(2, 1000, dense=False, use_gradients=True)
    rng = np.random.default_rng(2)
    ends = []
    for i in range(1000):
        x = rng.standard_normal(2) * [1.0, 3.0]
        state, cov = covariance_adapt_update(state, x, -x / np.array([1.0, 9.0]))
        if cov is not None:
            ends.append(i + 1)
            last = cov
    assert ends == [100, 150, 250, 450, 950]
    np.testing.assert_allclose(last, 500 / 505 * np.array([1.0, 9.0]) + 1e-3 * 5 / 505, rtol=1e-10)
    with pytest.raises(ValueError, match="diagonal metrics only"):
        covariance_adapt_init(2, 100, dense=True, use_gradients=True)
    with pytest.raises(ValueError, match="metric_estimate must be 'gradient' or 'variance'"):
        NUTS(metric_estimate="fisher")


def test_adapted_metric_on_100d_normal_is_the_identity_with_gradients_not_with_variances():
    # Stan's variance estimate from the last window's ~500 autocorrelated draws is off by
    # 20-35% in its worst coordinates; the gradient-scaled one is exact up to regularisation.
    target = Target(logdensity_and_grad=std_normal, dim=100)
    kw = dict(draws=20, warmup=1000, chains=1, seed=4, parallel=False)
    grad = sample(target, NUTS(), **kw).tuned[0].metric.inverse_mass
    var = sample(target, NUTS(metric_estimate="variance"), **kw).tuned[0].metric.inverse_mass
    np.testing.assert_allclose(grad, 500 / 505 + 1e-3 * 5 / 505, rtol=1e-9)
    assert np.max(np.abs(var - 1)) > 0.15


def ess_per_gradient(metric_estimate, seeds, draws=1000, warmup=1000, chains=2):
    target = Target(logdensity_and_grad=std_normal, dim=100)
    out = []
    for seed in seeds:
        r = sample(target, NUTS(metric_estimate=metric_estimate), draws=draws, warmup=warmup, chains=chains,
                   seed=seed, parallel=False)
        out.append(np.min(ess_bulk(r.draws)) / r.n_grad_evals)
    return np.array(out)


def test_ess_per_gradient_small():
    # 2 chains x (500 + 500), seeds 0-3: 0.129, 0.095, 0.095, 0.169 (mean 0.122) with gradients;
    # Stan's variance estimate: 0.094, 0.076, 0.110, 0.138 (mean 0.105).
    assert ess_per_gradient("gradient", range(4), draws=500, warmup=500).mean() > 0.115


@pytest.mark.slow
def test_ess_per_gradient_reaches_numpyro():
    # Issue 11: NumPyro 0.22 reached 0.141 bulk ESS per gradient in one run (seed 0, 2 chains x
    # (1000 + 1000)); over seeds 0-7 its mean is 0.104 (0.054-0.148).  Measured here, seeds 0-7:
    # mean 0.147 with gradients, 0.107 with Stan's variance estimate.
    assert ess_per_gradient("gradient", range(8)).mean() >= 0.141


def test_step_size_jitter_spreads_the_step_after_warm_up_only():
    target = Target(logdensity_and_grad=std_normal, dim=5)
    kw = dict(draws=400, warmup=200, chains=1, seed=6, parallel=False, save_warmup=True)
    plain = sample(target, NUTS(), **kw)
    jittered = sample(target, NUTS(step_size_jitter=0.5), **kw)
    eps = plain.tuned[0].step_size
    assert np.all(plain.stats["step_size"] == eps)
    np.testing.assert_array_equal(jittered.warmup_stats["step_size"], plain.warmup_stats["step_size"])
    steps = jittered.stats["step_size"][0] / jittered.tuned[0].step_size
    assert 0.5 <= steps.min() < 0.6 and 1.4 < steps.max() <= 1.5
    x = jittered.draws[0]
    assert np.all(np.abs(x.mean(axis=0)) < 0.25) and np.all(np.abs(x.var(axis=0) - 1) < 0.3)
    with pytest.raises(ValueError, match=r"step_size_jitter must lie in \[0, 1\)"):
        NUTS(step_size_jitter=1.0)


def test_adapt_windows_schedule_the_metric_updates():
    target = Target(logdensity_and_grad=std_normal, dim=3)
    state = NUTS().init(target, np.ones(3))
    rng = np.random.default_rng(0)
    early = NUTS(adapt_windows=EARLY_WINDOWS).start_warmup(rng, target, state, 1000)
    assert early.covariance.windows == ((10, 25), (25, 55), (55, 115), (115, 235), (235, 900))
    assert NUTS().start_warmup(rng, target, state, 1000).covariance.windows == warmup_windows(1000)
    assert STAN_WINDOWS == (75, 25, 50)
    for bad in ((10, 0, 50), (-1, 15, 50), (10, 15), "early"):
        with pytest.raises(ValueError, match="adaptation windows"):
            NUTS(adapt_windows=bad)


def test_early_windows_cut_the_unit_metric_warm_up_on_a_badly_scaled_gaussian():
    # Scales 0.01-100: with the unit metric every transition runs to the maximum tree depth;
    # the first metric estimate at iteration 25 instead of 100 saves most of the warm-up
    # (seeds 0-2, depth 7, 300 warm-up: 11.8-12.0k gradients with Stan's windows, 3.9-4.2k).
    sd = np.logspace(-2, 2, 20)
    target = Target(logdensity_and_grad=lambda q: (-0.5 * np.sum((q / sd) ** 2), -q / sd**2), dim=20)
    kw = dict(draws=200, warmup=300, chains=1, seed=0, parallel=False, save_warmup=True)
    runs = {w: sample(target, NUTS(adapt_windows=w, max_tree_depth=7), **kw)
            for w in (STAN_WINDOWS, EARLY_WINDOWS)}
    warm = {w: r.warmup_stats["n_leapfrog"].sum() for w, r in runs.items()}
    assert warm[EARLY_WINDOWS] < 0.4 * warm[STAN_WINDOWS], warm
    x = runs[EARLY_WINDOWS].draws[0]
    assert np.all(np.abs(np.std(x, axis=0) / sd - 1) < 0.35)
