"""Multivariate nodes: dmnorm, dmt, dwish, ddirich, dmulti blocks, against scipy; the Jacobians
against dcgraph.dist's bijectors; gradients against central differences."""
import numpy as np
import pytest
from scipy import stats

import dcgraph.bugs as B
from dcgraph.dist.bijectors import CholeskyPD, StickBreaking

MODEL = """model {
  for (i in 1:N) { y[i, 1:2] ~ dmnorm(mu[], Omega[,]) }
  for (i in 1:N) { w[i, 1:2] ~ dmt(mu[], Omega[,], 5) }
  mu[1:2] ~ dmnorm(zero[], prec[,])
  Omega[1:2, 1:2] ~ dwish(R[,], 3)
  p[1:3] ~ ddirich(a[])
  counts[1:3] ~ dmulti(p[], 10)
  z ~ dnorm(p[2], 1)
}"""
DATA = {"N": 3, "y": [[1.0, 2.0], [0.5, 1.5], [2.0, 2.5]], "w": [[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]],
        "zero": [0.0, 0.0], "prec": [[0.1, 0.0], [0.0, 0.1]], "R": [[1.0, 0.2], [0.2, 1.0]],
        "a": [1.0, 2.0, 3.0], "counts": [2, 3, 5], "z": 0.3}


@pytest.fixture(scope="module")
def model():
    return B.compile(MODEL, DATA)


def _mvt_logpdf(x, mu, prec, k):
    return stats.multivariate_t.logpdf(x, mu, np.linalg.inv(prec), df=k)


def test_layout(model):
    assert model.parameter_names == ["mu[1]", "mu[2]", "Omega#1", "Omega#2", "Omega#3", "p#1", "p#2"]
    assert "Omega[1:2, 1:2] ~ dwish(R[, ], 3)" in model.program()
    assert "y[i, 1:2] \u2242 dmnorm(mu[], Omega[, ])" in model.program()


@pytest.mark.parametrize("seed", range(4))
def test_logjoint_matches_scipy(model, seed):
    theta = model.initial_values(0) if seed == 0 else \
        np.random.default_rng(seed).normal(size=model.dim) * 0.5
    v = model.constrained(theta)
    mu, om, p = v["mu"], v["Omega"], v["p"]
    cov = np.linalg.inv(om)
    ref = stats.multivariate_normal.logpdf(np.array(DATA["y"]), mu, cov).sum()
    ref += sum(_mvt_logpdf(np.array(w), mu, om, 5) for w in DATA["w"])
    ref += stats.multivariate_normal.logpdf(mu, [0, 0], np.linalg.inv(DATA["prec"]))
    ref += stats.wishart.logpdf(om, 3, np.linalg.inv(DATA["R"]))
    ref += stats.dirichlet.logpdf(p, DATA["a"]) + stats.multinomial.logpmf(DATA["counts"], 10, p)
    ref += stats.norm.logpdf(0.3, p[1], 1)
    assert model.logjoint(v) == pytest.approx(ref, rel=1e-10)
    jac = (CholeskyPD().log_abs_det_jacobian(theta[2:5])
           + StickBreaking().log_abs_det_jacobian(theta[5:7]))
    assert model.logdensity(theta) == pytest.approx(ref + jac, rel=1e-10)
    np.testing.assert_allclose(model.unconstrain(v), theta, atol=1e-10)
    np.testing.assert_allclose(om, CholeskyPD().forward(theta[2:5]), rtol=1e-12)
    np.testing.assert_allclose(p, StickBreaking().forward(theta[5:7]), rtol=1e-12)


def test_gradient(model):
    theta = np.random.default_rng(5).normal(size=model.dim) * 0.5
    _, g = model.logdensity_and_grad(theta)
    h = 1e-6
    fd = [(model.logdensity(theta + h * e) - model.logdensity(theta - h * e)) / (2 * h)
          for e in np.eye(model.dim)]
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)


def test_simulate(model):
    draws = [model.simulate(np.random.default_rng(s), observed=True) for s in range(300)]
    p = np.array([d["p"] for d in draws])
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert np.all(np.abs(p.mean(axis=0) - np.array([1, 2, 3]) / 6) < 0.06)
    om = np.array([d["Omega"] for d in draws])
    assert np.all(np.linalg.eigvalsh(om) > 0)
    scale = np.linalg.inv(DATA["R"])
    sd = np.sqrt(3 * (scale ** 2 + np.outer(np.diag(scale), np.diag(scale))) / len(draws))
    assert np.all(np.abs(om.mean(axis=0) - 3 * scale) < 4 * sd)      # E = k S, Var = k(S_ij^2 + S_ii S_jj)
    counts = np.array([d["counts"] for d in draws])
    assert np.all(counts.sum(axis=1) == 10)


