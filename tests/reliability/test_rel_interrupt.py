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


def _landed_in_the_run(exc):
    """Whether the interrupt's traceback passes through a frame of the traced program."""
    traced = {outer.__code__.co_name, work.__code__.co_name, square.__code__.co_name}
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name in traced and code.co_filename == __file__:
            return True
        tb = tb.tb_next
    return False


@pytest.mark.parametrize("trials", [30, pytest.param(200, marks=pytest.mark.slow)])
def test_interrupted_runs_leave_tapes_that_lint(trials):
    """Every interrupt that lands inside the traced run leaves a tape (on the exception when
    the program did not catch it). Instrumentation happens once, before the trials: an
    interrupt there (milliseconds on a loaded 3.12 machine) lands before any run exists."""
    dcgraph.track(outer, 3, True)
    previous = signal.signal(signal.SIGALRM, _interrupt)
    limit = sys.getrecursionlimit()
    rng = random.Random(7)
    linted, before_the_run = 0, 0
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
                tape = getattr(exc, "tape", None)
                if tape is None:
                    assert not _landed_in_the_run(exc), "an interrupt in the run left no tape"
                    before_the_run += 1
            if tape is not None:
                tape.lint()
                linted += 1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert linted + before_the_run == trials
    assert linted >= trials * 2 // 3   # track's own entry takes microseconds of the run's milliseconds
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
