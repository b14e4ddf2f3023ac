"""Exact enumeration updates of discrete BUGS nodes against closed-form conditionals."""
import numpy as np
import pytest
from scipy import stats

from dcgraph.bugs import compile
from dcgraph.bugs.fit import sample
from dcgraph.bugs.samplers import BUGSTarget, EnumerationSampler

TINY = "model { z ~ dcat(p[]) \n y ~ dnorm(mu[z], 1) \n k ~ dpois(lam) \n w ~ dbin(0.3, 5) }"
DATA = {"p": [0.2, 0.3, 0.5], "mu": [-1.0, 0.0, 2.0], "y": 0.5, "lam": 3.0}


def exact_z():
    w = np.array(DATA["p"]) * stats.norm.pdf(0.5, DATA["mu"], 1)
    return w / w.sum()


def test_conditional_enumerates_exact_pmf():
    model = compile(TINY, DATA)
    target = BUGSTarget(model)
    x = target.initial_point(0)
    enum = EnumerationSampler(target.logdensity, np.arange(3))
    for i, (support, pmf) in enumerate([(np.arange(1, 4), exact_z()),
                                        (None, stats.poisson(3.0)), (np.arange(6), stats.binom(5, 0.3).pmf(np.arange(6)))]):
        values, logw = enum.conditional(x, i)
        order = np.argsort(values)
        values, w = values[order], np.exp(logw[order] - logw.max())
        w /= w.sum()
        if support is not None:                 # finite support: every value, nothing else
            np.testing.assert_array_equal(values, support)
            np.testing.assert_allclose(w, pmf, rtol=1e-10)
        else:                                   # Poisson: truncated where the mass is < e^-40
            assert values[0] == 0 and pmf.sf(values[-1]) < 1e-12
            np.testing.assert_allclose(w, pmf.pmf(values) / pmf.cdf(values[-1]), rtol=1e-10)


def test_gibbs_draws_match_exact_distribution():
    model = compile(TINY, DATA)
    result = sample(model, chains=2, draws=2000, warmup=50, seed=3, progress=False)
    assert str(result.assignment) == ("[1] enumeration sampler: w\n[2] enumeration sampler: k\n"
                                      "[3] enumeration sampler: z")
    n = result.n_chains * result.n_draws
    for name, probs in [("z", np.r_[0, exact_z()]), ("w", stats.binom(5, 0.3).pmf(np.arange(6)))]:
        counts = np.bincount(result[name].astype(int).ravel(), minlength=len(probs))
        keep = probs > 0
        assert counts[~keep].sum() == 0
        assert stats.chisquare(counts[keep], probs[keep] * n).pvalue > 1e-3
    k = result["k"].ravel()
    assert stats.ks_2samp(k, stats.poisson(3.0).rvs(4000, random_state=1)).pvalue > 1e-3


def test_mixed_continuous_and_discrete_gibbs():
    """Missing Poisson counts with a gamma rate: NUTS for the rate, enumeration for the counts.
    The rate's marginal posterior is Gamma(a + sum(observed), b + n_observed)."""
    text = "model { for (i in 1:N) { x[i] ~ dpois(lam) } \n lam ~ dgamma(2, 1) }"
    model = compile(text, {"N": 6, "x": [3, 5, np.nan, 4, np.nan, 2]})
    result = sample(model, chains=2, draws=1500, warmup=300, seed=5, progress=False,
                    monitor="lam,x")
    assert str(result.assignment).splitlines() == ["[1] enumeration sampler: x[3:5] (2 nodes)",
                                                   "[2] conjugate_dgamma_dpois sampler: lam"]
    lam = result["lam"].ravel()
    post = stats.gamma(2 + 14, scale=1 / (1 + 4))
    assert abs(lam.mean() - post.mean()) < 0.1 * post.std() + 4 * lam.std() / np.sqrt(600)
    assert lam.std() == pytest.approx(post.std(), rel=0.15)
    x = result["x"]
    np.testing.assert_array_equal(x[:, :, 0], 3)          # observed values are monitored as data
    assert x[:, :, 2].mean() == pytest.approx(lam.mean(), rel=0.1)   # E[x3] = E[lam]
