"""Sampling expression models against closed forms and enumeration (short fixed-seed chains;
the long variants are marked slow). Tolerance: 4 Monte Carlo standard errors."""
import math

import numpy as np
import pytest
from scipy import stats

from dcgraph.infer import SampleResult, mcse_mean
from dcgraph.models import bernoulli, gamma, model, normal, param, poisson

RUNS = {"fast": dict(chains=2, draws=500, warmup=400), "slow": dict(chains=4, draws=3000, warmup=1000)}


def within_mcse(fit, name, expected, k=4.0):
    x = fit[name]
    draws = np.moveaxis(x.reshape(x.shape[0], x.shape[1], -1), 2, 0)
    for j, exp in enumerate(np.atleast_1d(expected)):
        err = abs(draws[j].mean() - exp)
        se = float(mcse_mean(draws[j]))
        assert err <= k * se, f"{name}[{j}]: mean {draws[j].mean():.5f}, expected {exp:.5f}, " \
                              f"{err / se:.2f} MCSE"


@model
def normal_mean(y, sigma, mu0, tau0):
    mu = param()
    mu |= normal(mu0, tau0)
    y |= normal(mu, sigma)


def conjugate_normal(y, sigma, mu0, tau0):
    prec = 1 / tau0 ** 2 + len(y) / sigma ** 2
    return (mu0 / tau0 ** 2 + y.sum() / sigma ** 2) / prec, 1 / math.sqrt(prec)


@pytest.mark.parametrize("sampler", ["nuts", "mh"])
@pytest.mark.parametrize("size", ["fast", pytest.param("slow", marks=pytest.mark.slow)])
def test_conjugate_normal_mean(sampler, size):
    y = np.random.default_rng(0).normal(1.5, 2.0, size=20)
    fit = normal_mean.sample(y, 2.0, 0.0, 3.0, sampler=sampler, seed=11, **RUNS[size])
    assert isinstance(fit, SampleResult) and fit.names == ["mu"]
    mean, sd = conjugate_normal(y, 2.0, 0.0, 3.0)
    within_mcse(fit, "mu", mean)
    assert fit["mu"].std() == pytest.approx(sd, rel=0.15)


@model
def normal_gamma(y, mu0, kappa0, a0, b0):
    tau = param(lower=0.0)
    mu = param()
    tau |= gamma(a0, b0)
    mu |= normal(mu0, 1.0 / np.sqrt(kappa0 * tau))
    y |= normal(mu, 1.0 / np.sqrt(tau))


@pytest.mark.parametrize("sampler", ["nuts", "mh"])
@pytest.mark.parametrize("size", ["fast", pytest.param("slow", marks=pytest.mark.slow)])
def test_normal_gamma(sampler, size):
    y = np.random.default_rng(1).normal(0.7, 1.3, size=15)
    mu0, kappa0, a0, b0 = 0.0, 1.0, 2.0, 2.0
    n, ybar = len(y), y.mean()
    kappa_n, mu_n = kappa0 + n, (kappa0 * mu0 + n * ybar) / (kappa0 + n)
    a_n = a0 + n / 2
    b_n = b0 + 0.5 * ((y - ybar) ** 2).sum() + kappa0 * n * (ybar - mu0) ** 2 / (2 * kappa_n)
    fit = normal_gamma.sample(y, mu0, kappa0, a0, b0, sampler=sampler, seed=5, **RUNS[size])
    within_mcse(fit, "mu", mu_n)
    within_mcse(fit, "tau", a_n / b_n)


@model
def flat_regression(X, y):
    w = param(shape=X.shape[1])
    b = param()
    s = param(lower=0.0)
    y |= normal(X @ w + b, s)


@pytest.mark.parametrize("size", ["fast", pytest.param("slow", marks=pytest.mark.slow)])
def test_flat_prior_regression_is_least_squares(size):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 2))
    y = X @ np.array([0.5, -1.0]) + 2.0 + 0.5 * rng.normal(size=30)
    ls = np.linalg.lstsq(np.c_[X, np.ones(30)], y, rcond=None)[0]
    fit = flat_regression.sample(X, y, seed=3, **RUNS[size])
    within_mcse(fit, "w", ls[:2])
    within_mcse(fit, "b", ls[2])
    mode = flat_regression.optimize(X, y)
    np.testing.assert_allclose(mode["w"], ls[:2], atol=1e-4)
    assert mode["s"] ** 2 == pytest.approx(((np.c_[X, np.ones(30)] @ ls - y) ** 2).mean(), rel=1e-4)


