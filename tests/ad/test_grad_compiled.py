"""Compiled replay of gradients (``dcgraph.ad.compiled``): the same adjoints as the sweep on a
fresh trace, guards that send changed paths back to tracing, and fallbacks that stay correct."""
import math
import threading

import numpy as np
import pytest

import dcgraph
from dcgraph.compiled.support import _raise_statement, unalias
from dcgraph.tracer import ops
import test_grad_closed_forms
import test_grad_containers
import test_grad_dist
import test_grad_numpy
import test_grad_scalar
import test_grad_scipy
from dcgraph import ad
from dcgraph.ad.api import _Binding, _scalar_seed
from dcgraph.ad.compiled import GuardFailed, NotCompilable, compile_gradient
from dcgraph.ad.core import Sweep
from dcgraph.tape import Constant, PrimitiveCall

CASES = [(m.__name__, f, args) for m in (test_grad_scalar, test_grad_numpy, test_grad_containers,
                                        test_grad_scipy, test_grad_dist)
         for f, args in list(m.CASES) + list(getattr(m, "CASES_MORE", []))]


def reference(f, args, nums):
    """Value, gradients (the sweep on a fresh trace), tape, binding and wrt nodes."""
    value, tape = dcgraph.track(f, *args)
    binding = _Binding(f, tape, args, {})
    wrt = binding.nodes_for(nums)
    sweep = Sweep(tape, wrt=wrt)
    sweep.run(tape, _scalar_seed(value))
    return value, [binding.gradient(sweep.adj, i) for i in nums], tape, binding, wrt


def same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return np.shape(a) == np.shape(b) and np.allclose(a, b, rtol=1e-12, atol=1e-12)


def scaled(value, s):
    """``value`` with every real leaf multiplied by ``s`` (same structure and types)."""
    t = type(value)
    if t is float or isinstance(value, np.floating) or (t is np.ndarray
                                                       and value.dtype.kind == "f"):
        return value * s if t is not float else float(value * s)
    if t in (list, tuple):
        return t(scaled(v, s) for v in value)
    if t is dict:
        return {k: scaled(v, s) for k, v in value.items()}
    return value


def unsupported_reason(tape):
    """Why compiled replay must refuse ``tape`` (None when it must compile it)."""
    fresh = set()                             # lists built on the path, and their versions
    for node in tape.walk():
        if type(node) is PrimitiveCall and node.fn is object.__new__:
            return "a method of a type object"       # a user class constructed (traced)
        if type(node) is PrimitiveCall and node.fn is ops.build_list:
            fresh.add(node)
        if type(node) is PrimitiveCall and node.mutates is not None:
            if node.fn not in (list.append, list.extend) or unalias(node.args[0]) not in fresh:
                return "container mutation"
            fresh.add(node)
        if type(node) is Constant and node.tape is not None and node.name == "exception" \
                and not _raise_statement(node):     # ``raise ValueError`` compiles
            return "an exception was caught"
    return None


@pytest.mark.parametrize("module, f, args", CASES,
                         ids=[f"{m[10:]}.{f.__name__}-{i}" for i, (m, f, _) in enumerate(CASES)])
def test_compiled_gradient_equals_sweep(module, f, args):
    nums = tuple(i for i, a in enumerate(args) if type(a) is not int)
    value, grads, tape, binding, wrt = reference(f, args, nums)
    expected = unsupported_reason(tape)
    if expected is not None:
        with pytest.raises(NotCompilable, match=expected):
            compile_gradient(tape, wrt, args, {}, f, _scalar_seed)
        return
    cg = compile_gradient(tape, wrt, args, {}, f, _scalar_seed)
    for s in (1.0, 1.01):                 # the recorded arguments, then other values
        new = scaled(args, s)
        want_value, want, *_ = reference(f, new, nums)
        got_value, adj = cg(new, {})
        assert same(got_value, want_value)
        assert same([binding.gradient(adj, i, new) for i in nums], want), f.__name__


