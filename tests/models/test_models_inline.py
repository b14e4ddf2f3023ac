"""Inline forms of the models helpers (``dcgraph.models.inline_forms``): on a compiled path
``declare``, ``advance``, ``constrain``, ``log_jacobian`` and the factories are code, not calls,
and so are the scatter rules of ``constrain`` and ``log_jacobian`` and, on floats, normal
statements and their joint rules;
values and gradients equal the traced sweep to 1e-12 for every scalar constraint and finite
differences; a changed declaration argument re-traces; a run under ``Discovery`` declares."""
import math
import re

import numpy as np
import pytest

from dcgraph.compiled import GuardFailed
from dcgraph.models import model, normal, param, uniform
from dcgraph.models.distributions import FACTORIES
from dcgraph.models.runtime import (Discovery, advance, constrain, constrain_scatter, declare,
                                    log_jacobian, log_jacobian_scatter)


def numerical_gradient(f, theta, eps=1e-6):
    return np.array([(f(theta + eps * e) - f(theta - eps * e)) / (2 * eps)
                     for e in np.eye(len(theta))])


def statement_zs(source) -> set:
    """The ``z`` variables of the normal statements written out on a path."""
    return set(re.findall(r"\((_z[0-9]+) := \(", source))


def joint_zs(source) -> set:
    """The ``z`` variables the backward lines (``gN = ...``) read."""
    return {z for line in source.splitlines() if re.match(r"\s+g[0-9]+ = ", line)
            for z in re.findall(r"_z[0-9]+", line)}


def only_path(bound):
    (path, _binding), = next(iter(bound.gradient_cache.paths.values()))
    return path


@model
def every_scalar_map(X, y):
    w = param(shape=X.shape[1])              # an unconstrained vector: a copy of its slice
    b = param()                              # identity
    s = param(lower=0.0)                     # lower bound: low + exp(u)
    c = param(upper=2.0)                     # upper bound: a call of its map
    p = param(lower=-1.0, upper=3.0)         # interval
    w |= normal(0.0, 10.0)
    b |= normal(c, 10.0)
    s |= uniform(0.0, 5.0)
    p |= normal(0.5, 2.0)
    y |= normal(X @ w + b * p, s)


def every_scalar_map_by_hand(t, X, y):
    k = X.shape[1]
    w, b, s = t[:k], t[k], math.exp(t[k + 1])
    c = 2.0 - math.exp(t[k + 2])
    sig = 1.0 / (1.0 + math.exp(-t[k + 3]))
    p = -1.0 + 4.0 * sig
    logj = t[k + 1] + t[k + 2] + math.log(4.0 * sig * (1.0 - sig))

    def lnorm(x, m, sd):
        z = (x - m) / sd
        return float(np.sum(-0.5 * z * z - math.log(sd) - 0.5 * math.log(2 * math.pi)))
    return (logj + lnorm(w, 0.0, 10.0) + lnorm(b, c, 10.0) - math.log(5.0)
            + lnorm(p, 0.5, 2.0) + lnorm(y, X @ w + b * p, s))


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    return X, X @ np.array([1.0, -0.5, 2.0]) + 0.3 + 0.4 * rng.normal(size=40)


