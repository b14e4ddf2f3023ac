"""logpdf agrees with scipy.stats; support, broadcasting, summing and repr contracts."""
import numpy as np
import pytest
from scipy import stats

import dcgraph.dist as D
from dist_cases import UNIVARIATE, ids, ref_logpdf

TOL = dict(rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case", UNIVARIATE, ids=ids(UNIVARIATE))
def test_logpdf_matches_scipy(case):
    d = case.make()
    got = d.logpdf_elementwise(case.xs)
    want = np.broadcast_to(ref_logpdf(case, case.xs), got.shape)
    np.testing.assert_allclose(got, want, **TOL)
    assert got.shape == np.broadcast_shapes(case.xs.shape, d.batch_shape)
    np.testing.assert_allclose(d.logpdf(case.xs), np.sum(want), **TOL)
    if d.is_discrete:
        np.testing.assert_allclose(d.logpmf(case.xs), np.sum(want), **TOL)


@pytest.mark.parametrize("case", UNIVARIATE, ids=ids(UNIVARIATE))
def test_outside_support_is_minus_inf(case):
    d = case.make()
    for x in case.outside:
        lp = d.logpdf_elementwise(x)
        if np.isnan(x):
            assert np.all(np.isnan(lp))
        else:
            assert np.all(lp == -np.inf), (x, lp)
            assert not np.any(d.support.contains(np.broadcast_to(x, d.batch_shape)))


@pytest.mark.parametrize("case", UNIVARIATE, ids=ids(UNIVARIATE))
def test_cdf_and_quantiles_match_scipy(case):
    d = case.make()
    xs = case.xs
    np.testing.assert_allclose(d.cdf(xs), np.broadcast_to(case.ref.cdf(xs), d.cdf(xs).shape), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(d.cdf(xs) + d.sf(xs), 1.0, rtol=1e-9)
    q = np.array([0.01, 0.3, 0.5, 0.77, 0.99]).reshape(-1, 1)
    x = d.ppf(q)
    if d.is_discrete:  # smallest support point with cdf >= q
        assert np.all(d.cdf(x) >= q - 1e-12) and np.all(d.cdf(x - 1) < q)
        np.testing.assert_array_equal(d.isf(1 - q) <= x, True)
    elif isinstance(d, D.Censored):  # atoms at the bounds: cdf(ppf(q)) >= q, equality strictly inside
        assert np.all(d.cdf(x) >= q - 1e-12)
        inner = (x > d.low) & (x < d.high)
        np.testing.assert_allclose(d.cdf(x)[inner], np.broadcast_to(q, x.shape)[inner], rtol=1e-8)
        assert np.all((x >= d.low) & (x <= d.high))
    else:
        np.testing.assert_allclose(d.cdf(x), np.broadcast_to(q, x.shape), rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(d.sf(d.isf(q)), np.broadcast_to(q, x.shape), rtol=1e-8, atol=1e-12)
    assert np.all(np.isnan(d.ppf(1.5)))


def test_tail_cdfs_are_accurate():
    n = D.Normal(0.0, 1.0)
    np.testing.assert_allclose(n.logcdf(-40.0), stats.norm.logcdf(-40.0), rtol=1e-12)
    np.testing.assert_allclose(n.logsf(40.0), stats.norm.logsf(40.0), rtol=1e-12)
    np.testing.assert_allclose(D.Cauchy(0.0, 1.0).cdf(-1e8), stats.cauchy.cdf(-1e8), rtol=1e-10)
    np.testing.assert_allclose(D.Laplace(0.0, 1.0).logsf(50.0), stats.laplace.logsf(50.0), rtol=1e-12)
    np.testing.assert_allclose(D.Normal(0.0, 1.0).isf(1e-20), stats.norm.isf(1e-20), rtol=1e-12)


def test_boundary_values_match_scipy():
    # closed supports: density at the end points (finite, zero or infinite) like scipy
    for a in (0.5, 1.0, 3.0):
        np.testing.assert_allclose(D.Gamma(a, 2.0).logpdf(0.0), stats.gamma(a, scale=0.5).logpdf(0.0))
        np.testing.assert_allclose(D.Beta(a, 1.0).logpdf(0.0), stats.beta(a, 1.0).logpdf(0.0))
        np.testing.assert_allclose(D.Weibull(a, 2.0).logpdf(0.0), stats.weibull_min(a, scale=2.0).logpdf(0.0))
    assert D.Pareto(2.0, 1.0).logpdf(1.0) == pytest.approx(stats.pareto(2.0).logpdf(1.0))
    assert D.Uniform(0.0, 2.0).logpdf(2.0) == pytest.approx(-np.log(2.0))
    assert D.Bernoulli(0.0).logpmf(0) == 0.0 and D.Bernoulli(1.0).logpmf(0) == -np.inf
    assert D.Poisson(0.0).logpmf(0) == 0.0 and D.Poisson(0.0).logpmf(1) == -np.inf


def test_flat_is_improper():
    f = D.Flat()
    assert f.logpdf(np.array([-1e6, 0.0, 3.0])) == 0.0
    assert f.logpdf(np.inf) == -np.inf
    assert f.params == () and repr(f) == "Flat()"
    for call in (lambda: f.sample(np.random.default_rng(0)), lambda: f.cdf(0.0), lambda: f.ppf(0.5)):
        with pytest.raises(ValueError, match="Flat: improper"):
            call()
    assert np.isnan(f.mean) and np.isnan(f.var)
    np.testing.assert_array_equal(f.grad_logpdf([1.0, 2.0])["x"], 0.0)


def test_geometric_counts_failures():
    g = D.Geometric(0.3)
    k = np.arange(6)
    np.testing.assert_allclose(g.logpmf_elementwise(k), stats.geom(0.3).logpmf(k + 1), **TOL)
    assert g.mean == pytest.approx(0.7 / 0.3)


def test_categorical_matches_multinomial_one_draw():
    p = np.array([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8]])
    c = D.Categorical(p)
    k = np.array([[0], [1], [2]])
    got = c.logpmf_elementwise(k)
    want = np.array([[stats.multinomial(1, row).logpmf(np.eye(3)[kk[0]]) for row in p] for kk in k])
    np.testing.assert_allclose(got, want, **TOL)
    assert np.all(c.logpmf_elementwise([[-1], [3], [1.5]]) == -np.inf)
    np.testing.assert_allclose(c.cdf([[0], [1], [2]]), np.cumsum(p, axis=-1).T, **TOL)
    assert c.support == D.IntegerInterval(0, 2)


def test_params_and_repr():
    d = D.Normal(0.0, 1.0)
    assert d.params == ("loc", "scale") and repr(d) == "Normal(loc=0.0, scale=1.0)"
    assert D.StudentT(3).params == ("df", "loc", "scale")
    assert repr(D.Binomial(5, [0.1, 0.9])) == "Binomial(n=5, p=[0.1, 0.9])"
    t = D.Truncated(d, 0.0)
    assert repr(t) == "Truncated(base=Normal(loc=0.0, scale=1.0), low=0.0, high=inf)"
    assert D.MvNormal([0.0, 0.0], precision=np.eye(2)).params == ("mean", "precision")
    for name, cls in D.LOGPDF_FAMILIES.items():
        assert cls.__name__ == name and issubclass(cls, D.Distribution)
    assert len(D.LOGPDF_FAMILIES) == 39  # 29 + 9 BUGS families (issue 12; GeneralizedF for df) + LKJCholesky
    with pytest.raises(TypeError):
        D.LOGPDF_FAMILIES["X"] = D.Normal  # read-only table
    with pytest.raises(ValueError):
        d.loc[...] = 3.0  # parameters are read-only


def test_broadcasting_shapes():
    d = D.Normal(np.zeros((4, 1)), np.ones(3))
    assert d.batch_shape == (4, 3)
    assert d.logpdf_elementwise(0.5).shape == (4, 3)
    assert d.logpdf_elementwise(np.zeros((2, 1, 1))).shape == (2, 4, 3)
    assert d.sample(np.random.default_rng(0), (5,)).shape == (5, 4, 3)
    assert d.sample(np.random.default_rng(0), 7).shape == (7, 4, 3)
    assert d.mean.shape == d.var.shape == (4, 3)
    assert D.Poisson(2.0).sample(np.random.default_rng(0), 3).dtype == np.int64
    with pytest.raises(TypeError, match="Generator"):
        d.sample(np.random.RandomState(0))
    with pytest.raises(TypeError, match="continuous"):
        d.logpmf(0.0)


def test_supports():
    assert D.Real().contains([0.0, np.inf, np.nan]).tolist() == [True, False, False]
    assert D.Positive().contains([0.0, 1.0]).tolist() == [False, True]
    assert D.NonNegative().contains([0.0, -1e-300]).tolist() == [True, False]
    assert D.Interval(0, [1, 2]).contains(1.5).tolist() == [False, True]
    assert D.Simplex().contains([[0.2, 0.8], [0.5, 0.6]]).tolist() == [True, False]
    assert D.PositiveDefinite().contains(np.array([np.eye(2), [[1, 2], [2, 1]], [[1, 0.1], [0, 1]]])).tolist() == \
        [True, False, False]
    assert D.NonNegativeInteger().contains([0, 2, 2.5, -1]).tolist() == [True, True, False, False]
    assert D.IntegerSimplex(3).contains([[1, 2], [1, 1], [3.5, -0.5]]).tolist() == [True, False, False]
