"""The runtime of resumable frames (generators, coroutines, async generators) in a traced run.

``starter`` wraps the instrumented copy of a resumable function: calling it makes the generator
and logs a ``MadeMark`` and the frame object (the frame's identity in the log). The frame's
prologue calls ``enter_generator`` when it first runs and ``resumed`` at each resumption; both
log into the run that made the frame, and into nothing otherwise. None of them makes a call that
3.11 counts against the recursion limit on its common path (``headroom``).
"""
from __future__ import annotations

import inspect
import sys
import types

from .recorder import _state, idle_pair

__all__ = ["starter", "enter_generator", "resumed", "release_finished"]

_BOUND = types.MethodType   # a level's hook (the do-nothing one is a function)


def starter(copy: types.FunctionType, info, fn: types.FunctionType):
    """A function making ``copy``'s generator and logging, into the active run, the made
    mark and the generator's frame object (the frame's identity in the log). The generator's
    frames log into the level of this call (``run.pending``, left by the hook that let it in)."""
    made = info.made_mark
    flags = fn.__code__.co_flags
    coroutine, asynchronous = bool(flags & inspect.CO_COROUTINE), \
        bool(flags & inspect.CO_ASYNC_GENERATOR)

    def start(*args, **kwargs):
        generator = copy(*args, **kwargs)
        run = _state.run
        if not run.closed:
            frame = generator.cr_frame if coroutine else generator.ag_frame if \
                asynchronous else generator.gi_frame    # attributes: no call 3.11 counts
            generators = run.generators
            if generators is None:
                generators = run.generators = {}
            pending = run.pending       # (log, hook) of the level, and the generator
            generators[frame] = (pending[0], pending[1], generator)
            run.log.append(made)
            run.log.append(frame)
        return generator

    start.__name__, start.__qualname__ = fn.__name__, fn.__qualname__
    start.__defaults__, start.__kwdefaults__ = fn.__defaults__, fn.__kwdefaults__
    start.__wrapped__ = fn
    return start


def enter_generator(mark, args: tuple):
    """Called by an instrumented generator frame when it first runs: if a traced call of the
    active run made it, log its start (mark, frame, arguments) and return (append, hook,
    frame); else (a generator of another run) log nothing and trace nothing."""
    frame = sys._getframe(1)
    state = _state.__dict__             # ``_state.run``, spelled out: see ``resumed``
    run = state["run"] if "run" in state else None
    if run is None or run.closed:
        return (*idle_pair(), None)
    generators = run.generators
    if generators is None or frame not in generators:
        return (*idle_pair(), None)
    pair = generators[frame]
    del generators[frame]
    live = run.live_generators
    if live is None:
        live = run.live_generators = {}
    live[frame] = pair[2]
    log = run.log                       # ``append``'s list, appended to as a method (as the
    log.append(mark)                    # hook does: no C call 3.11 counts)
    log.append(frame)
    log.append(args)
    return pair[0], pair[1], frame


def resumed(mark, frame, sent, hook):
    """Called by an instrumented generator frame at each resumption, with the hook it holds:
    log (mark, frame, value sent in) and return its (append, hook), when it resumes in the
    thread and run that started it; else log nothing, from now on (the frame replaces its
    hidden slots with what this returns), and the run's replay ends the frame at its last
    yield: resumed in another thread, in another ``track``, or after its run ended."""
    if type(hook) is not _BOUND:        # the do-nothing hook: this frame logs nothing
        return idle_pair()
    level = hook.__self__
    owner = level.run
    live = owner.live_generators
    if live is None:
        return idle_pair()                  # (made by ``enter_generator``, which came first)
    # ``_state.run`` (absent in a thread that never ran ``track``), read without a call 3.11
    # counts against the recursion limit (this frame stands one level above the generator's:
    # it may make none, ``headroom``): there ``_state.run`` compares the name with "__dict__"
    # (``PyObject_RichCompare``, which counts), ``_state.__dict__`` is found by identity, and
    # a dict's ``in`` and ``[]`` call nothing that counts
    state = _state.__dict__
    current = state["run"] if "run" in state else None
    if current is not owner or owner.closed or frame not in live:
        if frame in live:
            del live[frame]
        return idle_pair()
    log = level.log                     # appended to as a method: see ``enter_generator``
    log.append(mark)
    log.append(frame)
    log.append(sent)
    return level.pair                   # (log, hook): ``hook`` is the level's one bound hook



def release_finished(live: dict) -> None:
    """At the end of a run, ``live`` (frame -> its generator, coroutine or async generator):
    clear the frame of each that has finished. The log keeps the frame as its identity, and
    a finished frame may still hold its hidden slots (the hook and the log: a cycle with the
    run that only the collector frees). A frame still suspended keeps them: it may resume
    (``resumed`` then gives it the do-nothing pair)."""
    for frame, generator in live.items():
        kind = type(generator)
        current = generator.gi_frame if kind is types.GeneratorType else \
            generator.cr_frame if kind is types.CoroutineType else generator.ag_frame
        if current is None:             # finished: the frame is no longer the generator's
            frame.clear()
