"""Bijectors: round trips, Jacobians against finite differences, and normalisation in y-space."""
import numpy as np
import pytest
from scipy.integrate import quad

import dcgraph.dist as D
from dcgraph.dist import bijectors as B
from dist_cases import CONTINUOUS, ids

CASES = [c for c in CONTINUOUS if c.bijector]
H = 1e-6


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_round_trip_and_jacobian(case):
    d = case.make()
    y = 2.5 * np.random.default_rng(7).standard_normal((9,) + d.batch_shape)
    x = d.from_unconstrained(y)
    assert np.all(d.support.contains(x))
    np.testing.assert_allclose(d.to_unconstrained(x), y, rtol=1e-7, atol=1e-7)
    deriv = (d.from_unconstrained(y + H) - d.from_unconstrained(y - H)) / (2 * H)
    ladj = d.bijector.log_abs_det_jacobian(y)
    np.testing.assert_allclose(ladj, np.log(np.abs(deriv)), rtol=1e-6, atol=1e-6)
    assert d.log_abs_det_jacobian(y) == pytest.approx(np.sum(ladj), rel=1e-12)
    assert d.logpdf_unconstrained(y) == pytest.approx(d.logpdf(x) + np.sum(ladj), rel=1e-12)


@pytest.mark.parametrize("make", [
    lambda: D.Normal(1.0, 2.0), lambda: D.Gamma(0.7, 2.0), lambda: D.Beta(0.6, 3.0), lambda: D.Uniform(-2.0, 5.0),
    lambda: D.Pareto(3.0, 2.0), lambda: D.Truncated(D.Laplace(0.0, 1.0), high=0.5),
    lambda: D.Truncated(D.Normal(0.0, 1.0), -1.0, 2.0), lambda: D.InverseGamma(3.0, 1.0), lambda: D.HalfNormal(0.5),
], ids=["Normal", "Gamma", "Beta", "Uniform", "Pareto", "Trunc-upper", "Trunc-interval", "InvGamma", "HalfNormal"])
def test_unconstrained_density_integrates_to_one(make):
    d = make()
    total = quad(lambda y: np.exp(d.logpdf_unconstrained(y)), -np.inf, np.inf, limit=400)[0]
    assert total == pytest.approx(1.0, abs=1e-6)


def test_bijector_selection():
    assert isinstance(D.Normal(0.0, 1.0).bijector, B.Identity)
    assert isinstance(D.Gamma(1.0, 1.0).bijector, B.Exp)
    assert isinstance(D.LogNormal(0.0, 1.0).bijector, B.Exp)
    assert isinstance(D.Beta(1.0, 1.0).bijector, B.LogitAffine)
    assert isinstance(D.Pareto(1.0, 2.0).bijector, B.LowerBound)
    assert isinstance(D.Dirichlet([1.0, 1.0]).bijector, B.StickBreaking)
    assert isinstance(D.Wishart(3.0, np.eye(2)).bijector, B.CholeskyPD)
    assert isinstance(D.MvNormal([0.0], [[1.0]]).bijector, B.Identity)
    for d in (D.Poisson(1.0), D.Binomial(3, 0.5), D.Categorical([0.5, 0.5]), D.Multinomial(2, [0.5, 0.5])):
        with pytest.raises(TypeError, match="discrete"):
            d.from_unconstrained(0.0)
    with pytest.raises(ValueError, match="mix finite and infinite"):
        B.bijector_for(D.Interval([0.0, -np.inf], [1.0, 1.0]))


def _jacobian(f, y):
    """Central-difference Jacobian of f: R^n -> R^m at a single point y."""
    cols = []
    for i in range(y.size):
        e = np.zeros_like(y)
        e[i] = H
        cols.append((f(y + e) - f(y - e)) / (2 * H))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_stick_breaking(k):
    b = B.StickBreaking()
    y = np.random.default_rng(k).standard_normal((4, k - 1)) * 1.5
    x = b.forward(y)
    assert x.shape == (4, k) and np.all(D.Simplex().contains(x))
    np.testing.assert_allclose(b.inverse(x), y, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(b.forward(np.zeros(k - 1)), np.full(k, 1.0 / k), rtol=1e-12)
    for yi, ladj in zip(y, b.log_abs_det_jacobian(y)):
        jac = _jacobian(lambda v: b.forward(v)[:-1], yi)
        assert ladj == pytest.approx(np.linalg.slogdet(jac)[1], rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_cholesky_pd(p):
    b = B.CholeskyPD()
    m = p * (p + 1) // 2
    y = np.random.default_rng(p).standard_normal((3, m))
    x = b.forward(y)
    assert x.shape == (3, p, p) and np.all(D.PositiveDefinite().contains(x))
    np.testing.assert_allclose(b.inverse(x), y, rtol=1e-9, atol=1e-9)
    rows, cols = np.tril_indices(p)
    for yi, ladj in zip(y, b.log_abs_det_jacobian(y)):
        jac = _jacobian(lambda v: b.forward(v)[rows, cols], yi)
        assert ladj == pytest.approx(np.linalg.slogdet(jac)[1], rel=1e-6, abs=1e-6)
    with pytest.raises(ValueError, match="p\\*\\(p\\+1\\)/2"):
        b.forward(np.zeros(4))


def test_multivariate_distribution_bijectors():
    rng = np.random.default_rng(0)
    d = D.Dirichlet([[0.5, 2.0, 1.0], [1.0, 1.0, 1.0]])
    y = rng.standard_normal((5, 2, 2))
    x = d.from_unconstrained(y)
    np.testing.assert_allclose(d.to_unconstrained(x), y, rtol=1e-9, atol=1e-9)
    assert np.isfinite(d.logpdf_unconstrained(y))
    w = D.Wishart(3.5, np.array([[1.0, 0.2], [0.2, 2.0]]))
    y = rng.standard_normal((4, 3))
    x = w.from_unconstrained(y)
    np.testing.assert_allclose(w.to_unconstrained(x), y, rtol=1e-9, atol=1e-9)
    assert w.log_abs_det_jacobian(y) == pytest.approx(np.sum(B.CholeskyPD().log_abs_det_jacobian(y)))
    m = D.MvNormal([0.0, 1.0], np.eye(2))
    assert m.log_abs_det_jacobian(np.ones((3, 2))) == 0.0


def test_dirichlet_unconstrained_density_normalises():
    # K = 2: the stick-breaking pushforward of Dirichlet([a, b]) integrates to one on R
    d = D.Dirichlet([0.7, 2.5])
    total = quad(lambda y: np.exp(d.logpdf_unconstrained([y])), -np.inf, np.inf, limit=400)[0]
    assert total == pytest.approx(1.0, abs=1e-6)
