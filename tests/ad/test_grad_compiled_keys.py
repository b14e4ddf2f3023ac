"""Calls that share a structure key (lists and tuples are keyed by length, not by their items:
``dcgraph.compiled.plan.structure``) but whose items differ: the compiled path either gives
exactly what a fresh trace gives, or its guards send the call back to tracing. Items of every
kind are tried at every read position: ints, floats, bools, numpy scalars of two widths, float
subclasses (one overriding ``*``), 0-d and 1-d and 2-d arrays, nested lists and tuples,
complex numbers; in scalar code, array code, rows of a list of lists, tuple unpacking, a loop
over the list and untraced builtins given the list (``sum``, ``len``), and a vectorised loop."""
import math
import re

import numpy as np
import pytest

import dcgraph


class Real(float):
    """A float subclass that behaves as a float."""


class Doubling(float):
    """A float subclass whose products differ from a float's."""

    def __mul__(self, other):
        return Doubling(float(self) * other * 2.0)

    __rmul__ = __mul__


def scalars(xs):
    return xs[0] * 2.0 + xs[1] * xs[1] + math.sin(xs[2])


def arrays(xs):
    return np.sum(xs[0] * xs[1]) + xs[2] * 1.0


def rows(xs):
    return xs[0][0] * xs[1][1] + xs[2] * 3.0


def unpacked(xs):              # items unpacked from a tuple display, powers by int literals
    a, b, c = xs[0], xs[1], xs[2]
    return (a - b) / c + (a * c) ** 2 + b ** -1 + c ** 0.5


def iterated(xs):              # a loop over the list itself, and untraced builtins over it
    s = 0.0
    for x in xs:
        s = s + x * x
    return s + sum(xs) + sum([x * 2.0 for x in xs]) / len(xs)


def run(xs):                   # a loop over items, written as array code (``vectorise``)
    s = 0.0
    for i in range(40):
        s = s + math.sin(xs[i] * 0.5)
    return s


KINDS = [1.5, 2, True, -2, -1.5, np.float64(1.25), np.float32(1.5), np.int64(3), Real(1.5), Doubling(1.5),
         1 + 2j, np.array(1.5), np.array([1.5, 2.0]), np.array([[1.0], [2.0]]), [1.0, 2.0],
         (1.0, 2.0), [1.0, 2.0, 3.0]]
CASES = [(scalars, [0.5, 0.7, 0.9]), (arrays, [np.array([1.0, 2.0]), np.array([3.0, 4.0]), 0.5]),
         (rows, [[1.0, 2.0], [3.0, 4.0], 0.5]), (unpacked, [0.5, 0.7, 0.9]),
         (iterated, [0.5, 0.7, 0.9]), (run, [0.01 * i for i in range(40)])]


def outcome(vg, xs):
    """``(value, gradient)``, or the class of the exception raised."""
    try:
        return vg(xs)
    except Exception as exc:                   # noqa: BLE001 - compared with the trace's
        return type(exc)


