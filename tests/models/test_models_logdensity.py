"""Expression models: the rewritten log density against hand-written ones (every constraint
kind, Jacobians included), gradients against finite differences, compiled replay, errors."""
import math

import numpy as np
import pytest
from scipy import stats

from dcgraph.dist import bijectors as bj
from dcgraph.dist.bijectors_matrix import CorrCholesky, Ordered
from dcgraph.models import (ModelError, data, dirichlet, gamma, model, normal, param, uniform,
                            wishart)


@model
def regression(X, y):
    w = param(shape=X.shape[1])          # vector parameter
    b = param()                          # scalar
    s = param(lower=0.0)                 # constrained
    w |= normal(0.0, 10.0)
    b |= normal(0.0, 10.0)
    s |= uniform(0.0, 5.0)
    y |= normal(X @ w + b, s)            # y is data: an observation


def regression_by_hand(theta, X, y):
    w, b, u = theta[:3], theta[3], theta[4]
    s = math.exp(u)
    lp = stats.norm(0, 10).logpdf(w).sum() + stats.norm(0, 10).logpdf(b)
    lp += stats.uniform(0, 5).logpdf(s) + u
    return lp + stats.norm(X @ w + b, s).logpdf(y).sum()


@pytest.fixture(scope="module")
def xy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    return X, X @ np.array([1.0, 2.0, -1.0]) + 0.5 + 0.3 * rng.normal(size=40)


def numerical_gradient(f, theta, eps=1e-6):
    return np.array([(f(theta + eps * e) - f(theta - eps * e)) / (2 * eps)
                     for e in np.eye(len(theta))])


def test_regression_layout_and_names(xy):
    bound = regression(*xy)
    assert bound.dim == 5
    assert [(n, e.shape) for n, e in bound.layout.items()] == [("w", (3,)), ("b", ()), ("s", ())]
    assert repr(bound) == "<regression bound: w[3], b, s; dim 5>"


def test_regression_logdensity_equals_hand_written(xy):
    bound = regression(*xy)
    rng = np.random.default_rng(1)
    for _ in range(5):
        theta = rng.normal(scale=0.5, size=5)
        assert bound.logdensity(theta) == pytest.approx(regression_by_hand(theta, *xy), abs=1e-12,
                                                        rel=1e-12)
    assert regression.logdensity(theta, *xy) == bound.logdensity(theta)


def test_regression_gradient_and_compiled_path(xy):
    bound = regression(*xy)
    rng = np.random.default_rng(2)
    for _ in range(4):
        theta = rng.normal(scale=0.5, size=5)
        value, grad = bound.logdensity_and_grad(theta)
        assert value == pytest.approx(regression_by_hand(theta, *xy), abs=1e-10)
        np.testing.assert_allclose(grad, numerical_gradient(bound.logdensity, theta), rtol=1e-6,
                                   atol=1e-5)
    stats_ = bound.gradient_cache.stats
    assert stats_["compiles"] == 1 and stats_["hits"] == 3 and stats_["traces"] == 1, stats_


@model
def branching(y):
    z = param()
    if z > 0:
        z |= normal(1.0, 1.0)
    else:
        z |= normal(-1.0, 2.0)
    y |= normal(z, 1.0)


def test_branch_flip_retraces_and_stays_exact():
    bound = branching(0.3)
    points = [0.5, 0.7, 0.9, 1.1, -0.4, -0.8, 0.6]
    for z in points:
        value, grad = bound.logdensity_and_grad(np.array([z]))
        prior = stats.norm(1, 1).logpdf(z) if z > 0 else stats.norm(-1, 2).logpdf(z)
        assert value == pytest.approx(prior + stats.norm(z, 1).logpdf(0.3), abs=1e-12)
        dprior = -(z - 1) if z > 0 else -(z + 1) / 4
        assert grad[0] == pytest.approx(dprior + (0.3 - z), abs=1e-10)
    assert bound.gradient_cache.stats["guard_failures"] >= 1


