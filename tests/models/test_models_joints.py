"""Joint statement rules (``dcgraph.models.joints``): compiled replay pulls ``x |= family(...)``
back in one call; its gradients equal the unfused traced sweep (the value rules) to 1e-12 and
finite differences, for every family of ``distributions.FAMILIES`` with scalar, vector and
broadcast arguments and values outside the support."""
import math
import re

import numpy as np
import pytest
from scipy import stats

from dcgraph.ad import defjoint, defscatter
from dcgraph.ad.registry import lookup
from dcgraph.ad.values import unbroadcast
from dcgraph.models import (bernoulli, beta, exponential, gamma, half_normal, lognormal, model,
                            normal, param, poisson, uniform)
from dcgraph.models.distributions import normal as normal_factory
from dcgraph.models.joints import observe_joint
from dcgraph.models.runtime import (constrain, constrain_scatter, observe, observe_vjp_d,
                                    observe_vjp_x)


def numerical_gradient(f, theta, eps=1e-6):
    return np.array([(f(theta + eps * e) - f(theta - eps * e)) / (2 * eps)
                     for e in np.eye(len(theta))])


def compiled_source(bound) -> str:
    (path, _binding), = next(iter(bound.gradient_cache.paths.values()))
    return path.source


def fused_and_traced(mdl, args, points):
    """(fused bound model, [(point, fused value+gradient, traced value+gradient)]): the fused
    one is warmed up onto its compiled path; the reference never compiles (traced sweep)."""
    fused, ref = mdl(*args), mdl(*args)
    ref.gradient_cache.disable("the reference: the traced sweep of the value rules")
    for _ in range(4):
        fused.logdensity_and_grad(points[0])
    out = [(t, fused.logdensity_and_grad(t), ref.logdensity_and_grad(t)) for t in points]
    assert fused.gradient_cache.stats["hits"] >= len(points) + 1
    assert ref.gradient_cache.stats["hits"] == 0
    return fused, out


@model
def every_family(xv, xm, unit, counts, flags, pos):
    mu = param()
    s = param(lower=0.0)
    a = param(lower=0.0)
    p = param(lower=0.0, upper=1.0)
    v = param(shape=3)
    c = param(shape=4, lower=0.0)
    mu |= normal(0.0, 2.0)
    s |= gamma(2.0, 1.5)
    a |= exponential(1.0)
    p |= beta(2.0, 2.0)
    v |= normal(mu, s)                       # vector left side, scalar parameters (both wanted)
    c |= half_normal(s)
    xv |= normal(v, s)                       # data vector, vector location
    xm |= normal(v, s)                       # (4, 3) data: the location's partial summed over rows
    xm |= normal(c[:, None], a)              # a (4, 1) location broadcast over columns
    pos |= lognormal(mu, s)
    pos |= gamma(a, s)
    pos |= exponential(a)
    unit |= beta(a, s)
    unit |= uniform(mu - 5.0, s + 5.0)
    counts |= poisson(a)
    flags |= bernoulli(p)
    z = 0.4
    z |= normal(mu, a)                       # float left side, float parameters


def every_family_by_hand(t, xv, xm, unit, counts, flags, pos):
    mu, s, a = t[0], math.exp(t[1]), math.exp(t[2])
    p = 1 / (1 + math.exp(-t[3]))
    v, c = t[4:7], np.exp(t[7:11])
    lp = t[1] + t[2] + math.log(p * (1 - p)) + t[7:11].sum()
    lp += stats.norm(0, 2).logpdf(mu) + stats.gamma(2.0, scale=1 / 1.5).logpdf(s)
    lp += stats.expon().logpdf(a) + stats.beta(2, 2).logpdf(p)
    lp += stats.norm(mu, s).logpdf(v).sum() + stats.halfnorm(scale=s).logpdf(c).sum()
    lp += stats.norm(v, s).logpdf(xv).sum() + stats.norm(v, s).logpdf(xm).sum()
    lp += stats.norm(c[:, None], a).logpdf(xm).sum()
    lp += stats.lognorm(s, scale=math.exp(mu)).logpdf(pos).sum()
    lp += stats.gamma(a, scale=1 / s).logpdf(pos).sum() + stats.expon(scale=1 / a).logpdf(pos).sum()
    lp += stats.beta(a, s).logpdf(unit).sum()
    lp += stats.uniform(mu - 5.0, s + 10.0 - mu).logpdf(unit).sum()
    lp += stats.poisson(a).logpmf(counts).sum() + stats.bernoulli(p).logpmf(flags).sum()
    return lp + stats.norm(mu, a).logpdf(0.4)


