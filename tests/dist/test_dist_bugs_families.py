"""The families added for BUGS (issue 12), each against scipy: log density, CDF/SF/quantiles,
moments, closed-form gradients against central differences, sampling, validation, bijectors."""
import numpy as np
import pytest
from scipy import stats

import dcgraph.dist as D

# family instance, scipy reference, evaluation points (inside and outside the support)
UNIVARIATE = [
    ("GeneralizedGamma", lambda: D.GeneralizedGamma(2.5, 1.3, 0.7),
     stats.gengamma(a=2.5, c=0.7, scale=1 / 1.3), [0.05, 0.4, 1.0, 2.5, 7.0, -1.0]),
    ("GeneralizedGamma-b1", lambda: D.GeneralizedGamma(3.0, 2.0, 1.0),
     stats.gamma(3.0, scale=0.5), [0.1, 1.0, 4.0]),
    ("GEV+", lambda: D.GeneralizedExtremeValue(0.5, 1.2, 0.3),
     stats.genextreme(c=-0.3, loc=0.5, scale=1.2), [-3.6, -3.0, -1.0, 0.5, 2.0, 9.0]),
    ("GEV-", lambda: D.GeneralizedExtremeValue(0.5, 1.2, -0.3),
     stats.genextreme(c=0.3, loc=0.5, scale=1.2), [-5.0, -1.0, 0.5, 2.0, 4.4, 4.6]),
    ("GEV0", lambda: D.GeneralizedExtremeValue(0.5, 1.2, 0.0),
     stats.genextreme(c=0.0, loc=0.5, scale=1.2), [-2.0, 0.5, 3.0]),
    ("GPD+", lambda: D.GeneralizedPareto(0.2, 1.2, 0.3),
     stats.genpareto(c=0.3, loc=0.2, scale=1.2), [0.1, 0.2, 0.7, 3.0, 20.0]),
    ("GPD-", lambda: D.GeneralizedPareto(0.2, 1.2, -0.3),
     stats.genpareto(c=-0.3, loc=0.2, scale=1.2), [0.2, 1.0, 4.0, 4.3]),
    ("GPD0", lambda: D.GeneralizedPareto(0.2, 1.2, 0.0),
     stats.genpareto(c=0.0, loc=0.2, scale=1.2), [0.2, 1.0, 4.0]),
    ("GeneralizedF", lambda: D.GeneralizedF(3.0, 5.0, 1.0, 4.0),
     stats.f(3, 5, loc=1.0, scale=0.5), [0.5, 1.0, 1.2, 2.0, 6.0]),
    ("GeneralizedF-tail", lambda: D.GeneralizedF(6.0, 9.0, -2.0, 0.25),
     stats.f(6, 9, loc=-2.0, scale=2.0), [-2.5, -1.0, 0.5, 8.0]),
    ("OneBasedCategorical", lambda: D.OneBasedCategorical([0.2, 0.3, 0.5]),
     stats.rv_discrete(values=([1, 2, 3], [0.2, 0.3, 0.5])), [0, 1, 2, 3, 4, 1.5]),
    ("TrialsGeometric", lambda: D.TrialsGeometric(0.3), stats.geom(0.3), [0, 1, 2, 5, 30, 2.5]),
    ("NoncentralHypergeometric", lambda: D.NoncentralHypergeometric(5, 7, 6, 1.7),
     stats.nchypergeom_fisher(12, 5, 6, 1.7), [-1, 0, 1, 3, 5, 6, 2.5]),
    ("NoncentralHypergeometric-edge", lambda: D.NoncentralHypergeometric(8, 3, 6, 0.4),
     stats.nchypergeom_fisher(11, 8, 6, 0.4), [2, 3, 4, 6, 7]),
]
IDS = [c[0] for c in UNIVARIATE]


def _ref_logpdf(ref, x, discrete):
    with np.errstate(divide="ignore"):
        return ref.logpmf(x) if discrete else ref.logpdf(x)


