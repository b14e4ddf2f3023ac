"""Each BUGS distribution and function as compiled, against scipy / numpy in the OpenBUGS
parametrisation (the disagreements of bugs-reference.md pinned), truncation and censoring."""
import math

import numpy as np
import pytest
from scipy import special, stats

import dcgraph.bugs as B

# name, BUGS arguments, value, scipy log density
FAMILIES = [
    ("dnorm", "1.5, 4", 0.7, stats.norm.logpdf(0.7, 1.5, 0.5)),
    ("dlnorm", "0.2, 2", 1.3, stats.lognorm.logpdf(1.3, 1 / math.sqrt(2), scale=math.exp(0.2))),
    ("dt", "1, 4, 3", 0.2, stats.t.logpdf(0.2, 3, 1, 0.5)),
    ("dgamma", "2, 3", 0.8, stats.gamma.logpdf(0.8, 2, scale=1 / 3)),
    ("dexp", "2", 0.3, stats.expon.logpdf(0.3, scale=0.5)),
    ("dweib", "2, 3", 0.6, stats.weibull_min.logpdf(0.6, 2, scale=3 ** -0.5)),
    ("dbeta", "2, 5", 0.3, stats.beta.logpdf(0.3, 2, 5)),
    ("dunif", "-1, 3", 0.5, -math.log(4)),
    ("dchisqr", "3", 2.5, stats.chi2.logpdf(2.5, 3)),
    ("dpar", "3, 2", 2.5, stats.pareto.logpdf(2.5, 3, scale=2)),
    ("ddexp", "1, 2", 0.4, stats.laplace.logpdf(0.4, 1, 0.5)),          # scale 1/tau
    ("dlogis", "1, 2", 0.4, stats.logistic.logpdf(0.4, 1, 0.5)),        # scale 1/tau
    ("dinvgamma", "3, 2", 0.7, stats.invgamma.logpdf(0.7, 3, scale=2)),
    ("dflat", "", 12.0, 0.0),
    ("dloglik", "-2.5", 0.0, -2.5),
    ("dbern", "0.3", 1, math.log(0.3)),
    ("dbin", "0.3, 10", 4, stats.binom.logpmf(4, 10, 0.3)),             # p before n
    ("dpois", "2.5", 3, stats.poisson.logpmf(3, 2.5)),
    ("dnegbin", "0.4, 3", 5, stats.nbinom.logpmf(5, 3, 0.4)),
    ("dgeom", "0.3", 3, stats.geom.logpmf(3, 0.3)),                     # trials: x >= 1
    ("dgeom0", "0.3", 3, stats.geom.logpmf(4, 0.3)),
    ("dbetabin", "2, 3, 10", 4, stats.betabinom.logpmf(4, 10, 2, 3)),
    ("dcat", "p[]", 2, math.log(0.5)),
]


