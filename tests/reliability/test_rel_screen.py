"""A user's trace or profile function sees the traced program's events, not the tracer's."""
import math
import sys
import threading

import dcgraph


def helper(x):
    return math.sin(x) + 1


def program(x):
    t = 0.0
    for k in range(3):
        t = t + helper(x * k)
    return t


def _record(install, run):
    events = []

    def hook(frame, event, arg):
        name = frame.f_code.co_name if event in ("call", "return", "line") else \
            getattr(arg, "__name__", "?")
        events.append((event, name, frame.f_lineno if event == "line" else None))
        return hook if install is sys.settrace else None

    install(hook)
    try:
        run()
    finally:
        install(None)
    first = events.index(("call", "program", None))
    last = len(events) - 1 - events[::-1].index(("return", "program", None))
    return events[first:last + 1]


def _fresh_program():
    """A new function object each time, so the traced run instruments it (first use)."""
    ns = {"helper": helper}
    exec(compile("def program(x):\n    t = 0.0\n    for k in range(3):\n"
                 "        t = t + helper(x * k)\n    return t\n", __file__, "exec"), ns)
    return ns["program"]


def test_a_profile_function_sees_only_the_program():
    plain = _record(sys.setprofile, lambda: program(0.5))
    traced = _record(sys.setprofile, lambda: dcgraph.track(_fresh_program(), 0.5))
    assert [e[:2] for e in traced] == [e[:2] for e in plain]
    assert ("c_call", "sin", None) in traced


def test_a_trace_function_sees_only_the_program():
    plain = _record(sys.settrace, lambda: program(0.5))
    traced = _record(sys.settrace, lambda: dcgraph.track(program, 0.5))
    assert [e for e in traced if e[0] != "line"] == [e for e in plain if e[0] != "line"]
    assert len([e for e in traced if e[0] == "call"]) == 4     # program, helper x 3


def test_the_users_functions_are_put_back():
    def tracer(frame, event, arg):
        return None

    def profiler(frame, event, arg):
        pass

    sys.settrace(tracer)
    sys.setprofile(profiler)
    try:
        dcgraph.track(program, 0.5)
        assert sys.gettrace() is tracer and sys.getprofile() is profiler
    finally:
        sys.settrace(None)
        sys.setprofile(None)
    assert threading.gettrace() is None if hasattr(threading, "gettrace") else True


def test_tracing_under_cprofile_works_and_the_profiler_stays_installed():
    import cProfile
    import pstats

    def work(n):
        return sum(k * k for k in range(n))

    prof = cProfile.Profile()
    prof.enable()
    try:
        result, tape = dcgraph.track(work, 10)
    finally:
        prof.disable()
    assert result == 285
    tape.lint()
    names = {fn for (_, _, fn) in pstats.Stats(prof).stats}
    assert "work" in names


def _rich(x, n):
    c = 0

    def inner(y):
        return y + c
    t = 0.0
    for k in range(n):
        if k % 2:
            t = t + helper(x * k)
        else:
            t -= inner(k)
    i = 0
    while i < n:
        i += 1
    try:
        1 / (x - x)
    except ZeroDivisionError:
        t += 1
    finally:
        t += 0.5
    squares = [v * v for v in range(n)]
    return t + sum(squares) + (
        x)


def _lines_of_this_file(run):
    """Every event of this file's frames (lines included) from the first call of ``_rich``."""
    events = []

    def hook(frame, event, arg):
        if frame.f_code.co_filename != __file__:
            return None
        if frame.f_code.co_name not in ("_rich", "inner", "helper", "<listcomp>"):
            return hook
        events.append((event, frame.f_code.co_name, frame.f_lineno))
        return hook

    sys.settrace(hook)
    try:
        run()
    finally:
        sys.settrace(None)
    return events


def test_a_trace_function_sees_the_same_lines_with_and_without_track():
    """No event of the tracer's prologue (which has no line: before, the ``def`` line was
    reported once per traced call)."""
    plain = _lines_of_this_file(lambda: _rich(0.5, 5))
    traced = _lines_of_this_file(lambda: dcgraph.track(_rich, 0.5, 5))
    assert ("line", "_rich", _rich.__code__.co_firstlineno + 1) in plain
    assert traced == plain
