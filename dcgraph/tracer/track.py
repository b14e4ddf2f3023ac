"""``track(f, *args, **kwargs)``: run ``f`` instrumented and return its result and tape."""
from __future__ import annotations

import sys
from sys import getprofile, gettrace
from types import FunctionType, MethodType

from .collector import collector_paused
from .context import Context
from .headroom import narrowed, widened
from .instrument.versions import check_supported
from .operator_guards import operator_arguments
from .operator_reach import CLEAR_TYPES
from .inline_calls import substitution_started
from .recorder import EntryMark, Level, Missing
from .recorder import _state as _recorder_state
from .replay import Frame, Replay
from .roots import known as known_root
from .run import Run, new_run
from .screen import screen
from .summary import VALUE_MODES, SummaryLog
from ..tape import Argument, PrimitiveCall, Raise, Return, Tape

__all__ = ["track", "traced_call"]

_DEFAULT_CONTEXT = Context()   # the default policy holds no state
_HOOK_FRAMES = 1               # the call hook's frame, at the deepest point (``headroom``)
_IDLE = type(_recorder_state).run   # a thread's current run until it first sets its own


def _checked() -> tuple:
    """``(sys.version_info, sys.implementation)`` as at import when the tracer supports that
    interpreter (then ``traced_call`` checks only that they are still the same objects), else
    ``(None, None)`` (then it checks every time, and refuses)."""
    try:
        check_supported()
    except Exception:
        return None, None
    return sys.version_info, sys.implementation


_VERSION, _IMPLEMENTATION = _checked()


def track(f, *args, ctx: Context | None = None, values: str = "keep", **kwargs):
    """Run ``f(*args, **kwargs)`` recording a control-flow tape; return ``(result, tape)``.

    The tape's nodes are built from the run's event log on first access. An exception raised by
    ``f`` propagates unchanged, with the (partial) tape attached as its ``tape`` attribute.
    Tracing never changes what ``f`` does; calls the context does not trace are recorded as
    primitive calls. On an interpreter whose bytecode the tracer does not know it raises
    ``UnsupportedPython`` (naming the running and the supported versions) before running ``f``.

    ``values="keep"`` (default): nodes hold the values by reference, so every object the run
    produced lives as long as the tape. ``values="summary"``: the log keeps a ``Summary`` of
    each value (type, shape, dtype, short repr) and no reference, so objects live as in the
    untraced run; consumers that compute with values refuse such a tape (``summary``).

    ``f`` gets the recursion depth it has when called directly from ``track``'s caller
    (``headroom``): the limit is raised by the frames tracing adds while it runs.
    """
    return traced_call(f, args, kwargs, ctx, values, 1)


