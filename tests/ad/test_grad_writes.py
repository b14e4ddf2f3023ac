"""Gradients are right or refused (issue 16, part 1): writes the tracer learns about through
calls (``np.fill_diagonal``, ``ufunc.at``, ``out=``, ``.flat``, ``np.put``-likes), numpy's
repeated-index semantics, calls of unknown effect, and values that leave the numbers.
Known answers: the issue's table (central differences at x = 1.5) and closed forms."""
from __future__ import annotations

import numpy as np
import pytest

import dcgraph
from dcgraph import ad


def _row1(x):
    a = np.zeros(3)
    a[[0, 0, 1]] += x
    return a.sum()


def _row2(x):
    a = np.zeros(3)
    idx = [0, 0, 1]
    a[idx] = a[idx] + x
    return a.sum()


def _row4(x):
    a = np.zeros((3, 3))
    np.fill_diagonal(a, x)
    return a.sum()


def _row5(x):
    a = np.zeros(3)
    np.add.at(a, [0, 0, 1], x)
    return a.sum()


def _row6(x):
    a = np.ones(3) * x
    b = np.empty(3)
    np.cumsum(a, out=b)
    return b.sum()


def _row7(x):
    a = np.zeros(3)
    a.flat[1] = x
    return a.sum()


@pytest.mark.parametrize("f, expected", [(_row1, 2.0), (_row2, 2.0), (_row4, 3.0),
                                         (_row5, 3.0), (_row6, 6.0), (_row7, 1.0)])
def test_issue_table_rows(f, expected, check):
    assert dcgraph.grad(f)(1.5) == pytest.approx(expected, abs=1e-12)
    check(f, 1.5)


def test_repeated_index_assignment_last_writer_wins():
    def f(v):
        a = np.zeros(3)
        a[[0, 0]] = v[:2]
        return a[0] * 3
    np.testing.assert_allclose(dcgraph.grad(f)(np.array([1.0, 2.0, 3.0])), [0.0, 3.0, 0.0])


def test_float_of_str_is_refused_naming_the_line():
    def f(x):
        return float(str(x)) * 2
    with pytest.raises(ad.MissingRuleError, match=r"str\(@0\).*leaves the numbers"):
        dcgraph.grad(f)(1.5)


def test_int_round_trip_is_truly_zero():
    def f(x):
        return float(int(x)) * 2 + x
    assert dcgraph.grad(f)(1.5) == 1.0


@pytest.mark.parametrize("write, expected", [
    ("np.put(a, [0, 0, 2], [x, 2 * x, 3 * x])", [0, 0, 2, 0, 3, 0]),     # last writer: 2x, 3x
    ("np.put(a, [7], x, mode='wrap')", [0, 1, 0, 0, 0, 0]),
    ("np.place(a, a == 0, [x, 2 * x])", None),
    ("np.putmask(a, np.arange(6) % 2 == 0, x * np.arange(6))", None),
    ("np.copyto(a, x * np.arange(6), where=np.arange(6) > 3)", None),
    ("np.put_along_axis(a, np.array([1, 1, 4]), x, axis=0)", None),
    ("np.subtract.at(a, [1, 1, 3], x)", None),
    ("np.multiply(a, x, out=a)", None),
    ("np.add(a, x, a)", None),
    ("np.cumsum(a * x, 0, None, a)", None),
    ("np.dot(np.eye(6) * x, a.copy(), a)", None),
    ("np.clip(a * x, 0.2, 0.9, a)", None),
])
def test_writing_calls_match_differences(write, expected, check):
    ns = {"np": np}
    exec(f"def f(x):\n    a = np.zeros(6) + np.arange(6.0) * 0.25\n    {write}\n"
         f"    return (a * np.linspace(1, 2, 6)).sum()\n", ns)
    check(ns["f"], 1.5)


