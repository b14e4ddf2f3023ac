"""Vectorised compiled replay (``dcgraph.compiled.vectorise``): unrolled loops as array code
give the plain function's values bit for bit, the traced sweep's gradients (to 1e-12) and
central differences; guards on the array code send changed calls back to tracing."""
import math
import re

import numpy as np
import pytest

import dcgraph
from dcgraph import ad
from dcgraph.compiled import compile_path
from dcgraph.compiled.vector_forms import FUNCTIONS, agrees
from dcgraph.compiled.vectorise import MIN_GROUPS, vectorise

XS = [8.0, 15.0, 22.0, 29.0, 36.0]


def sin_loop(x):
    s = 0.0
    for i in range(200):
        s = s + math.sin(x * i)
    return s


def exp_ratio(x, y):
    s = 1.0
    for i in range(40):
        s -= math.exp(-x * i) / (y + i)
    return s


def rats(alpha, beta, mu_a, mu_b, sig_a, sig_b, sig_y, y):
    lp = 0.0
    for i in range(len(y)):
        za = (alpha[i] - mu_a) / sig_a
        zb = (beta[i] - mu_b) / sig_b
        lp += -0.5 * za * za - math.log(sig_a) - 0.5 * zb * zb - math.log(sig_b)
        for j in range(5):
            r = (y[i][j] - alpha[i] - beta[i] * (XS[j] - 22.0)) / sig_y
            lp += -0.5 * r * r - math.log(sig_y)
    return lp


def long_sum(xs):
    s = 0.0
    for i in range(len(xs)):
        s = s + xs[i] * xs[i]
    return s


def poles(x):
    s = 0.0
    for i in range(40):
        s = s + 1.0 / (x - 0.5 * i)
    return s


def folded(x, n):
    s = 0.0
    for i in range(n):
        s = s + math.cos(x * i)
    return s if s > 0 else -s


def rats_data(seed=0, n=30):
    rng = np.random.default_rng(seed)
    alpha, beta = list(rng.normal(240, 10, n)), list(rng.normal(6, 0.5, n))
    y = [[a + b * (x - 22.0) + rng.normal(0, 6) for x in XS] for a, b in zip(alpha, beta)]
    return alpha, beta, 241.0, 6.2, 11.0, 0.6, 5.5, y


def pair(f, argnums=0):
    fast, plain = ad.value_and_grad(f, argnums), ad.value_and_grad(f, argnums)
    plain.compiled.enabled = False
    return fast, plain


def source(vg) -> str:
    return "\n".join(cg.source for entries in vg.compiled.paths.values() for cg, _ in entries)


def close(a, b, rtol=1e-12) -> bool:
    if isinstance(a, (tuple, list)) or a is None:
        if a is None or b is None:
            return a is b
        return type(b) is type(a) and len(a) == len(b) and all(map(close, a, b))
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= rtol * np.maximum(np.abs(b), 1.0)))


def check(fast, plain, f, args, argnums=0):
    """Value equal to the plain call (bits and type), gradient equal to the sweep's."""
    got, want = fast(*args), plain(*args)
    value = f(*args)
    assert got[0] == value and type(got[0]) is type(value)
    assert close(got[1], want[1]), (got[1], want[1])
    return got