@pytest.mark.parametrize("name,make,ref,xs", UNIVARIATE, ids=IDS)
def test_logpdf_cdf_sf_against_scipy(name, make, ref, xs):
    d = make()
    x = np.array(xs, dtype=float)
    expected = _ref_logpdf(ref, x, d.is_discrete)
    if d.is_discrete:
        expected = np.where(x == np.floor(x), expected, -np.inf)
    np.testing.assert_allclose(d.logpdf_elementwise(x), expected, rtol=1e-10, atol=1e-12)
    assert np.isclose(d.logpdf(x[np.isfinite(expected)]), np.sum(expected[np.isfinite(expected)]), rtol=1e-10)
    np.testing.assert_allclose(d.cdf(x), ref.cdf(x), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(d.sf(x), ref.sf(x), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name,make,ref,xs", UNIVARIATE, ids=IDS)
def test_quantiles_and_moments_against_scipy(name, make, ref, xs):
    d = make()
    q = np.array([0.05, 0.3, 0.5, 0.9])
    np.testing.assert_allclose(d.ppf(q), ref.ppf(q), rtol=1e-8)
    np.testing.assert_allclose(d.isf(q), ref.isf(q), rtol=1e-8)
    np.testing.assert_allclose(d.mean, ref.mean(), rtol=1e-9)
    np.testing.assert_allclose(d.var, ref.var(), rtol=1e-8)


@pytest.mark.parametrize("name,make,ref,xs", UNIVARIATE, ids=IDS)
def test_sampling_matches_the_law(name, make, ref, xs):
    d = make()
    draws = d.sample(np.random.default_rng(7), 40_000)
    assert draws.shape == (40_000,)
    assert np.all(np.isfinite(d.logpdf_elementwise(draws)))
    se = np.sqrt(ref.var() / draws.size)
    assert abs(draws.mean() - ref.mean()) < 5 * se
    if d.is_discrete:
        assert draws.dtype == np.int64


def _fd(f, v, h=1e-6):
    v = np.array(v, dtype=float)
    g = np.zeros_like(v)
    for idx in np.ndindex(v.shape):
        e = np.zeros_like(v)
        e[idx] = h * max(1.0, abs(v[idx]))
        g[idx] = (f(v + e) - f(v - e)) / (2 * e[idx])
    return g


GRAD_CASES = [
    (D.GeneralizedGamma, dict(r=2.5, mu=1.3, beta=0.7), [0.4, 1.0, 2.5]),
    (D.GeneralizedExtremeValue, dict(mu=0.5, sigma=1.2, eta=0.3), [-1.0, 0.5, 2.0]),
    (D.GeneralizedExtremeValue, dict(mu=0.5, sigma=1.2, eta=-0.3), [-1.0, 0.5, 2.0]),
    (D.GeneralizedPareto, dict(mu=0.2, sigma=1.2, eta=0.3), [0.5, 1.0, 3.0]),
    (D.GeneralizedPareto, dict(mu=0.2, sigma=1.2, eta=-0.3), [0.5, 1.0, 3.0]),
    (D.TrialsGeometric, dict(p=0.3), [1, 2, 7]),
    (D.NoncentralHypergeometric, dict(n1=5, n2=7, m1=6, psi=1.7), [1, 3, 4]),
    (D.LogLikelihoodTerm, dict(loglik=-2.5), [0.0, 0.0]),
]


@pytest.mark.parametrize("cls,params,xs", GRAD_CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(GRAD_CASES)])
def test_grad_logpdf_against_finite_differences(cls, params, xs):
    x = np.array(xs, dtype=float)
    d = cls(**params)
    grads = d.grad_logpdf(x)
    integer = {"n1", "n2", "m1"}
    assert set(grads) == ({p for p in params if p not in integer} | (set() if d.is_discrete else {"x"}))
    for key, g in grads.items():
        if key == "x":
            fd = _fd(lambda v: cls(**params).logpdf(v), x)
        else:
            fd = _fd(lambda v, key=key: cls(**{**params, key: v}).logpdf(x), params[key])
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6, err_msg=key)