def test_helpers_are_code_on_the_compiled_path_and_values_equal_the_sweep(data):
    X, y = data
    fused, ref = every_scalar_map(X, y), every_scalar_map(X, y)
    ref.gradient_cache.disable("the reference: the traced sweep")
    rng = np.random.default_rng(4)
    points = [0.3 * rng.normal(size=fused.dim) for _ in range(4)]
    for _ in range(4):
        fused.logdensity_and_grad(points[0])
    for t in points:
        (v1, g1), (v2, g2) = fused.logdensity_and_grad(t), ref.logdensity_and_grad(t)
        assert v1 == pytest.approx(v2, rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(g1, g2, rtol=1e-12, atol=1e-12)
        assert v1 == pytest.approx(every_scalar_map_by_hand(t, X, y), rel=1e-12)
        num = numerical_gradient(lambda u: every_scalar_map_by_hand(u, X, y), t)
        np.testing.assert_allclose(g1, num, rtol=1e-6, atol=1e-5)
    assert fused.gradient_cache.stats["hits"] >= len(points) + 1
    path = only_path(fused)
    ns = path._fn.__globals__
    helpers = {advance, constrain, log_jacobian, *FACTORIES}
    called = [n for n, obj in ns.items() if any(obj is h for h in helpers)
              and f"{n}(" in path.source.split("g0 = ")[0]]      # the forward part
    assert called == []
    scatter = [n for n, obj in ns.items()
               if obj is constrain_scatter or obj is log_jacobian_scatter]
    assert sum(path.source.count(f"{n}(") for n in scatter) == 1  # the vector's fallback only
    declares = [n for n, obj in ns.items() if obj is declare]
    assert path.source.count(".discovery is not None: raise _GF(") == 1  # one guard: re-trace
    assert sum(path.source.count(f"{n}(") for n in declares) == 0         # no declare call
    assert "[0:3].copy()" in path.source


def test_a_changed_declaration_argument_re_traces(data):
    X, y = data
    bound = every_scalar_map(X, y)
    theta = np.full(bound.dim, 0.1)
    for _ in range(4):
        bound.logdensity_and_grad(theta)
    assert "!= 3: raise" in only_path(bound).source              # shape=X.shape[1] guarded
    X4 = np.hstack([X, X[:, :1]])                                 # 4 columns: w has 4 entries
    theta4 = np.full(bound.dim + 1, 0.1)
    path = only_path(bound)
    with pytest.raises(GuardFailed) as failed:
        path((theta4, X4, y), {})
    assert "declare" in path.describe(failed.value)               # the first guard: w's shape
    for _ in range(3):
        v, g = bound._vg(theta4, X4, y)                           # another path, compiled
    assert v == pytest.approx(every_scalar_map_by_hand(theta4, X4, y), rel=1e-12)
    num = numerical_gradient(lambda u: every_scalar_map_by_hand(u, X4, y), theta4)
    np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-5)


@model
def array_bound_first(X, y):
    a = param(shape=2, lower=np.zeros(2))    # an array bound: this declare stays a call
    m = param()
    a |= normal(1.0, 1.0)
    m |= normal(0.0, 1.0)
    y |= normal(m + a.sum(), 1.0)


@pytest.mark.parametrize("mdl, names", [(every_scalar_map, ["w", "b", "s", "c", "p"]),
                                        (array_bound_first, ["a", "m"])])
def test_a_compiled_run_under_discovery_declares_every_parameter(data, mdl, names):
    X, y = data
    bound = mdl(X, y)
    theta = np.full(bound.dim, 0.1)
    for _ in range(4):
        expected = bound.logdensity_and_grad(theta)[0]
    assert bound.gradient_cache.stats["hits"] >= 2
    with Discovery() as found:
        v, _ = bound._vg(theta, X, y)
    assert [s.name for s in found.specs] == names
    assert v == expected


@model
def groups(y, sigma):
    mu = param()
    tau = param(lower=0.0)
    mu |= normal(0.0, 5.0)
    tau |= normal(0.0, 5.0)
    for j in range(len(y)):
        theta = param()
        theta |= normal(mu, tau)
        y[j] |= normal(theta, sigma[j])          # float64 data, float64 scale


def groups_by_hand(t, y, sigma):
    mu, tau, th = t[0], math.exp(t[1]), t[2:]

    def lnorm(x, m, sd):
        z = (x - m) / sd
        return float(np.sum(-0.5 * z * z - np.log(sd) - 0.5 * math.log(2 * math.pi)))
    return t[1] + lnorm(mu, 0.0, 5.0) + lnorm(tau, 0.0, 5.0) + lnorm(th, mu, tau) \
        + lnorm(y, th, sigma)