# -- every constraint kind, Jacobians included -------------------------------------------------
@model
def constrained():
    a = param(lower=1.0)
    b = param(upper=2.0)
    c = param(lower=-1.0, upper=3.0)
    v = param(shape=2, lower=0.0)
    p = param(shape=3, kind="simplex")
    o = param(shape=3, kind="ordered")
    S = param(shape=(2, 2), kind="cov")
    L = param(shape=(3, 3), kind="corr_cholesky")
    a |= gamma(2.0, 1.0)
    b |= normal(0.0, 3.0)
    c |= normal(1.0, 1.0)
    v |= gamma(3.0, 2.0)
    p |= dirichlet(np.array([2.0, 3.0, 4.0]))
    o |= normal(0.0, 2.0)
    S |= wishart(4.0, np.eye(2))
    diag = np.diag(L)
    diag |= normal(0.8, 0.5)


def constrained_by_hand(t):
    lp = 0.0
    a = 1.0 + math.exp(t[0]); lp += t[0] + stats.gamma(2.0, scale=1.0).logpdf(a - 0.0)
    b = 2.0 - math.exp(t[1]); lp += t[1] + stats.norm(0, 3).logpdf(b)
    s = 1 / (1 + math.exp(-t[2])); c = -1.0 + 4.0 * s
    lp += math.log(4.0 * s * (1 - s)) + stats.norm(1, 1).logpdf(c)
    v = np.exp(t[3:5]); lp += t[3:5].sum() + stats.gamma(3.0, scale=0.5).logpdf(v).sum()
    sb = bj.StickBreaking()
    p = sb.forward(t[5:7]); lp += sb.log_abs_det_jacobian(t[5:7])
    lp += stats.dirichlet([2.0, 3.0, 4.0]).logpdf(p)
    o = np.cumsum([t[7], math.exp(t[8]), math.exp(t[9])]); lp += t[8] + t[9]
    lp += stats.norm(0, 2).logpdf(o).sum()
    Lc = np.array([[math.exp(t[10]), 0.0], [t[11], math.exp(t[12])]])
    S = Lc @ Lc.T; lp += 2 * math.log(2) + 3 * t[10] + 2 * t[12]
    lp += stats.wishart(df=4.0, scale=np.eye(2)).logpdf(S)
    cc = CorrCholesky()
    L = cc.forward(t[13:16]); lp += cc.log_abs_det_jacobian(t[13:16])
    lp += stats.norm(0.8, 0.5).logpdf(np.diag(L)).sum()
    return lp


def test_every_constraint_kind_equals_hand_written():
    bound = constrained()
    assert bound.dim == 16
    rng = np.random.default_rng(3)
    for _ in range(5):
        theta = rng.normal(scale=0.6, size=16)
        assert bound.logdensity(theta) == pytest.approx(constrained_by_hand(theta), abs=1e-12,
                                                        rel=1e-12)
    values = bound.constrain(theta)
    assert np.all(np.diff(values["o"]) > 0) and values["p"].sum() == pytest.approx(1.0)
    assert values["S"].shape == (2, 2) and np.allclose(np.diag(values["L"] @ values["L"].T), 1)
    np.testing.assert_allclose(bound.unconstrain(values), theta, atol=1e-9)


def test_every_constraint_kind_gradient():
    bound = constrained()
    theta = np.random.default_rng(4).normal(scale=0.6, size=16)
    _, grad = bound.logdensity_and_grad(theta)
    np.testing.assert_allclose(grad, numerical_gradient(bound.logdensity, theta), rtol=1e-6,
                               atol=1e-6)


# -- AutoPPL's example, data as arrays, loops ---------------------------------------------------
@model
def autoppl(x):
    w = param(lower=0.0, upper=1.0)
    w |= uniform(0, 1)
    x |= normal(2 * w, w * w)


def test_autoppl_example():
    bound = autoppl(data([0.5, 1.2, 0.9]))
    t = np.array([0.3])
    w = 1 / (1 + math.exp(-0.3))
    expect = math.log(w * (1 - w)) + stats.norm(2 * w, w * w).logpdf([0.5, 1.2, 0.9]).sum()
    assert bound.logdensity(t) == pytest.approx(expect, abs=1e-12)


@model
def hierarchical(y, sigma):
    mu = param()
    tau = param(lower=0.0)
    mu |= normal(0.0, 5.0)
    tau |= normal(0.0, 5.0)
    for j in range(len(y)):
        th = param()
        th |= normal(mu, tau)
        y[j] |= normal(th, sigma[j])
    flags = 1
    flags |= 2                           # |= on plain numbers keeps its meaning
    return flags


