"""Gradients through scipy.special and scipy.stats log densities vs finite differences."""
import numpy as np
import pytest
import scipy.stats as st
from scipy import special
from scipy.stats import norm

X = np.array([0.3, 1.2, 2.5])


def special_unary(x):
    return np.sum(special.gammaln(x + 1) + special.digamma(x + 2) + special.expit(x)
                  + special.logit(x / 3) + special.erf(x) + special.erfc(x)
                  + special.log_ndtr(x - 1) + special.ndtr(x) + special.gamma(x)
                  + special.log_expit(x) + special.polygamma(1, x))


def special_binary(x, y):
    return np.sum(special.xlogy(x, y) + special.xlog1py(y, x) + special.betaln(x, y)
                  + special.logsumexp(x * y) + special.logsumexp(np.outer(x, y), axis=1)
                  + special.logsumexp(x, b=y))


def normal_logpdf(x, mu, sigma):
    return norm.logpdf(x, mu, sigma).sum() + st.norm.logpdf(x[0], loc=mu, scale=sigma) \
        + norm.logpdf(mu)


def gamma_beta_logpdf(x, a, b):
    return st.gamma.logpdf(x, a).sum() + st.gamma.logpdf(x, a, loc=0.1, scale=b).sum() \
        + st.beta.logpdf(x / 3, a, b).sum() + st.beta.logpdf(0.4, a=a, b=b, scale=1.5)


def expon_t_logpdf(x, df, scale):
    return st.expon.logpdf(x, scale=scale).sum() + st.expon.logpdf(x, 0.1, scale).sum() \
        + st.t.logpdf(x, df).sum() + st.t.logpdf(x, df, loc=1.0, scale=scale).sum()


def discrete_logpmf(mu, p):
    k = np.array([0, 1, 3, 4])
    return st.poisson.logpmf(k, mu).sum() + st.binom.logpmf(k, 6, p).sum() \
        + st.poisson.logpmf(2, mu=mu) + st.binom.logpmf(3, n=5, p=p)


def scalar_logpdf_loop(mu, sigma):
    lp = 0.0
    for xi in [0.1, 0.5, 1.9]:
        lp += norm.logpdf(xi, mu, sigma) + st.gamma.logpdf(xi + 1, sigma)
    return lp


CASES = [
    (special_unary, (X,)),
    (special_binary, (X, X[::-1] * 0.7)),
    (normal_logpdf, (X, 0.4, 1.3)),
    (gamma_beta_logpdf, (X, 2.3, 1.7)),
    (expon_t_logpdf, (X, 3.5, 1.4)),
    (discrete_logpmf, (2.2, 0.35)),
    (scalar_logpdf_loop, (0.4, 1.3)),
]


@pytest.mark.parametrize("f, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_scipy_code_matches_finite_differences(check, f, args):
    report = check(f, *args, tol=1e-5)
    assert report.worst < 1e-5
