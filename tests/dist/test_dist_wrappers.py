"""Truncated and Censored: extra checks beyond the shared case table."""
import numpy as np
import pytest
from scipy import stats

import dcgraph.dist as D


def test_truncated_normal_matches_truncnorm_including_far_tails():
    for lo, hi in [(-1.0, 2.0), (3.0, np.inf), (-np.inf, -6.0), (50.0, 60.0), (-8.0, 9.0)]:
        d = D.Truncated(D.Normal(1.0, 2.0), lo * 2.0 + 1.0, hi * 2.0 + 1.0)
        ref = stats.truncnorm(lo, hi, loc=1.0, scale=2.0)
        x = ref.ppf([0.01, 0.5, 0.99])
        np.testing.assert_allclose(d.logpdf_elementwise(x), ref.logpdf(x), rtol=1e-9)
        np.testing.assert_allclose(d.cdf(x), ref.cdf(x), rtol=1e-8, atol=1e-300)
        np.testing.assert_allclose(d.ppf([0.01, 0.5, 0.99]), x, rtol=1e-8)
        np.testing.assert_allclose(d.mean, ref.mean(), rtol=1e-8)


def test_truncated_array_bounds_broadcast():
    d = D.Truncated(D.Exponential(1.0), low=np.array([0.0, 1.0, 2.0]), high=5.0)
    assert d.batch_shape == (3,)
    ref = [stats.truncexpon(5.0 - lo, loc=lo) for lo in (0.0, 1.0, 2.0)]
    np.testing.assert_allclose(d.logpdf_elementwise(3.0), [r.logpdf(3.0) for r in ref], rtol=1e-10)
    np.testing.assert_allclose(d.mean, [r.mean() for r in ref], rtol=1e-8)
    x = d.sample(np.random.default_rng(0), 1000)
    assert x.shape == (1000, 3) and np.all(x >= [0.0, 1.0, 2.0]) and np.all(x <= 5.0)


def test_truncated_bijector_targets_the_interval():
    d = D.Truncated(D.Normal(0.0, 1.0), -1.0, 2.0)
    assert isinstance(d.bijector, D.bijectors.LogitAffine)
    assert isinstance(D.Truncated(D.Normal(0.0, 1.0), low=1.0).bijector, D.bijectors.LowerBound)
    assert isinstance(D.Truncated(D.Normal(0.0, 1.0), high=1.0).bijector, D.bijectors.UpperBound)
    assert isinstance(D.Truncated(D.Gamma(2.0, 1.0), high=3.0).bijector, D.bijectors.LogitAffine)
    y = np.linspace(-20, 20, 9)
    assert np.all(np.isfinite(d.logpdf_elementwise(d.from_unconstrained(y[2:-2]))))


def test_truncated_discrete_integer_bounds():
    d = D.Truncated(D.Poisson(4.0), 1.5, 6.7)  # keeps {2, ..., 6}
    k = np.arange(0, 9)
    ref = stats.poisson(4.0)
    mass = ref.cdf(6) - ref.cdf(1)
    want = np.where((k >= 2) & (k <= 6), ref.logpmf(k) - np.log(mass), -np.inf)
    np.testing.assert_allclose(d.logpmf_elementwise(k), want, rtol=1e-10)
    assert d.support == D.IntegerInterval(2.0, 6.0)
    with pytest.raises(TypeError, match="discrete"):
        d.bijector


