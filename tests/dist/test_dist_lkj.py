"""LKJCholesky: log density against NumPyro and an independent C-vine closed form, the K = 2
density integrating to one, gradients against finite differences, the bijector's log-Jacobian
against a numerical determinant, and sampled correlations against their Beta marginals."""
import numpy as np
import pytest
from scipy import integrate, stats

import dcgraph.dist as D
from dcgraph.dist.bijectors_matrix import CorrCholesky, grad_log_abs_det_jacobian


def cvine_logpdf(L, eta):
    """Independent form: partial correlations ``z_ji`` of column ``i`` are ``2 Beta(a_i, a_i) - 1``
    with ``a_i = eta + (K - 2 - i) / 2``; ``L_ji = z_ji sqrt(1 - sum_{k<i} L_jk^2)``."""
    K = L.shape[0]
    lp = 0.0
    for j in range(1, K):
        left = 1.0
        for i in range(j):
            a = eta + (K - 2 - i) / 2
            z = L[j, i] / np.sqrt(left)
            lp += stats.beta(a, a).logpdf((z + 1) / 2) - np.log(2.0)   # density of z
            lp -= 0.5 * np.log(left)                                    # dz/dL_ji
            left -= L[j, i] ** 2
    return lp


def random_factor(K, seed):
    return CorrCholesky().forward(np.random.default_rng(seed).normal(size=K * (K - 1) // 2))


@pytest.mark.parametrize("K", [2, 3, 5])
@pytest.mark.parametrize("eta", [0.5, 1.0, 3.2])
def test_logpdf_equals_the_cvine_closed_form(K, eta):
    L = random_factor(K, K)
    assert D.LKJCholesky(K, eta).logpdf(L) == pytest.approx(cvine_logpdf(L, eta), rel=1e-12,
                                                              abs=1e-12)


def test_logpdf_equals_numpyro():
    jax = pytest.importorskip("jax")
    numpyro_dist = pytest.importorskip("numpyro.distributions")
    for K, eta in ((3, 0.7), (4, 2.5)):
        Ls = np.stack([random_factor(K, s) for s in range(4)])
        with jax.enable_x64(True):
            want = np.asarray(numpyro_dist.LKJCholesky(K, eta).log_prob(jax.numpy.asarray(Ls)))
        np.testing.assert_allclose(D.LKJCholesky(K, eta).logpdf_elementwise(Ls), want,
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("eta", [0.6, 1.0, 4.0])
def test_two_by_two_density_integrates_to_one(eta):
    d = D.LKJCholesky(2, eta)

    def density(r):
        return np.exp(d.logpdf(np.array([[1.0, 0.0], [r, np.sqrt(1 - r * r)]])))

    total, _ = integrate.quad(density, -1, 1)
    assert total == pytest.approx(1.0, abs=1e-7)


def test_gradients_against_finite_differences():
    K, eta, eps = 4, 1.7, 1e-6
    L = random_factor(K, 11)
    g = D.LKJCholesky(K, eta).grad_logpdf(L)
    assert g["x"].shape == (K, K)
    # "x": the partials of the density's expression in each entry (only the diagonal appears)
    for i in range(K):
        for j in range(i + 1):
            e = np.zeros((K, K))
            e[i, j] = eps
            fd = (D.LKJCholesky(K, eta)._logpdf(L + e) - D.LKJCholesky(K, eta)._logpdf(L - e)) / (2 * eps)
            assert g["x"][i, j] == pytest.approx(fd, abs=1e-6)
    fd = (D.LKJCholesky(K, eta + eps).logpdf(L) - D.LKJCholesky(K, eta - eps).logpdf(L)) / (2 * eps)
    assert g["eta"] == pytest.approx(fd, rel=1e-6)


def test_unconstrained_density_and_log_jacobian():
    """On the unconstrained chart: logpdf(forward(y)) + log|J| with the Jacobian's determinant
    computed numerically, and its gradient by finite differences."""
    K, eta, eps = 3, 2.0, 1e-6
    d = D.LKJCholesky(K, eta)
    b = d.bijector
    rows, cols = np.tril_indices(K, -1)
    y = np.random.default_rng(2).normal(scale=0.8, size=3)

    def chart(v):
        return b.forward(v)[rows, cols]

    J = np.stack([(chart(y + eps * e) - chart(y - eps * e)) / (2 * eps) for e in np.eye(3)], 1)
    assert d.log_abs_det_jacobian(y) == pytest.approx(np.linalg.slogdet(J)[1], abs=1e-7)
    fd = [(np.sum(b.log_abs_det_jacobian(y + eps * e)) - np.sum(b.log_abs_det_jacobian(y - eps * e)))
          / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(grad_log_abs_det_jacobian(b, y), fd, atol=1e-7)
    assert d.logpdf_unconstrained(y) == pytest.approx(
        d.logpdf(b.forward(y)) + np.linalg.slogdet(J)[1], abs=1e-7)


def test_support_and_validation():
    d = D.LKJCholesky(3, 1.0)
    L = random_factor(3, 1)
    assert d.support.contains(L)
    assert not d.support.contains(L.T)                       # not lower triangular
    assert not d.support.contains(2 * L)                     # rows not of unit length
    assert d.logpdf(L.T) == -np.inf
    with pytest.raises(ValueError, match="'dim' must be an integer >= 2"):
        D.LKJCholesky(1, 1.0)
    with pytest.raises(ValueError, match="LKJCholesky.*eta"):
        D.LKJCholesky(3, -1.0)
    with pytest.raises(NotImplementedError, match="no closed form"):
        d.mean
    assert "LKJCholesky" in D.LOGPDF_FAMILIES


def test_sampled_correlations_have_their_beta_marginals():
    """Each off-diagonal entry of ``L L^T`` is ``2 Beta(b, b) - 1`` with ``b = eta - 1 + K / 2``."""
    K, eta, n = 4, 1.5, 20000
    Ls = D.LKJCholesky(K, eta).sample(np.random.default_rng(7), n)
    assert Ls.shape == (n, K, K)
    assert np.all(D.LKJCholesky(K, eta).support.contains(Ls))
    omega = Ls @ np.swapaxes(Ls, -1, -2)
    np.testing.assert_allclose(np.diagonal(omega, axis1=1, axis2=2), 1.0, atol=1e-12)
    b = eta - 1 + K / 2
    var = 1.0 / (2 * b + 1)
    for i, j in ((1, 0), (3, 0), (3, 2)):
        r = omega[:, i, j]
        assert abs(r.mean()) < 4 * np.sqrt(var / n)
        # Var of the sample variance ~ (mu4 - var^2) / n; mu4 of 2 Beta(b, b) - 1 = 3 / ((2b+1)(2b+3))
        mu4 = 3.0 / ((2 * b + 1) * (2 * b + 3))
        assert abs(r.var() - var) < 4 * np.sqrt((mu4 - var ** 2) / n)


def test_bijector_is_stable_where_tanh_saturates():
    """``log(1 - tanh(y)^2) = 2 (log 2 - |y| - log1p(exp(-2|y|)))``: finite for large ``|y|``,
    where ``1 - tanh(y)^2`` rounds to 0; the Jacobian stays finite too."""
    y = np.array([30.0, -45.0, 25.0])                 # K = 3: entries (1,0), (2,0), (2,1)

    def log1mz2(v):
        return 2 * (np.log(2) - abs(v) - np.log1p(np.exp(-2 * abs(v))))

    want = log1mz2(30.0) + log1mz2(-45.0) + log1mz2(25.0) + 0.5 * log1mz2(-45.0)
    b = CorrCholesky()
    with np.errstate(all="raise"):
        assert b.log_abs_det_jacobian(y) == pytest.approx(want, rel=1e-12)
        assert np.all(np.isfinite(grad_log_abs_det_jacobian(b, y)))
        from dcgraph.dist.bijectors_matrix import jacobian
        assert np.all(np.isfinite(jacobian(b, y)))
