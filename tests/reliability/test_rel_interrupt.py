"""A KeyboardInterrupt anywhere in a traced run (inside dcgraph's probes and hooks too) leaves
a tape that lints, whether the program caught it or not; when it did not, the interrupt leaves
``track`` with that tape as ``exc.tape``, the recursion limit as it was, and the next ``track``
working as before."""
import random
import re
import signal
import sys
import threading

import pytest

import dcgraph
from dcgraph.tape import Tape
from dcgraph.tracer.current_run import _state
from tracer_watch import run_of

pytestmark = pytest.mark.skipif(threading.current_thread() is not threading.main_thread(),
                                reason="signals are delivered to the main thread")

# the root's last line when the interrupt left it: ``@7: [L42] raise KeyboardInterrupt()``
_RAISED = re.compile(r"@\d+: (\[L\d+\] )?raise KeyboardInterrupt\(\)")


def square(v, w=1.0):
    return v * v * w


def work(n, catch):
    total = 0.0
    try:
        for k in range(n):
            total = total + square(k * 0.001, w=2.0)
            total = total + square(total * 0.0)
    except KeyboardInterrupt:
        if not catch:
            raise                 # the program lets it through
        return -1.0
    return total


def outer(n, catch):
    if not catch:
        return work(n, catch)
    try:
        return work(n, catch)
    except KeyboardInterrupt:
        return -2.0


def _traced(code) -> bool:
    """Whether ``code`` is one of the traced program's functions (here)."""
    return code.co_name in {"outer", "work", "square"} and code.co_filename == __file__


def _landed_in_the_run(exc):
    """Whether the interrupt's traceback passes through a frame of the traced program."""
    tb = exc.__traceback__
    while tb is not None:
        if _traced(tb.tb_frame.f_code):
            return True
        tb = tb.tb_next
    return False


def _frames(exc) -> list:
    """``(function, line)`` of each frame the exception's traceback passes through."""
    out, tb = [], exc.__traceback__
    while tb is not None:
        out.append((tb.tb_frame.f_code.co_name, tb.tb_lineno))
        tb = tb.tb_next
    return out


def _interrupter(landings: list):
    """A SIGALRM handler that raises KeyboardInterrupt, first appending to ``landings`` whether
    a frame of the traced program was on the stack (its own, or below a dcgraph hook's)."""
    def interrupt(signum, frame):
        while frame is not None and not _traced(frame.f_code):
            frame = frame.f_back
        landings.append(frame is not None)
        raise KeyboardInterrupt
    return interrupt


def _check_escaped(exc, tape, limit, idle, printout):
    """What holds when the interrupt left ``track``: its tape lints and prints ending with the
    root's raise of it, the recursion limit is the user's, the thread has no current run, and
    the next ``track`` works and prints as before."""
    where = _frames(exc)
    assert isinstance(tape, Tape), where
    tape.lint()
    assert tape.raised and tape.result is exc, where
    roots = [line for line in str(tape).splitlines() if not line.startswith(" ")]
    assert _RAISED.fullmatch(roots[-1]), (roots[-1], where)
    assert sys.getrecursionlimit() == limit, (sys.getrecursionlimit(), limit, where)
    assert _state.run is idle, (_state.run, where)
    result, again = dcgraph.track(outer, 3, False)
    again.lint()
    assert result == work(3, False)
    assert str(again) == printout