# -- discrete parameters: Gibbs with exact conditionals, against enumeration ---------------------
@model
def varying(obs):
    n = param(kind="int", lower=1, upper=4)
    n |= poisson(2.0)
    mu = param()
    mu |= normal(0.0, 1.0)
    for i in range(n):                   # the number of random variables depends on n
        obs[i] |= normal(mu, 1.0)


def varying_exact(obs):
    """p(n | obs) and E[mu | obs] by enumerating n with mu integrated out."""
    post, means = [], []
    for n in range(1, 5):
        cov = np.eye(n) + np.ones((n, n))
        post.append(stats.poisson(2.0).logpmf(n) + stats.multivariate_normal(np.zeros(n), cov).logpdf(obs[:n]))
        means.append(obs[:n].sum() / (n + 1))
    p = np.exp(np.array(post) - max(post))
    return p / p.sum(), np.array(means)


@pytest.mark.parametrize("size", ["fast", pytest.param("slow", marks=pytest.mark.slow)])
def test_varying_number_of_random_variables(size):
    obs = np.array([0.8, 1.9, -2.5, 0.1])
    fit = varying.sample(obs, seed=7, **RUNS[size])
    p, means = varying_exact(obs)
    for k, n in enumerate(range(1, 5)):
        ind = (fit["n"] == n).astype(float)
        se = max(float(np.nan_to_num(mcse_mean(ind))), math.sqrt(p[k] * (1 - p[k]) / ind.size))
        assert abs(ind.mean() - p[k]) <= 4 * se, (n, ind.mean(), p[k])
    within_mcse(fit, "mu", float(p @ means))


@model
def mixture(y):
    z = param(kind="int", lower=0, upper=1)
    z |= bernoulli(0.3)
    m = param()
    m |= normal(0.0, 1.0)
    if z == 1:                           # stochastic control flow on a discrete parameter
        y |= normal(m + 1.0, 1.0)
    else:
        y |= normal(m - 1.0, 1.0)


@pytest.mark.parametrize("sampler", ["nuts", "mh"])
def test_mixture_with_discrete_indicator(sampler):
    y = np.array([0.9, -0.2])
    n = len(y)
    cov = np.eye(n) + np.ones((n, n))
    logp = [math.log(0.7) + stats.multivariate_normal(np.full(n, -1.0), cov).logpdf(y),
            math.log(0.3) + stats.multivariate_normal(np.full(n, 1.0), cov).logpdf(y)]
    p1 = 1 / (1 + math.exp(logp[0] - logp[1]))
    fit = mixture.sample(y, sampler=sampler, seed=9, **RUNS["fast"])
    within_mcse(fit, "z", p1)
    within_mcse(fit, "m", (1 - p1) * (y + 1).sum() / (n + 1) + p1 * (y - 1).sum() / (n + 1))


@model
def sprinkler(wet):
    rain = param(kind="int", lower=0, upper=1)
    rain |= bernoulli(0.2)
    on = param(kind="int", lower=0, upper=1)
    on |= bernoulli(0.01 if rain else 0.4)
    wet |= bernoulli([[0.0, 0.8], [0.9, 0.99]][on][rain])


def test_bayesian_network_with_discrete_nodes():
    joint = {(r, s): (0.2 if r else 0.8) * ((0.01 if r else 0.4) if s else (0.99 if r else 0.6))
             * [[0.0, 0.8], [0.9, 0.99]][s][r] for r in (0, 1) for s in (0, 1)}
    p_rain = (joint[1, 0] + joint[1, 1]) / sum(joint.values())
    assert p_rain == pytest.approx(0.35769, abs=1e-5)
    fit = sprinkler.sample(1, seed=4, **RUNS["fast"])
    assert fit.kernel == "Gibbs"
    within_mcse(fit, "rain", p_rain)
    within_mcse(fit, "on", (joint[0, 1] + joint[1, 1]) / sum(joint.values()))
