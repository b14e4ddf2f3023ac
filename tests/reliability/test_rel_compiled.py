"""Compiled gradients never run user code twice: a path with effects is not compiled."""
import itertools

import numpy as np
import pytest

import dcgraph
from dcgraph.ad.compiled import NotCompilable, check_supported


def coin(x, rng):
    if rng.random() < 0.5:
        return x * x
    return 3.0 * x


def test_random_draws_happen_once_per_call():
    g = dcgraph.grad(coin)
    rng, twin = np.random.default_rng(0), np.random.default_rng(0)
    got = [g(2.0, rng) for _ in range(300)]
    expected = [4.0 if twin.random() < 0.5 else 3.0 for _ in range(300)]
    assert got == expected
    assert rng.bit_generator.state == twin.bit_generator.state
    assert abs(np.mean([v == 4.0 for v in got]) - 0.5) < 0.1


def take_next(x, it):
    a = next(it)
    return a * x


def test_an_iterator_of_the_users_is_drawn_once_per_call():
    g = dcgraph.grad(take_next)
    it = iter(range(1, 100))
    got = [g(1.5, it) for _ in range(20)]
    assert got == [float(k) for k in range(1, 21)]
    assert next(it) == 21


class Counter:
    def __init__(self):
        self.count = 0

    def bump(self):
        self.count += 1
        return self.count


def test_why_such_paths_are_not_compiled():
    _, tape = dcgraph.track(coin, 2.0, np.random.default_rng(1))
    with pytest.raises(NotCompilable, match="a random draw"):
        check_supported(tape)
    _, tape = dcgraph.track(take_next, 2.0, itertools.count(1))
    with pytest.raises(NotCompilable, match="calls next"):
        check_supported(tape)
    _, tape = dcgraph.track(lambda x, xs: sum(map(lambda v: v * x, xs)), 2.0, [1.0, 2.0])
    with pytest.raises(NotCompilable, match="function of the user's from C"):
        check_supported(tape)


def pure(x, xs):
    total = 0.0
    for i, v in enumerate(xs):
        total = total + np.sin(v * x) * i
    return total


def test_pure_paths_still_compile():
    g = dcgraph.grad(pure)
    xs = [0.5, 1.0, 2.0]
    for _ in range(4):
        value = g(0.3, xs)
    assert value == pytest.approx(sum(np.cos(v * 0.3) * v * i for i, v in enumerate(xs)))
    assert g.compiled.stats["hits"] >= 1 and g.compiled.enabled