def test_float_statements_written_out_equal_the_sweep_and_keep_their_errors():
    y, sigma = np.array([28.0, 8.0, -3.0, 7.0]), np.array([15.0, 10.0, 16.0, 11.0])
    fused, ref = groups(y, sigma), groups(y, sigma)
    ref.gradient_cache.disable("the reference: the traced sweep")
    rng = np.random.default_rng(5)
    for t in [0.5 * rng.normal(size=fused.dim) for _ in range(6)]:
        (v1, g1), (v2, g2) = fused.logdensity_and_grad(t), ref.logdensity_and_grad(t)
        assert v1 == v2 and v1 == pytest.approx(groups_by_hand(t, y, sigma), rel=1e-12)
        np.testing.assert_allclose(g1, g2, rtol=1e-12, atol=1e-12)
        num = numerical_gradient(lambda u: groups_by_hand(u, y, sigma), t)
        np.testing.assert_allclose(g1, num, rtol=1e-6, atol=1e-5)
    source = only_path(fused).source
    assert len(statement_zs(source)) == 2 + 2 * len(y)         # every statement written out,
    assert joint_zs(source) == statement_zs(source)             # and its joint rule from its z
    assert fused.gradient_cache.stats["hits"] >= 4
    theta = np.zeros(fused.dim)
    for data, bad, message in ((sigma, -1.0, "positive"), (sigma, np.nan, "finite"),
                               (y, np.nan, "log density is NaN")):
        old, data[1] = data[1], bad                             # the data changes in place
        with pytest.raises(ValueError, match=message) as compiled_error:
            fused.logdensity_and_grad(theta)
        with pytest.raises(ValueError, match=message) as traced_error:
            ref.logdensity_and_grad(theta)
        assert type(compiled_error.value) is type(traced_error.value)
        assert str(compiled_error.value) == str(traced_error.value)
        where = str(compiled_error.value) + "".join(getattr(compiled_error.value, "__notes__", []))
        assert "y[j] |= normal(theta, sigma[j])" in where
        data[1] = old
    assert fused.logdensity_and_grad(theta)[0] == pytest.approx(groups_by_hand(theta, y, sigma),
                                                                rel=1e-12)


@model
def wanted_subsets(y):
    m = param()
    s = param(lower=0.0)
    m |= normal(0.0, 3.0)                         # the left side's adjoint only
    s |= normal(1.0, 2.0)
    y[0] |= normal(m, s)                          # location and scale
    y[1] |= normal(0.5, s)                        # the scale only
    d = normal(m, 2.0)                            # one factory, two statements
    y[2] |= d
    y[3] |= d


def wanted_subsets_by_hand(t, y):
    m, s = t[0], math.exp(t[1])

    def lnorm(x, mu, sd):
        return -0.5 * ((x - mu) / sd) ** 2 - math.log(sd) - 0.5 * math.log(2 * math.pi)
    return (t[1] + lnorm(m, 0.0, 3.0) + lnorm(s, 1.0, 2.0) + lnorm(y[0], m, s)
            + lnorm(y[1], 0.5, s) + lnorm(y[2], m, 2.0) + lnorm(y[3], m, 2.0))


def test_joint_forms_write_the_wanted_adjoints_and_factories_are_built_where_called():
    y = np.array([1.5, -0.5, 0.7, 2.0])
    fused, ref = wanted_subsets(y), wanted_subsets(y)
    ref.gradient_cache.disable("the reference: the traced sweep")
    rng = np.random.default_rng(11)
    for t in [0.5 * rng.normal(size=2) for _ in range(5)]:
        (v1, g1), (v2, g2) = fused.logdensity_and_grad(t), ref.logdensity_and_grad(t)
        assert v1 == pytest.approx(v2, rel=1e-12, abs=1e-12)
        assert v1 == pytest.approx(wanted_subsets_by_hand(t, y), rel=1e-12)
        np.testing.assert_allclose(g1, g2, rtol=1e-12, atol=1e-12)
        num = numerical_gradient(lambda u: wanted_subsets_by_hand(u, y), t)
        np.testing.assert_allclose(g1, num, rtol=1e-6, atol=1e-6)
    assert fused.gradient_cache.stats["hits"] >= 3
    source = only_path(fused).source
    assert len(statement_zs(source)) == 6                        # every statement written out
    built = [line for line in source.splitlines() if "= _DistExpr(" in line]
    assert len(built) == 1 and "2.0, ))" in built[0]     # only ``d`` (``is_distribution`` reads it)
    assert joint_zs(source) == statement_zs(source)             # and every joint rule