def test_censored_atoms_and_one_sided():
    base = D.Normal(0.0, 1.0)
    d = D.Censored(base, low=0.5)
    assert d.logpdf(0.5) == pytest.approx(stats.norm.logcdf(0.5), rel=1e-12)
    assert d.logpdf(3.0) == pytest.approx(stats.norm.logpdf(3.0), rel=1e-12)
    assert d.logpdf(0.4) == -np.inf
    x = d.sample(np.random.default_rng(1), 20_000)
    frac = np.mean(x == 0.5)
    p = stats.norm.cdf(0.5)
    assert abs(frac - p) <= 4 * np.sqrt(p * (1 - p) / 20_000)
    # a bound outside the base support does not create an atom
    g = D.Censored(D.Gamma(2.0, 1.0), low=-1.0, high=3.0)
    assert g.logpdf(0.0) == pytest.approx(stats.gamma(2.0).logpdf(0.0))
    assert g.logpdf(3.0) == pytest.approx(stats.gamma(2.0).logsf(3.0), rel=1e-12)
    with pytest.raises(TypeError, match="atoms"):
        d.to_unconstrained(1.0)


def _fd(f, v, h=1e-6):
    return (f(v + h) - f(v - h)) / (2 * h)


WRAPPED = [
    # (make(params dict) -> wrapper, params, x)
    (lambda p: D.Truncated(D.Normal(p["loc"], p["scale"]), p["low"], p["high"]),
     {"loc": 0.3, "scale": 1.2, "low": -0.5, "high": 2.0}, np.array([0.7, -0.2, 1.9])),
    (lambda p: D.Truncated(D.Normal(p["loc"], p["scale"]), p["low"]),
     {"loc": 2.0, "scale": 0.5, "low": 1.0}, 2.2),
    (lambda p: D.Truncated(D.Gamma(p["shape"], p["rate"]), p["low"], p["high"]),
     {"shape": 2.5, "rate": 1.5, "low": 0.5, "high": 3.0}, 1.2),
    (lambda p: D.Censored(D.Normal(p["loc"], p["scale"]), p["low"], p["high"]),
     {"loc": 0.3, "scale": 1.2, "low": -0.5, "high": 2.0}, np.array([-0.5, 0.1, 2.0, 2.0])),
    (lambda p: D.Truncated(D.Poisson(p["rate"]), 1, 6), {"rate": 3.5}, np.array([2, 4])),
    (lambda p: D.Censored(D.Poisson(p["rate"]), 1, 6), {"rate": 3.5}, np.array([1, 4, 6])),
]


@pytest.mark.parametrize("make,params,x", WRAPPED, ids=range(len(WRAPPED)))
def test_wrapper_gradients_match_finite_differences(make, params, x):
    d = make(params)
    g = d.grad_logpdf(x)
    for name in params:
        def lp(v, name=name):
            q = dict(params, **{name: v})
            # a censoring bound moves the observations that sit on it
            xs = np.where(np.asarray(x) == params[name], v, x) if name in ("low", "high") and \
                isinstance(d, D.Censored) else x
            return make(q).logpdf(xs)
        got = g[name] if name in ("low", "high") else g["base"][name]
        assert float(np.sum(got)) == pytest.approx(_fd(lp, params[name]), rel=1e-6, abs=1e-8), name
    if not d.is_discrete:   # move every observation that does not sit on a censoring bound
        moves = np.ones(np.shape(x), bool)
        if isinstance(d, D.Censored):
            moves = ~np.isin(np.asarray(x), [params["low"], params["high"]])
        shifted = lambda v: make(params).logpdf(np.asarray(x) + v * moves)  # noqa: E731
        assert np.sum(g["x"]) == pytest.approx(_fd(shifted, 0.0), rel=1e-6, abs=1e-8)


def test_truncated_gradient_per_batch_element():
    def lp(loc0, loc1):
        return D.Truncated(D.Normal(np.array([loc0, loc1]), 1.0), np.array([-1.0, 0.5]), 2.0).logpdf(
            np.array([0.3, 1.4]))
    g = D.Truncated(D.Normal(np.array([0.0, 1.0]), 1.0), np.array([-1.0, 0.5]), 2.0).grad_logpdf(
        np.array([0.3, 1.4]))["base"]["loc"]
    assert g == pytest.approx([_fd(lambda v: lp(v, 1.0), 0.0), _fd(lambda v: lp(0.0, v), 1.0)], rel=1e-6)
