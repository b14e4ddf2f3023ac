"""Give a traced run back the recursion depth dcgraph's own frames take.

A traced program runs above frames it would not have untraced: ``track``'s own (and those of
an entry point that calls it, such as ``grad``), plus, at the deepest point, the call hook
(``recorder.Level.hook``), a Python frame that stands one level above the caller, where the
callee will stand (a C callee untraced needs no Python frame there). No Python function can
run the user's root without a frame of its own, so instead of removing them the process's
recursion limit is raised by exactly that many frames for the duration of the run:
``widened(run, extra)`` / ``narrowed(run)`` bracket a run that needs ``extra`` more frames.

The limit is process-wide (depth is counted per thread), so the bump is counted: runs may
overlap (threads, a run inside a run) and the limit is always the user's limit plus the
largest ``extra`` of the runs active now; the last run to end restores the user's limit
exactly, so nothing compounds (no ratchet). A limit the user sets during a run is taken as
their new limit (it stays once the runs end). Lowering the limit below the current depth of
the thread that ends a run is refused by the interpreter; the limit then stays raised and the
next run to start or end restores it. While a run is active, ``sys.getrecursionlimit()``
reads the raised value (in every thread).

``with_room(fn, *args)`` raises the limit the same counted way for dcgraph's own work near the
limit (deciding a call first made there), and refuses, before raising it, where it could not
lower it back.

Runs are keyed by their identity, so ending a run twice, or one whose start was interrupted
(a KeyboardInterrupt between two bytecodes), is harmless: ``narrowed`` may be called from the
run's exception path whatever happened. The lock is taken with ``with`` (an interrupt cannot
land between acquiring it and the block that releases it).
"""
from __future__ import annotations

import threading
from sys import getrecursionlimit, setrecursionlimit

__all__ = ["widened", "narrowed", "with_room"]

ROOM = 200     # frames ``with_room`` adds: deciding a first call (instrumenting a 120-line
               # function included) took 17


class _Headroom:
    """The user's limit, the bump in force, and the ``extra`` of each active run."""

    __slots__ = ("lock", "base", "applied", "active")

    def __init__(self):
        self.lock = threading.Lock()
        self.base = 0             # the user's limit (meaningful while ``applied`` > 0)
        self.applied = 0          # frames added to it now
        self.active: dict = {}    # run (by identity) -> the extra frames it needs


_headroom = _Headroom()


def widened(run, extra: int, room: _Headroom = _headroom) -> None:
    """``run`` starts and needs ``extra`` frames: raise the limit if it has fewer. (Part of
    every ``track``'s fixed cost: with no other run active, a lock round, two C calls and a
    few stores.)"""
    with room.lock:
        active = room.active
        limit = getrecursionlimit()
        applied = room.applied
        if limit != room.base + applied:
            room.base, room.applied, applied = limit, 0, 0   # the user's limit, perhaps set
        if active:                                           # meanwhile
            active[run] = extra
            want = max(active.values())
            if want == applied:
                return
        else:
            active[run] = want = extra
            if want == applied:
                return
        try:
            setrecursionlimit(room.base + want)
        except RecursionError:       # this thread is deeper than the new limit: left as it is
            return
        room.applied = want


def narrowed(run, room: _Headroom = _headroom) -> None:
    """``run`` has ended (or never started): lower the limit to what the runs still active need
    (the user's own limit once none is)."""
    with room.lock:
        active = room.active
        if active.pop(run, None) is None:
            return
        limit = getrecursionlimit()
        applied = room.applied
        if limit != room.base + applied:
            room.base, room.applied, applied = limit, 0, 0   # the user's limit, perhaps set
        want = max(active.values()) if active else 0         # meanwhile
        if want != applied:
            try:
                setrecursionlimit(room.base + want)
            except RecursionError:   # this thread is deeper than the new limit: left as it is
                return
            room.applied = want


def with_room(fn, *args, frames: int = ROOM, room: _Headroom = _headroom):
    """``fn(*args)`` with the limit raised by ``frames`` more for its duration (counted like a
    run's bump, so overlapping runs are unaffected): for dcgraph's own work done near the
    limit, such as deciding a call first made there (``recorder.Level.hook``); the program's
    code runs after it, under the run's limit. Raises ``RecursionError``, changing nothing,
    where the limit could not be lowered back from this frame (the interpreter refuses a limit
    at or below the current depth): setting the same limit first asks it, and raising and
    lowering are done in this frame, so both meet the same check."""
    token = _Token()
    try:                                # inside: an interrupt anywhere leaves the limit exact
        with room.lock:
            limit = getrecursionlimit()
            setrecursionlimit(limit)            # refused here: no room to lower it back
            if limit != room.base + room.applied:
                room.base, room.applied = limit, 0  # the user's limit, perhaps set meanwhile
            want = room.applied + frames
            setrecursionlimit(room.base + want)
            room.active[token], room.applied = want, want
        return fn(*args)
    finally:
        with room.lock:                 # (refused: nothing was raised, nothing to do)
            active = room.active
            if active.pop(token, None) is not None:
                limit = getrecursionlimit()
                if limit != room.base + room.applied:
                    room.base, room.applied = limit, 0  # set meanwhile (by code ``fn`` ran)
                want = max(active.values()) if active else 0
                if want != room.applied:
                    try:
                        setrecursionlimit(room.base + want)
                        room.applied = want
                    except RecursionError:  # another run lowered it meanwhile: left for
                        pass                # the next run that starts or ends


class _Token:
    """A ``with_room`` call's key among the active runs."""

    __slots__ = ()