@pytest.mark.parametrize("trials", [30, pytest.param(200, marks=pytest.mark.slow)])
def test_interrupted_runs_leave_tapes_that_lint(trials):
    """Every interrupt that lands inside the traced run leaves a tape: on the exception when the
    program did not catch it (every other trial, ``catch=False``: then it always leaves
    ``track``, see ``_check_escaped``), else on the run's result. Instrumentation happens once,
    before the trials: an interrupt there (milliseconds on a loaded 3.12 machine) lands before
    any run exists. A handler that runs inside a gc callback or a finaliser (another library's:
    hypothesis keeps a gc callback once its tests ran) raises where the interpreter ignores
    exceptions: the run then ends as if the timer had missed it."""
    n = 20_000                               # bounded if the timer misses the run
    full = work(n, True)
    _, reference = dcgraph.track(outer, 3, False)
    printout = str(reference)
    landings: list = []
    swallowed: list = []

    def unraisable(info, forward=sys.unraisablehook):
        if info.exc_type is KeyboardInterrupt:
            swallowed.append(info.object)
        else:
            forward(info)

    previous = signal.signal(signal.SIGALRM, _interrupter(landings))
    previous_unraisable, sys.unraisablehook = sys.unraisablehook, unraisable
    limit = sys.getrecursionlimit()
    idle = _state.run
    rng = random.Random(7)
    linted, escaped, before_the_run, ignored = 0, 0, 0, 0
    try:
        for trial in range(trials):
            catch = trial % 2 == 0
            landings.clear()
            swallowed.clear()
            tape = None
            try:                  # the timer fires once, wherever the run is then
                try:
                    signal.setitimer(signal.ITIMER_REAL, rng.uniform(0.001, 0.004))
                    result, tape = dcgraph.track(outer, n, catch)
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            except KeyboardInterrupt as exc:
                interrupt = exc   # checked below, outside the handler: a failure is reported
            else:                 # alone (the traceback's probe frames have no line numbers)
                interrupt = None
            if swallowed:         # ignored by the interpreter (see above), not by dcgraph
                ignored += 1
                assert interrupt is None and result == full, (swallowed, interrupt)
            elif interrupt is not None:
                tape = getattr(interrupt, "tape", None)
                if tape is None:
                    assert not _landed_in_the_run(interrupt), \
                        f"an interrupt in the run left no tape {_frames(interrupt)}"
                    before_the_run += 1
                else:
                    _check_escaped(interrupt, tape, limit, idle, printout)
                    escaped += 1
            elif landings == [True]:   # returned: the program caught the interrupt
                assert catch, "an interrupt the program let through did not leave track"
                assert result in (-1.0, -2.0)
            else:                 # or the timer missed the run
                assert landings == [] and result == full, (landings, result)
            interrupt = None
            assert _state.run is idle, (trial, _state.run)
            if tape is not None:
                tape.lint()
                linted += 1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        sys.unraisablehook = previous_unraisable
    assert linted + before_the_run == trials
    assert linted >= trials * 2 // 3   # track's own entry takes microseconds of the run's milliseconds
    assert escaped + ignored >= trials // 4      # most of the catch=False half
    assert sys.getrecursionlimit() == limit    # wherever they land (``tracer.headroom``)
    assert _state.run is idle, _state.run


def test_an_interrupt_in_the_roots_prologue_leaves_a_tape_that_lints():
    """The root's prologue logs its entry mark, then its arguments: an interrupt between the
    two (seen under load with the timer above) leaves a log with the mark alone. The replay
    ends the root with a Raise of that exception and no Argument nodes."""
    _, tape = dcgraph.track(square, 3.0)
    run, f, args, kwargs = tape._outcome[:4]   # what the lazy build replays (``RootTape``)
    del run.log[1:]                            # the entry mark alone, as if interrupted there
    exc = KeyboardInterrupt()
    tape._outcome = (run, f, args, kwargs, exc, None, True)
    tape.result, tape.raised = exc, True
    tape.lint()
    assert [type(n).__name__ for n in tape.nodes] == ["Raise"]
    assert tape.nodes[0].value is exc and tape.raised


def test_an_interrupt_between_the_roots_arguments_leaves_no_argument_node():
    """Listed frames log each argument apart (``CodeInfo.args_apart``): a log cut after the
    first of two (an interrupt between their appends) replays as one cut before both, a Raise
    and no Argument node."""
    _, tape = dcgraph.track(square, 3.0)
    run, f, args, kwargs = tape._outcome[:4]
    assert run.log[1:3] == [3.0, 1.0]          # v, then w (its default), each apart
    del run.log[2:]                            # the mark and v: interrupted before w
    exc = KeyboardInterrupt()
    tape._outcome = (run, f, args, kwargs, exc, None, True)
    tape.result, tape.raised = exc, True
    tape.lint()
    assert [type(n).__name__ for n in tape.nodes] == ["Raise"]