def test_multiply_at_with_repeats(check):
    def f(x):
        a = np.ones(3) * x
        np.multiply.at(a, [0, 0, 2], x * np.array([2.0, 3.0, 0.5]))
        return (a * np.array([1.0, 2.0, 3.0])).sum()
    # a = (6x^3, x, 0.5x^2): f = 6x^3 + 2x + 1.5x^2, f' = 18x^2 + 2 + 3x
    assert dcgraph.grad(f)(1.5) == pytest.approx(18 * 2.25 + 2 + 4.5, rel=1e-12)
    check(f, 1.5)


def test_other_ufunc_at_is_refused():
    def f(x):
        a = np.ones(3) * x
        np.divide.at(a, [0, 0], 2.0)
        return a.sum()
    with pytest.raises(ad.MissingRuleError, match="divide.at is not differentiated"):
        dcgraph.grad(f)(1.5)


def _scale_in_place(a):           # a primitive of unknown effect that writes
    a *= 2.0


def _norm(a):                     # a primitive of unknown effect that only reads
    return float(np.sqrt((a * a).sum()))


def test_unknown_write_is_refused_and_sliced():
    def f(x):
        a = np.zeros(3) + x
        _scale_in_place(a)
        return a.sum()
    ctx = dcgraph.Context(primitive=[_scale_in_place])
    value, tape = dcgraph.track(f, 1.5, ctx=ctx)
    assert value == 9.0
    text = str(tape)
    assert "possibly_written(@" in text
    assert tape.arguments[0] in tape.slice(tape.returned)
    tape.lint()
    from dcgraph.ad.core import Sweep
    with pytest.raises(ad.MissingRuleError, match="_scale_in_place.*may have written"):
        Sweep(tape).run(tape, 1.0)


def test_unknown_call_that_did_not_write_passes_the_gradient():
    def f(x):
        a = np.zeros(3) + x
        if _norm(a) > 100.0:      # read by an unknown primitive, then used again
            return 0.0
        return a.sum()
    ctx = dcgraph.Context(primitive=[_norm])
    _, tape = dcgraph.track(f, 1.5, ctx=ctx)
    assert "possibly_written(@" in str(tape)
    assert ad.backward(tape)["x"] == pytest.approx(3.0)


def test_fill_diagonal_slice_reaches_the_argument():
    _, tape = dcgraph.track(_row4, 1.5)
    assert tape.arguments[0] in tape.slice(tape.returned)
    tape.lint()


def test_write_through_a_view_of_a_fresh_linspace():
    def f(x):
        a = np.linspace(0, 1, 6)
        v = a[::2]
        v[[1, -1]] = x[4]
        return a[2] * 1.0 + a[4] * 2.0
    np.testing.assert_allclose(dcgraph.grad(f)(np.arange(5.0)), [0, 0, 0, 0, 3.0])


def _pick(rng, weights):           # a user sampler, registered as random below
    return int(rng.choice(len(weights), p=weights / weights.sum()))


def test_registered_random_functions_are_not_unknown_writers():
    from dcgraph.analysis import random_primitives as registry
    registry.register_random(_pick)
    try:
        def model(rng):
            w = np.array([1.0, 2.0, 3.0])
            k = _pick(rng, w)
            return w[k]
        _, tape = dcgraph.track(model, np.random.default_rng(0), ctx=dcgraph.RandomContext())
        assert "possibly_written" not in str(tape)
        _, tape = dcgraph.track(model, np.random.default_rng(0),
                                ctx=dcgraph.Context(primitive=[_pick]))
        assert "possibly_written" in str(tape)       # unregistered: its effect is unknown
    finally:
        registry.unregister_random(_pick)


def test_reads_through_flat(check):
    def f(x):
        m = np.outer(x, x)
        return m.flat[1] * 2.0 + m.flat[[3, 3]].sum()      # x0 x1 * 2 + 2 x1^2
    np.testing.assert_allclose(dcgraph.grad(f)(np.array([1.5, -0.5])), [-1.0, 3.0 - 2.0])
    check(f, np.array([1.5, -0.5]))
