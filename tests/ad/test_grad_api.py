"""The public API: grad / value_and_grad / vjp / backward / check_grads / supported, errors."""
import math
import pathlib
import sys

import numpy as np
import pytest

import dcgraph
from dcgraph import ad
from dcgraph.ad.docs import render_readme


def f3(x, y, z):
    return x * y * z + math.sin(x)


def test_argnums_int_tuple_negative():
    assert ad.grad(f3)(1.0, 2.0, 3.0) == pytest.approx(6.0 + math.cos(1.0))
    gx, gz = ad.grad(f3, (0, -1))(1.0, 2.0, 3.0)
    assert gz == pytest.approx(2.0) and gx == pytest.approx(6.0 + math.cos(1.0))
    with pytest.raises(ValueError, match="out of range"):
        ad.grad(f3, 3)(1.0, 2.0, 3.0)


def test_value_and_grad():
    value, g = ad.value_and_grad(f3, 1)(1.0, 2.0, 3.0)
    assert value == f3(1.0, 2.0, 3.0) and g == pytest.approx(3.0)


def vector_out(x, w):
    h = np.tanh(x * w)
    return h, [h.sum(), w * 2.0]


def test_vjp_structured_output():
    x, w = np.array([0.1, 0.5, -0.3]), 1.7
    (h, (s, w2)), pullback = ad.vjp(vector_out, x, w)
    gh = np.array([1.0, -2.0, 0.5])
    gx, gw = pullback((gh, [3.0, 4.0]))
    d = 1 - np.tanh(x * w) ** 2
    assert np.allclose(gx, (gh + 3.0) * d * w)
    assert gw == pytest.approx(np.sum((gh + 3.0) * d * x) + 8.0)
    gx2, _ = pullback((np.zeros(3), [1.0, 0.0]))       # a pullback can be called again
    assert np.allclose(gx2, d * w)


def test_backward_stores_adjoints_in_meta():
    _, tape = dcgraph.track(f3, 1.0, 2.0, 3.0)
    grads = ad.backward(tape, seed=2.0)
    tape.lint()
    assert grads == {"x": pytest.approx(2 * (6.0 + math.cos(1.0))), "y": pytest.approx(6.0),
                     "z": pytest.approx(4.0)}
    sin_node = tape.find(fn=math.sin)[0]
    assert sin_node.meta["adjoint"] == pytest.approx(2.0)
    assert tape.arguments[1].meta["adjoint"] == pytest.approx(6.0)


def test_check_grads_report_and_failure(monkeypatch):
    report = ad.check_grads(f3, 1.0, 2.0, 3.0)
    assert set(report.errors) == {0, 1, 2} and report.ok and report.worst < 1e-8
    rule = ad.registry.RULES[math.sin]

    def wrong_sin_vjp(g, ans, x):
        return g * 1.01 * math.cos(x)
    monkeypatch.setattr(rule, "vjps", (wrong_sin_vjp,))
    monkeypatch.setattr(rule, "fast1", wrong_sin_vjp)
    with pytest.raises(ad.GradientCheckError, match="arg 0"):
        ad.check_grads(f3, 1.0, 2.0, 3.0)
    bad = ad.check_grads(f3, 1.0, 2.0, 3.0, raise_on_failure=False)
    assert not bad.ok and bad.errors[0] > 1e-4 and bad.errors[1] < 1e-8


def uses_cumprod(w):
    return np.cumprod(w * 2.0).sum()


def test_missing_rule_names_primitive_and_line():
    with pytest.raises(ad.MissingRuleError) as info:
        ad.grad(uses_cumprod)(np.array([1.0, 2.0]))
    msg = str(info.value)
    assert "numpy.cumprod" in msg and "test_grad_api.py:" in msg and "np.cumprod(w * 2.0)" in msg


def random_data_times(w):
    noise = np.random.default_rng(0).normal(size=3)
    return np.sum(np.cumprod(noise) * w)


def test_unknown_primitive_that_does_not_depend_on_arguments_is_fine():
    g = ad.grad(random_data_times)(np.ones(3))
    assert np.allclose(g, np.cumprod(np.random.default_rng(0).normal(size=3)))


def test_non_scalar_and_integer_outputs_are_rejected():
    with pytest.raises(TypeError, match="vjp"):
        ad.grad(np.sin)(np.ones(3))
    with pytest.raises(TypeError, match="integer"):
        ad.grad(len)([1.0, 2.0])


def test_primitive_root_and_bound_method():
    assert ad.grad(math.sin)(0.3) == pytest.approx(math.cos(0.3))

    class Model:
        def __init__(self, k):
            self.k = k

        def logp(self, x):
            return -self.k * x * x

    assert ad.grad(Model(1.5).logp)(2.0) == pytest.approx(-6.0)


def test_defvjp_requires_named_functions():
    with pytest.raises(TypeError, match="named functions"):
        ad.defvjp(math.gcd, lambda g, ans, x, y: g)


REQUIRED = [
    "operator.add", "operator.sub", "operator.mul", "operator.truediv", "operator.pow",
    "operator.neg", "operator.mod", "operator.matmul", "operator.lt", "operator.eq",
    "operator.getitem", "operator.setitem", "math.sin", "math.lgamma", "math.erf", "abs", "sum",
    "min", "max", "pow", "float", "numpy.exp", "numpy.sum", "numpy.ndarray.sum", "numpy.mean",
    "numpy.dot", "numpy.matmul", "numpy.einsum", "numpy.reshape", "numpy.transpose",
    "numpy.concatenate", "numpy.stack", "numpy.where", "numpy.clip", "scipy.special.gammaln",
    "scipy.special.digamma", "scipy.special.expit", "scipy.special.logit",
    "scipy.special.logsumexp", "scipy.special.erf", "scipy.special.erfc",
    "scipy.special.log_ndtr", "scipy.special.ndtr", "scipy.special.xlogy",
    "scipy.special.xlog1py", "scipy.special.betaln", "scipy.stats.norm.logpdf",
    "scipy.stats.gamma.logpdf", "scipy.stats.beta.logpdf", "scipy.stats.expon.logpdf",
    "scipy.stats.poisson.logpmf", "scipy.stats.binom.logpmf", "scipy.stats.t.logpdf",
]


def test_supported_lists_the_required_primitives():
    names = set(ad.supported())
    missing = [n for n in REQUIRED if n not in names]
    assert not missing


@pytest.mark.skipif(sys.version_info[:2] != (3, 11),
                    reason="the README lists the primitives of CPython 3.11 (other versions add a few)")
def test_readme_is_current():
    readme = pathlib.Path(ad.__file__).with_name("README.md").read_text()
    assert readme == render_readme(), "run: python -m dcgraph.ad.docs > dcgraph/ad/README.md"


def genexpr_sum(x):
    return sum(x * k for k in range(3))


def test_generator_expression_is_traced_or_an_error_not_a_zero():
    if sys.version_info[:2] in ((3, 11), (3, 12), (3, 13)):  # traced: 0 + 1 + 2
        assert ad.grad(genexpr_sum)(1.5) == 3.0
        return
    # elsewhere the generator's body runs inside sum() (C code), out of the tracer's sight
    with pytest.raises(ad.MissingRuleError, match="generator"):
        ad.grad(genexpr_sum)(1.5)
