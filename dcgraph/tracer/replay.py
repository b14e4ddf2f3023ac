"""Building tapes from a run's event log: the ``Replay`` that reads one run's log.

The replay walks each traced frame's instructions along the blocks the log says ran, keeping a
stack and locals of *nodes* in step with the real frame. Probed instructions take their values
from the log; pure stack and local shuffles need none. Opcode meanings live in the version
modules (``instrument.semantics311``/``312``/``313``, chosen by ``instrument.versions``); one
frame's replay (blocks, phis, calls, exceptions) is a ``Frame`` (module ``frame_replay``). This
module reads the log, drives frames, and keeps the cross-frame maps: the latest version of each
mutated container and the last writer of each global and closure cell.

Traced generator frames resume wherever their consumer is: their events interleave with the
frame being replayed, and ``take``/``peek`` replay them as segments first (``settle``, module
``generators``).

An expected event that is absent means the instruction raised: the frame's exception table
says whether the frame caught it (the log then holds the handler's mark and the exception) or
it left the frame (a ``Raise`` node, and the caller's call instruction raised in turn).
"""
from __future__ import annotations

from .recorder import MARK_TYPES, BlockMark, Missing, ResumeMark
from . import awaiting, generators
from ..tape import Constant, Tape

from .aliasing import ArrayAliasing
from .call_replay import _owner_node  # noqa: F401 (re-exported: generators)
from .frame_replay import Frame, ReplayError, Returned  # noqa: F401 (re-exported: track)
from .summary import SummaryLog

__all__ = ["Replay", "ReplayError"]


class Replay:
    """One run's log, read once from the start."""

    def __init__(self, log: list, ctx, final_exc: BaseException | None):
        self.log, self.pos, self.ctx, self.final_exc = log, 0, ctx, final_exc
        self.versions: dict = {}       # id(container) -> latest node that mutated it
        self.writers: dict = {}        # id(cell) or (filename, name) -> node last stored there
        self.pending_raises: list = []
        self.int_literals: dict = {}   # (type, value) -> shared literal Constant
        self.ints: list = []           # [k]: the shared literal of k, for k = 0, 1, ... (loop
        self.other_ints: dict = {}     # steps count up from 0); int -> literal for the rest
        self.aliasing = ArrayAliasing()
        self.mutated_arguments: dict = {}   # id(callable) -> (callable, ops.mutated_argument)
        self.raised_by: dict = {}      # id(exception) -> the node whose value was raised
        self.generators: dict = {}     # id(generator frame object) -> GeneratorState
        self.current: Frame | None = None   # the frame being replayed (reads the log)
        self.resumed = None            # the segment that last yielded (``generators``)
        self.made: dict = {}           # id(generator or coroutine object) -> GeneratorState
        self.future_values: dict = {}  # id(future) -> (future, node given to set_result)
        self.future_methods = awaiting.future_methods()

        self.summary = isinstance(log, SummaryLog)   # values="summary": no identity for lists

    # -- events ------------------------------------------------------------------------------
    def take(self):
        pos = self.pos
        try:
            event = self.log[pos]
        except IndexError:
            raise Missing from None
        if type(event) in MARK_TYPES:
            if self.settle():
                return self.take()
            raise Missing
        self.pos = pos + 1
        return event

    def peek(self):
        if self.pos >= len(self.log):
            return None
        event = self.log[self.pos]
        if (type(event) is ResumeMark or type(event) is BlockMark and event.handler
                and event.info.generator or type(event) in generators.DELEGATION_MARKS) \
                and self.settle():
            return self.peek()
        return event

    def settle(self) -> bool:
        """Replay the generator segments that ran at this point of the log (``generators``):
        resumptions, and exceptions thrown into a suspended generator frame; True if any."""
        log, start = self.log, self.pos
        while self.pos < len(log):
            event = log[self.pos]
            if type(event) is ResumeMark:
                generators.resume(self)
            elif type(event) is BlockMark and event.handler and event.info.generator \
                    and log[self.pos + 1] is not getattr(self.current, "token", None):
                generators.resume(self, thrown=True)
            elif not generators.settle_delegation(self, event):
                break
        return self.pos != start

    def drive(self, frame: "Frame", steps) -> bool:
        """Replay ``frame`` (its ``replay_steps`` generator ``steps``) and every frame it traced
        into, with an explicit stack of frames (the depth never depends on the recursion limit);
        return True when ``frame``, a generator, suspended at a yield."""
        previous = self.current
        frames = [(frame, steps)]
        try:
            while frames:
                top, top_steps = frames[-1]
                self.current = top
                try:
                    child = next(top_steps)
                except StopIteration:
                    frames.pop()
                    continue
                if child is generators.SUSPENDED:
                    return True
                frames.append((child, child.replay_steps()))
            return False
        finally:
            self.current = previous

    def take_mark(self, mark):
        if self.peek() is not mark:
            raise ReplayError(f"expected {mark!r} at event {self.pos}, found {self.peek()!r}")
        self.pos += 1

    def exception_caught(self, exc):
        for node in self.pending_raises:
            node.value = exc
        self.pending_raises.clear()

    def literal(self, value) -> Constant:
        """A shared literal for small ints and names made up by the replay."""
        if type(value) is int:
            ints = self.ints
            if 0 <= value < len(ints):
                return ints[value]
            c = self.other_ints.get(value)
            if c is None:
                c = Constant(None, value)
            if value == len(ints):       # the next of 0, 1, ...: listed (8 bytes, not a key)
                ints.append(c)
                self.other_ints.pop(value, None)
            else:
                self.other_ints[value] = c
            return c
        key = (type(value), value)
        c = self.int_literals.get(key)
        if c is None:
            c = self.int_literals[key] = Constant(None, value)
        return c

    def literal_array(self, value) -> Constant:
        """A literal made up by the replay that is not shared (an index array)."""
        return Constant(None, value)

    def finish(self, tape: Tape):
        self.exception_caught(self.final_exc)
        if self.pos != len(self.log):
            raise ReplayError(f"{len(self.log) - self.pos} events left unread after the root frame")

    def resolve(self, node):
        """The latest version of the container ``node`` holds (or ``node`` itself)."""
        if self.versions:
            v = self.versions.get(id(node.value))
            if v is not None and v.value is node.value:
                return v
        return node