def test_block_shape_errors():
    with pytest.raises(B.BUGSError, match="'dmnorm' cannot define a single node"):
        B.compile("model { x ~ dmnorm(m[], T[,]) }", {"m": [0.0, 0.0], "T": np.eye(2)})
    with pytest.raises(B.BUGSError, match="'dnorm' cannot define a block of nodes"):
        B.compile("model { x[1:2] ~ dnorm(0, 1) }", {})


def test_vector_valued_logical_nodes():
    m = B.compile("model { mu[1:2] ~ dmnorm(z[], T[,])\n m[1:2] <- mu[] * c[]\n"
                  " for (i in 1:2) { y[i] ~ dnorm(m[i], 1) } }",
                  {"z": [0.0, 0.0], "T": np.eye(2), "c": [2.0, 3.0], "y": [1.0, -1.0]})
    theta = np.array([0.3, -0.7])
    v = m.constrained(theta)
    np.testing.assert_allclose(v["m"], [0.6, -2.1])
    ref = stats.multivariate_normal.logpdf(theta, [0, 0], np.eye(2)) + \
        stats.norm.logpdf([1.0, -1.0], [0.6, -2.1]).sum()
    assert m.logdensity(theta) == pytest.approx(ref, rel=1e-12)


EYES_Y = [529.0, 530.0, 532.0, 533.1, 533.4, 533.6, 533.7, 534.1, 534.8, 535.3, 535.4, 535.9, 536.1,
          536.3, 536.4, 536.6, 537.0, 537.4, 537.5, 538.3, 538.5, 538.6, 539.4, 539.6, 540.4, 540.8,
          542.0, 542.8, 543.0, 543.5, 543.8, 543.9, 545.3, 546.2, 548.8, 548.7, 548.9, 549.0, 549.4,
          549.9, 550.6, 551.2, 551.4, 551.5, 551.6, 552.8, 552.9, 553.2]
EYES = """model {
  for (i in 1:N) {
    y[i] ~ dnorm(mu[T[i]], tau)
    T[i] ~ dcat(P[])
  }
  P[1:2] ~ ddirich(alpha[])
  theta ~ dunif(0, 1000)
  mu[2] <- mu[1] + theta
  mu[1] ~ dnorm(0, 1.0E-6)
  tau ~ dgamma(0.001, 0.001)
}"""


def test_mixture_with_stochastic_index():
    """OpenBUGS's Eyes: y[i] reads mu[T[i]] with T[i] a latent category (T given at both ends)."""
    t = [1] + [np.nan] * 46 + [2]
    m = B.compile(EYES, {"y": EYES_Y, "N": 48, "T": t, "alpha": [1, 1]},
                  {"mu": [540, np.nan], "theta": 10, "tau": 0.1})
    assert (m.dim, m.ndisc) == (4, 46)
    assert "y[i] \u2242 dnorm(mu[T[i]], tau)" in m.program()
    theta = m.initial_values(0)
    for flip in (False, True):
        if flip:
            m.discrete = 3 - m.discrete
        v = m.constrained(theta)
        mu = np.array([v["mu"][0], v["mu"][0] + v["theta"]])
        z = v["T"].astype(int)
        np.testing.assert_array_equal(z[1:47], m.discrete)
        ref = (stats.dirichlet.logpdf(v["P"], [1, 1]) + np.log(v["P"][z - 1]).sum()
               + stats.uniform.logpdf(v["theta"], 0, 1000) + stats.norm.logpdf(v["mu"][0], 0, 1000)
               + stats.gamma.logpdf(v["tau"], 0.001, scale=1000)
               + stats.norm.logpdf(EYES_Y, mu[z - 1], 1 / np.sqrt(v["tau"])).sum())
        assert m.logjoint({k: v[k] for k in ("P", "theta", "mu", "tau", "T")}) == \
            pytest.approx(ref, rel=1e-12)
        _, g = m.logdensity_and_grad(theta)
        fd = [(m.logdensity(theta + 1e-6 * e) - m.logdensity(theta - 1e-6 * e)) / 2e-6
              for e in np.eye(m.dim)]
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-5)
    draws = np.array([m.simulate(np.random.default_rng(s))["T"] for s in range(20)])
    assert set(np.unique(draws)) == {1.0, 2.0} and np.all(draws[:, 0] == 1) and np.all(draws[:, -1] == 2)
