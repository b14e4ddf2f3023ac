"""Compiled replay of array reads: every ``a[key]`` read of one array is pulled back into one
buffer in place (``rules_containers.add_array_read``); the gradients equal the sweep's on a
fresh trace and closed forms, for slices, ints, new axes, repeated fancy indices, reads under
a branch and arrays that also get adjoints from other operations."""
import numpy as np
import pytest

from dcgraph import ad
from dcgraph.ad.api import _scalar_seed
from dcgraph.ad.compiled import compile_gradient
from test_grad_compiled import reference, same

XS = np.array([-14.0, -7.0, 0.0, 7.0, 14.0])
Y = np.arange(30.0).reshape(6, 5)


def rats_vec(th):
    alpha, beta, mu_a, mu_b, log_s = th[0:6], th[6:12], th[12], th[13], th[-1]
    s = np.exp(log_s)
    r = (Y - alpha[:, None] - beta[:, None] * XS) / s
    return (-0.5 * np.sum((alpha - mu_a) ** 2) - 0.5 * np.sum((beta - mu_b) ** 2)
            - 0.5 * np.sum(r * r) - 30 * log_s)


def repeated_fancy(x):
    return np.sum(x[np.array([0, 2, 2, 2])] ** 2) + x[1] * x[-1]


def reads_and_more(x):
    y = x * x                        # x's adjoint comes from here and from the reads
    return np.sum(y) + x[0] * 3.0 + np.sum(x[1:3]) + np.sum(y[::2])


def branch(x):
    s = x[0] * x[1]
    if x[0] > 0:
        s = s + np.sum(x[2:] ** 3)
    return s + x[1]


def grads_by_hand(x):
    g = np.zeros(4)
    g[0] += 2 * x[0]
    g[2] += 6 * x[2]
    g[1] += x[3]
    g[3] += x[1]
    return g


CASES = [(rats_vec, np.linspace(-1.0, 2.0, 15)), (repeated_fancy, np.array([1.0, 2, 3, 4])),
         (reads_and_more, np.array([1.5, -2.0, 0.5, 3.0])),
         (branch, np.array([2.0, -1.0, 0.5, 3.0])), (branch, np.array([-2.0, -1.0, 0.5, 3.0]))]


@pytest.mark.parametrize("f, x", CASES, ids=[f.__name__ for f, _ in CASES])
def test_array_reads_compile_into_one_buffer_and_match_the_sweep(f, x):
    value, grads, tape, binding, wrt = reference(f, (x,), (0,))
    cg = compile_gradient(tape, wrt, (x,), {}, f, _scalar_seed)
    assert ("add_array_read(" in cg.source or "= _zeros(" in cg.source) \
        and "getitem_rule" not in cg.source          # one buffer (inline when it can be)
    for s in (1.0, 1.01):
        new = (x * s,)
        want_value, want, *_ = reference(f, new, (0,))
        got_value, adj = cg(new, {})
        assert same(got_value, want_value)
        assert same([binding.gradient(adj, 0, new)], want)


def test_closed_forms_through_value_and_grad():
    vg = ad.value_and_grad(repeated_fancy)
    for s in (1.0, 2.0, 3.0, -1.0):
        x = np.array([1.0, 2.0, 3.0, 4.0]) * s
        value, g = vg(x)
        assert value == pytest.approx(x[0] ** 2 + 3 * x[2] ** 2 + x[1] * x[3])
        np.testing.assert_allclose(g, grads_by_hand(x), rtol=1e-14)
    assert vg.compiled.stats["hits"] == 2

    vg = ad.value_and_grad(reads_and_more)
    for s in (1.0, 2.0, 3.0):
        x = np.array([1.5, -2.0, 0.5, 3.0]) * s
        _, g = vg(x)
        want = 2 * x + np.array([3.0, 1.0, 1.0, 0.0]) + 2 * x * np.array([1.0, 0, 1, 0])
        np.testing.assert_allclose(g, want, rtol=1e-14)
        g[:] = 0.0                 # the caller owns the gradient: the next call is unaffected
    assert vg.compiled.stats["hits"] == 1


def scale_and_shift(x, s, c):
    return np.sum(x / s) + np.sum(x - c) * s


def test_array_by_scalar_rules_against_closed_forms():
    x = np.array([1.0, -2.0, 4.5])
    vg = ad.value_and_grad(scale_and_shift, (0, 1, 2))
    for k in range(4):               # traced twice, then the compiled path
        s, c = 1.5 + k, 0.25 * k
        value, (gx, gs, gc) = vg(x, s, c)
        assert value == pytest.approx(x.sum() / s + (x - c).sum() * s, rel=1e-14)
        np.testing.assert_allclose(gx, np.full(3, 1 / s + s), rtol=1e-14)
        assert gs == pytest.approx(-x.sum() / s ** 2 + (x - c).sum(), rel=1e-14)
        assert gc == pytest.approx(-3 * s, rel=1e-14)
    assert vg.compiled.stats["hits"] == 2


def sum_of_squares(p):
    s = 0.0
    for v in p:
        s = s + v * v
    return s


def test_list_gradients_keep_the_element_types():
    for p in ([1.0, -2.0, 0.5], [np.float64(1.0), np.float64(-2.0), np.float64(0.5)]):
        vg = ad.value_and_grad(sum_of_squares)
        for _ in range(3):
            value, g = vg(p)
            assert value == 5.25 and g == [2.0, -4.0, 1.0]
            assert [type(v) for v in g] == [type(v) for v in p]
        assert vg.compiled.stats["hits"] == 1


def distinct_reads(x):
    return x[0] * x[1] + x[0] + x[-1] * 2.0 + x[2]


def one_position_two_ways(x):
    return x[4] * 3.0 + x[-1]                # -1 is 4: the second write adds


def slice_then_item(x):
    return x[1] + np.sum(x[0:3])             # the slice's positions are not tracked: adds


@pytest.mark.parametrize("f, want, adds", [
    (distinct_reads, lambda x: np.array([x[1] + 1.0, x[0], 1.0, 0.0, 2.0]), 1),
    (one_position_two_ways, lambda x: np.array([0.0, 0.0, 0.0, 0.0, 4.0]), 1),
    (slice_then_item, lambda x: np.array([1.0, 2.0, 1.0, 0.0, 0.0]), 1)])
def test_a_zeros_buffer_is_assigned_where_no_literal_read_wrote_yet(f, want, adds):
    x = np.array([1.5, -2.0, 0.5, 3.0, 0.25])
    value, grads, tape, binding, wrt = reference(f, (x,), (0,))
    cg = compile_gradient(tape, wrt, (x,), {}, f, _scalar_seed)
    assert cg.source.count("] += ") == adds          # only where a position repeats (or unknown)
    for s in (1.0, -2.0):
        new = (x * s,)
        got_value, adj = cg(new, {})
        assert got_value == f(x * s)
        np.testing.assert_array_equal(binding.gradient(adj, 0, new), want(x * s))
