"""The current run of each thread, and what a traced frame logs into when there is none.

A traced frame's prologue takes its ``(log, hook)`` pair from ``_state.run.pending`` (left
there by the hook that let it in, see ``recorder.Level.hook``). Outside ``track`` the current
run is ``_Idle``, whose pair logs nothing and traces nothing, so instrumented code that runs
anyway stays harmless.
"""
from __future__ import annotations

import threading

__all__ = ["ENTRY_COUNT", "Sink", "idle_pair"]   # and ``_state``, the per-thread current run


class Sink(list):
    """A log slot's value where nothing is to be logged (no run, or a generator frame resumed
    outside its run): a list (listed code appends to it, ``probes.log``) and a callable (other
    code calls it) that keeps nothing called. A fresh one per frame entry or resumption, so
    what listed code appends lives no longer than that frame does."""

    __slots__ = ()

    def __call__(self, _value) -> None:
        return None


def idle_pair() -> tuple:
    """The ``(log, hook)`` pair of a frame that logs nothing and traces nothing."""
    return Sink(), _identity


def _identity(f, _site=None):
    return f


_CLOSED_PAIR = (Sink(), _identity)      # a closed run's ``pending`` (see ``Run.close``)

# 3.11's traced frames call this before their first log (``instrument.probes.prologue``): a
# C call that counts against the recursion limit (``recorder.entry_pair``), made on a
# constant (no bound method per frame), that does nothing (an empty list's ``count``: the
# list is never changed), and that ``screen`` hides from a user's profile function
ENTRY_COUNT = [].count


class _Idle:
    """``_state.run`` outside ``track``: instrumented code that runs anyway stays harmless."""

    __slots__ = ()
    pending = property(lambda self: idle_pair())    # a fresh ``Sink`` per read
    closed = True                        # no generator is started or resumed into it
    frames = 0                           # no run active: tracing adds no frames yet


class _State(threading.local):
    """Per thread: the active run (its ``pending`` pair is what the next traced frame's
    prologue takes, see ``Level.hook``; its ``frames``, what ``track`` and its callers add
    below it and the runs it is nested in, see ``headroom``)."""

    run = _Idle()


_state = _State()
