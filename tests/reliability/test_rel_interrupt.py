"""A KeyboardInterrupt anywhere in a traced run (inside dcgraph's probes and hooks too) leaves
a tape that lints, whether the program caught it or not."""
import random
import signal
import sys
import threading

import pytest

import dcgraph

pytestmark = pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                                reason="signals are delivered to the main thread")


def square(v, w=1.0):
    return v * v * w


def work(n):
    total = 0.0
    try:
        for k in range(n):
            total = total + square(k * 0.001, w=2.0)
            total = total + square(total * 0.0)
    except KeyboardInterrupt:
        return -1.0
    return total


def outer(n, catch):
    if not catch:
        return work(n)
    try:
        return work(n)
    except KeyboardInterrupt:
        return -2.0


def _interrupt(signum, frame):
    raise KeyboardInterrupt


@pytest.mark.parametrize("trials", [30, pytest.param(200, marks=pytest.mark.slow)])
def test_interrupted_runs_leave_tapes_that_lint(trials):
    previous = signal.signal(signal.SIGALRM, _interrupt)
    limit = sys.getrecursionlimit()
    rng = random.Random(7)
    linted = 0
    try:
        for trial in range(trials):
            tape = None
            try:                  # the timer fires once, wherever the run is then
                try:
                    signal.setitimer(signal.ITIMER_REAL, rng.uniform(0.001, 0.004))
                    result, tape = dcgraph.track(outer, 20_000, trial % 2 == 0)   # bounded if it is missed
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            except KeyboardInterrupt as exc:
                tape = tape if tape is not None else getattr(exc, "tape", None)
            if tape is not None:
                tape.lint()
                linted += 1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert linted >= trials * 2 // 3   # some interrupts land in track itself, before a tape
    assert sys.getrecursionlimit() == limit    # wherever they land (``tracer.headroom``)


def test_an_interrupt_in_the_roots_prologue_leaves_a_tape_that_lints():
    """The root's prologue logs its entry mark, then its arguments: an interrupt between the
    two (seen under load with the timer above) leaves a log with the mark alone. The replay
    ends the root with a Raise of that exception and no Argument nodes."""
    _, tape = dcgraph.track(square, 3.0)
    build = tape._build                        # the lazy build, bound to the run's outcome
    run, f, args, kwargs = build.__self__[:4]
    del run.log[1:]                            # the entry mark alone, as if interrupted there
    exc = KeyboardInterrupt()
    tape._build = type(build)(build.__func__, (run, f, args, kwargs, exc, None, True))
    tape.result, tape.raised = exc, True
    tape.lint()
    assert [type(n).__name__ for n in tape.nodes] == ["Raise"]
    assert tape.nodes[0].value is exc and tape.raised
