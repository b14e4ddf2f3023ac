"""``L = param(shape=(K, K), kind="corr_cholesky")`` with ``L |= lkj_cholesky(eta)``: the log
density against NumPyro's LKJCholesky plus a numerically computed log-Jacobian, the gradient
against finite differences, the statement's errors, and sampling against the prior's marginals."""
import numpy as np
import pytest
from scipy import stats

from dcgraph import dist as D
from dcgraph.models import ModelError, half_normal, lkj_cholesky, model, mv_normal, param

EPS = 1e-6


@model
def correlated(y, eta):
    L = param(shape=(3, 3), kind="corr_cholesky")
    s = param(shape=3, lower=0.0)
    L |= lkj_cholesky(eta)
    s |= half_normal(2.0)
    cov = (s[:, None] * L) @ (s[:, None] * L).T
    y |= mv_normal(np.zeros(3), cov)


def chart_log_jacobian(y):
    """log|det| of y -> strictly lower entries of L, by central differences."""
    b = D.LKJCholesky(3, 1.0).bijector
    rows, cols = np.tril_indices(3, -1)
    J = np.stack([(b.forward(y + EPS * e)[rows, cols] - b.forward(y - EPS * e)[rows, cols])
                  / (2 * EPS) for e in np.eye(3)], axis=1)
    return np.linalg.slogdet(J)[1]


def by_hand(theta, y, eta):
    jax = pytest.importorskip("jax")
    numpyro_dist = pytest.importorskip("numpyro.distributions")
    L = D.LKJCholesky(3, eta).bijector.forward(theta[:3])
    s = np.exp(theta[3:])
    with jax.enable_x64(True):
        lp = float(numpyro_dist.LKJCholesky(3, eta).log_prob(jax.numpy.asarray(L)))
    lp += chart_log_jacobian(theta[:3])
    lp += stats.halfnorm(scale=2.0).logpdf(s).sum() + theta[3:].sum()
    cov = (s[:, None] * L) @ (s[:, None] * L).T
    return lp + stats.multivariate_normal(np.zeros(3), cov).logpdf(y).sum()


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    corr = np.array([[1.0, 0.6, -0.3], [0.6, 1.0, 0.1], [-0.3, 0.1, 1.0]])
    return rng.multivariate_normal(np.zeros(3), corr, size=30)


def test_logdensity_equals_numpyro_plus_jacobian(data):
    rng = np.random.default_rng(1)
    for eta in (0.8, 2.0):
        bound = correlated(data, eta)
        assert bound.dim == 6
        for _ in range(3):
            theta = rng.normal(scale=0.5, size=6)
            assert bound.logdensity(theta) == pytest.approx(by_hand(theta, data, eta), abs=1e-6)


def test_gradient_against_finite_differences(data):
    bound = correlated(data, 1.5)
    for seed in (2, 3):
        theta = np.random.default_rng(seed).normal(scale=0.5, size=6)
        _, grad = bound.logdensity_and_grad(theta)
        fd = [(bound.logdensity(theta + EPS * e) - bound.logdensity(theta - EPS * e)) / (2 * EPS)
              for e in np.eye(6)]
        np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-6)


@model
def eta_as_parameter():
    L = param(shape=(2, 2), kind="corr_cholesky")
    eta = param(lower=0.0)
    eta |= half_normal(1.0)
    L |= lkj_cholesky(eta)


def test_gradient_through_eta():
    bound = eta_as_parameter()
    theta = np.array([0.4, -0.2])
    _, grad = bound.logdensity_and_grad(theta)
    fd = [(bound.logdensity(theta + EPS * e) - bound.logdensity(theta - EPS * e)) / (2 * EPS)
          for e in np.eye(2)]
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-7)


@model
def wrong_left_side(v):
    v |= lkj_cholesky(1.0)


def test_errors_name_the_statement():
    with pytest.raises(ValueError, match=r"K x K Cholesky factor"):
        wrong_left_side(np.ones(3)).logdensity(np.zeros(0))
    with pytest.raises(ValueError, match="LKJCholesky.*eta"):
        lkj_cholesky(-1.0, dim=3).dist()
    with pytest.raises(ModelError, match="give dim="):
        lkj_cholesky(2.0).dist()
    assert isinstance(lkj_cholesky(2.0, dim=3).dist(), D.LKJCholesky)


@model
def prior_only(eta):
    L = param(shape=(3, 3), kind="corr_cholesky")
    L |= lkj_cholesky(eta)


@pytest.mark.slow
def test_nuts_samples_the_prior_marginals():
    """Off-diagonal correlations of LKJ(eta) are 2 Beta(b, b) - 1, b = eta - 1 + K / 2."""
    eta = 2.0
    fit = prior_only(eta).sample(chains=2, draws=1500, seed=5, progress=False)
    L = fit["L"].reshape(-1, 3, 3)
    r = (L @ np.swapaxes(L, -1, -2))[:, 1, 0]
    b = eta - 1 + 3 / 2
    assert abs(r.mean()) < 0.06
    assert r.var() == pytest.approx(1 / (2 * b + 1), rel=0.15)