DATA = (np.array([0.3, -1.2, 0.8]), np.arange(12.0).reshape(4, 3) / 6 - 1.0,
        np.array([0.2, 0.55, 0.9]), np.array([0.0, 2.0, 5.0]), np.array([1.0, 0.0, 1.0]),
        np.array([0.4, 1.7]))


def test_every_family_fused_equals_traced_and_finite_differences():
    rng = np.random.default_rng(11)
    points = [rng.normal(scale=0.4, size=11) for _ in range(4)]
    fused, runs = fused_and_traced(every_family, DATA, points)
    source = compiled_source(fused)
    assert source.count("_joint(") == 15 and "observe_vjp" not in source
    zs = re.findall(r"\((_z[0-9]+) := \(", source)    # normal on floats (mu, z): written out,
    assert len(zs) == 2 and all(re.search(rf"g[0-9]+ = .*\b{z}\b", source) for z in zs)
    for family in ("normal", "gamma", "exponential", "beta", "half_normal", "lognormal",
                   "uniform", "poisson", "bernoulli"):
        assert f"observe_{family}_joint(" in source
    assert "factory_argument" not in source
    assert "constrain_scatter" in source and "log_jacobian_scatter" in source       # one buffer
    assert "constrain_vjp_theta" not in source and "_acc(" not in source.split("_zeros((11,))")[1]
    for t, (v1, g1), (v2, g2) in runs:
        assert v1 == pytest.approx(every_family_by_hand(t, *DATA), rel=1e-12, abs=1e-10)
        assert v1 == v2
        np.testing.assert_allclose(g1, g2, rtol=1e-12, atol=1e-12)
        fd = numerical_gradient(lambda s: every_family_by_hand(s, *DATA), t)
        np.testing.assert_allclose(g1, fd, rtol=1e-6, atol=1e-5)


@model
def bounded(y, pos):
    s = param(lower=0.0)
    m = param()
    s |= uniform(0.0, 5.0)
    m |= normal(0.0, 1.0)
    pos |= gamma(s, 1.0)
    y |= uniform(m - 1.0, m + 1.0)


def test_support_boundaries_minus_infinity_on_the_compiled_path():
    """Outside the support the log density is -inf on the fused path as on the traced one,
    with the same (finite) gradient."""
    y, pos = np.array([0.2, 0.5]), np.array([0.5, 1.5])
    inside = np.array([math.log(2.0), 0.1])
    points = [inside, np.array([math.log(6.0), 0.1]),         # s outside (0, 5)
              np.array([math.log(2.0), 1.8]),                   # y[0] below m - 1
              inside]
    fused, runs = fused_and_traced(bounded, (y, pos), points)
    assert "observe_uniform_joint(" in compiled_source(fused)
    values = [v1 for _, (v1, _), _ in runs]
    assert math.isfinite(values[0]) and values[1] == -math.inf and values[2] == -math.inf
    for t, (v1, g1), (v2, g2) in runs:
        assert v1 == v2
        np.testing.assert_allclose(g1, g2, rtol=1e-12, atol=1e-12)
    gamma_x = np.array([[-1.0, 2.0]])                           # data outside gamma's support
    assert bounded(y, gamma_x).logdensity(inside) == -math.inf


