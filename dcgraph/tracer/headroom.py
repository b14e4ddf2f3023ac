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

The state (``_Headroom``) has a short form for the usual case, one run active at a time:
``solo`` is ``IDLE`` (no run active: the limit is the user's), the one active run (its
``extra`` is ``raised - base``), or ``MANY`` (the runs and their ``extra`` in ``active``). A
run that starts while another is active moves that one into ``active``; ``IDLE`` comes back
when the last ends. Starting and ending a lone run thus costs two C calls each (reading the
limit, to take one the user set meanwhile as theirs, and setting it) and a few stores.

The state is changed under a claim, a mutual exclusion cheaper than a ``threading.Lock``:
``claims`` is a queue of tokens (each the run, or the ``with_room`` call's ``_Token``, equal
to itself alone), whose first holds the claim. A taker appends its token (one C call, atomic);
unless it is first, it takes it out, yields (``sleep(0)``) and appends it again until it is
(the holder runs a few bytecodes, none of which blocks; a signal handler or finalizer that
starts a run inside a change waits forever, as it would for a lock). The token is appended
inside ``try`` and taken out in ``finally``: by the holder with ``del claims[0]`` once
``claims[0] is token``, tested and deleted with no call between the two, else with
``remove`` (a list: about 30 ns less each way than a dict's ``setdefault`` and a test of its
items). An interrupt is raised only where the interpreter checks for one (after a call
returns, at a backward jump, at a function's start), so one landing after the append finds
the token queued and takes it out, and none lands between the test and the delete. Nothing is allocated for the collector
while the claim is held on the common paths (where 3.11 may collect and run finalizers). A
change records its bump (``raised``) before it sets the limit, and restores it if the
interpreter refuses, with no call between the two, so an interrupt after the setting call
finds them agreeing.
"""
from __future__ import annotations

from sys import getrecursionlimit, setrecursionlimit
from time import sleep

__all__ = ["widened", "narrowed", "with_room"]

IDLE = "idle"      # ``_Headroom.solo`` when no run is active (nothing added to the limit)
MANY = "many"      # ``_Headroom.solo`` when the active runs are those in ``active``
ROOM = 200     # frames ``with_room`` adds: deciding a first call (instrumenting a 120-line
               # function included) took 17


class _Headroom:
    """The claim queue, the user's limit, the limit set for the active runs, and those runs
    (see the module's docstring)."""

    __slots__ = ("claims", "base", "raised", "solo", "active")

    def __init__(self):
        self.claims: list = []    # tokens queued for the claim; the first holds it
        self.base = 0             # the user's limit (meaningful unless ``solo`` is IDLE)
        self.raised = 0           # the limit set for the active runs (ditto)
        self.solo = IDLE          # IDLE, the one active run, or MANY
        self.active: dict = {}    # run (by identity) -> the extra frames it needs (MANY)

    @property
    def applied(self) -> int:
        """Frames added to the user's limit now."""
        return 0 if self.solo is IDLE else self.raised - self.base


_headroom = _Headroom()


def widened(run, extra: int, room: _Headroom = _headroom) -> None:
    """``run`` starts and needs ``extra`` frames: raise the limit if it has fewer. (Part of
    every ``track``'s fixed cost: with no other run active, a claim, two C calls and three
    stores.)"""
    claims = room.claims       # (see the module's docstring)
    try:
        claims.append(run)
        if claims[0] is not run:
            _wait(claims, run)
        limit = getrecursionlimit()
        if room.solo is IDLE:      # no run active: ``limit`` is the user's
            room.base = limit
            room.raised = raised = limit + extra     # first: see the module's docstring
            room.solo = run
            try:
                setrecursionlimit(raised)
            except RecursionError:   # (not for a raise) nothing added, ``run`` counted
                room.solo, room.raised, room.active[run] = MANY, limit, extra
        else:
            _counted(room, limit, run, extra)
    finally:
        if claims and claims[0] is run:     # (no call: see the module's docstring)
            del claims[0]
        elif run in claims:
            claims.remove(run)


def _counted(room: _Headroom, limit: int, run, extra: int) -> None:
    """(``widened`` under the claim, another run active, or a lowering refused before.)"""
    active, solo = room.active, room.solo
    if solo is not MANY:                     # the lone run active: counted in ``active``
        active[solo] = room.raised - room.base
        room.solo = MANY
    applied = room.raised - room.base
    if limit != room.raised:                 # the user's limit, set meanwhile
        room.base = room.raised = limit
        applied = 0
    active[run] = extra
    want = max(active.values())
    if want != applied:
        room.raised = room.base + want       # first
        try:
            setrecursionlimit(room.raised)
        except RecursionError:   # this thread is deeper than the new limit: left as it is
            room.raised = room.base + applied


def narrowed(run, room: _Headroom = _headroom, again: bool = True) -> None:
    """``run`` has ended (or never started): lower the limit to what the runs still active need
    (the user's own limit once none is). An exception raised inside (an interrupt) makes it
    try once more (``again``: the change is idempotent) before going on."""
    claims = room.claims       # (see the module's docstring)
    try:
        try:
            claims.append(run)
            if claims[0] is not run:
                _wait(claims, run)
            if room.solo is run:            # the lone run active
                limit = getrecursionlimit()
                if limit != room.raised:    # the user's limit, set meanwhile: it stays
                    room.solo = IDLE
                else:
                    room.solo = IDLE
                    try:
                        setrecursionlimit(room.base)
                    except RecursionError:  # this thread is deeper than the user's limit:
                        room.solo = MANY    # left raised, for the next run to start or end
            elif run in room.active:
                active = room.active
                limit = getrecursionlimit()
                applied = room.raised - room.base
                if limit != room.raised:    # the user's limit, set meanwhile
                    room.base = room.raised = limit
                    applied = 0
                del active[run]
                want = max(active.values()) if active else 0
                if not active:
                    room.solo = IDLE        # first, as ``raised``
                if want != applied:
                    room.raised = room.base + want
                    try:
                        setrecursionlimit(room.raised)
                    except RecursionError:  # (as above)
                        room.raised = room.base + applied
                        room.solo = MANY
        finally:
            if claims and claims[0] is run:
                del claims[0]
            elif run in claims:
                claims.remove(run)
    except BaseException:
        if again:
            narrowed(run, room, False)
        raise


def _wait(claims: list, token) -> None:
    """Take the claim for ``token``, queued in ``claims`` behind its holder (another thread, a
    few bytecodes from giving it back): out of the queue while yielding, so that whichever
    taker runs first once it is free takes it (queued in order, each would wait for the
    interpreter to switch to one thread in particular: a convoy of switch intervals)."""
    while claims[0] is not token:
        claims.remove(token)
        sleep(0)
        claims.append(token)


def with_room(fn, *args, frames: int = ROOM, room: _Headroom = _headroom):
    """``fn(*args)`` with the limit raised by ``frames`` more for its duration (counted like a
    run's bump, so overlapping runs are unaffected): for dcgraph's own work done near the
    limit, such as deciding a call first made there (``recorder.Level.hook``); the program's
    code runs after it, under the run's limit. Raises ``RecursionError``, changing nothing,
    where the limit could not be lowered back from this frame (the interpreter refuses a limit
    at or below the current depth): setting the same limit first asks it, and raising and
    lowering are done in this frame, so both meet the same check."""
    token = _Token()
    claims = room.claims       # (see the module's docstring)
    try:                                # inside: an interrupt anywhere leaves the limit exact
        try:
            claims.append(token)
            if claims[0] is not token:
                _wait(claims, token)
            limit = getrecursionlimit()
            setrecursionlimit(limit)            # refused here: no room to lower it back
            active, solo = room.active, room.solo
            if solo is IDLE:
                room.base = room.raised = limit
            elif solo is not MANY:              # the lone run active: counted in ``active``
                active[solo] = room.raised - room.base
            if limit != room.raised:            # the user's limit, set meanwhile
                room.base = room.raised = limit
            room.solo = MANY
            active[token] = room.raised - room.base + frames
            room.raised += frames               # (first)
            setrecursionlimit(room.raised)      # (a raise: never refused)
        finally:
            if claims and claims[0] is token:
                del claims[0]
            elif token in claims:
                claims.remove(token)
        return fn(*args)
    finally:                            # (lowered in this frame, as ``narrowed`` would)
        try:
            try:
                claims.append(token)
                if claims[0] is not token:
                    _wait(claims, token)
                active = room.active
                if token in active:         # (refused: nothing was raised, nothing to do)
                    limit = getrecursionlimit()
                    applied = room.raised - room.base
                    if limit != room.raised:     # set meanwhile (by code ``fn`` ran)
                        room.base = room.raised = limit
                        applied = 0
                    del active[token]
                    want = max(active.values()) if active else 0
                    if not active:
                        room.solo = IDLE
                    if want != applied:
                        room.raised = room.base + want
                        try:
                            setrecursionlimit(room.raised)
                        except RecursionError:  # another run lowered it meanwhile: left for
                            room.raised = room.base + applied   # the next to start or end
                            room.solo = MANY
            finally:
                if claims and claims[0] is token:
                    del claims[0]
                elif token in claims:
                    claims.remove(token)
        except BaseException:       # interrupted: once more (one frame deeper), then on
            narrowed(token, room, False)
            raise


class _Token:
    """A ``with_room`` call's key among the active runs."""

    __slots__ = ()