@pytest.mark.parametrize("dist,args,value,expected", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_observed_log_density(dist, args, value, expected):
    m = B.compile(f"model {{ x ~ {dist}({args}) }}", {"x": value, "p": [0.2, 0.5, 0.3]})
    assert m.logjoint({}) == pytest.approx(expected, rel=1e-12, abs=1e-12)


CONTINUOUS = [f for f in FAMILIES if f[0] not in
              ("dbern", "dbin", "dpois", "dnegbin", "dgeom", "dgeom0", "dbetabin", "dcat", "dflat",
               "dloglik")]


@pytest.mark.parametrize("dist,args,value,expected", CONTINUOUS, ids=[f[0] for f in CONTINUOUS])
def test_parameter_log_density_and_draws(dist, args, value, expected):
    m = B.compile(f"model {{ x ~ {dist}({args}) }}", {})
    theta = m.unconstrain({"x": value})
    assert m.constrained(theta)["x"] == pytest.approx(value, rel=1e-12)
    jac = {"real": lambda v: 0.0, "positive": math.log, "unit": lambda v: math.log(v * (1 - v)),
           "interval": lambda v: math.log((v + 1) * (3 - v) / 4),
           "above_c": lambda v: math.log(v - 2)}[m.parameters[0].support](value)
    assert m.logdensity(theta) == pytest.approx(expected + jac, rel=1e-10)
    draws = np.array([m.simulate(np.random.default_rng(s))["x"] for s in range(2000)])
    assert np.all(np.isfinite([m.logjoint({"x": d}) for d in draws[:50]]))


def test_truncation_normalises_and_censoring_does_not():
    t = B.compile("model { x ~ dnorm(1, 4)T(0.5, 2) }", {"x": 0.7})
    mass = stats.norm.cdf(2, 1, 0.5) - stats.norm.cdf(0.5, 1, 0.5)
    assert t.logjoint({}) == pytest.approx(stats.norm.logpdf(0.7, 1, 0.5) - math.log(mass))
    c = B.compile("model { x ~ dnorm(1, 4)C(0.5, 2) }", {"x": 0.7})
    assert c.logjoint({}) == pytest.approx(stats.norm.logpdf(0.7, 1, 0.5))
    i = B.compile("model { x ~ dnorm(1, 4)I(0.5, ) }", {"x": 0.7})   # WinBUGS I: as C
    assert i.logjoint({}) == pytest.approx(stats.norm.logpdf(0.7, 1, 0.5))
    # a truncated parameter with a parameter-dependent bound: support and normalisation follow it
    m = B.compile("model { a ~ dunif(0, 1)\n x ~ dexp(2)T(a, ) }", {})
    theta = np.array([0.3, -0.2])
    v = m.constrained(theta)
    a, x = v["a"], v["x"]
    assert x == pytest.approx(a + math.exp(-0.2))
    expected = (math.log(a * (1 - a)) - 0.2 + stats.expon.logpdf(x, scale=0.5)
                - stats.expon.logsf(a, scale=0.5))
    assert m.logdensity(theta) == pytest.approx(expected, rel=1e-12)
    draws = [m.simulate(np.random.default_rng(s)) for s in range(200)]
    assert all(d["x"] > d["a"] for d in draws)


FUNCTIONS = [
    ("step(0)", 1.0), ("step(-0.1)", 0.0), ("equals(2, 2)", 1.0), ("abs(-2)", 2.0),
    ("cloglog(0.3)", math.log(-math.log(0.7))), ("icloglog(0.2)", 1 - math.exp(-math.exp(0.2))),
    ("ilogit(0.4)", special.expit(0.4)), ("logit(0.2)", special.logit(0.2)),
    ("phi(0.3)", stats.norm.cdf(0.3)), ("probit(0.3)", stats.norm.ppf(0.3)),
    ("logfact(5)", math.log(120)), ("loggam(4.5)", math.lgamma(4.5)), ("pow(2, 0.5)", math.sqrt(2)),
    ("max(2, 3)", 3.0), ("min(2, 3)", 2.0), ("round(2.5)", 3.0), ("round(-2.5)", -3.0), ("max(v[])", 4.0), ("max(1, 5, 3)", 5.0), ("trunc(-2.5)", -3.0),
    ("sqrt(2)", math.sqrt(2)), ("exp(1)", math.e), ("log(2)", math.log(2)), ("cos(1)", math.cos(1)),
    ("sin(1)", math.sin(1)), ("tan(1)", math.tan(1)), ("arctan(1)", math.atan(1)),
    ("mean(v[])", 2.5), ("sum(v[])", 10.0), ("prod(v[])", 24.0), ("sd(v[])", np.std([4, 1, 3, 2], ddof=1)),
    ("inprod(v[], v[])", 30.0), ("rank(v[], 3)", 3.0), ("ranked(v[], 2)", 2.0),
    ("logdet(M[,])", math.log(5.0)), ("interp.lin(2, k[], w[])", 1.0), ("interp.lin(-1, k[], w[])", 1.0),
    ("sum(eigen.vals(M[,]))", 5.0), ("ranked(eigen.vals(M[,]), 2)", (5 + math.sqrt(5)) / 2), ("ifelse(0, 1, 2)", 2.0), ("cut(3)", 3.0),
]


@pytest.mark.parametrize("expr,expected", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_function_values(expr, expected):
    data = {"v": [4.0, 1.0, 3.0, 2.0], "M": [[2.0, 1.0], [1.0, 3.0]], "k": [0.0, 1.0, 3.0], "w": [1.0, 2.0, 0.0]}
    # evaluated at compile time (constant) and in generated code (depending on a parameter)
    const = B.compile(f"model {{ c <- {expr}\n y ~ dnorm(c, 1) }}", dict(data, y=0.0))
    assert const.logjoint({}) == pytest.approx(stats.norm.logpdf(0, expected, 1), rel=1e-12)
    live = B.compile(f"model {{ z ~ dnorm(0, 1)\n c <- {expr} + 0 * z\n y ~ dnorm(c, 1) }}",
                     dict(data, y=0.0))
    assert live.logjoint({"z": 0.5}) == pytest.approx(
        stats.norm.logpdf(0, expected, 1) + stats.norm.logpdf(0.5), rel=1e-12)


def test_vector_functions_as_blocks():
    m = B.compile("model { s[1:4] <- sort(v[] * a)\n W[1:2, 1:2] <- inverse(M[,] * a)\n"
                  " a ~ dunif(1, 2)\n for (i in 1:4) { y[i] ~ dnorm(s[i], 1) }\n"
                  " z ~ dnorm(W[1, 2], 1) }",
                  {"v": [4.0, 1.0, 3.0, 2.0], "M": [[2.0, 1.0], [1.0, 3.0]], "y": [0, 0, 0, 0], "z": 0})
    v = m.constrained(np.array([0.0]))
    np.testing.assert_allclose(v["s"], np.sort([4.0, 1.0, 3.0, 2.0]) * 1.5)
    np.testing.assert_allclose(v["W"], np.linalg.inv(np.array([[2.0, 1.0], [1.0, 3.0]]) * 1.5))


def test_aliases():
    m = B.compile("model { x ~ dbinom(0.3, 10) }", {"x": 4})
    assert m.logjoint({}) == pytest.approx(stats.binom.logpmf(4, 10, 0.3))


def test_truncation_with_constant_parameters_of_any_family():
    half_t = B.compile("model { x ~ dt(0, 1, 3)T(0, ) }", {"x": 0.7})
    assert half_t.logjoint({}) == pytest.approx(stats.t.logpdf(0.7, 3) + math.log(2))
    g = B.compile("model { for (i in 1:2) { x[i] ~ dgamma(2, 1)T(0.5, 3) } }", {"x": [1.0, 2.0]})
    mass = stats.gamma.cdf(3, 2) - stats.gamma.cdf(0.5, 2)
    assert g.logjoint({}) == pytest.approx(stats.gamma.logpdf([1.0, 2.0], 2).sum() - 2 * math.log(mass))
    p = B.compile("model { x ~ dpois(4)T(2, 6) }", {"x": 3})        # P(2 <= X <= 6)
    mass = stats.poisson.cdf(6, 4) - stats.poisson.cdf(1, 4)
    assert p.logjoint({}) == pytest.approx(stats.poisson.logpmf(3, 4) - math.log(mass))
    with pytest.raises(B.BUGSError, match="T\\(,\\) truncation of 'dgamma' needs constant parameters"):
        B.compile("model { a ~ dexp(1)\n x ~ dgamma(a, 1)T(0.5, ) }", {"x": 1.0})


def test_support_bounds_read_from_parameters_give_zero_density_outside():
    """``y ~ dunif(0, theta)`` and ``z ~ dpar(2, c)`` with data: a parameter value that puts the
    datum outside the support has density zero (joint and the gradient's value), not the
    density's formula continued."""
    m = B.compile("model { y ~ dunif(0, theta) \n theta ~ dgamma(1, 1) \n z ~ dpar(2, c) \n"
                  " c ~ dexp(1) }", {"y": 2.0, "z": 1.5})
    assert m.logjoint({"theta": 1.0, "c": 1.0}) == -math.inf           # y = 2 > theta
    assert m.logjoint({"theta": 3.0, "c": 2.0}) == -math.inf           # z = 1.5 < c
    inside = -3.0 - math.log(3.0) + stats.pareto.logpdf(1.5, 2, scale=1.0) - 1.0
    assert m.logjoint({"theta": 3.0, "c": 1.0}) == pytest.approx(inside, rel=1e-12)
    value, _ = m.logdensity_and_grad(m.unconstrain({"theta": 1.0, "c": 1.0}))
    assert value == -math.inf