def test_joint_rule_scales_by_the_adjoint_and_matches_the_value_rules():
    """``observe_joint`` against ``observe_vjp_x`` / ``observe_vjp_d`` on scalar, vector and
    broadcast arguments, for a seed other than 1."""
    rng = np.random.default_rng(3)
    cases = [(0.7, 0.2, 1.3), (rng.normal(size=5), 0.2, 1.3), (rng.normal(size=5), 0.0, 2.0),
             (rng.normal(size=(2, 3)), rng.normal(size=3), np.array([[0.5], [2.0]])),
             (rng.normal(size=4), rng.normal(size=4), 0.8)]
    for x, loc, scale in cases:
        for g in (1.0, -2.5):
            d = normal_factory(loc, scale)
            ans = observe(x, d, 7)
            joint = observe_joint((True, False, True, True), g, ans, x, d, 7)
            gx = observe_vjp_x(g, ans, x, d, 7)
            gd = observe_vjp_d(g, ans, x, d, 7)
            np.testing.assert_allclose(joint[0], gx, rtol=1e-12, atol=1e-14)
            assert joint[1] is None
            for k, name in ((2, "loc"), (3, "scale")):
                param_ = d.params[k - 2]
                np.testing.assert_allclose(joint[k], unbroadcast(param_, gd[name]), rtol=1e-12,
                                           atol=1e-13)
                assert np.shape(joint[k]) == np.shape(param_)


def test_defjoint_and_defscatter_need_value_rules_and_named_functions():
    def lone(x):
        return x
    with pytest.raises(TypeError, match="register its value rules first"):
        defjoint(lone, 0, {normal: observe_joint})
    with pytest.raises(TypeError, match="register its value rules first"):
        defscatter(lone, constrain_scatter, 0)
    with pytest.raises(TypeError, match="named functions"):
        defjoint(observe, 1, {normal: lambda *a: a})
    with pytest.raises(TypeError, match="named functions"):
        defscatter(constrain, lambda *a: a, 0)
    assert lookup(lone) is None


@model
def shared_expression(y):
    mu = param()
    s = param(lower=0.0)
    d = normal(mu, s)                        # one expression, two statements
    mu |= normal(0.0, 3.0)
    s |= gamma(2.0, 2.0)
    y |= d
    y[0] |= d
    y |= normal(loc=mu, scale=2.0)           # keywords: the value rules (no joint rule)


def shared_expression_by_hand(t, y):
    mu, s = t[0], math.exp(t[1])
    return (t[1] + stats.norm(0, 3).logpdf(mu) + stats.gamma(2.0, scale=0.5).logpdf(s)
            + stats.norm(mu, s).logpdf(y).sum() + stats.norm(mu, s).logpdf(y[0])
            + stats.norm(mu, 2.0).logpdf(y).sum())


def test_an_expression_in_two_statements_and_keyword_factories():
    y = np.array([0.4, -0.3, 1.1, 0.8])
    points = [np.array([0.2, -0.1]), np.array([-0.5, 0.4]), np.array([0.9, 0.2])]
    fused, runs = fused_and_traced(shared_expression, (y,), points)
    source = compiled_source(fused)
    assert source.count("observe_normal_joint(") == 1 and "observe_vjp_d" in source
    zs = re.findall(r"\((_z[0-9]+) := \(", source)    # on floats (mu, y[0], a float64 once
    assert len(zs) == 2                                # one guard of y's type and dtype holds)
    assert all(re.search(rf"g[0-9]+ = .*\b{z}\b", source) for z in zs)
    for t, (v1, g1), (v2, g2) in runs:
        assert v1 == pytest.approx(shared_expression_by_hand(t, y), rel=1e-12)
        np.testing.assert_allclose(g1, g2, rtol=1e-12, atol=1e-12)
        fd = numerical_gradient(lambda s: shared_expression_by_hand(s, y), t)
        np.testing.assert_allclose(g1, fd, rtol=1e-6, atol=1e-6)
