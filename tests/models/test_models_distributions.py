"""The fast distribution expressions against ``dcgraph.dist`` (values, gradients, support,
parameter errors), and ``|=`` misuse outside a model."""
import pickle

import numpy as np
import pytest

from dcgraph.models import ModelError, data, model, normal, param
from dcgraph.models.distributions import FAMILIES, DistExpr

# family -> (parameters, values inside the support, a value outside or None)
CASES = {
    "normal": ((0.3, 1.7), np.array([-1.0, 0.2, 2.5]), None),
    "uniform": ((-1.0, 2.0), np.array([-0.5, 0.0, 1.9]), 2.5),
    "gamma": ((2.5, 1.5), np.array([0.2, 1.0, 3.0]), -0.1),
    "exponential": ((1.3,), np.array([0.0, 0.5, 2.0]), -1.0),
    "half_normal": ((0.8,), np.array([0.0, 0.4, 1.5]), -0.2),
    "lognormal": ((0.2, 0.6), np.array([0.3, 1.0, 2.2]), -1.0),
    "beta": ((2.0, 3.5), np.array([0.1, 0.5, 0.9]), 1.2),
    "bernoulli": ((0.3,), np.array([0.0, 1.0, 1.0]), 2.0),
    "poisson": ((2.5,), np.array([0.0, 3.0, 7.0]), 1.5),
}


def test_every_family_has_a_case():
    assert set(FAMILIES) == set(CASES) | {"lkj_cholesky"}      # LKJ: test_models_lkj.py


@pytest.mark.parametrize("family", sorted(CASES))
def test_log_density_and_gradient_equal_dcgraph_dist(family):
    params, x, outside = CASES[family]
    expr, d = DistExpr(family, params), FAMILIES[family][0](*params)
    assert expr.logpdf(x) == pytest.approx(float(d.logpdf(x)), abs=1e-12, rel=1e-12)
    mine, theirs = expr.grad_logpdf(x), d.grad_logpdf(x)
    if "x" in theirs:
        np.testing.assert_allclose(np.broadcast_to(mine["x"], x.shape), theirs["x"], rtol=1e-12,
                                   atol=1e-12, err_msg=f"{family}: d/dx")
    for name in FAMILIES[family][1]:        # dcgraph.dist sums to the (scalar) parameter's shape
        assert np.sum(np.broadcast_to(mine[name], x.shape)) == pytest.approx(
            float(theirs[name]), rel=1e-12, abs=1e-12), f"{family}: d/d{name}"
    for v in x:                              # the scalar (math) path
        assert expr.logpdf(float(v)) == pytest.approx(float(d.logpdf(v)), abs=1e-12, rel=1e-12)
    if outside is not None:
        assert expr.logpdf(np.append(x, outside)) == -np.inf
        assert expr.logpdf(float(outside)) == -np.inf


@pytest.mark.parametrize("loc, scale", [(0.3, 1.7), (np.array([0.1, -0.4, 2.0]), 0.9),
                                        (0.5, np.array([0.5, 1.0, 2.0]))])
def test_fused_normal_partials_equal_the_gradient(loc, scale):
    """The statement's fused path (forward keeps z; only the wanted partials; a scalar
    parameter's summed) against ``dcgraph.dist.Normal``."""
    import dcgraph.dist as D
    x = np.array([-1.0, 0.2, 2.5])
    expr, d = DistExpr("normal", (loc, scale)), D.Normal(loc, scale)
    assert expr.logpdf(x) == pytest.approx(float(d.logpdf(x)), rel=1e-13)
    theirs = d.grad_logpdf(x)
    for want_x, want_params in ((True, False), (False, True), (True, True)):
        mine = expr.partials(x, want_x, want_params)
        assert ("x" in mine) == want_x and ("loc" in mine) == want_params
        if want_x:
            np.testing.assert_allclose(mine["x"], theirs["x"], rtol=1e-12)
        if want_params:
            for name in ("loc", "scale"):
                np.testing.assert_allclose(np.sum(mine[name]) if np.ndim(theirs[name]) == 0
                                           else mine[name], theirs[name], rtol=1e-12)
    other = x + 1.0                          # another left side: z is not reused
    np.testing.assert_allclose(expr.partials(other, True, False)["x"],
                               D.Normal(loc, scale).grad_logpdf(other)["x"], rtol=1e-12)


def test_scalar_uniform_partials():
    import dcgraph.dist as D
    mine = DistExpr("uniform", (-1.0, 2.5)).partials(0.7, True, True)
    theirs = D.Uniform(-1.0, 2.5).grad_logpdf(0.7)
    for name in ("x", "low", "high"):
        assert mine[name] == pytest.approx(float(theirs[name]), rel=1e-14, abs=1e-15)


def test_bad_parameters_raise_the_family_error():
    with pytest.raises(ValueError, match="Normal: parameter 'scale' must be positive"):
        normal(0.0, -1.0).logpdf(0.0)
    with pytest.raises(ValueError, match="Uniform"):
        DistExpr("uniform", (2.0, 1.0)).logpdf(1.5)


def test_ior_outside_a_model_names_the_line():
    def helper(y):
        y |= normal(0.0, 1.0)
    for value in (1.0, np.zeros(2)):
        with pytest.raises(ModelError, match=r"test_models_distributions.py:\d+: `x \|= normal"
                                             r"\(\.\.\.\)` is a statement only directly"):
            helper(value)


@model
def small(y):
    m = param(lower=-3.0, upper=3.0)
    m |= normal(0.0, 1.0)
    y |= normal(m, 0.5)


def test_bound_models_pickle_by_reference():
    bound = small(data([0.1, 0.4]))
    copy = pickle.loads(pickle.dumps(bound))
    theta = np.array([0.3])
    assert copy.logdensity(theta) == bound.logdensity(theta)
    np.testing.assert_array_equal(copy.logdensity_and_grad(theta)[1],
                                  bound.logdensity_and_grad(theta)[1])


def test_optimize_with_and_without_jacobian():
    y = np.array([0.1, 0.4])
    mode = small.optimize(y)
    # the posterior mode of m: precision-weighted mean of prior 0 (sd 1) and data (sd 0.5)
    assert mode["m"] == pytest.approx(y.sum() / 0.25 / (1 + len(y) / 0.25), abs=1e-5)
    on_theta = small.optimize(y, jacobian=True)
    assert on_theta["m"] != pytest.approx(mode["m"], abs=1e-3)
    assert on_theta.logdensity >= small.logdensity(mode.theta, y) - 1e-9
