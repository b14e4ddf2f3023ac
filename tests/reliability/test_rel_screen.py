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
