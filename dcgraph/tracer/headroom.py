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
run's exception path whatever happened.

The state is changed under a claim, a mutual exclusion cheaper than a ``threading.Lock`` taken
with ``with`` (two lock rounds were a sixth of ``track``'s fixed cost). ``claims.setdefault(
CLAIM, token)`` takes it and returns ``token`` to its taker alone (one C call: atomic, in the
free-threaded build too); a taker that finds it held yields (``sleep(0)``) and tries again (the
holder runs a few bytecodes, none of which blocks; a signal handler or finalizer that starts a
run inside a change waits forever, as it would for a lock). ``token`` is the run (the
``with_room`` call's ``_Token``): unique among the holders, equal to itself alone. It is taken
inside ``try`` and given back in ``finally`` by the holder alone: tested (``(CLAIM, token) in
held``, a view of ``claims``; the pair made before the claim is taken, so that nothing is
allocated while it is held on the common path, where 3.11 may collect and run finalizers) and
deleted with no call between the two. An interrupt is raised only where the interpreter checks
for one (after a call returns, at a backward jump, at a function's start), so one landing after
the taking call returned finds the claim recorded and gives it back, and none lands between the
test and the delete. The bump is recorded (``applied``) before the limit is set, and restored
if the interpreter refuses it, so an interrupt after the setting call finds the two agreeing.
"""
from __future__ import annotations

from sys import getrecursionlimit, setrecursionlimit
from time import sleep

__all__ = ["widened", "narrowed", "with_room"]

CLAIM = "claim"    # the key of ``_Headroom.claims`` (present while a change is under way)
ROOM = 200     # frames ``with_room`` adds: deciding a first call (instrumenting a 120-line
               # function included) took 17


class _Headroom:
    """The user's limit, the bump in force, the ``extra`` of each active run, and the claim."""

    __slots__ = ("claims", "held", "base", "applied", "active")

    def __init__(self):
        self.claims: dict = {}    # ``CLAIM`` -> the holder's token, while it changes the rest
        self.held = self.claims.items()   # (``(CLAIM, token) in held``: one lookup, no call)
        self.base = 0             # the user's limit (meaningful while ``applied`` > 0)
        self.applied = 0          # frames added to it now
        self.active: dict = {}    # run (by identity) -> the extra frames it needs


_headroom = _Headroom()


def widened(run, extra: int, room: _Headroom = _headroom) -> None:
    """``run`` starts and needs ``extra`` frames: raise the limit if it has fewer. (Part of
    every ``track``'s fixed cost: with no other run active, a claim, two C calls and a few
    stores.)"""
    claims, mine = room.claims, (CLAIM, run)   # (see the module's docstring)
    try:
        if claims.setdefault(CLAIM, run) is not run:
            _wait(claims, run)
        active = room.active
        limit = getrecursionlimit()
        applied = room.applied
        if limit != room.base + applied:
            room.base, room.applied, applied = limit, 0, 0   # the user's limit, perhaps set
        if active:                                           # meanwhile
            active[run] = extra
            want = max(active.values())
        else:
            active[run] = want = extra
        if want != applied:
            room.applied = want      # first: see the module's docstring
            try:
                setrecursionlimit(room.base + want)
            except RecursionError:   # this thread is deeper than the new limit: left as it is
                room.applied = applied
    finally:
        if mine in room.held:     # (no call: see the module's docstring)
            del claims[CLAIM]


def narrowed(run, room: _Headroom = _headroom, again: bool = True) -> None:
    """``run`` has ended (or never started): lower the limit to what the runs still active need
    (the user's own limit once none is). An exception raised inside (an interrupt) makes it
    try once more (``again``: the change is idempotent) before going on."""
    claims, mine = room.claims, (CLAIM, run)   # (see the module's docstring)
    try:
        try:
            if claims.setdefault(CLAIM, run) is not run:
                _wait(claims, run)
            active = room.active
            if run not in active:
                return
            limit = getrecursionlimit()
            applied = room.applied
            if limit != room.base + applied:
                room.base, room.applied, applied = limit, 0, 0   # the user's limit, perhaps
            del active[run]                                      # set meanwhile
            want = max(active.values()) if active else 0
            if want != applied:
                room.applied = want
                try:
                    setrecursionlimit(room.base + want)
                except RecursionError:   # this thread is deeper than the new limit: left as
                    room.applied = applied   # it is
        finally:
            if mine in room.held:
                del claims[CLAIM]
    except BaseException:
        if again:
            narrowed(run, room, False)
        raise


def _wait(claims: dict, token) -> None:
    """Take the claim for ``token`` once its holder (another thread, a few bytecodes from
    giving it back) has."""
    while claims.setdefault(CLAIM, token) is not token:
        sleep(0)


def with_room(fn, *args, frames: int = ROOM, room: _Headroom = _headroom):
    """``fn(*args)`` with the limit raised by ``frames`` more for its duration (counted like a
    run's bump, so overlapping runs are unaffected): for dcgraph's own work done near the
    limit, such as deciding a call first made there (``recorder.Level.hook``); the program's
    code runs after it, under the run's limit. Raises ``RecursionError``, changing nothing,
    where the limit could not be lowered back from this frame (the interpreter refuses a limit
    at or below the current depth): setting the same limit first asks it, and raising and
    lowering are done in this frame, so both meet the same check."""
    token = _Token()
    claims, mine = room.claims, (CLAIM, token)   # (see the module's docstring)
    try:                                # inside: an interrupt anywhere leaves the limit exact
        try:
            if claims.setdefault(CLAIM, token) is not token:
                _wait(claims, token)
            limit = getrecursionlimit()
            setrecursionlimit(limit)            # refused here: no room to lower it back
            if limit != room.base + room.applied:
                room.base, room.applied = limit, 0  # the user's limit, perhaps set meanwhile
            want = room.active[token] = room.applied = room.applied + frames   # (first)
            setrecursionlimit(room.base + want)     # (a raise: never refused)
        finally:
            if mine in room.held:
                del claims[CLAIM]
        return fn(*args)
    finally:                            # (lowered in this frame, as ``narrowed`` would)
        try:
            try:
                if claims.setdefault(CLAIM, token) is not token:
                    _wait(claims, token)
                active = room.active
                if token in active:         # (refused: nothing was raised, nothing to do)
                    limit = getrecursionlimit()
                    applied = room.applied
                    if limit != room.base + applied:     # set meanwhile (by code ``fn`` ran)
                        room.base, room.applied, applied = limit, 0, 0
                    del active[token]
                    want = max(active.values()) if active else 0
                    if want != applied:
                        room.applied = want
                        try:
                            setrecursionlimit(room.base + want)
                        except RecursionError:  # another run lowered it meanwhile: left for
                            room.applied = applied  # the next run that starts or ends
            finally:
                if mine in room.held:
                    del claims[CLAIM]
        except BaseException:       # interrupted: once more (one frame deeper), then on
            narrowed(token, room, False)
            raise


class _Token:
    """A ``with_room`` call's key among the active runs."""

    __slots__ = ()
