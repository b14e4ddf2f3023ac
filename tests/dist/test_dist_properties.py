"""Property tests (hypothesis): logpdf vs scipy over wide parameter ranges, bijector round trips."""
import numpy as np
from hypothesis import given, settings, strategies as st
from scipy import stats

import dcgraph.dist as D
from dcgraph.dist import bijectors as B

SETTINGS = settings(max_examples=60, deadline=None)


def pos(lo, hi):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-9)


@SETTINGS
@given(pos(-1e3, 1e3), pos(1e-3, 1e3), pos(-1e3, 1e3))
def test_normal(loc, scale, x):
    close(D.Normal(loc, scale).logpdf(x), stats.norm(loc, scale).logpdf(x))


@SETTINGS
@given(pos(0.05, 100.0), pos(0.01, 100.0), pos(1e-6, 1e3))
def test_gamma(shape, rate, x):
    close(D.Gamma(shape, rate).logpdf(x), stats.gamma(shape, scale=1.0 / rate).logpdf(x))


@SETTINGS
@given(pos(0.05, 50.0), pos(0.05, 50.0), pos(1e-6, 1 - 1e-6))
def test_beta(a, b, x):
    close(D.Beta(a, b).logpdf(x), stats.beta(a, b).logpdf(x))


@SETTINGS
@given(pos(0.2, 1e3), pos(-10.0, 10.0), pos(0.1, 10.0), pos(-1e3, 1e3))
def test_student_t(df, loc, scale, x):
    close(D.StudentT(df, loc, scale).logpdf(x), stats.t(df, loc, scale).logpdf(x))


@SETTINGS
@given(pos(0.1, 10.0), pos(0.1, 10.0), pos(1e-4, 50.0))
def test_weibull_and_inverse_gamma(k, s, x):
    close(D.Weibull(k, s).logpdf(x), stats.weibull_min(k, scale=s).logpdf(x))
    close(D.InverseGamma(k, s).logpdf(x), stats.invgamma(k, scale=s).logpdf(x))


@SETTINGS
@given(pos(0.0, 1e3), st.integers(0, 2000))
def test_poisson(rate, k):
    close(D.Poisson(rate).logpmf(k), stats.poisson(rate).logpmf(k))


@SETTINGS
@given(pos(0.05, 100.0), pos(1e-3, 1.0), st.integers(0, 500))
def test_negative_binomial(n, p, k):
    close(D.NegativeBinomial(n, p).logpmf(k), stats.nbinom(n, p).logpmf(k))


@SETTINGS
@given(st.integers(0, 200), pos(0.05, 50.0), pos(0.05, 50.0), st.integers(0, 200))
def test_beta_binomial(n, a, b, k):
    close(D.BetaBinomial(n, a, b).logpmf(k), stats.betabinom(n, a, b).logpmf(k))


@SETTINGS
@given(pos(-1e3, 1e3), pos(1e-2, 1e3), pos(-15.0, 15.0))
def test_interval_bijector_round_trip(low, width, y):
    b = B.LogitAffine(low, low + width)
    x = b.forward(y)
    assert low <= x <= low + width
    # x carries absolute error ~eps*|x|; dy/dx = 1/(width s (1-s)) amplifies it
    s = 1.0 / (1.0 + np.exp(-y))
    tol = 1e-14 * (abs(low) + width + 1.0) / (width * s * (1.0 - s))
    np.testing.assert_allclose(b.inverse(x), y, rtol=0, atol=max(tol, 1e-9))


@SETTINGS
@given(st.lists(pos(-8.0, 8.0), min_size=1, max_size=6))
def test_stick_breaking_round_trip(y):
    b = B.StickBreaking()
    x = b.forward(np.array(y))
    assert D.Simplex().contains(x)
    np.testing.assert_allclose(b.inverse(x), y, rtol=1e-6, atol=1e-6)


@SETTINGS
@given(pos(0.1, 20.0), pos(0.1, 20.0), pos(1e-6, 1 - 1e-6))
def test_quantile_inverts_cdf(a, b, q):
    for d in (D.Gamma(a, b), D.Beta(a, b), D.Weibull(a, b), D.Truncated(D.Normal(0.0, 1.0), -a, b)):
        # q lies between the CDF a few floats either side of x (up to 1e-7 relative slack):
        # where the CDF is steep (Beta near 1) a float x cannot hit q more closely
        x = d.ppf(q)
        dx = 4 * np.spacing(abs(x)) + 1e-300
        lo, hi = d.cdf(x - dx), d.cdf(x + dx)
        assert lo * (1 - 1e-7) - 1e-12 <= q <= hi * (1 + 1e-7) + 1e-12, (d, x, lo, q, hi)
