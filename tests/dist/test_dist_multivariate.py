"""Dirichlet, MvNormal, Wishart, Multinomial: logpdf vs scipy, batching, support."""
import numpy as np
import pytest
from scipy import stats

import dcgraph.dist as D

TOL = dict(rtol=1e-10, atol=1e-10)
RNG = np.random.default_rng(2024)


def random_spd(p, rng=RNG, n=None):
    shape = (p, p) if n is None else (n, p, p)
    a = rng.standard_normal(shape)
    return a @ np.swapaxes(a, -1, -2) + p * np.eye(p)


def test_dirichlet_vs_scipy():
    alpha = np.array([[0.5, 1.0, 2.0], [3.0, 0.2, 4.0]])
    d = D.Dirichlet(alpha)
    x = stats.dirichlet([1.0, 1.0, 1.0]).rvs(4, random_state=1)[:, None, :]  # (4, 1, 3)
    got = d.logpdf_elementwise(x)
    assert got.shape == (4, 2) and d.event_shape == (3,) and d.batch_shape == (2,)
    want = np.array([[stats.dirichlet(a).logpdf(xi[0]) for a in alpha] for xi in x])
    np.testing.assert_allclose(got, want, **TOL)
    assert d.logpdf(x) == pytest.approx(want.sum(), rel=1e-12)
    assert np.all(d.logpdf_elementwise([[0.5, 0.6, 0.1], [-0.1, 0.6, 0.5]]) == -np.inf)
    with pytest.raises(ValueError, match="trailing shape"):
        d.logpdf([0.5, 0.5])


@pytest.mark.parametrize("key", ["cov", "precision"])
def test_mvnormal_vs_scipy(key):
    mean = np.array([[0.0, 1.0, -1.0], [2.0, 0.5, 0.0]])
    mats = random_spd(3, n=2)
    d = D.MvNormal(mean, **{key: mats})
    x = RNG.standard_normal((5, 1, 3))
    got = d.logpdf_elementwise(x)
    covs = mats if key == "cov" else np.linalg.inv(mats)
    want = np.array([[stats.multivariate_normal(mean[i], covs[i]).logpdf(xi[0]) for i in range(2)] for xi in x])
    np.testing.assert_allclose(got, want, **TOL)
    assert d.mean.shape == (2, 3) and d.var.shape == (2, 3)
    np.testing.assert_allclose(d.var, np.diagonal(covs, axis1=-2, axis2=-1), rtol=1e-12)


def test_mvnormal_broadcasts_mean_against_cov_batch():
    d = D.MvNormal([0.0, 1.0], random_spd(2, n=3))
    assert d.batch_shape == (3,) and d.mean.shape == (3, 2)
    assert d.param_value("mean").shape == (2,)
    assert d.grad_logpdf([0.3, 0.2])["mean"].shape == (2,)
    assert d.logpdf_elementwise([np.inf, 0.0]).shape == (3,) and np.all(d.logpdf_elementwise([np.inf, 0.0]) == -np.inf)


def test_wishart_vs_scipy():
    s = random_spd(3)
    for df in (2.5, 3.0, 7.0):
        d = D.Wishart(df, s)
        x = stats.wishart(df + 1, s).rvs(4, random_state=3)
        want = stats.wishart(df, s).logpdf(np.moveaxis(x, 0, -1))
        np.testing.assert_allclose(d.logpdf_elementwise(x), want, **TOL)
    batch = D.Wishart(np.array([4.0, 6.0]), s)
    x = stats.wishart(5, s).rvs(random_state=4)
    np.testing.assert_allclose(batch.logpdf_elementwise(x),
                               [stats.wishart(4.0, s).logpdf(x), stats.wishart(6.0, s).logpdf(x)], **TOL)
    bad = np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert D.Wishart(4.0, s).logpdf(bad) == -np.inf


def test_multinomial_vs_scipy():
    p = np.array([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8]])
    n = np.array([6, 6])
    d = D.Multinomial(n, p)
    x = np.array([[[1, 2, 3]], [[0, 0, 6]], [[6, 0, 0]]])  # (3, 1, 3)
    want = np.array([[stats.multinomial(6, row).logpmf(xi[0]) for row in p] for xi in x])
    np.testing.assert_allclose(d.logpmf_elementwise(x), want, **TOL)
    assert np.all(d.logpmf_elementwise([[[1, 2, 2]], [[1.5, 1.5, 3]], [[-1, 4, 3]]]) == -np.inf)
    with pytest.raises(TypeError, match="discrete"):
        d.to_unconstrained(x)


def test_matrix_distributions_reject_wrong_event_shape():
    with pytest.raises(ValueError, match="Wishart: value must have trailing shape"):
        D.Wishart(3.0, np.eye(2)).logpdf(np.eye(3))
    with pytest.raises(ValueError, match="MvNormal: value must have trailing shape"):
        D.MvNormal([0.0, 0.0], np.eye(2)).logpdf([1.0, 2.0, 3.0])
