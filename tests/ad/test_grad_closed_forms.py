"""Gradients with known closed forms: a normal log density, logistic regression's log
likelihood, and a hierarchical Rats-style log density written with scalar loops."""
import math

import numpy as np
import pytest
from scipy import special

from dcgraph import ad

RNG = np.random.default_rng(11)


def normal_logdensity(mu, sigma, xs):
    lp = 0.0
    for x in xs:
        z = (x - mu) / sigma
        lp += -0.5 * math.log(2 * math.pi) - math.log(sigma) - 0.5 * z * z
    return lp


def test_normal_log_density():
    xs = list(RNG.normal(1.0, 2.0, size=20))
    mu, sigma = 0.7, 1.8
    g_mu, g_sigma = ad.grad(normal_logdensity, (0, 1))(mu, sigma, xs)
    r = np.array(xs) - mu
    assert g_mu == pytest.approx(np.sum(r) / sigma ** 2, rel=1e-12)
    assert g_sigma == pytest.approx(np.sum(r ** 2 / sigma ** 3 - 1 / sigma), rel=1e-12)


def logistic_loglik(w, X, y):
    p = special.expit(X @ w)
    return np.sum(y * np.log(p) + (1 - y) * np.log1p(-p))


def test_logistic_regression_log_likelihood():
    X = RNG.normal(size=(200, 5))
    y = (RNG.uniform(size=200) < 0.4).astype(float)
    w = RNG.normal(size=5) * 0.3
    value, g = ad.value_and_grad(logistic_loglik)(w, X, y)
    assert value == pytest.approx(logistic_loglik(w, X, y))
    assert np.allclose(g, X.T @ (y - special.expit(X @ w)), rtol=1e-11, atol=1e-11)


XS = [8.0, 15.0, 22.0, 29.0, 36.0]
XBAR = 22.0


def rats_logp(alpha, beta, mu_a, mu_b, sig_a, sig_b, sig_y, y):
    """Rats (Gelfand et al.): y[i][j] ~ N(alpha[i] + beta[i] (x[j] - xbar), sig_y),
    alpha[i] ~ N(mu_a, sig_a), beta[i] ~ N(mu_b, sig_b); scalar loops over 30 x 5."""
    lp = 0.0
    for i in range(len(y)):
        za = (alpha[i] - mu_a) / sig_a
        zb = (beta[i] - mu_b) / sig_b
        lp += -0.5 * za * za - math.log(sig_a) - 0.5 * zb * zb - math.log(sig_b)
        for j in range(len(XS)):
            mu = alpha[i] + beta[i] * (XS[j] - XBAR)
            r = (y[i][j] - mu) / sig_y
            lp += -0.5 * r * r - math.log(sig_y)
    return lp


def rats_data(n=30):
    alpha = list(RNG.normal(240, 10, size=n))
    beta = list(RNG.normal(6, 0.5, size=n))
    y = [[a + b * (x - XBAR) + RNG.normal(0, 6) for x in XS] for a, b in zip(alpha, beta)]
    return alpha, beta, y


def test_rats_hierarchical_log_density():
    alpha, beta, y = rats_data()
    params = (alpha, beta, 241.0, 6.2, 11.0, 0.6, 5.5)
    grads = ad.grad(rats_logp, tuple(range(7)))(*params, y)
    a, b, mu_a, mu_b, sa, sb, sy = (np.asarray(p) for p in params)
    Y = np.asarray(y)
    mu = a[:, None] + b[:, None] * (np.asarray(XS) - XBAR)
    r = (Y - mu) / sy ** 2
    want = [
        -(a - mu_a) / sa ** 2 + r.sum(axis=1),
        -(b - mu_b) / sb ** 2 + (r * (np.asarray(XS) - XBAR)).sum(axis=1),
        np.sum(a - mu_a) / sa ** 2,
        np.sum(b - mu_b) / sb ** 2,
        np.sum((a - mu_a) ** 2 / sa ** 3 - 1 / sa),
        np.sum((b - mu_b) ** 2 / sb ** 3 - 1 / sb),
        np.sum((Y - mu) ** 2 / sy ** 3 - 1 / sy),
    ]
    assert isinstance(grads[0], list) and len(grads[0]) == 30
    for got, expected in zip(grads, want):
        assert np.allclose(got, expected, rtol=1e-10, atol=1e-10)