def test_loop_params_stack_and_plain_ior_kept():
    y, sigma = np.array([28.0, 8.0, -3.0]), np.array([15.0, 10.0, 16.0])
    bound = hierarchical(y, sigma)
    assert [(n, e.shape) for n, e in bound.layout.items()] == [("mu", ()), ("tau", ()),
                                                                ("th", (3,))]
    t = np.array([1.0, 0.5, 0.1, -0.2, 0.3])
    tau = math.exp(0.5)
    expect = stats.norm(0, 5).logpdf(1.0) + stats.norm(0, 5).logpdf(tau) + 0.5
    expect += stats.norm(1.0, tau).logpdf(t[2:]).sum() + stats.norm(t[2:], sigma).logpdf(y).sum()
    assert bound.logdensity(t) == pytest.approx(expect, abs=1e-12)
    np.testing.assert_allclose(bound.logdensity_and_grad(t)[1],
                               numerical_gradient(bound.logdensity, t), atol=1e-6)
    np.testing.assert_allclose(bound.constrain(t)["th"], t[2:])


# -- errors name the statement --------------------------------------------------------------
@model
def mismatch(y):
    m = param(shape=3)
    y |= normal(m[:, None], 1.0)


@model
def bad_scale(y):
    m = param(upper=2.0)
    y |= normal(0.0, m)


@model
def bad_left():
    m = param()
    name = "text"
    name |= normal(m, 1.0)


def test_shape_mismatch_names_the_statement():
    with pytest.raises(ModelError, match=r"test_models_logdensity.py:\d+: `y \|= normal\(m\[:, "
                                         r"None\], 1.0\)`: shape mismatch"):
        mismatch(np.zeros(3))


def test_bad_parameter_names_the_statement():
    bound = bad_scale(np.zeros(2))
    with pytest.raises(ValueError) as info:
        bound.logdensity(np.array([math.log(3.0)]))      # m = -1
    assert "y |= normal(0.0, m)" in "\n".join(getattr(info.value, "__notes__", [])) + str(info.value)


def test_ior_on_something_else_names_the_line():
    with pytest.raises(ModelError, match=r"`name \|= normal\(m, 1.0\)`: the left side of \|= must "
                                         r"be a parameter or data"):
        bad_left()


def test_param_outside_a_model_is_an_error():
    with pytest.raises(ModelError, match=r"test_models_logdensity.py:\d+: param\(\) must be assigned"):
        param(shape=2)


@model
def bad_kind():
    x = param(shape=3, kind="cov")


def test_bad_kind_names_the_line():
    with pytest.raises(ModelError, match=r"param 'x': kind='cov' needs shape=a square matrix"):
        bad_kind()


def test_wrong_vector_length():
    with pytest.raises(ValueError, match=r"expected a parameter vector of shape \(5,\)"):
        regression(np.zeros((2, 3)), np.zeros(2)).logdensity(np.zeros(4))


@model
def named():
    x = param(name="alpha", lower=0.0)
    x |= gamma(2.0, 1.0)


@model
def inline_param():
    w = 2.0 * param()
    w |= normal(0.0, 1.0)


def test_param_name_keyword_and_misuse():
    assert list(named().layout) == ["alpha"]
    with pytest.raises(ModelError, match=r"test_models_logdensity.py:\d+: param\(\) must be assigned "
                                         r"directly to a variable"):
        inline_param()


def test_unknown_sampler_is_an_error():
    with pytest.raises(ValueError, match="sampler must be one of"):
        named.sample(sampler="gibbs")


def test_models_may_be_closures():
    scale = 2.0

    @model
    def inner(y):
        m = param()
        y |= normal(m, scale)

    bound = inner(np.array([1.0, 2.0]))
    assert bound.logdensity(np.array([0.5])) == pytest.approx(
        stats.norm(0.5, 2.0).logpdf([1.0, 2.0]).sum(), abs=1e-12)
    assert bound.logdensity_and_grad(np.array([0.5]))[1][0] == pytest.approx(0.5 / 4 + 1.5 / 4)