def test_a_statement_call_giving_no_float_re_traces():
    from dcgraph.models.inline_forms import float_or_retrace
    assert float_or_retrace(-1.25, 7) == -1.25
    for other in (np.float64(-1.25), np.array([-1.25]), 1):
        with pytest.raises(GuardFailed) as failed:
            float_or_retrace(other, 7)
        assert failed.value.args[0] == 7


def test_a_scale_s_log_data_reads_and_nan_tests_are_written_once_per_path():
    y, sigma = np.array([28.0, 8.0, -3.0, 7.0]), np.array([15.0, 10.0, 16.0, 11.0])
    fused, ref = groups(y, sigma), groups(y, sigma)
    ref.gradient_cache.disable("the reference: the traced sweep")
    theta = np.linspace(-0.4, 0.5, fused.dim)
    for _ in range(4):
        fused.logdensity_and_grad(theta)
    path = only_path(fused)
    source = path.source
    shared = re.findall(r"\((_log_v[0-9]+) := _log\(", source)    # tau's log: once, then read
    assert len(shared) == 1 and source.count(shared[0]) == len(y)
    assert "_float64" not in source                   # y[j], sigma[j]: typed by two guards
    assert len(re.findall(r"\.ndim != 1 or v[0-9]+\.dtype != _F8: raise", source)) == 2
    nan_tests = re.findall(r"^ +if (v[0-9]+) != \1:(.*)$", source, re.M)
    assert len(nan_tests) == 1 + 2 + 2 * len(y) and nan_tests[0][1] == ""   # one block
    with pytest.raises(GuardFailed):                  # another dtype of the data: re-traced
        path((theta, y.astype(np.float32), sigma), {})
    assert fused.logdensity_and_grad(theta)[0] == ref.logdensity_and_grad(theta)[0]
    for k, bad, message, where in ((1, -1e4, "positive", "theta |= normal(mu, tau)"),
                                   (0, np.nan, "NaN", "mu |= normal(0.0, 5.0)"),
                                   (2, np.nan, "NaN", "theta |= normal(mu, tau)"),
                                   (5, np.nan, "NaN", "theta |= normal(mu, tau)")):
        t = theta.copy()
        t[k] = bad                                    # tau = 0.0; NaN mu; NaN theta[0], [3]
        with pytest.raises(ValueError, match=message) as compiled_error:
            fused.logdensity_and_grad(t)
        with pytest.raises(ValueError, match=message) as traced_error:
            ref.logdensity_and_grad(t)
        said = [str(e.value) + "".join(getattr(e.value, "__notes__", []))
                for e in (compiled_error, traced_error)]
        assert said[0] == said[1] and where in said[0]
    t = theta.copy()
    t[3] = np.inf                                     # -inf, not NaN: no error
    (v1, g1), (v2, g2) = fused.logdensity_and_grad(t), ref.logdensity_and_grad(t)
    assert v1 == v2 == -np.inf
    assert fused.logdensity_and_grad(theta)[0] == ref.logdensity_and_grad(theta)[0]


def test_statements_on_list_items_keep_their_type_tests_and_equal_the_sweep():
    y, sigma = [28.0, 8.0, -3.0], [15.0, 10.0, 16.0]      # float items: tested where used
    fused, ref = groups(y, sigma), groups(y, sigma)
    ref.gradient_cache.disable("the reference: the traced sweep")
    rng = np.random.default_rng(6)
    for t in [0.5 * rng.normal(size=fused.dim) for _ in range(5)]:
        (v1, g1), (v2, g2) = fused.logdensity_and_grad(t), ref.logdensity_and_grad(t)
        assert v1 == v2 and v1 == pytest.approx(groups_by_hand(t, np.array(y), np.array(sigma)),
                                                rel=1e-12)
        np.testing.assert_allclose(g1, g2, rtol=1e-12, atol=1e-12)
    source = only_path(fused).source
    assert fused.gradient_cache.stats["hits"] >= 3 and fused.gradient_cache.stats["errors"] == 0
    assert len(statement_zs(source)) == 2 + 2 * len(y)
    assert source.count("else observe_normal_joint(") == len(y)   # the data statements' joints
