"""The call hook's memo: bound methods are memoised by their function, builtin callables are
decided by their type; decisions still follow the function's current code."""
import math

import numpy as np
import pytest

import dcgraph
from dcgraph.tape import NestedCall, PrimitiveCall
from tracer_watch import at_close, collector_off


class Scaler:
    def __init__(self, k):
        self.k = k

    def apply(self, x):
        return self.k * x


def _tripled(self, x):
    return 3.0 * x + self.k


def using_bound_methods(x):
    a, b = Scaler(2.0), Scaler(5.0)
    total = 0.0
    for _ in range(3):
        total += a.apply(x) + b.apply(x)
    return total


def replacing_code_midway(x):
    s = Scaler(1.0)
    first = s.apply(x)
    Scaler.apply.__code__ = _tripled.__code__
    return first + s.apply(x)


def calling_builtin_methods(rng, x):
    out = []
    for _ in range(3):
        out.append(math.sin(x) + rng.random())
    return sum(out)


def _calls(tape, name):
    return [n for n in tape.walk() if isinstance(n, (NestedCall, PrimitiveCall))
            and n.fn_name.endswith(name)]


def test_bound_methods_of_several_instances_are_each_traced():
    result, tape = dcgraph.track(using_bound_methods, 1.5)
    assert result == using_bound_methods(1.5) == 3 * (3.0 + 7.5)
    tape.lint()
    calls = _calls(tape, "apply")
    assert len(calls) == 6 and all(isinstance(c, NestedCall) for c in calls)
    assert [c.value for c in calls] == [3.0, 7.5] * 3


def test_a_method_whose_code_is_replaced_midway_runs_the_new_code():
    original = Scaler.apply.__code__
    try:
        plain = replacing_code_midway(2.0)
        Scaler.apply.__code__ = original
        result, tape = dcgraph.track(replacing_code_midway, 2.0)
    finally:
        Scaler.apply.__code__ = original
    assert result == plain == 2.0 + 7.0
    tape.lint()
    calls = _calls(tape, "apply")
    assert [type(c) for c in calls] == [NestedCall, NestedCall]
    assert [c.value for c in calls] == [2.0, 7.0]


def test_builtin_functions_and_methods_are_primitive_calls():
    result, tape = dcgraph.track(calling_builtin_methods, np.random.default_rng(4), 0.3)
    assert result == calling_builtin_methods(np.random.default_rng(4), 0.3)
    tape.lint()
    for name in ("sin", "random", "append"):
        calls = _calls(tape, name)
        assert len(calls) == 3 and all(isinstance(c, PrimitiveCall) for c in calls), name


def test_a_finished_run_is_freed_without_the_cycle_collector(monkeypatch):
    import weakref
    runs = at_close(monkeypatch, weakref.ref)
    with collector_off():
        result, tape = dcgraph.track(using_bound_methods, 1.0)
        assert runs[-1]() is not None           # the lazy tape still needs the run's log
        tape.lint()
        del tape
        assert runs[-1]() is None


def _first_step(i):
    return i + 0.5


def _later_step(i):
    return 2.0 * i


def stepping(n):
    total = 0.0
    for i in range(n):
        total += _first_step(i) if i == 0 else _later_step(i)
        yield total


def started_stepping(n):
    g = stepping(n)
    next(g)
    return g


def generator_then_deeper(n):
    return sum(stepping(n)) + _first_step(1.0)


def test_a_generator_resumed_after_its_run_makes_no_levels(monkeypatch):
    """A generator of a finished run, resumed later, calls functions its run never saw: they
    run untraced and the closed run gets no new level (nothing links it back to its levels)."""
    from dcgraph.tracer import recorder
    runs = at_close(monkeypatch)
    g, tape = dcgraph.track(started_stepping, 4)
    tape.lint()
    run = runs[-1]
    assert run.levels == [] and run.closed
    assert list(g) == [2.5, 6.5, 12.5]        # 0.5, then + 2, 4, 6 after the run ended
    assert run.levels == [] and type(run.pending[0]) is recorder.Sink \
        and run.pending[0] == [] and run.pending[1] is recorder._identity
    tape.lint()


def test_a_generators_frames_log_into_the_level_of_the_call_that_made_it():
    """The generator's frames take the (append, hook) pair its call left: its calls are
    nested in its segments, and the caller's later calls stay at the caller's level."""
    result, tape = dcgraph.track(generator_then_deeper, 3)
    tape.lint()
    assert result == (0.5 + 2.5 + 6.5) + 1.5
    nested = [n for n in tape.nodes if isinstance(n, NestedCall)]
    assert [n.fn for n in nested] == [next, next, next, next, _first_step]
    inner = [[m.fn for m in n.child.nodes if isinstance(m, NestedCall)] for n in nested[:4]]
    assert inner == [[_first_step], [_later_step], [_later_step], []]
    assert [m.value for m in nested[4].child.nodes][-1] == 1.5
