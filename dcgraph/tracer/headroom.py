"""Give a traced run back the recursion depth dcgraph's own frames take.

A traced program runs above frames it would not have untraced: ``track``'s own (and those of
an entry point that calls it, such as ``grad``), plus, at the deepest point, the call hook
(``recorder.Level.hook``), a Python frame that stands one level above the caller, where the
callee will stand (a C callee untraced needs no Python frame there). No Python function can
run the user's root without a frame of its own, so instead of removing them the process's
recursion limit is raised by exactly that many frames for the duration of the run:
``widened(extra)`` / ``narrowed(extra)`` bracket a run that needs ``extra`` more frames.

The limit is process-wide (depth is counted per thread), so the bump is counted: runs may
overlap (threads, a run inside a run) and the limit is always the user's limit plus the
largest ``extra`` of the runs active now; the last run to end restores the user's limit
exactly, so nothing compounds (no ratchet). A limit the user sets during a run is taken as
their new limit (it stays once the runs end). Lowering the limit below the current depth of
the thread that ends a run is refused by the interpreter; the limit then stays raised and the
next run to start or end restores it. While a run is active, ``sys.getrecursionlimit()``
reads the raised value (in every thread).
"""
from __future__ import annotations

import sys
import threading

__all__ = ["widened", "narrowed"]


class _Headroom:
    """The user's limit, the bump in force, and the ``extra`` of each active run."""

    __slots__ = ("lock", "base", "applied", "active")

    def __init__(self):
        self.lock = threading.Lock()
        self.base = 0             # the user's limit (meaningful while ``applied`` > 0)
        self.applied = 0          # frames added to it now
        self.active: dict = {}    # extra -> number of active runs that need it


_headroom = _Headroom()


def widened(extra: int, room: _Headroom = _headroom) -> None:
    """A run needing ``extra`` frames starts: raise the limit if it needs more than it has."""
    room.lock.acquire()                 # (``with`` costs four times as much here)
    try:
        active = room.active
        active[extra] = active.get(extra, 0) + 1
        limit = sys.getrecursionlimit()
        if limit != room.base + room.applied:
            room.base, room.applied = limit, 0      # the user's limit, perhaps set meanwhile
        if extra > room.applied:
            sys.setrecursionlimit(room.base + extra)
            room.applied = extra
    except RecursionError:       # the user's limit is below this depth already: left as it is
        pass
    finally:
        room.lock.release()


def narrowed(extra: int, room: _Headroom = _headroom) -> None:
    """The run ``widened(extra)`` announced has ended: lower the limit to what the runs still
    active need (the user's own limit once none is)."""
    room.lock.acquire()
    try:
        active = room.active
        left = active.pop(extra) - 1
        if left:
            active[extra] = left
        limit = sys.getrecursionlimit()
        if limit != room.base + room.applied:
            room.base, room.applied = limit, 0      # the user's limit, set during the run
        want = max(active) if active else 0
        if want != room.applied:
            sys.setrecursionlimit(room.base + want)
            room.applied = want
    except RecursionError:       # this thread is deeper than the lower limit: it stays raised
        pass
    finally:
        room.lock.release()
