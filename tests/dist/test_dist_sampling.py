"""Sampling: moments within 4 standard errors over 20,000 draws, and the empirical CDF at
five quantiles within 4 standard errors (the check used for heavy tails)."""
import numpy as np
import pytest
from scipy import stats

import dcgraph.dist as D
from dist_cases import UNIVARIATE, ids

N = 20_000
Q = np.array([0.05, 0.25, 0.5, 0.75, 0.95])


def _ref_moments(case, batch_shape):
    ref = case.ref
    return np.broadcast_to(ref.mean(), batch_shape), np.broadcast_to(ref.var(), batch_shape)


def assert_moments(draws, mean, var):
    """``draws`` has shape (N,) + shape(mean); SEs from the true variance and the sample kurtosis."""
    n = draws.shape[0]
    m_hat, v_hat = draws.mean(0), draws.var(0, ddof=1)
    assert np.all(np.abs(m_hat - mean) <= 4 * np.sqrt(var / n)), (m_hat, mean)
    m4 = np.mean((draws - mean) ** 4, axis=0)
    se_var = np.sqrt(np.maximum(m4 - var**2, 0.0) / n)
    assert np.all(np.abs(v_hat - var) <= 4 * se_var + 1e-12), (v_hat, var)


@pytest.mark.parametrize("case", UNIVARIATE, ids=ids(UNIVARIATE))
def test_empirical_cdf_at_quantiles(case):
    d = case.make()
    draws = d.sample(np.random.default_rng(1234), N)
    assert draws.shape == (N,) + d.batch_shape
    assert np.all(d.support.contains(draws))
    points = d.ppf(Q.reshape((-1,) + (1,) * len(d.batch_shape)))
    frac = np.mean(draws[None] <= points[:, None], axis=1)
    f = np.broadcast_to(case.ref.cdf(points), frac.shape)
    assert np.all(np.abs(frac - f) <= 4 * np.sqrt(f * (1 - f) / N) + 1e-12), (frac, f)


@pytest.mark.parametrize("case", [c for c in UNIVARIATE if c.moments], ids=ids([c for c in UNIVARIATE if c.moments]))
def test_sample_moments(case):
    d = case.make()
    mean, var = _ref_moments(case, d.batch_shape)
    np.testing.assert_allclose(d.mean, mean, rtol=1e-8)
    np.testing.assert_allclose(d.var, var, rtol=1e-7)
    draws = d.sample(np.random.default_rng(99), N).astype(float)
    assert_moments(draws, d.mean, d.var)


def test_infinite_and_undefined_moments():
    assert np.all(np.isnan(D.Cauchy(0.0, 1.0).mean))
    t = D.StudentT([0.5, 1.5, 3.0])
    assert np.isnan(t.mean[0]) and t.mean[1] == 0.0
    assert np.isnan(t.var[0]) and t.var[1] == np.inf and t.var[2] == pytest.approx(3.0)
    assert D.Pareto(0.5, 1.0).mean == np.inf and D.InverseGamma(1.5, 1.0).var == np.inf
    assert np.isnan(D.Truncated(D.Cauchy(0.0, 1.0), 0.0).mean)
    assert np.isfinite(D.Truncated(D.Cauchy(0.0, 1.0), -2.0, 5.0).mean)


def test_truncated_far_tail_sampling_stays_in_bounds():
    d = D.Truncated(D.Normal(0.0, 1.0), 10.0, 10.5)
    x = d.sample(np.random.default_rng(0), N)
    assert np.all((x >= 10.0) & (x <= 10.5))
    ref = stats.truncnorm(10.0, 10.5)
    assert abs(x.mean() - ref.mean()) <= 4 * ref.std() / np.sqrt(N)


def test_dirichlet_moments():
    d = D.Dirichlet([[0.5, 1.0, 2.0], [3.0, 0.2, 4.0]])
    draws = d.sample(np.random.default_rng(5), N)
    assert draws.shape == (N, 2, 3) and np.all(d.support.contains(draws))
    for i, a in enumerate(d.alpha):
        np.testing.assert_allclose(d.mean[i], stats.dirichlet(a).mean(), rtol=1e-12)
        np.testing.assert_allclose(d.var[i], stats.dirichlet(a).var(), rtol=1e-12)
    assert_moments(draws, d.mean, d.var)
    one = D.Dirichlet([0.5, 1.0, 2.0]).sample(np.random.default_rng(5), N)
    assert_moments(one, D.Dirichlet([0.5, 1.0, 2.0]).mean, D.Dirichlet([0.5, 1.0, 2.0]).var)


@pytest.mark.parametrize("key", ["cov", "precision"])
def test_mvnormal_moments(key):
    m = np.array([1.0, -2.0, 0.5])
    a = np.array([[2.0, 0.3, -0.4], [0.3, 1.0, 0.2], [-0.4, 0.2, 0.5]])
    d = D.MvNormal(m, **{key: a})
    cov = a if key == "cov" else np.linalg.inv(a)
    draws = d.sample(np.random.default_rng(11), N)
    assert draws.shape == (N, 3)
    np.testing.assert_allclose(d.cov, cov, rtol=1e-12)
    assert_moments(draws, m, np.diag(cov))
    # cross-covariances via the moments of x_i + x_j
    s = draws[:, 0] + draws[:, 1]
    assert_moments(s[:, None], np.array([m[0] + m[1]]), np.array([cov[0, 0] + cov[1, 1] + 2 * cov[0, 1]]))


def test_wishart_moments():
    s = np.array([[1.0, 0.3], [0.3, 0.5]])
    d = D.Wishart(4.5, s)
    ref = stats.wishart(4.5, s)
    np.testing.assert_allclose(d.mean, ref.mean(), rtol=1e-12)
    np.testing.assert_allclose(d.var, ref.var(), rtol=1e-12)
    draws = d.sample(np.random.default_rng(3), N)
    assert draws.shape == (N, 2, 2) and np.all(d.support.contains(draws))
    assert_moments(draws, d.mean, d.var)
    batch = D.Wishart([3.0, 6.0], s).sample(np.random.default_rng(4), N)
    assert_moments(batch, D.Wishart([3.0, 6.0], s).mean, D.Wishart([3.0, 6.0], s).var)


def test_multinomial_and_categorical_moments():
    p = np.array([[0.2, 0.5, 0.3], [0.05, 0.05, 0.9]])
    m = D.Multinomial(np.array([7, 30]), p)
    draws = m.sample(np.random.default_rng(8), N)
    assert draws.dtype == np.int64 and np.all(m.support.contains(draws))
    assert_moments(draws.astype(float), m.mean, m.var)
    c = D.Categorical(p)
    cd = c.sample(np.random.default_rng(9), N)
    assert set(np.unique(cd)) <= {0, 1, 2}
    assert_moments(cd.astype(float), c.mean, c.var)
