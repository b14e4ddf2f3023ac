"""Generated code for dgev, dgpar, df, dggamma, dhyper (OpenBUGS parametrisations) and the vector
functions interp.lin / eigen.vals: values against scipy, gradients against finite differences, draws
against scipy's laws (Kolmogorov-Smirnov, fixed seed)."""
import numpy as np
import pytest
from scipy import stats

import dcgraph.bugs as B
from dcgraph.dist import GeneralizedF, NoncentralHypergeometric

MODEL = """model {
  x ~ dgev(1, 2, 0.3)
  y ~ dgpar(0.5, 1.5, -0.2)
  z ~ df(3, 5, 1, 4)
  w ~ dggamma(2, 1.5, 0.7)
  g ~ dgev(mu, 2, 0)
  mu ~ dnorm(0, 1)
  psi ~ dgamma(2, 1)
  for (i in 1:3) { h[i] ~ dhyper(n[i], 6, 12, psi) }
  s ~ dgen.gamma(r, 1, 2)
  r ~ dexp(1)
  o[1] ~ dgev(mu, s, -0.3)
  o[2] ~ dgpar(mu, s, 0.4)
  o[3] ~ df(4, 7, mu, s)
}"""
DATA = {"n": [5, 3, 6], "h": [3, 1, 4], "o": [0.4, 0.9, 1.2]}
VALUES = {"x": 0.7, "y": 1.9, "z": 1.4, "w": 0.8, "g": -0.5, "mu": 0.1, "psi": 1.7, "s": 1.3, "r": 1.5}


def reference(v):
    lp = (stats.genextreme.logpdf(v["x"], -0.3, 1, 2) + stats.genpareto.logpdf(v["y"], -0.2, 0.5, 1.5)
          + stats.f.logpdf(v["z"], 3, 5, 1, 1 / np.sqrt(4)) + stats.gengamma.logpdf(v["w"], 2, 0.7, scale=1 / 1.5)
          + stats.gumbel_r.logpdf(v["g"], v["mu"], 2) + stats.norm.logpdf(v["mu"])
          + stats.gamma.logpdf(v["psi"], 2) + stats.gengamma.logpdf(v["s"], v["r"], 2)
          + stats.expon.logpdf(v["r"]))
    for n, h in zip(DATA["n"], DATA["h"]):      # dhyper(n, m, N, psi) = NCH(n1=n, n2=N-n, m1=m, psi)
        lp += float(NoncentralHypergeometric(n, 12 - n, 6, v["psi"]).logpdf(h))
    o = DATA["o"]
    lp += (stats.genextreme.logpdf(o[0], 0.3, v["mu"], v["s"]) + stats.genpareto.logpdf(o[1], 0.4, v["mu"], v["s"])
           + stats.f.logpdf(o[2], 4, 7, v["mu"], 1 / np.sqrt(v["s"])))
    return lp


@pytest.fixture(scope="module")
def model():
    return B.compile(MODEL, DATA)


def test_log_joint_matches_scipy(model):
    assert model.logjoint(VALUES) == pytest.approx(reference(VALUES), rel=1e-12)
    other = dict(VALUES, psi=0.4, mu=-0.3, s=0.8, x=-3.0, y=0.6)
    assert model.logjoint(other) == pytest.approx(reference(other), rel=1e-12)


def test_supports_from_the_parameters(model):
    support = {p.name: p.support for p in model.parameters}
    assert support["x"] == "gev" and support["y"] == "gpar" and support["z"] == "above_mu"
    rng = np.random.default_rng(3)
    for _ in range(5):
        v = model.simulate(rng)
        assert v["x"] > 1 - 2 / 0.3 and 0.5 <= v["y"] <= 0.5 + 1.5 / 0.2 and v["z"] > 1 and v["w"] > 0