def sin_loop(x):
    s = 0.0
    for i in range(200):
        s = s + math.sin(x * i)
    return s


def test_benchmark_cases_compile_and_match():
    rats = test_grad_closed_forms
    rng = np.random.default_rng(3)
    alpha, beta = list(rng.normal(240, 10, 30)), list(rng.normal(6, 0.5, 30))
    y = [[a + b * (x - 22.0) + rng.normal(0, 6) for x in rats.XS] for a, b in zip(alpha, beta)]
    X = rng.normal(size=(500, 10))
    yy = (rng.uniform(size=500) < 0.5).astype(float)
    cases = [(sin_loop, (0.3,), 0),
             (rats.rats_logp, (alpha, beta, 241.0, 6.2, 11.0, 0.6, 5.5, y), 0),
             (rats.logistic_loglik, (rng.normal(size=10) * 0.1, X, yy), 0)]
    for f, args, argnum in cases:
        fast, plain = ad.value_and_grad(f, argnum), ad.value_and_grad(f, argnum)
        plain.compiled.enabled = False
        for s in (1.0, 1.0, 1.001, 0.999):
            new = scaled(args, s) if s != 1.0 else args
            got, want = fast(*new), plain(*new)
            assert same(got[0], want[0]) and same(got[1], want[1]), f.__name__
        assert fast.compiled.reason is None, fast.compiled.reason
        assert fast.compiled.stats["hits"] == 2 and fast.compiled.stats["compiles"] == 1


def small(x):
    s = 0.0
    for i in range(3):
        s = s + math.sin(x * i)
    return s


def test_source_is_readable_straight_line_code():
    _, tape = dcgraph.track(small, 0.3)
    source = compile_gradient(tape, None, (0.3,)).source
    # value variables are reused once dead (v0, x, is last read by x * 2)
    for line in ("v2 = v0 * 0", "v1 = sin(v2)", "v7 = 0.0 + v1", "v7 = v0 * 2", "v0 = sin(v7)",
                 "g5 = _cos(v2)", "g0 = g0 + (g5 * 0)", "return v11, (g0, )"):
        assert f"        {line}\n" in source, line
    # range(3) over constants: its steps are known, so no next() calls and no exit test
    assert "for " not in source and "while " not in source and "_next" not in source


def test_compiled_path_is_used_from_the_third_call():
    g = ad.value_and_grad(sin_loop)
    for x in (0.3, 0.4, 0.5, 0.6):
        value, grad = g(x)
        assert value == sin_loop(x)
        assert grad == pytest.approx(sum(i * math.cos(x * i) for i in range(200)), rel=1e-12)
    assert g.compiled.stats == {"hits": 2, "traces": 2, "compiles": 1, "guard_failures": 0,
                                "errors": 0}


def agree(g, plain, *args, **kwargs):
    got, want = g(*args, **kwargs), plain(*args, **kwargs)
    assert same(got, want), (got, want)


def pair(f, argnums=0):
    g, plain = ad.value_and_grad(f, argnums), ad.value_and_grad(f, argnums)
    plain.compiled.enabled = False
    return g, plain


def test_branch_flip_retraces_and_both_paths_are_kept():
    g, plain = pair(test_grad_scalar.branches, (0, 1))
    for args in [(2.0, 1.0), (2.5, 1.0), (0.5, 1.0), (0.6, 1.0), (0.7, 1.0), (2.0, 1.0),
                 (-0.8, 1.0), (3.0, 1.5)]:
        agree(g, plain, *args)
    stats = g.compiled.stats
    assert stats["guard_failures"] >= 2 and stats["hits"] >= 3 and g.compiled.reason is None


def test_guard_failure_names_the_branch():
    f = test_grad_scalar.branches
    _, tape = dcgraph.track(f, 2.0, 1.0)
    cg = compile_gradient(tape, None, (2.0, 1.0))
    with pytest.raises(GuardFailed) as info:
        cg((0.5, 1.0), {})
    assert "goto" in cg.describe(info.value) and "x > y" in cg.describe(info.value)


