"""Ordered and CorrCholesky bijectors, and the Jacobians / log-Jacobian gradients of every
bijector, against finite differences and numerical determinants."""
import numpy as np
import pytest

from dcgraph.dist import bijectors as bj
from dcgraph.dist.bijectors_matrix import (CorrCholesky, Ordered, forward_vjp,
                                           grad_log_abs_det_jacobian, jacobian)

EPS = 1e-6


def numerical_jacobian(f, y):
    y = np.asarray(y, dtype=float)
    cols = []
    for m in range(y.size):
        e = np.zeros(y.size)
        e[m] = EPS
        hi = np.asarray(f((y.ravel() + e).reshape(y.shape)), dtype=float).ravel()
        lo = np.asarray(f((y.ravel() - e).reshape(y.shape)), dtype=float).ravel()
        cols.append((hi - lo) / (2 * EPS))
    return np.stack(cols, axis=1)


# (bijector, unconstrained size, chart: constrained value -> the coordinates of the Jacobian)
CASES = {
    "identity": (bj.Identity(event_dim=1), 3, lambda x: x),
    "lower": (bj.LowerBound(1.5), 3, lambda x: x),
    "exp": (bj.Exp(), 2, lambda x: x),
    "upper": (bj.UpperBound(-2.0), 3, lambda x: x),
    "interval": (bj.LogitAffine(-1.0, 4.0), 3, lambda x: x),
    "simplex": (bj.StickBreaking(), 4, lambda x: x[:-1]),
    "cov": (bj.CholeskyPD(), 6, lambda x: x[np.tril_indices(3)]),
    "ordered": (Ordered(), 4, lambda x: x),
    "corr_cholesky": (CorrCholesky(), 6, lambda x: x[np.tril_indices(4, -1)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_jacobian_matches_finite_differences(name):
    b, m, _ = CASES[name]
    y = np.random.default_rng(3).normal(scale=0.7, size=m)
    np.testing.assert_allclose(jacobian(b, y), numerical_jacobian(b.forward, y), atol=1e-7)
    g = np.random.default_rng(4).normal(size=np.shape(b.forward(y)))
    np.testing.assert_allclose(forward_vjp(b, y, g), numerical_jacobian(b.forward, y).T @ g.ravel(),
                               atol=1e-7)


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_jacobian_is_numerical_log_determinant(name):
    b, m, chart = CASES[name]
    y = np.random.default_rng(5).normal(scale=0.7, size=m)
    J = numerical_jacobian(lambda v: chart(b.forward(v)), y)
    assert J.shape == (m, m)
    _, logdet = np.linalg.slogdet(J)
    assert float(np.sum(b.log_abs_det_jacobian(y))) == pytest.approx(logdet, abs=1e-7)


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_jacobian_gradient_matches_finite_differences(name):
    b, m, _ = CASES[name]
    y = np.random.default_rng(6).normal(scale=0.7, size=m)
    num = numerical_jacobian(lambda v: np.sum(b.log_abs_det_jacobian(v)), y).ravel()
    np.testing.assert_allclose(grad_log_abs_det_jacobian(b, y), num, atol=1e-7)


def test_ordered_round_trip_and_order():
    y = np.array([0.3, -1.0, 2.0, 0.1])
    x = Ordered().forward(y)
    assert np.all(np.diff(x) > 0)
    np.testing.assert_allclose(Ordered().inverse(x), y, atol=1e-12)
    assert Ordered().log_abs_det_jacobian(y) == pytest.approx(1.1)


def test_corr_cholesky_gives_a_correlation_matrix():
    y = np.random.default_rng(7).normal(size=10)
    L = CorrCholesky().forward(y)
    C = L @ L.T
    np.testing.assert_allclose(np.diag(C), 1.0, atol=1e-12)
    assert np.all(np.linalg.eigvalsh(C) > 0)
    assert np.allclose(L, np.tril(L)) and np.all(np.diag(L) > 0)
    np.testing.assert_allclose(CorrCholesky().inverse(L), y, atol=1e-10)
    np.testing.assert_allclose(CorrCholesky().forward(np.zeros(3)), np.eye(3))


def test_corr_cholesky_rejects_a_bad_length():
    with pytest.raises(ValueError, match="K\\*\\(K-1\\)/2"):
        CorrCholesky().forward(np.zeros(4))


def test_unknown_bijector_is_an_error():
    class Odd(bj.Identity):
        pass
    with pytest.raises(TypeError, match="no derivatives known"):
        jacobian(Odd(), np.zeros(2))
