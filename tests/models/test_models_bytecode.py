"""Models read from their bytecode (``bytecode_rewrite``): functions made by ``exec`` of a
string with no source anywhere. The same text given as ``source=`` (the syntax-tree rewrite)
is the reference: log densities equal to 1e-12, gradients against finite differences, same
layout; and the errors when the bytecode cannot be read or a ``|=`` is not a statement."""
import math

import numpy as np
import pytest
from scipy import stats

import dcgraph

from dcgraph.models import ModelError, model

MODELS = """\
import numpy as np
from dcgraph.models import param, normal, gamma, uniform

def regression(X, y):
    w = param(shape=X.shape[1])
    b = param()
    s = param(lower=0.0)
    w |= normal(0.0, 10.0)
    b |= normal(0.0, 10.0)
    s |= uniform(0.0, 5.0)
    y |= normal(X @ w + b, s)
    return w

def schools(y, sigma):
    mu = param()
    tau = param(lower=0.0)
    mu |= normal(0.0, 5.0)
    tau |= normal(0.0, 5.0)
    for j in range(len(y)):
        theta = param()
        theta |= normal(mu, tau)
        y[j] |= normal(theta, sigma[j])

def branching(y, box):
    z = param()
    if z > 0:
        z |= normal(1.0, 1.0)
    else:
        z |= normal(-1.0, 2.0)
    box.value |= normal(z, 1.0)
    y |= normal(z, 1.0)

def make(scale):
    p = param
    def inner(y):
        m = p(lower=-3.0, upper=3.0)
        m |= normal(0.0, scale)
        def helper():
            return m
        y |= normal(helper(), 1.0)
    return inner
"""

NOT_A_STATEMENT = """\
from dcgraph.models import param, normal

def flags(y):
    m = param()
    k = 1
    m |= normal(0.0, 1.0)
    k |= 2
    y |= normal(m, 1.0)
"""

GENERATOR = """\
from dcgraph.models import param, normal

def gen(y):
    m = param()
    yield m
"""


class Box:
    value = 0.25


def namespace(text):
    ns = {"__name__": "m10_bytecode"}
    exec(compile(text, "<string>", "exec"), ns)
    return ns


def fd(f, theta, eps=1e-6):
    return np.array([(f(theta + eps * e) - f(theta - eps * e)) / (2 * eps)
                     for e in np.eye(len(theta))])


def same_model(fn, args, points):
    by_code = model(fn)
    assert by_code._source is None
    by_text = model(fn, source=MODELS)
    a, b = by_code(*args), by_text(*args)
    assert list(a.layout) == list(b.layout) and a.dim == b.dim
    rng = np.random.default_rng(3)
    for _ in range(points):
        theta = rng.normal(scale=0.4, size=a.dim)
        assert a.logdensity(theta) == pytest.approx(b.logdensity(theta), rel=1e-12, abs=1e-12)
        value, grad = a.logdensity_and_grad(theta)
        assert value == pytest.approx(b.logdensity(theta), rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(grad, fd(b.logdensity, theta), rtol=1e-6, atol=1e-5)
    return a


def test_regression_from_bytecode_equals_the_source_rewrite():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.3 + 0.4 * rng.normal(size=30)
    bound = same_model(namespace(MODELS)["regression"], (X, y), 5)
    assert [(n, e.shape) for n, e in bound.layout.items()] == [("w", (3,)), ("b", ()), ("s", ())]
    theta = np.array([0.5, -1.0, 0.2, 0.3, -0.4])
    w, b, s = theta[:3], theta[3], math.exp(theta[4])
    want = (stats.norm(0, 10).logpdf(w).sum() + stats.norm(0, 10).logpdf(b)
            + stats.uniform(0, 5).logpdf(s) + theta[4] + stats.norm(X @ w + b, s).logpdf(y).sum())
    assert bound.logdensity(theta) == pytest.approx(want, rel=1e-12)
    for _ in range(3):                                       # the compiled path
        bound.logdensity_and_grad(theta)
    assert bound.gradient_cache.stats["hits"] >= 1
    _, tape = dcgraph.track(bound._fn, theta, X, y)
    tape.lint()
    by_text = model(namespace(MODELS)["regression"], source=MODELS)(X, y)
    assert str(bound.graph()) == str(by_text.graph()) == (
        "<ModelGraph regression: params w, b, s; data y\n"
        "  line 8: w |= normal\n  line 9: b |= normal\n  line 10: s |= uniform\n"
        "  line 11: y |= normal  <- w(data), b(data), s(data)>")


def test_loop_with_item_statements_from_bytecode():
    y = np.array([28.0, 8.0, -3.0, 7.0])
    sigma = np.array([15.0, 10.0, 16.0, 11.0])
    bound = same_model(namespace(MODELS)["schools"], (y, sigma), 4)
    assert list(bound.layout) == ["mu", "tau", "theta"] and bound.dim == 6


def test_branch_and_attribute_statement_from_bytecode():
    bound = same_model(namespace(MODELS)["branching"], (0.3, Box()), 6)
    for z in (0.8, -0.6):
        prior = stats.norm(1, 1).logpdf(z) if z > 0 else stats.norm(-1, 2).logpdf(z)
        want = prior + stats.norm(z, 1).logpdf(0.25) + stats.norm(z, 1).logpdf(0.3)
        assert bound.logdensity(np.array([z])) == pytest.approx(want, rel=1e-12)


def test_closure_param_and_cell_variable_from_bytecode():
    inner = namespace(MODELS)["make"](2.0)
    y = np.array([0.4, -0.2])
    bound = same_model(inner, (y,), 4)
    u = 0.3
    m = -3.0 + 6.0 / (1.0 + math.exp(-u))
    jac = math.log(6.0) + math.log(1 / (1 + math.exp(-u))) + math.log(1 - 1 / (1 + math.exp(-u)))
    want = stats.norm(0, 2).logpdf(m) + jac + stats.norm(m, 1).logpdf(y).sum()
    assert bound.logdensity(np.array([u])) == pytest.approx(want, rel=1e-12)


def test_or_on_a_number_in_a_bytecode_model_names_the_line():
    fn = namespace(NOT_A_STATEMENT)["flags"]
    with pytest.raises(ModelError) as err:
        model(fn)(np.array([0.1]))
    bound_error = str(err.value)
    assert "<string>:7" in bound_error and "not a distribution" in bound_error
    assert "source=" in bound_error
    fixed = model(fn, source=NOT_A_STATEMENT)(np.array([0.1]))   # the source keeps k |= 2
    assert fixed.logdensity(np.array([0.2])) == pytest.approx(
        stats.norm(0, 1).logpdf(0.2) + stats.norm(0.2, 1).logpdf(0.1), rel=1e-12)


def test_unreadable_bytecode_says_what_to_pass():
    fn = namespace(GENERATOR)["gen"]
    with pytest.raises(ModelError) as err:
        model(fn)
    text = str(err.value)
    assert "gen" in text and "<string>:3" in text and "source=" in text and "generator" in text
