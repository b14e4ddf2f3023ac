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


def test_wrappers_have_no_closed_form_gradient():
    with pytest.raises(NotImplementedError, match="Truncated: no closed-form gradient"):
        D.Truncated(D.Normal(0.0, 1.0), 0.0).grad_logpdf(1.0)
