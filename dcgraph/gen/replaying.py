"""Re-running a ``@gen`` function with a trace's own choices (to rebuild its tape).

A trace made by an incremental update shares its ancestor's tape with some values changed;
gradients need a tape of the trace's own run, which ``retrace`` records by running the function
again with every choice taken from the trace and every sub-call answered by its sub-trace.
"""
from __future__ import annotations

import dcgraph

from .execution import Execution
from .runtime import GenError, state

__all__ = ["retrace"]


class Replay(Execution):
    """Base handler that answers every choice and call from ``trace``."""

    def __init__(self, trace):
        super().__init__(trace.gen_fn, None, trace.store)
        self.prev = trace.entries

    def choose(self, addr, dist, value, constrained, scale):
        rec = self.prev.get(addr)
        if rec is None:
            raise GenError(f"retrace: the run visited address {addr}, not in the trace")
        self.score += rec.score
        return rec.value, rec.score

    def subcall(self, addr, gen_fn, args):
        return self.prev[addr]


def retrace(trace):
    """The tape of running ``trace``'s function on its arguments with its choices."""
    from .generative import _context
    ex = Replay(trace)
    saved, saved_messengers = state.frame, state.messengers
    state.frame, state.messengers = ex, []
    try:
        _, tape = dcgraph.track(trace.gen_fn.fn, *trace.args, ctx=_context())
    finally:
        state.frame, state.messengers = saved, saved_messengers
    return tape