def power_sum(x, n):
    s = 0.0
    for k in range(n):
        s += x ** k / (k + 1)
    return s


def test_loop_length_change_retraces():
    g, plain = pair(power_sum)
    for n in (3, 3, 3, 5, 5, 2, 2, 3):      # longer: the exit guard; shorter: next() runs out
        agree(g, plain, 1.3, n)
    assert g.compiled.stats["guard_failures"] >= 2 and g.compiled.stats["hits"] >= 2
    g, plain = pair(test_grad_scalar.while_loop)
    for x in (1.3, 1.4, 0.2, 0.25, 1.3):
        agree(g, plain, x)


def mean_square(xs, scale):
    s = 0.0
    for v in xs:
        s += v * v * scale
    return s / len(xs)


def test_list_length_change_uses_another_entry():
    g, plain = pair(mean_square, (0, 1))
    for xs in ([1.0, 2.0, 3.0], [1.5, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.5],
               [0.5, 2.0, 3.0], [2.0, 2.0, 3.0, 1.0]):
        agree(g, plain, xs, 0.7)
    assert len(g.compiled.paths) == 2 and g.compiled.stats["guard_failures"] == 0
    agree(g, plain, [1.0, 2, 3.0], 0.7)        # an int element: another structure


def test_paths_are_bounded():
    g, plain = pair(mean_square)
    for n in range(1, 13):
        for _ in range(3):
            agree(g, plain, [0.5 * k for k in range(1, n + 1)], 1.5)
    assert sum(map(len, g.compiled.paths.values())) == g.compiled.MAX_PATHS
    assert g.compiled.stats["hits"] == 12 and g.compiled.stats["compiles"] == 12


def with_errstate(w, X):
    with np.errstate(over="ignore"):
        z = np.exp(X @ w)
    return np.sum(np.sum(z, axis=0)) + np.mean(z, axis=None)


def test_context_managers_and_keyword_arguments_of_numpy_calls():
    g, plain = pair(with_errstate)
    X = np.arange(8.0).reshape(4, 2) / 8
    for s in (0.1, 0.2, 0.3, 0.4):
        agree(g, plain, np.array([s, -s]), X)
    assert g.compiled.stats["hits"] == 2 and g.compiled.stats["guard_failures"] == 0


OFFSET = 2.0


def uses_global(x):
    return (x - OFFSET) ** 2


def make_closure():
    k = 2.0

    def f(x):
        return k * x * x

    def set_k(v):
        nonlocal k
        k = v
    return f, set_k


def test_rebound_globals_and_cells_are_seen():
    global OFFSET
    g, plain = pair(uses_global)
    try:
        agree(g, plain, 1.0)
        agree(g, plain, 1.0)
        agree(g, plain, 1.5)
        OFFSET = 5.0
        assert g(1.0) == plain(1.0) == (16.0, -8.0)
    finally:
        OFFSET = 2.0
    f, set_k = make_closure()
    g = ad.grad(f)
    assert [g(1.0), g(1.0), g(2.0)] == [4.0, 4.0, 8.0]
    set_k(3.0)
    assert g(2.0) == 12.0 and g.compiled.stats["guard_failures"] == 1


def make_scaler(k):
    def scale(x):
        return k * x
    return scale


SCALERS = [make_scaler(2.0), make_scaler(3.0)]


def pick(x, i):
    return SCALERS[i](x) * x


def test_functions_called_through_values_are_the_recorded_ones():
    g, plain = pair(pick)                  # same code, other closure cell: another path
    for i in (0, 0, 0, 1, 1, 0):
        agree(g, plain, 1.5, i)
    assert g.compiled.stats["guard_failures"] >= 1


def test_mutation_falls_back_for_good_with_correct_gradients():
    g, plain = pair(test_grad_scalar.list_building, (0, 1))
    for x in (1.1, 1.2, 1.3):
        agree(g, plain, x, 0.6)
    assert not g.compiled.enabled and "container mutation" in g.compiled.reason
    assert g.compiled.stats["compiles"] == 0 and g.compiled.stats["traces"] == 3


