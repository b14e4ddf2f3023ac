"""Gradients through dcgraph.dist log densities agree with finite differences."""
import numpy as np
import pytest

from dcgraph import ad, dist


def normal_lp(mu, sigma, x):
    return dist.Normal(mu, sigma).logpdf(x)


def gamma_lp(shape, rate, x):
    return dist.Gamma(shape, rate=rate).logpdf(x)


def hierarchical(mu, tau, theta, y):
    lp = dist.Normal(0.0, 5.0).logpdf(mu) + dist.HalfNormal(2.0).logpdf(tau)
    lp += dist.Normal(mu, tau).logpdf(theta)
    return lp + dist.StudentT(4.0, theta, 1.0).logpdf(y)


def poisson_rate(log_rate, k):
    return dist.Poisson(np.exp(log_rate)).logpmf(k)


CASES = [
    (normal_lp, (0.3, 1.7, 1.1)),
    (normal_lp, (np.array([0.1, -0.2]), 0.9, np.array([0.5, 0.4]))),
    (gamma_lp, (2.5, 1.5, 0.8)),
    (hierarchical, (0.4, 1.3, np.array([0.2, 0.9, -0.4]), np.array([0.1, 1.2, -0.3]))),
    (poisson_rate, (np.array([0.2, 1.1]), np.array([1, 3]))),
]


@pytest.mark.parametrize("f,args", CASES, ids=[f"{f.__name__}{i}" for i, (f, _) in enumerate(CASES)])
def test_matches_finite_differences(f, args):
    argnums = tuple(i for i, a in enumerate(args)
                    if np.asarray(a).dtype.kind == "f")
    ad.check_grads(f, *args, argnums=argnums, tol=1e-5)   # raises GradientCheckError


def test_closed_form_normal():
    g = ad.grad(normal_lp, argnums=(0, 1, 2))(0.3, 1.7, 1.1)
    z = (1.1 - 0.3) / 1.7
    np.testing.assert_allclose(g, [z / 1.7, (z * z - 1) / 1.7, -z / 1.7], rtol=1e-12)


def truncated(mu, sigma, low):
    return dist.Truncated(dist.Normal(mu, sigma), low=low).logpdf(np.array([0.5, 1.5]))


def censored(mu, high):
    return dist.Censored(dist.Normal(mu, 1.0), high=high).logpdf(np.array([0.5, 2.0]))


def test_wrappers_differentiate_through_base_and_bounds():
    ad.check_grads(truncated, 0.2, 1.3, 0.0, argnums=(0, 1, 2), tol=1e-5)
    ad.check_grads(censored, 0.2, 2.0, argnums=(0,), tol=1e-5)
