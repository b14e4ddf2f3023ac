"""NUTS against known answers: 100-d normal, correlated Gaussian, Neal's funnel, tree mechanics."""

import math
import warnings

import numpy as np
import pytest
from scipy.special import digamma, polygamma

from dcgraph.infer import (
    NUTS,
    DivergenceWarning,
    HMCState,
    Metric,
    Target,
    ess_bulk,
    leapfrog,
    mcse_mean,
    nuts_step,
    sample,
    summary,
)


def std_normal(q):
    return -0.5 * q.dot(q), -q


def correlated_gaussian(rho):
    precision = np.linalg.inv(np.array([[1.0, rho], [rho, 1.0]]))

    def ldg(q):
        g = -precision.dot(q)
        return 0.5 * q.dot(g), g

    return ldg


def funnel(q):
    """Neal's funnel: v ~ N(0, 3^2), x_i | v ~ N(0, e^v), 9 x's."""
    v, x = q[0], q[1:]
    ev = math.exp(-v)
    xx = x.dot(x)
    lp = -v * v / 18 - 0.5 * ev * xx - 0.5 * x.shape[0] * v
    g = np.empty_like(q)
    g[0] = -v / 9 + 0.5 * ev * xx - 0.5 * x.shape[0]
    g[1:] = -ev * x
    return lp, g


def check_standard_normal(result, var_tol):
    x = result.draws
    z = np.abs(x.mean(axis=(0, 1))) / mcse_mean(x)
    assert z.max() < 4, f"a mean is {z.max():.2f} MCSE from 0"
    var = x.reshape(-1, x.shape[2]).var(axis=0)
    assert abs(var.mean() - 1) < 0.03
    assert np.all(np.abs(var - 1) < var_tol), (var.min(), var.max())
    assert result.divergences == 0


def test_100d_standard_normal_small():
    # Over 20 seeds at this size: max |mean|/MCSE 2.3-3.7, variances 0.79-1.21, mean variance 0.99-1.01.
    target = Target(logdensity_and_grad=std_normal, dim=100)
    result = sample(target, NUTS(), draws=500, warmup=500, chains=2, seed=0)
    check_standard_normal(result, var_tol=0.35)


@pytest.mark.slow
def test_100d_standard_normal_long():
    target = Target(logdensity_and_grad=std_normal, dim=100)
    result = sample(target, NUTS(), draws=2000, warmup=1000, chains=4, seed=1)
    check_standard_normal(result, var_tol=0.15)
    x2 = result.draws**2
    z = np.abs(x2.mean(axis=(0, 1)) - 1) / mcse_mean(x2)
    assert z.max() < 4


def test_dense_adaptation_beats_diagonal_on_correlated_gaussian():
    # ESS per gradient measured over 3 seeds: diagonal ~0.010, dense ~0.19-0.27.
    target = Target(logdensity_and_grad=correlated_gaussian(0.99), dim=2)
    per_grad = {}
    for metric in ("diag", "dense"):
        result = sample(target, NUTS(metric=metric), draws=1000, warmup=1000, chains=4, seed=2)
        per_grad[metric] = ess_bulk(result.draws).min() / result.n_grad_evals
        corr = np.corrcoef(result.draws.reshape(-1, 2).T)
        assert corr[0, 1] == pytest.approx(0.99, abs=0.005)
    assert per_grad["dense"] > 5 * per_grad["diag"]
    tuned = result.tuned[0].metric.inverse_mass  # dense run: M^{-1} estimates the covariance
    assert tuned.shape == (2, 2)
    assert tuned[0, 1] / math.sqrt(tuned[0, 0] * tuned[1, 1]) == pytest.approx(0.99, abs=0.01)


def test_funnel_divergences_are_reported():
    # The neck of the funnel defeats any single step size.  With target_accept=0.7 and
    # 4 x 500 draws every one of 16 seeds gave divergences (2-47); with the default 0.8
    # and 4 x 1000, 14 of 16 did.
    target = Target(logdensity_and_grad=funnel, dim=10)
    with pytest.warns(DivergenceWarning, match="diverged"):
        result = sample(target, NUTS(target_accept=0.7), draws=500, warmup=500, chains=4, seed=0, parallel=True)
    flags = result.stats["divergent"]
    assert flags.dtype == bool and flags.shape == (4, 500)
    assert result.divergences == int(flags.sum()) > 0
    s = summary(result)
    assert s.divergences == result.divergences
    assert f"! {result.divergences} transitions after warm-up diverged" in str(s)