class Box:
    def __init__(self, w):
        self.w = w


def box_model(x, box):
    return box.w * x * x + box.w


def test_value_types_the_backward_code_relies_on_are_guarded():
    g, plain = pair(box_model, (0, 1))
    for w in (2.0, 2.5, 2, 3, 3.5):       # an int attribute carries no adjoint
        agree(g, plain, 1.5, Box(w))
    assert g.compiled.stats["guard_failures"] >= 2


def fsum_values(d):
    return math.fsum(d.values()) * d["a"]


def test_rule_reading_beyond_its_inputs_falls_back_at_run_time():
    g, plain = pair(fsum_values)      # fsum's rule counts d.values() by looking at d
    for a in (1.0, 1.5, 2.0, 2.5):
        agree(g, plain, {"a": a, "b": 2.0})
    assert not g.compiled.enabled and "read the args of an input" in g.compiled.reason


def log_of(x):
    return math.log(x) * x


def test_errors_in_compiled_code_are_reported_by_the_normal_path():
    g = ad.grad(log_of)
    g(2.0), g(3.0)
    with pytest.raises(ValueError, match="math domain error"):
        g(-1.0)
    assert g.compiled.stats["errors"] == 1 and g(4.0) == pytest.approx(math.log(4.0) + 1)


def jumpy(x):
    s = 0.0
    for i in range(int(x * 10) % 13):
        s += x * i
    return s


def test_paths_that_keep_changing_turn_compilation_off():
    g, plain = pair(jumpy)
    for k in range(20):
        agree(g, plain, 0.3 + 0.1 * k)
    assert not g.compiled.enabled and "guards failed" in g.compiled.reason


class Model:
    def __init__(self, scale):
        self.scale = scale

    def logp(self, x, shift=1.0, *, power=2):
        return -self.scale * (x - shift) ** power


def test_methods_keywords_defaults_and_untraced_functions():
    m = Model(0.5)
    g, plain = pair(m.logp)
    for x in (1.0, 2.0, 3.0):
        agree(g, plain, x)
        agree(g, plain, x, 0.5, power=3)
    assert g.compiled.stats["hits"] >= 2
    g, plain = pair(math.sin)
    for x in (0.1, 0.2, 0.3):
        agree(g, plain, x)
    assert g.compiled.stats["hits"] == 1
    g, plain = pair(test_grad_scalar.kwargs_calls, (0, 1))
    for x in (1.2, 1.3, 1.4):
        agree(g, plain, x, 0.7)
    assert g.compiled.stats["hits"] == 1


def test_finite_differences_through_the_compiled_path():
    rats = test_grad_closed_forms
    rng = np.random.default_rng(5)
    alpha, beta = list(rng.normal(240, 10, 4)), list(rng.normal(6, 0.5, 4))
    y = [[a + b * (x - 22.0) + rng.normal(0, 6) for x in rats.XS] for a, b in zip(alpha, beta)]
    args = (alpha, beta, 241.0, 6.2, 11.0, 0.6, 5.5, y)
    report = ad.check_grads(rats.rats_logp, *args, argnums=(0, 2, 4))
    g = ad.grad(rats.rats_logp, (0, 2, 4))
    g(*args), g(*args)
    assert g.compiled.stats["compiles"] == 1
    compiled = g(*args)
    assert g.compiled.stats["hits"] == 1 and report.ok
    for i, got in zip((0, 2, 4), compiled):
        assert same(got, report.gradients[i])


def test_threads_share_a_compiled_path():
    g, plain = pair(sin_loop)
    g(0.1), g(0.1)
    xs = [0.1 * k for k in range(16)]
    out = {}

    def work(x):
        out[x] = g(x)
    threads = [threading.Thread(target=work, args=(x,)) for x in xs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(same(out[x], plain(x)) for x in xs)
    assert g.compiled.stats["traces"] == 2       # no thread had to trace