def test_accumulate_adds_left_to_right():
    """The property the sums rely on: ``np.add.accumulate`` rounds as a Python loop does
    (``np.sum`` and ``math.fsum`` do not)."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=5000) * 10.0 ** rng.integers(-8, 9, 5000)
    s, partial = 0.0, []
    for v in x.tolist():
        s = s + v
        partial.append(s)
    acc = np.add.accumulate(np.concatenate(([0.0], x)))[1:]
    assert np.array_equal(acc, partial)
    assert np.sum(x) != s or math.fsum(x) != s       # the sums a vectoriser must not use


def test_sin_loop_is_array_code_with_exact_values_and_gradients():
    fast, plain = pair(sin_loop)
    for x in (0.3, 0.3, 0.3, 0.7, -1.3, 2.1):
        value, g = check(fast, plain, sin_loop, (x,))
        h = 1e-6
        assert abs(g - (sin_loop(x + h) - sin_loop(x - h)) / (2 * h)) < 1e-5 * max(1.0, abs(g))
    assert fast.compiled.stats["hits"] == 4 and fast.compiled.stats["guard_failures"] == 0
    code = source(fast)
    assert "_vx_acc(" in code and code.count("\n") < 40         # 200 iterations, two runs
    assert ("_vx_map(sin" in code) != agrees(math.sin)          # math.sin's bits either way
    _, tape = dcgraph.track(sin_loop, 0.3)
    tape.lint()


def test_functions_whose_ufunc_differs_are_mapped_in_the_forward_pass():
    fast, plain = pair(exp_ratio, (0, 1))
    for x, y in ((0.2, 1.5), (0.2, 1.5), (0.2, 1.5), (0.05, 3.0)):
        check(fast, plain, exp_ratio, (x, y), (0, 1))
    code = source(fast)
    assert ("_vx_map(exp" in code) != agrees(math.exp)
    assert code.count("_vx_acc(") == 3           # the sum, then the adjoints of x and y
    _, tape = dcgraph.track(exp_ratio, 0.2, 1.5)
    tape.lint()
    cp = compile_path(tape, (0.2, 1.5))                         # forward only
    scalar = compile_path(tape, (0.2, 1.5), vectorised=False)
    assert "_vx_" in cp.source and "_vx_" not in scalar.source
    for args in ((0.2, 1.5), (0.3, 0.9), (1e-3, 2.0)):
        assert cp(args, {}) == scalar(args, {}) == exp_ratio(*args)


def test_nested_list_reads_and_sums_through_several_lines():
    data = rats_data()
    fast, plain = pair(rats, (0, 1, 2, 4, 6))
    for s in (1.0, 1.0, 1.0, 1.001):
        alpha, beta, *rest = data
        args = ([a * s for a in alpha], beta, *rest)
        check(fast, plain, rats, args, (0, 1, 2, 4, 6))
    code = source(fast)
    assert "_vx_alltype(" in code and "_vx_empty((29, 6))" in code and "_vx_lengths(" in code
    assert fast.compiled.stats["guard_failures"] == 0
    _, tape = dcgraph.track(rats, *data)
    tape.lint()
    h, g = 1e-6, fast(*data)[1]
    bumped = [list(data[0]) for _ in range(2)]
    bumped[0][7] += h
    bumped[1][7] -= h
    fd = (rats(bumped[0], *data[1:]) - rats(bumped[1], *data[1:])) / (2 * h)
    assert abs(g[0][7] - fd) < 1e-5 * max(1.0, abs(fd))


def test_element_type_change_in_a_long_list_fails_the_read_guard():
    xs = [0.01 * k for k in range(300)]          # longer than 256: keyed by length only
    fast, plain = pair(long_sum)
    for _ in range(3):
        check(fast, plain, long_sum, (xs,))
    assert "_vx_alltype(" in source(fast)
    ys = list(xs)
    ys[150] = 3                                   # an int: another type in the list
    got = check(fast, plain, long_sum, (ys,))
    assert fast.compiled.stats["guard_failures"] == 1 and got[1][150] is None   # an int
    check(fast, plain, long_sum, (xs,))


def test_zero_divisor_fails_a_guard_and_the_plain_error_is_raised():
    fast, plain = pair(poles)
    for _ in range(3):
        check(fast, plain, poles, (0.3,))
    assert "_vx_nozero(" in source(fast)
    with pytest.raises(ZeroDivisionError):
        fast(5.0)                                 # x - 0.5 * 10 == 0: the trace raises
    assert fast.compiled.stats["guard_failures"] == 1
    check(fast, plain, poles, (0.31,))


def test_loop_length_and_branch_changes_retrace():
    fast, plain = pair(folded)
    for x, n in ((0.1, 40), (0.1, 40), (0.1, 40), (0.11, 40), (0.1, 41), (0.1, 41), (0.1, 41),
                 (2.0, 40), (2.0, 40), (2.0, 40)):
        check(fast, plain, folded, (x, n))
    stats = fast.compiled.stats
    assert stats["guard_failures"] >= 2 and stats["hits"] >= 4 and fast.compiled.reason is None
    assert "_vx_cos(" in source(fast)


def test_short_loops_and_unknown_lines_stay_scalar():
    lines = [f"v{k} = v0 * {k}" for k in range(1, MIN_GROUPS)]
    assert vectorise(lines, {}, []) == lines       # too few iterations to pay
    lines = [f"v{k} = helper(v0, {k})" for k in range(1, 4 * MIN_GROUPS)]
    assert vectorise(lines, {"helper": min}, []) == lines
    assert all(FUNCTIONS[fn][0](0.5) == fn(0.5) or not agrees(fn) for fn in FUNCTIONS)


def array_steps(w):
    acc = w * 0.0
    for i in range(24):
        acc = acc + w * (0.5 * i)
    return float(np.sum(acc * acc))


def test_array_values_and_adjoints_stay_scalar_code():
    w = np.array([0.3, -1.2, 2.0])
    fast, plain = pair(array_steps)
    for s in (1.0, 1.0, 1.0, 1.1):
        got, want = fast(w * s), plain(w * s)
        assert got[0] == want[0] == array_steps(w * s) and close(got[1], want[1])
    assert fast.compiled.stats["hits"] == 2 and "_vx_" not in source(fast)


def zero_terms(x):
    s = 0.0
    for i in range(24):
        s = s + x * 0.0               # -0.0 for a negative x: the sum stays +0.0
    return s


def literal_terms(x):
    s = x
    for i in range(24):
        s = s + i                      # the terms are a bound constant array
    for i in range(24):
        s = s - 3                      # an int in every group: a float array of -3.0
    return s * x


def test_sums_start_from_their_initial_value_in_the_terms_own_array():
    """A sum whose terms are an array of the run's own adds ``acc0`` into its first term
    (the sign of a zero sum as in the scalar code); terms that are a bound constant (or
    another line's vector) are not written to, so every call sees them unchanged."""
    fast, plain = pair(zero_terms)
    for x in (-2.0, -2.0, -2.0, 3.0, -0.5):
        value, g = check(fast, plain, zero_terms, (x,))
        assert math.copysign(1.0, value) == 1.0 and g == 0.0
    assert fast.compiled.stats["hits"] == 3 and "_vx_cat(" not in source(fast)
    assert re.search(r"_t0_\d+\[0\] \+= 0\.0", source(fast))
    fast, plain = pair(literal_terms)
    for x in (0.7, 0.7, 0.7, 0.7, -1.25):
        value, g = check(fast, plain, literal_terms, (x,))
        assert abs(value - (x + 204) * x) < 1e-9 and abs(g - (2 * x + 204)) < 1e-9
    assert fast.compiled.stats["hits"] == 3 and "_vx_acc(_vx_cat(([v" in source(fast)
    assert "_vx_full(24, (-3), float)" in source(fast)
    _, tape = dcgraph.track(literal_terms, 0.7)
    tape.lint()