def test_divergent_transition_is_flagged_and_rejected():
    # A step size of 50 on a standard normal blows the energy up on the first leapfrog step.
    q = np.array([3.0, -2.0])
    state = HMCState(q, *std_normal(q))
    new, info = nuts_step(np.random.default_rng(0), std_normal, state, 50.0, Metric.identity(2))
    assert info.divergent and info.tree_depth == 0 and info.n_leapfrog == 1
    np.testing.assert_array_equal(new.position, q)


@pytest.mark.parametrize("seed", range(5))
def test_tree_depth_and_leapfrog_counts_are_consistent(seed):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(3)
    state = HMCState(q, *std_normal(q))
    for _ in range(20):
        state, info = nuts_step(rng, std_normal, state, 0.2, Metric.identity(3), max_tree_depth=10)
        d = info.tree_depth
        assert 2**d - 1 <= info.n_leapfrog <= 2 ** (d + 1) - 1
        assert 0 <= info.accept_prob <= 1


def test_max_tree_depth_caps_the_trajectory():
    q = np.ones(2)
    state = HMCState(q, *std_normal(q))
    rng = np.random.default_rng(1)
    for _ in range(10):  # a tiny step never U-turns within 2^3 - 1 steps
        state, info = nuts_step(rng, std_normal, state, 1e-3, Metric.identity(2), max_tree_depth=3)
        assert info.tree_depth == 3 and info.n_leapfrog == 7


def test_nuts_with_fixed_large_step_is_still_exact_on_log_gamma():
    # x = log y, y ~ Gamma(3): E[x] = digamma(3), Var[x] = trigamma(3).  A fixed step size
    # far from optimal must not bias NUTS (the multinomial choice keeps detailed balance).
    def log_gamma(q):
        return 3.0 * q[0] - math.exp(q[0]), np.array([3.0 - math.exp(q[0])])

    # Over 20 seeds: (mean - E[x]) / MCSE has mean 0.1 and sd 0.99; variance ratio 0.94-1.08.
    kernel = NUTS(step_size=0.8, metric="unit")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DivergenceWarning)  # the steep right tail rarely diverges
        result = sample(
            Target(logdensity_and_grad=log_gamma, dim=1), kernel, draws=3000, warmup=0, chains=2, seed=4
        )
    x = result.draws[:, :, 0]
    assert abs(x.mean() - digamma(3.0)) < 4 * mcse_mean(x)
    assert x.var() == pytest.approx(float(polygamma(1, 3.0)), rel=0.15)
    assert np.all(result.stats["step_size"] == 0.8)


def test_leapfrog_is_reversible_and_nearly_conserves_energy():
    metric = Metric.from_inverse_mass(np.array([[2.0, 0.3], [0.3, 0.5]]))
    ldg = correlated_gaussian(0.5)
    q0, p0 = np.array([0.5, -1.0]), np.array([0.3, 0.8])
    lp0, g0 = ldg(q0)
    q1, p1, lp1, g1 = leapfrog(ldg, metric, q0, p0, g0, 0.05, 40)
    h0 = metric.kinetic_energy(p0) - lp0
    h1 = metric.kinetic_energy(p1) - lp1
    assert abs(h1 - h0) < 1e-2
    q2, p2, _, _ = leapfrog(ldg, metric, q1, -p1, g1, 0.05, 40)
    np.testing.assert_allclose(q2, q0, atol=1e-12)
    np.testing.assert_allclose(-p2, p0, atol=1e-12)


def test_dense_metric_momenta_have_covariance_M():
    inv_mass = np.array([[2.0, 0.6], [0.6, 0.5]])
    metric = Metric.from_inverse_mass(inv_mass)
    rng = np.random.default_rng(0)
    p = np.array([metric.sample_momentum(rng) for _ in range(20000)])
    np.testing.assert_allclose(np.cov(p.T), np.linalg.inv(inv_mass), rtol=0.05, atol=0.03)


def test_bad_configuration_is_rejected_with_a_clear_message():
    with pytest.raises(ValueError, match="metric"):
        NUTS(metric="full")
    with pytest.raises(ValueError, match="target_accept"):
        NUTS(target_accept=1.5)
    with pytest.raises(ValueError, match="positive definite"):
        Metric.from_inverse_mass(np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="3 dimensions"):
        sample(Target(logdensity_and_grad=std_normal), NUTS(inverse_mass=np.ones(3)), init=np.zeros(2), draws=5, warmup=5, chains=1)


def test_no_warnings_on_a_well_behaved_target():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = sample(Target(logdensity_and_grad=std_normal), NUTS(), init=np.zeros(5), draws=200, warmup=200, chains=2, seed=3)
    assert result.divergences == 0
