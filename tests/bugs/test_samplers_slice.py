"""``sampler="slice"``: coordinate-wise slice sampling of the continuous parameters against
closed-form (conjugate) posteriors, with and without discrete nodes in the sweep."""
import numpy as np
import pytest
from scipy import stats

from dcgraph.bugs import compile
from dcgraph.bugs.fit import sample
from dcgraph.infer import mcse_mean

Y = [1.2, 0.4, 2.1, 1.7, 0.9, 1.5]


def close(x, dist):
    x = np.asarray(x)
    flat = x.reshape(x.shape[0], x.shape[1])
    assert abs(flat.mean() - dist.mean()) <= max(4 * mcse_mean(flat), 0.05 * dist.std())
    assert flat.std() == pytest.approx(dist.std(), rel=0.1)


def test_slice_normal_mean_and_gamma_precision():
    """Normal mean with known precision (normal-normal) and a gamma precision with a known
    mean (normal-gamma): both full conditionals are the exact posteriors."""
    text = ("model { for (i in 1:N) { y[i] ~ dnorm(mu, 4) \n z[i] ~ dnorm(1, tau) } "
            "mu ~ dnorm(0, 0.5) \n tau ~ dgamma(2, 3) }")
    model = compile(text, {"N": 6, "y": Y, "z": Y})
    r = sample(model, chains=4, draws=1000, warmup=300, seed=11, sampler="slice", progress=False)
    assert str(r.assignment) == "[1] slice sampler: mu, tau"
    prec = 0.5 + 4 * len(Y)
    close(r["mu"], stats.norm(4 * sum(Y) / prec, prec ** -0.5))
    ss = sum((v - 1) ** 2 for v in Y)
    close(r["tau"], stats.gamma(2 + len(Y) / 2, scale=1 / (3 + ss / 2)))


def test_slice_with_discrete_gibbs_beta_binomial():
    """A beta-binomial pair with one missing count: p's marginal posterior is Beta(a + 7, b + 3)."""
    text = "model { for (i in 1:3) { k[i] ~ dbin(p, 5) } \n p ~ dbeta(2, 2) }"
    model = compile(text, {"k": [4, 3, np.nan]})
    r = sample(model, chains=4, draws=1000, warmup=300, seed=4, sampler="slice", progress=False,
               monitor="p,k")
    assert str(r.assignment).splitlines() == ["[1] enumeration sampler: k[3]", "[2] slice sampler: p"]
    close(r["p"], stats.beta(2 + 7, 2 + 3))
    assert set(np.unique(r["k"][:, :, 2])) <= set(range(6))