def test_gradient_matches_finite_differences(model):
    rng = np.random.default_rng(1)
    size = sum(p.slice.stop - p.slice.start for p in model.parameters)
    theta = rng.normal(0.0, 0.3, size)
    value, grad = model.logdensity_and_grad(theta)
    assert value == pytest.approx(model.logdensity(theta), rel=1e-12)
    fd = np.array([(model.logdensity(theta + e) - model.logdensity(theta - e)) / 2e-6
                   for e in np.eye(size) * 1e-6])
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dist,law", [
    ("dgev(1, 2, 0.3)", stats.genextreme(-0.3, 1, 2)), ("dgev(1, 2, -0.3)", stats.genextreme(0.3, 1, 2)),
    ("dgev(1, 2, 0)", stats.gumbel_r(1, 2)), ("dgpar(0.5, 1.5, -0.2)", stats.genpareto(-0.2, 0.5, 1.5)),
    ("dgpar(0.5, 1.5, 0)", stats.expon(0.5, 1.5)), ("df(3, 5, 1, 4)", stats.f(3, 5, 1, 0.5)),
    ("dggamma(2, 1.5, 0.7)", stats.gengamma(2, 0.7, scale=1 / 1.5)),
])
def test_draws_follow_the_law(dist, law):
    m = B.compile(f"model {{ for (i in 1:2000) {{ x[i] ~ {dist} }} }}", {})
    x = np.asarray(m.simulate(np.random.default_rng(7))["x"])
    assert stats.kstest(x, law.cdf).pvalue > 1e-3
    assert m.logjoint({"x": x}) == pytest.approx(np.sum(law.logpdf(x)), rel=1e-10)


def test_dhyper_draws_follow_the_law():
    m = B.compile("model { for (i in 1:4000) { h[i] ~ dhyper(5, 6, 12, 1.7) } }", {})
    h = np.asarray(m.simulate(np.random.default_rng(2))["h"], dtype=int)
    p = np.exp(NoncentralHypergeometric(5, 7, 6, 1.7).logpmf_elementwise(np.arange(0, 6)))
    counts = np.bincount(h, minlength=6)
    assert stats.chisquare(counts, p * 4000).pvalue > 1e-3


def test_generalized_f_family_against_scipy():
    d = GeneralizedF(3.0, 5.0, 1.0, 4.0)
    x = np.array([1.1, 1.5, 3.0])
    law = stats.f(3, 5, 1, 0.5)
    np.testing.assert_allclose(d.logpdf_elementwise(x), law.logpdf(x), rtol=1e-12)
    np.testing.assert_allclose(np.exp(d.logcdf(x)), law.cdf(x), rtol=1e-10)
    assert float(d.mean) == pytest.approx(law.mean()) and float(d.var) == pytest.approx(law.var())
    g = d.grad_logpdf(1.8)
    for name, h in [("x", 1e-6), ("mu", 1e-6), ("tau", 1e-6), ("n", 1e-6), ("m", 1e-6)]:
        args = {"n": 3.0, "m": 5.0, "mu": 1.0, "tau": 4.0, "x": 1.8}

        def f(v, name=name):
            a = dict(args, **{name: v})
            return float(GeneralizedF(a["n"], a["m"], a["mu"], a["tau"]).logpdf(a["x"]))
        fd = (f(args[name] + h) - f(args[name] - h)) / (2 * h)
        assert float(g[name]) == pytest.approx(fd, rel=1e-6), name


def test_interp_lin_and_eigen_vals_in_generated_code_with_gradients():
    m = B.compile("""model {
      a ~ dnorm(0, 1)
      b ~ dnorm(0, 1)
      y <- interp.lin(a, k[], w[])
      M[1, 1] <- 2 + b
      M[1, 2] <- 0.5
      M[2, 1] <- 0.5
      M[2, 2] <- 1
      e[1:2] <- eigen.vals(M[,])
      obs ~ dnorm(y + e[1] * e[2] + e[2], 1)
    }""", {"k": [0.0, 1.0, 3.0], "w": [1.0, 2.0, 0.0], "obs": 0.5})

    def expected(a, b):
        ev = np.linalg.eigvalsh(np.array([[2 + b, 0.5], [0.5, 1.0]]))
        return (stats.norm.logpdf(a) + stats.norm.logpdf(b)
                + stats.norm.logpdf(0.5, np.interp(a, [0, 1, 3], [1, 2, 0]) + ev[0] * ev[1] + ev[1], 1))
    for a, b in [(0.4, 0.2), (2.2, -0.5), (-1.0, 1.0)]:
        assert m.logjoint({"a": a, "b": b}) == pytest.approx(expected(a, b), rel=1e-12)
    theta = np.array([1.6, 0.3])
    _, grad = m.logdensity_and_grad(theta)
    fd = [(m.logdensity(theta + e) - m.logdensity(theta - e)) / 2e-6 for e in np.eye(2) * 1e-6]
    np.testing.assert_allclose(grad, fd, rtol=1e-6)


def test_every_parsed_distribution_has_generated_code():
    from dcgraph.bugs import distributions, templates
    front = set(distributions.DISTRIBUTIONS)
    assert front == set(templates.DISTRIBUTIONS) | set(templates.ALIASES)
    for alias, name in templates.ALIASES.items():
        assert distributions.DISTRIBUTIONS[alias].params == distributions.DISTRIBUTIONS[name].params