def test_traced_log_density_tape_lints_and_marks_statements(xy):
    import dcgraph
    from dcgraph.models import runtime
    bound = regression(*xy)
    value, tape = dcgraph.track(regression.logdensity_function, bound.initial_point(), *xy)
    tape.lint()
    assert value == pytest.approx(bound.logdensity(bound.initial_point()), abs=1e-12)
    calls = [n for n in tape if isinstance(n, dcgraph.PrimitiveCall)]
    assert [n.loc.line for n in calls if n.fn is runtime.observe] == \
        [regression.fn.__code__.co_firstlineno + k for k in (5, 6, 7, 8)]
    assert [n.args[2].value.name for n in calls if n.fn is runtime.constrain] == ["w", "b", "s"]


@model
def nan_model(y):
    m = param(upper=2.0)
    with np.errstate(invalid="ignore"):
        loc = np.sqrt(m)
    y |= normal(loc, 1.0)


def test_nan_log_density_names_the_statement():
    bound = nan_model(np.zeros(2))
    with pytest.raises(ModelError, match=r"test_models_logdensity.py:\d+: `y \|= normal\(loc, 1.0\)`: "
                                         r"the log density is NaN"):
        bound.logdensity(np.array([math.log(3.0)]))          # m = -1
    with pytest.raises(ModelError, match="the log density is NaN"):
        bound.logdensity_and_grad(np.array([math.log(3.0)]))


def test_direct_compiled_calls_see_data_reshaped_in_place(xy):
    """``logdensity_and_grad`` keeps the structure key of its data while the arrays keep their
    shapes and dtypes; a reshape in place is seen (a new key, and the statement's error)."""
    X, y = xy[0], xy[1].copy()
    bound = regression(X, y)
    theta = np.array([0.3, -0.2, 0.1, 0.4, -0.5])
    for _ in range(4):
        value, grad = bound.logdensity_and_grad(theta)
    assert bound.gradient_cache.stats["hits"] == 3 and bound._direct
    key = bound._key
    assert bound.logdensity_and_grad(theta)[0] == value and bound._key is key
    y.resize((40, 1), refcheck=False)            # same size: reshaped in place
    with pytest.raises(ModelError, match="shape mismatch: the left side has shape"):
        bound.logdensity_and_grad(theta)
    assert bound._key != key


@model
def vector_priors(x, y):
    mu = param()
    tau = param(lower=0.0)
    w = param(shape=4)
    v = param(shape=3)
    mu |= normal(0.0, 3.0)
    tau |= gamma(2.0, 1.0)
    w |= normal(mu, tau)                    # vector left side, both sides' partials wanted
    v |= normal(1.5, np.float64(2.0))       # vector, float loc, numpy float scale
    y |= normal(w[0] + x * (v @ v), 0.5)    # observed vector, array loc
    z = 0.25
    z |= normal(w[1], tau)                  # float left side, parameters as floats


def vector_priors_by_hand(t, x, y):
    mu, u, w, v = t[0], t[1], t[2:6], t[6:9]
    tau = math.exp(u)
    return (stats.norm(0, 3).logpdf(mu) + stats.gamma(2.0).logpdf(tau) + u
            + stats.norm(mu, tau).logpdf(w).sum() + stats.norm(1.5, 2.0).logpdf(v).sum()
            + stats.norm(w[0] + x * (v @ v), 0.5).logpdf(y).sum()
            + stats.norm(w[1], tau).logpdf(0.25))


def test_vector_statement_fast_paths_against_finite_differences():
    """The fused normal on vectors: centred and shifted float locations, a parameter location
    and scale (the left side's and the parameters' partials from one forward pass), a numpy
    float scale; values against scipy, gradients against finite differences, on the traced
    and on the compiled path."""
    x = np.array([0.5, -1.0, 2.0])
    y = np.array([1.2, 0.3, 2.9])
    bound = vector_priors(x, y)
    rng = np.random.default_rng(7)
    for _ in range(5):
        t = rng.normal(scale=0.4, size=bound.dim)
        value, grad = bound.logdensity_and_grad(t)
        assert value == pytest.approx(vector_priors_by_hand(t, x, y), rel=1e-12, abs=1e-12)
        fd = numerical_gradient(lambda s: vector_priors_by_hand(s, x, y), t)
        np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-6)
    assert bound.gradient_cache.stats["hits"] >= 2
