"""Conjugate updates chosen by ``sampler="auto"``: the assignment (text) and the draws against the
closed-form posteriors (Kolmogorov-Smirnov, fixed seeds, tiny models whose only parameter is
updated exactly, so the draws are independent)."""
import numpy as np
import pytest
from scipy import stats

from dcgraph.bugs import compile
from dcgraph.bugs.fit import sample

KS_P = 0.01


def draws(model, name, n=3000, seed=0):
    r = sample(model, chains=1, draws=n, warmup=20, seed=seed, monitor=name, progress=False)
    return r[name][0]


def ks_ok(x, dist):
    return stats.kstest(np.ravel(x), dist.cdf).pvalue > KS_P


def test_normal_mean_with_linear_regression_children():
    y, a, b = np.array([1.2, -0.4, 2.5, 0.3]), np.array([0.5, 1.0, 2.0, -1.5]), np.array([0.1, 0.0, -0.3, 1.0])
    model = compile("model { mu ~ dnorm(1, 0.25) \n for (i in 1:4) { m[i] <- a[i] * mu + b[i] \n"
                    "y[i] ~ dnorm(m[i], tau) } }", {"y": y, "a": a, "b": b, "tau": 2.0})
    assert str(model.samplers()) == "[1] conjugate_dnorm_dnorm sampler: mu"
    prec = 0.25 + 2.0 * np.sum(a * a)
    mean = (0.25 * 1 + 2.0 * np.sum(a * (y - b))) / prec
    assert ks_ok(draws(model, "mu"), stats.norm(mean, 1 / np.sqrt(prec)))
    assert not ks_ok(draws(model, "mu"), stats.norm(mean + 0.1 / np.sqrt(prec), 1 / np.sqrt(prec)))


def test_gamma_precision_of_normal_children():
    y = np.array([0.3, -1.2, 2.2, 0.9, -0.1])
    model = compile("model { tau ~ dgamma(2, 3) \n for (i in 1:5) { y[i] ~ dnorm(mu[i], tau) } }",
                    {"y": y, "mu": [0.0, 0.5, 1.0, 1.5, 2.0]})
    assert str(model.samplers()) == "[1] conjugate_dgamma_dnorm sampler: tau"
    rate = 3 + 0.5 * np.sum((y - np.array([0.0, 0.5, 1.0, 1.5, 2.0])) ** 2)
    assert ks_ok(draws(model, "tau"), stats.gamma(2 + 2.5, scale=1 / rate))


def test_gamma_with_poisson_and_exponential_children():
    x, t, e = np.array([3, 0, 7]), np.array([1.5, 0.5, 2.0]), np.array([0.2, 1.4])
    model = compile("model { for (i in 1:3) { lam[i] <- theta * t[i] \n x[i] ~ dpois(lam[i]) }\n"
                    "for (j in 1:2) { e[j] ~ dexp(theta) } \n theta ~ dgamma(0.5, 1) }",
                    {"x": x, "t": t, "e": e})
    assert str(model.samplers()) == "[1] conjugate_dgamma_dexp_dpois sampler: theta"
    shape, rate = 0.5 + x.sum() + 2, 1 + t.sum() + e.sum()
    assert ks_ok(draws(model, "theta"), stats.gamma(shape, scale=1 / rate))


def test_beta_with_binomial_and_bernoulli_children():
    model = compile("model { p ~ dbeta(2, 3) \n for (i in 1:3) { r[i] ~ dbin(p, n[i]) } \n"
                    "for (j in 1:4) { z[j] ~ dbern(p) } }",
                    {"r": [2, 5, 1], "n": [4, 9, 6], "z": [1, 0, 0, 1]})
    assert str(model.samplers()) == "[1] conjugate_dbeta_dbern_dbin sampler: p"
    assert ks_ok(draws(model, "p"), stats.beta(2 + 8 + 2, 3 + 11 + 2))


def test_dirichlet_with_categorical_and_multinomial_children():
    model = compile("model { pi[1:3] ~ ddirich(alpha[]) \n for (i in 1:4) { c[i] ~ dcat(pi[]) } \n"
                    "x[1:3] ~ dmulti(pi[], 6) }",
                    {"alpha": [1.0, 2.0, 0.5], "c": [1, 3, 3, 2], "x": [2, 1, 3]})
    assert str(model.samplers()) == "[1] conjugate_ddirich_dcat_dmulti sampler: pi[1:3] (3 nodes)"
    post = np.array([1.0, 2.0, 0.5]) + [1, 1, 2] + [2, 1, 3]
    x = draws(model, "pi")
    np.testing.assert_allclose(x.sum(axis=-1), 1.0, rtol=1e-12)
    for k in range(3):
        assert ks_ok(x[:, k], stats.beta(post[k], post.sum() - post[k]))


def test_wishart_with_multivariate_normal_children():
    y = np.array([[0.5, 1.0], [-0.3, 0.2], [1.1, -0.7]])
    R = np.array([[2.0, 0.3], [0.3, 1.0]])
    model = compile("model { Omega[1:2, 1:2] ~ dwish(R[,], 4) \n"
                    "for (i in 1:3) { y[i, 1:2] ~ dmnorm(mu[], Omega[,]) } }",
                    {"y": y, "R": R, "mu": [0.0, 0.1]})
    assert str(model.samplers()) == "[1] conjugate_dwish_dmnorm sampler: Omega[1:2,1:2] (4 nodes)"
    r = y - [0.0, 0.1]
    scale = np.linalg.inv(R + r.T @ r)               # posterior Wishart(4 + 3, scale)
    x = draws(model, "Omega", n=2000)
    for k in range(2):                               # diagonal: scale[k, k] * chi2(7)
        assert ks_ok(x[:, k, k], stats.chi2(7, scale=scale[k, k]))
    np.testing.assert_allclose(x.mean(axis=0), 7 * scale, rtol=0.08)


@pytest.mark.parametrize("text, auto", [
    ("model { mu ~ dnorm(0, 1) \n for (i in 1:2) { y[i] ~ dnorm(mu * mu, 1) } }", "slice"),  # not affine
    ("model { mu ~ dnorm(0, 1) \n for (i in 1:2) { y[i] ~ dnorm(mu, exp(mu)) } }", "slice"),  # in the precision
    ("model { mu ~ dnorm(0, 1) \n for (i in 1:2) { y[i] ~ dt(mu, 1, 4) } }", "slice"),        # no rule
    ("model { mu ~ dnorm(0, 1)T(0, ) \n for (i in 1:2) { y[i] ~ dnorm(mu, 1) } }", "NUTS"),   # truncated
])
def test_non_conjugate_nodes_are_sliced_or_go_to_nuts(text, auto):
    """A lone non-conjugate univariate node is sliced on its blanket; a truncated node (no
    node-level density) stays with NUTS."""
    model = compile(text, {"y": [0.5, 1.5]})
    assert str(model.samplers()) == f"[1] {auto} sampler: mu"
    assert str(model.samplers("nuts")) == "[1] NUTS sampler: mu"


def test_pumps_assignment_prints_like_configure_mcmc():
    from bugs_compile_cases import compiled
    assert str(compiled("pumps").samplers()) == (
        "[1] conjugate_dgamma_dpois (vectorised) sampler: theta[1:10] (10 nodes)\n"
        "[2] slice (beta integrated out) sampler: alpha\n"
        "[3] conjugate_dgamma_dgamma (with alpha) sampler: beta")
    assert str(compiled("pumps").samplers("nuts")) == "[1] NUTS sampler: alpha, beta, theta[1:10] (10 nodes)"