def raises_at_once(v, w):
    raise KeyboardInterrupt


def catches(x):
    try:
        return raises_at_once(x * 2.0, 0.5)
    except KeyboardInterrupt:
        return -1.0


def _callee_cut(kept: int):
    """A ``catches(1.5)`` tape whose log keeps ``kept`` of the callee's two arguments (as if
    interrupted in its prologue), up to the caller's handler mark."""
    from dcgraph.tracer.events import BlockMark, EntryMark
    result, tape = dcgraph.track(catches, 1.5)
    assert result == -1.0
    log = run_of(tape).log
    entry = next(k for k, e in enumerate(log) if type(e) is EntryMark
                 and e.info.code.co_name == "raises_at_once")
    assert log[entry + 1:entry + 3] == [3.0, 0.5]
    handler = next(k for k in range(entry, len(log)) if type(log[k]) is BlockMark)
    del log[entry + 1 + kept:handler]
    tape.lint()
    return str(tape)


def test_an_interrupt_between_a_callees_arguments_replays_as_one_before_them():
    """A callee's prologue cut after its first argument, the caller's handler catching the
    interrupt: the same tape as one cut before its arguments (the replay takes all of a
    frame's arguments before it makes a node)."""
    cut_before = _callee_cut(0)
    assert _callee_cut(1) == cut_before
    assert "raises_at_once" in cut_before and "-1.0" in cut_before
    assert "Argument v" not in cut_before     # (uncut, the callee's nodes start with them)
    assert "Argument v = 3.0" in str(dcgraph.track(catches, 1.5)[1])


def _interrupted_once(module, name: str, calls: list):
    """Replace ``module.name`` for one call by one that raises KeyboardInterrupt (as a timer
    handled at that call's first instruction would), appending its arguments to ``calls``."""
    real = getattr(module, name)

    def interrupted(*args):
        setattr(module, name, real)
        calls.append(args)
        raise KeyboardInterrupt
    setattr(module, name, interrupted)
    return real


def test_an_interrupt_between_tracks_state_switch_and_its_try_leaves_the_thread_idle():
    """Seen with the timer above (1 trial in ~600 under gc pressure): an interrupt handled at
    the ``gettrace()`` call that decides ``screen``, after the run became the thread's current
    one and before ``f`` started, leaves ``track`` with a tape of the call (no event logged)
    and the thread idle again."""
    track_module = sys.modules["dcgraph.tracer.track"]
    dcgraph.track(square, 1.0)
    idle = _state.run
    calls: list = []
    real = _interrupted_once(track_module, "gettrace", calls)
    try:
        with pytest.raises(KeyboardInterrupt) as caught:
            dcgraph.track(square, 2.0)
        assert calls == [()]
        caught.value.tape.lint()
        assert caught.value.tape.raised and caught.value.tape.result is caught.value
        stale = _state.run
        assert stale is idle, stale
    finally:
        track_module.gettrace = real
        if _state.run is not idle:
            _state.run.close()
            _state.run = idle


def test_an_interrupt_as_track_ends_a_run_leaves_the_recursion_limit_as_it_was():
    """An interrupt handled at ``narrowed``'s first instruction, on ``track``'s normal path
    (after ``f`` returned), propagates with no tape (``f`` returned) and the run still ends:
    ``track`` narrows once more, so the limit is the user's again, and stays so after later
    runs."""
    track_module = sys.modules["dcgraph.tracer.track"]
    limit = sys.getrecursionlimit()
    calls: list = []
    real = _interrupted_once(track_module, "narrowed", calls)
    try:
        with pytest.raises(KeyboardInterrupt) as caught:
            dcgraph.track(square, 2.0)
        assert len(calls) == 1 and not hasattr(caught.value, "tape")
        assert sys.getrecursionlimit() == limit
        dcgraph.track(square, 3.0)
        assert sys.getrecursionlimit() == limit
    finally:
        track_module.narrowed = real
        for (run, *_) in calls:
            real(run)                 # what the interrupted call would have done
        run = None
        assert sys.getrecursionlimit() == limit
