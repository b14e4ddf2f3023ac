"""Call sites that expect their callable (``CodeInfo.expected``: the C callable the callee load
gave when instrumented) log nothing for it when it is that callable; otherwise a ``CALL_MARK``
and then the callable, as at any site. The replay reads both, and the tapes are the ones the
hook would have recorded."""
import math

import numpy as np
import pytest

import dcgraph
from dcgraph.tracer.events import CALL_MARK
from dcgraph.tracer.inline_calls import substitution_ended, substitution_started


def sin_loop(x, n):
    s = 0.0
    for i in range(n):
        s += math.sin(x * i)
    return s


class SinToCos(dcgraph.Context):
    def substitute(self, fn, depth):
        return math.cos if fn is math.sin else None


def _built(f, *args, **kwargs):
    result, tape = dcgraph.track(f, *args, **kwargs)
    tape.lint()
    return result, tape


def _hooked(f, *args, **kwargs):
    """``_built`` with every site through the hook (the sites' set emptied meanwhile)."""
    token = object()
    substitution_started(token)
    try:
        return _built(f, *args, **kwargs)
    finally:
        substitution_ended(token)


def test_a_site_calling_what_it_expects_logs_nothing_for_it(logs):
    for _ in range(30):                  # warm: the adaptive interpreter specialises
        result, tape = _built(sin_loop, 0.3, 5)
    assert result == sin_loop(0.3, 5)
    log = logs[-1]
    assert not any(e is math.sin or e is CALL_MARK for e in log)
    # entry, the two arguments (each apart), range's value (``range``, a C class, is expected
    # too), the iterator; per iteration the product, sin's value and the sum (the index is
    # counted: ``counted_loops``); the loop's exit mark
    assert len(log) == 5 + 3 * 5 + 1 and range not in log
    assert [n.value for n in tape.find(fn=math.sin)] == [math.sin(0.3 * i) for i in range(5)]
    # the same tape as with every site through the hook (each then logs CALL_MARK, the callable)
    _, hooked = _hooked(sin_loop, 0.3, 5)
    assert sum(e is CALL_MARK for e in logs[-1]) == 5 + 1        # sin and range
    assert sum(e is math.sin for e in logs[-1]) == 5
    assert str(hooked) == str(tape)


def test_a_substituting_run_logs_the_mark_and_the_callable(logs):
    result, tape = _built(sin_loop, 0.3, 4, ctx=SinToCos())
    assert result == sum(math.cos(0.3 * i) for i in range(4))
    log = logs[-1]
    marks = [k for k, e in enumerate(log) if e is CALL_MARK]
    assert [log[k + 1] for k in marks] == [range] + [math.sin] * 4
    assert [n.value for n in tape.find(fn=math.sin)] == [math.cos(0.3 * i) for i in range(4)]


def calls_math_sin(x):
    return math.sin(x)


def test_a_rebound_callee_is_logged_after_the_mark(monkeypatch, logs):
    for _ in range(10):
        _built(calls_math_sin, 0.5)
    assert CALL_MARK not in logs[-1]

    def python_sin(x):
        return x * 2.0

    monkeypatch.setattr(math, "sin", python_sin)
    result, tape = _built(calls_math_sin, 0.5)
    assert result == 1.0
    k = logs[-1].index(CALL_MARK)
    assert logs[-1][k + 1] is python_sin
    assert [n.fn for n in tape.nodes if n.kind == "NestedCall"] == [python_sin]
    monkeypatch.setattr(math, "sin", math.cos)        # a C function, logged by the site
    result, tape = _built(calls_math_sin, 0.5)
    k = logs[-1].index(CALL_MARK)
    assert result == math.cos(0.5) and logs[-1][k + 1] is math.cos
    assert [(n.fn, n.value) for n in tape.nodes if n.kind == "PrimitiveCall"] == \
        [(math.cos, math.cos(0.5))]


def two_floats(a, b):
    return float(a) + float(b)


class Half(float):
    """A class of the program's (a heap type): its construction is traced."""

    def __new__(cls, x):
        return super().__new__(cls, x / 2)


def test_a_c_class_is_expected_and_a_rebound_one_goes_to_the_hook(monkeypatch, logs):
    result, tape = _built(two_floats, 1, "2.5")
    assert result == 3.5 and float not in logs[-1] and CALL_MARK not in logs[-1]
    assert [n.value for n in tape.find(fn=float)] == [1.0, 2.5]
    monkeypatch.setitem(two_floats.__globals__, "float", Half)
    result, tape = _built(two_floats, 1, 5)
    assert result == 3.0
    assert [logs[-1][k + 1] for k, e in enumerate(logs[-1]) if e is CALL_MARK] == [Half, Half]
    assert str(_hooked(two_floats, 1, 5)[1]) == str(tape)


def guarded_sqrt(x):
    try:
        return math.sqrt(x)
    except ValueError as exc:
        return str(exc)


def outer_sqrt(x):
    try:
        return calls_sqrt(x) + 1.0
    except ValueError:
        return -1.0


def calls_sqrt(x):
    return math.sqrt(x)


def test_an_expected_primitive_that_raises(logs):
    result, tape = _built(guarded_sqrt, -1.0)
    assert result == "math domain error"
    assert CALL_MARK not in logs[-1] and math.sqrt not in logs[-1]
    (caught,) = [n for n in tape.nodes if n.kind == "Constant" and n.name == "exception"]
    assert isinstance(caught.value, ValueError)
    assert str(_hooked(guarded_sqrt, -1.0)[1]) == str(tape)
    result, tape = _built(outer_sqrt, -4.0)       # raised in a traced callee, caught here
    assert result == -1.0
    (nested,) = [n for n in tape.nodes if n.kind == "NestedCall"]
    assert nested.child.raised
    assert str(_hooked(outer_sqrt, -4.0)[1]) == str(tape)
    with pytest.raises(ValueError) as info:        # raised out of the root
        dcgraph.track(calls_sqrt, -1.0)
    info.value.tape.lint()
    assert info.value.tape.raised


def halves(n):
    for i in range(n):
        yield i / 2


def pulls(n):
    g = halves(n)
    return next(g) + next(g) + sum(g)


def test_next_of_a_traced_generator_at_an_expected_site(logs):
    result, tape = _built(pulls, 5)
    assert result == pulls(5) == 5.0
    assert not any(e is next for e in logs[-1])
    resumed = [n for n in tape.nodes if n.kind == "NestedCall" and n.fn is next]
    assert [n.value for n in resumed] == [0.0, 0.5, 1.0, 1.5, 2.0, None]   # sum's too
    assert [n.child.nodes[-1].value for n in resumed[:5]] == [0.0, 0.5, 1.0, 1.5, 2.0]
    assert str(_hooked(pulls, 5)[1]) == str(tape)


def numpy_steps(x):
    return np.sum(np.add(x, 1.0)) + float(np.sqrt(x[0]))


def test_summary_tapes_are_the_hooks_too(logs):
    x = np.array([1.0, 4.0, 9.0])
    for f, args in ((sin_loop, (0.3, 6)), (numpy_steps, (x,)), (pulls, (4,))):
        result, summary = _built(f, *args, values="summary")
        assert result == f(*args)
        assert CALL_MARK not in logs[-1]
        assert str(_hooked(f, *args, values="summary")[1]) == str(summary)