def traced_call(f, args: tuple, kwargs: dict, ctx: Context | None = None, values: str = "keep",
                callers: int = 0):
    """``track(f, *args, ctx=ctx, values=values, **kwargs)`` for dcgraph's entry points;
    ``callers`` is how many of their frames stand between the user's call and this function's
    (``track``'s one): the run's recursion limit is raised by those, this frame and the hook's,
    plus those of the runs this one is nested in (in this thread)."""
    if sys.version_info is not _VERSION or sys.implementation is not _IMPLEMENTATION:
        check_supported()                 # (the interpreter of the import passed already)
    if values == "keep":
        log = None
    elif values == "summary":
        log = SummaryLog()
    else:
        raise ValueError(f"track: values must be one of {VALUE_MODES}, got {values!r}")
    run = new_run(ctx if ctx is not None else _DEFAULT_CONTEXT, log)
    kind = type(f)
    # arguments that cannot hold an object (numbers, strings, C objects: ``CLEAR_TYPES``)
    # need no walk; anything else is walked (``operator_reach``)
    walk = kind is not FunctionType
    if not walk:                       # (a loop: a tenth of a microsecond less than
        for value in (*args, *kwargs.values()) if kwargs else args:   # ``issuperset(map``)
            if type(value) not in CLEAR_TYPES:
                walk = True
                break
    if walk and operator_arguments(args, kwargs, run.ctx, f, run.reach_table()):
        run.guard_operators()
    target = f.__func__ if kind is MethodType else f
    # a root decided by an earlier run (``roots``), else decided by ``Run.root``
    tail = known_root(target, run.ctx) if type(target) is FunctionType and log is None \
        and not run.operators else None
    if tail is None:
        traced = run.root(target)
    elif tail[4]:       # its calls of itself: their sites filled as well
        run.took_root(target, tail)
        traced = tail[0]
    else:               # ``Run.took_root`` inline where the root calls itself nowhere (one
        run.rooted = (target, tail)       # store; the call cost 50 ns per ``track``)
        traced = tail[0]
    call = f
    if traced is not None:
        call = traced if target is f else MethodType(traced, f.__self__)
    # the thread's own dict of ``_state`` (``threading.local``'s ``__dict__``): a dict read
    # and write each way, half the cost of the local's attribute read and writes (50 ns)
    state = _recorder_state.__dict__
    previous = state.get("run", _IDLE)
    run.frames = frames = previous.frames + callers + 1
    filters = returned = None
    try:        # the run's start and end inside: an interrupt anywhere leaves the thread's
        try:    # current run, the recursion limit and a user's trace function as they were
            state["run"] = run
            # None unless the user set a trace or profile function (two C calls first)
            if gettrace() is not None or getprofile() is not None:
                filters = screen(run.log)
            widened(run, frames + _HOOK_FRAMES)
            if run.level_class is not Level:
                substitution_started(run)       # ended by ``run.close``
            result = call(*args, **kwargs) if kwargs else call(*args)   # (no dict made)
            returned = True
        finally:
            try:
                if filters is not None:
                    filters.restore()
            finally:
                state["run"] = previous
                try:
                    narrowed(run)
                except BaseException:           # an interrupt as it began: once more
                    narrowed(run)               # (harmless twice)
                    raise
                finally:
                    run.close()
    except BaseException as exc:
        if returned:                 # an interrupt after ``f`` returned: no tape says so
            raise
        if log is not None:
            args, kwargs = log.summarise(args), {k: log.summarise(v) for k, v in kwargs.items()}
            _attach(exc, _tape(run, f, target, traced, args, kwargs, log.summarise(exc), True))
        else:
            _attach(exc, _tape(run, f, target, traced, args, kwargs, exc, True))
        raise
    if log is not None:
        args, kwargs = log.summarise(args), {k: log.summarise(v) for k, v in kwargs.items()}
        return result, _tape(run, f, target, traced, args, kwargs, log.summarise(result), False)
    if traced is None:
        return result, _tape(run, f, target, traced, args, kwargs, result, False)
    # ``_tape``'s common path inline (a traced root keeping values): a ``RootTape``, its
    # fields stored, ``_outcome`` the tuple its class's ``_build`` reads (no bound method)
    tape = RootTape()
    tape.code, tape.fn, tape.result = target.__code__, target, result
    if run.unsupported:
        tape.untraced = run.unsupported
    tape._outcome = (run, f, args, kwargs, None, result, False)
    try:
        return result, tape
    finally:    # a frame object of this call (a traced frame's ``f_back``, kept by a
        run = tape = filters = None     # traceback or a generator's frame in the log) keeps
                                        # its locals: none may lead to the run or its log


def _attach(exc: BaseException, tape: Tape) -> None:
    """Give ``exc`` its tape as ``exc.tape``, unless it has a ``tape`` of its own (an attribute,
    or one its class defines) or takes no attributes. (A pickled tape unpickles as a tape that
    says it was pickled, so the exception still crosses process boundaries.)"""
    try:
        own = vars(exc)
    except TypeError:
        return
    if "tape" in own or any("tape" in vars(k) for k in type(exc).__mro__):
        return
    try:
        exc.tape = tape
    except (AttributeError, TypeError):
        pass