def identical(a, b) -> bool:
    """Same types, shapes and bits, recursively (None and exception classes by identity)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(map(identical, a, b))
    if isinstance(a, np.ndarray):
        return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    return a is b or a == b or (a != a and b != b)


@pytest.mark.parametrize("f, base", CASES, ids=[f.__name__ for f, _ in CASES])
def test_items_of_a_shared_key_are_guarded_or_computed_exactly(f, base):
    compiled = dcgraph.value_and_grad(f)
    for _ in range(3):
        compiled(base)
    cache = compiled.compiled
    assert cache.stats["compiles"] == 1 and cache.stats["hits"] == 1
    positions = range(3) if f is not run else (0, 17, 39)
    refused = 0
    for pos in positions:
        for kind in KINDS:
            xs = list(base)
            xs[pos] = kind
            traced = dcgraph.value_and_grad(f)
            traced.compiled.enabled = False
            before = dict(cache.stats)
            got, want = outcome(compiled, xs), outcome(traced, xs)
            assert identical(got, want), (pos, kind, got, want)
            refused += cache.stats["guard_failures"] > before["guard_failures"]
            assert identical(compiled(base), traced(base))   # and back on the first path
    assert cache.enabled, cache.reason
    assert refused >= len(positions) * 8        # most kinds change the path's types
    assert cache.stats["hits"] >= len(positions) * len(KINDS)


def test_calls_alternating_item_types_keep_both_paths():
    """Ints then floats in one list: two paths under one key, both compiled and used."""
    vg = dcgraph.value_and_grad(scalars)
    ints, floats = [1, 2, 0.5], [1.0, 2.0, 0.5]
    for _ in range(3):
        vg(ints)
        vg(floats)
    assert len(vg.compiled.paths) == 1 and len(next(iter(vg.compiled.paths.values()))) == 2
    hits = vg.compiled.stats["hits"]
    assert vg(ints) == (2 * 1 + 4 + math.sin(0.5), [None, None, math.cos(0.5)])
    assert vg(floats) == (2 * 1 + 4 + math.sin(0.5), [2.0, 4.0, math.cos(0.5)])
    assert vg.compiled.stats["hits"] == hits + 2 and vg.compiled.enabled


def test_densified_lists_are_those_of_item_by_item_densify():
    """``densify`` of a list or tuple takes a C-level path for floats only (or float64s only)
    with real adjoints; every other mix gives what item-by-item densifying gives."""
    from dcgraph.ad.values import Sparse, _leaf, densify
    f8 = np.float64
    cases = [([1.0, 2.0, 3.0], {0: 1.5, 1: f8(2.5), 2: -0.0}),
             ((f8(1.0), f8(2.0)), {0: 1.5, 1: f8(2.5)}),
             ([1.0, 2.0, 3.0], {0: 1.5, 2: 2.0}),              # an absent entry: zero
             ([1.0, f8(2.0)], {0: 1.5, 1: 2.0}),               # mixed item types
             ([1.0, 2], {0: 1.5, 1: 2.0}),                     # an int carries nothing
             ([1.0, 2.0], {0: 1.5, 1: 2.0 + 1.0j}),            # a complex adjoint
             ([1.0, 2.0], {0: np.array(1.5), 1: 2.0}),         # a 0-d array adjoint
             ([Real(1.0), Real(2.0)], {0: 1.5, 1: 2.0}),       # a float subclass
             ([np.float32(1.0)], {0: f8(1.5)}), ([], {})]
    for items, entries in cases:
        got = densify(items, Sparse(entries))
        want = [_leaf(v, entries.get(i)) for i, v in enumerate(items)]
        want = want if type(items) is list else tuple(want)
        assert identical(got, want), (items, entries, got, want)
    assert [type(x) for x in densify([1.0, 2.0], Sparse({0: f8(1.5), 1: 2.0}))] == [float, float]
    assert [type(x) for x in densify([f8(1.0)], Sparse({0: 1.5}))] == [float]


def test_unpacked_items_and_int_powers_need_no_guards_of_their_own():
    """The types of ``a - b`` (``a, b`` unpacked from a tuple of guarded reads) and of
    ``x ** 2``, ``x ** -1`` follow from their inputs' types: only the three reads and
    ``c ** 0.5`` (complex for a negative ``c``) are guarded."""
    vg = dcgraph.value_and_grad(unpacked)
    for _ in range(3):
        vg([0.5, 0.7, 0.9])
    (cg, _), = next(iter(vg.compiled.paths.values()))
    guarded = [line.split("raise")[0] for line in cg.source.splitlines() if "_type(" in line]
    assert len(guarded) == 4, cg.source
    traced = dcgraph.value_and_grad(unpacked)
    traced.compiled.enabled = False
    for xs in ([2, 3, 4], [2.0, -3, 4.0], [np.float32(2.0), 3.0, 4.0], [2.0, 3.0, -4.0]):
        assert identical(outcome(vg, xs), outcome(traced, xs)), xs


def last_step_flagged(x, n):
    terms = []
    for i in range(100, 110):
        terms.append(math.sin(x * i))
        if i == 109:                 # steps of a constant range: known when compiling
            terms.append(x)
        if i == n:                   # an argument: guarded
            terms.append(x * x)
    return sum(terms)


def test_comparisons_of_ints_known_when_compiling_are_not_guarded():
    vg = dcgraph.value_and_grad(last_step_flagged)
    for _ in range(3):
        vg(0.3, 105)
    (cg, _), = next(iter(vg.compiled.paths.values()))
    assert "== 109" not in cg.source and "is not list" not in cg.source
    assert len(re.findall(r"if (not \()?\d+ == v\d+\)?: raise _GF", cg.source)) == 10, cg.source
    traced = dcgraph.value_and_grad(last_step_flagged)
    traced.compiled.enabled = False
    for args in ((0.7, 105), (0.7, 107), (0.2, 200), (0.7, 105)):
        assert identical(vg(*args), traced(*args)), args
    assert vg.compiled.stats["guard_failures"] >= 2 and vg.compiled.enabled