def test_one_based_categorical_gradient_counts_each_category():
    g = D.OneBasedCategorical([0.2, 0.3, 0.5]).grad_logpdf([1, 3, 3, 2])["p"]
    np.testing.assert_allclose(g, [1 / 0.2, 1 / 0.3, 2 / 0.5])


def test_gev_and_gpd_shape_zero_gradients_are_the_limits():
    for cls in (D.GeneralizedExtremeValue, D.GeneralizedPareto):
        x = np.array([0.7, 1.9])
        g0 = cls(0.2, 1.1, 0.0).grad_logpdf(x)["eta"]
        h = 1e-4
        fd = (cls(0.2, 1.1, h).logpdf(x) - cls(0.2, 1.1, -h).logpdf(x)) / (2 * h)
        assert np.isclose(g0, fd, rtol=1e-5)


def test_mvstudentt_against_scipy_and_gradients():
    S = np.array([[2.0, 0.3], [0.3, 1.0]])
    mu = np.array([0.5, -1.0])
    x = np.array([[0.1, 0.2], [1.5, -2.0], [3.0, 3.0]])
    ref = stats.multivariate_t(mu, S, df=4.5)
    for d in (D.MvStudentT(4.5, mu, scale=S), D.MvStudentT(4.5, mu, precision=np.linalg.inv(S))):
        np.testing.assert_allclose(d.logpdf_elementwise(x), ref.logpdf(x), rtol=1e-12)
        key = d.params[2]
        g = d.grad_logpdf(x)
        mat = d.param_value(key)
        np.testing.assert_allclose(g["x"], _fd(lambda v: d.logpdf(v), x), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(g["loc"], _fd(lambda v: D.MvStudentT(4.5, v, **{key: mat}).logpdf(x), mu),
                                   rtol=1e-6)
        np.testing.assert_allclose(g["df"], _fd(lambda v: D.MvStudentT(v, mu, **{key: mat}).logpdf(x), 4.5),
                                   rtol=1e-6)
        h = 1e-6
        E = np.array([[0.0, h], [h, 0.0]])
        up, down = D.MvStudentT(4.5, mu, **{key: mat + E}), D.MvStudentT(4.5, mu, **{key: mat - E})
        fd = (up.logpdf(x) - down.logpdf(x)) / (2 * h)
        assert np.isclose(2 * g[key][0, 1], fd, rtol=1e-6)
    np.testing.assert_allclose(D.MvStudentT(4.5, mu, scale=S).var, np.diag(S) * 4.5 / 2.5)
    draws = D.MvStudentT(6.0, mu, scale=S).sample(np.random.default_rng(3), 100_000)
    np.testing.assert_allclose(draws.mean(0), mu, atol=0.03)
    np.testing.assert_allclose(np.cov(draws.T), S * 6 / 4, rtol=0.06)


def test_loglikelihood_term_adds_its_value():
    d = D.LogLikelihoodTerm([-1.5, 2.0])
    assert d.logpdf([0.0, 0.0]) == 0.5
    np.testing.assert_array_equal(d.logpdf_elementwise([3.0, -7.0]), [-1.5, 2.0])
    with pytest.raises(NotImplementedError, match="no sampling distribution"):
        d.sample(np.random.default_rng(0))


@pytest.mark.parametrize("make,message", [
    (lambda: D.GeneralizedGamma(-1.0, 1.0, 1.0), "GeneralizedGamma: parameter 'r' must be positive, got -1.0"),
    (lambda: D.GeneralizedExtremeValue(0.0, 0.0, 0.1), "parameter 'sigma' must be positive, got 0.0"),
    (lambda: D.GeneralizedPareto(0.0, 1.0, np.nan), "parameter 'eta' must be finite, got nan"),
    (lambda: D.OneBasedCategorical([0.5, 0.6]), "OneBasedCategorical: parameter 'p'"),
    (lambda: D.TrialsGeometric(0.0), "parameter 'p' must be in \\(0, 1\\], got 0.0"),
    (lambda: D.NoncentralHypergeometric(2, 3, 6, 1.0), "parameter 'm1' must be at most n1 \\+ n2, got 6"),
    (lambda: D.NoncentralHypergeometric(2.5, 3, 1, 1.0), "parameter 'n1' must be a non-negative integer, got 2.5"),
    (lambda: D.MvStudentT(3.0, [0.0, 0.0]), "give exactly one of 'scale' and 'precision'"),
    (lambda: D.MvStudentT(3.0, [0.0, 0.0], scale=np.eye(3)), "does not match 'loc'"),
])
def test_validation_messages(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_bijectors_round_trip_and_supports():
    rng = np.random.default_rng(1)
    for d in (D.GeneralizedGamma(2.0, 1.0, 1.5), D.GeneralizedExtremeValue(0.0, 1.0, 0.4),
              D.GeneralizedExtremeValue(0.0, 1.0, -0.4), D.GeneralizedPareto(1.0, 2.0, -0.5)):
        y = rng.normal(size=5)
        x = d.from_unconstrained(y)
        assert np.all(d.support.contains(x))
        np.testing.assert_allclose(d.to_unconstrained(x), y, rtol=1e-9, atol=1e-9)
    assert repr(D.OneBasedCategorical([0.5, 0.5]).support) == "IntegerInterval(1.0, 2.0)"
    assert repr(D.NoncentralHypergeometric(8, 3, 6, 0.4).support) == "IntegerInterval(3.0, 6.0)"
    assert repr(D.GeneralizedPareto(1.0, 2.0, -0.5).support) == "Interval(1.0, 5.0)"
    assert "MvStudentT" in D.LOGPDF_FAMILIES and "TrialsGeometric" in D.LOGPDF_FAMILIES


def test_batched_parameters_broadcast():
    d = D.NoncentralHypergeometric([5, 8], [7, 3], [6, 6], [1.7, 0.4])
    x = np.array([3.0, 4.0])
    expected = [stats.nchypergeom_fisher(12, 5, 6, 1.7).logpmf(3), stats.nchypergeom_fisher(11, 8, 6, 0.4).logpmf(4)]
    np.testing.assert_allclose(d.logpdf_elementwise(x), expected, rtol=1e-10)
    g = D.OneBasedCategorical([[0.2, 0.8], [0.6, 0.4]])
    np.testing.assert_allclose(g.logpdf_elementwise([2, 1]), np.log([0.8, 0.6]))


def test_dcgraph_grad_through_the_new_families_uses_their_closed_forms():
    import dcgraph
    T = np.array([[0.5, 0.1], [0.1, 1.2]])
    x = np.array([[0.3, -0.2], [1.0, 0.5]])
    mu0 = np.array([0.1, 0.2])
    g_mu, g_df = dcgraph.grad(lambda mu, df: D.MvStudentT(df, mu, precision=T).logpdf(x), argnums=(0, 1))(mu0, 4.0)
    closed = D.MvStudentT(4.0, mu0, precision=T).grad_logpdf(x)
    np.testing.assert_allclose(g_mu, closed["loc"])
    assert np.isclose(g_df, closed["df"])

    def f(r, psi, eta):
        return (D.GeneralizedGamma(r, 1.3, 0.7).logpdf(np.array([0.5, 2.0]))
                + D.NoncentralHypergeometric(5, 7, 6, psi).logpdf(3.0)
                + D.GeneralizedPareto(0.1, 1.0, eta).logpdf(np.array([0.5, 2.0])))
    got = dcgraph.grad(f, argnums=(0, 1, 2))(2.5, 1.7, 0.2)
    fd = [_fd(lambda v, k=k: f(*[v if i == k else a for i, a in enumerate((2.5, 1.7, 0.2))]), [2.5, 1.7, 0.2][k])
          for k in range(3)]
    np.testing.assert_allclose(got, fd, rtol=1e-6)