def _tape(run: Run, f, target, traced, args, kwargs, outcome, raised: bool) -> Tape:
    """The root tape of a run that ended with ``outcome`` (its result, or the exception it
    raised when ``raised``); ``target``: ``f``, or its function when ``f`` is a bound method."""
    if traced is None:
        tape = Tape(getattr(target, "__code__", None), target)
    else:                          # built from the log on first access
        tape = RootTape()
        tape.code, tape.fn = target.__code__, target
    tape.result, tape.raised = outcome, raised
    if run.unsupported:
        tape.untraced = run.unsupported
    exc, result = (outcome, None) if raised else (None, outcome)
    if run.summary:
        tape.values = "summary"
        f = tape.fn = run.log.summarise(f)
        run.log.forget()
    if traced is None:
        _primitive_root(tape, f, args, kwargs, exc, result, raised)
        return tape

    tape._outcome = (run, f, args, kwargs, exc, result, raised)
    return tape


def _build(tape: RootTape) -> None:
    """Replay the run's log into ``tape`` (``RootTape._build``, called once, by
    ``Tape.nodes``), from its ``_outcome``: the run, ``f``, its arguments, and how it ended
    (dropped once built or failed: the run and the arguments live as long as the tape only
    until then; kept when interrupted, for the next access). The replay keeps its own stack
    of frames (no recursion limit) and runs with the cyclic collector paused
    (``collector.collector_paused``: restored afterwards, overlapping builds counted)."""
    tape._nodes = []
    try:
        with collector_paused():
            _replay_into(tape, *tape._outcome)
    except Exception:
        tape._outcome = None
        raise
    tape._outcome = None


class RootTape(Tape):
    """A traced run's root tape, built from the run's log on first access (``Tape.defer``'s
    lazy build, with its builder a class attribute: ``track`` makes one per run). Made by
    ``RootTape()`` (no arguments), then its ``code`` and ``fn`` stored.

    ``_outcome``: ``(run, f, args, kwargs, exc, result, raised)`` until the build (``run``:
    the run whose log it replays), then None."""

    _build = staticmethod(_build)
    _nodes = ()         # (``_build`` makes the list)
    _outcome = None
    # no Python ``__init__`` (``Tape``'s): the class call then costs less than
    # ``object.__new__(RootTape)`` (40-90 ns per ``track``, measured)
    __init__ = object.__init__


def _replay_into(tape: Tape, run: Run, f, args, kwargs, exc, result, raised) -> None:
    log = run.log      # past log_end: a generator of this run resumed after it ended
    if run.log_end is not None and run.log_end != len(log):
        log = log[:run.log_end]
    replay = Replay(log, run.ctx, exc)
    first = replay.peek()
    if type(first) is not EntryMark:
        _primitive_root(tape, f, args, kwargs, exc, result, raised)  # failed before entry
        return
    replay.pos += 1
    frame = Frame(replay, first.info, tape)
    try:
        frame.enter(None, None)
    except Missing:                # interrupted in the root's prologue (a KeyboardInterrupt)
        replay.pending_raises.append(tape.append(Raise((), None)))   # before its arguments
        tape.raised = True
        replay.finish(tape)
        return
    frame.run()
    replay.finish(tape)
    if run.ctx.annotates():
        for node in tape.walk():
            run.ctx.annotate(node)


def _primitive_root(tape: Tape, f, args, kwargs, exc, result, raised) -> None:
    """A root that was not traced: its arguments, one primitive call, and its outcome."""
    pos = [tape.append(Argument(f"arg{k}", v)) for k, v in enumerate(args)]
    kw = {k: tape.append(Argument(k, v)) for k, v in kwargs.items()}
    call = tape.append(PrimitiveCall(f, pos, kw, exc if raised else result))
    if raised:
        tape.append(Raise((), exc))
    else:
        tape.append(Return((call,), result))
