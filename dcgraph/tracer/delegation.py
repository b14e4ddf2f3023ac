"""Runtime of ``yield from`` and ``await`` in a traced generator or coroutine frame (CPython
3.11; ``await x`` is ``GET_AWAITABLE`` and the same loop, ``async for`` ``GET_ANEXT``).

3.11 compiles ``r = yield from x`` to ``GET_YIELD_FROM_ITER``, then a loop ``SEND``,
``YIELD_VALUE``, ``RESUME 2``, ``JUMP_BACKWARD_NO_INTERRUPT`` whose exit (``SEND``'s target)
holds the sub-iterator's return value. ``throw``/``close`` on the delegating generator are
handled in C: they go to the sub-iterator first and, when it returns, resume the delegating
frame at ``SEND``'s target without a ``RESUME``. So nothing may stand between ``SEND`` and
``YIELD_VALUE``; the probes are:

- after ``GET_YIELD_FROM_ITER``: ``delegated(iterator, frame, hook)`` logs
  ``(iterator, relayed)``; a generator this run traces is delegated to as it is (its segments
  log themselves), any other iterator through ``relay``, an untraced generator that is
  PEP 380's expansion of ``yield from`` and logs ``RELAYED``, the delegating frame and each
  item before it passes it on;
- at ``SEND``'s target: the code's ``LandMark``, the frame object and the returned value, so
  the replay tells a return from a yield, and a return caused by ``throw`` (the frame resumed
  without a ``ResumeMark``) from one inside the frame.
"""
from __future__ import annotations

import types

__all__ = ["LandMark", "RelayMark", "RELAYED", "delegated", "relay"]


class LandMark:
    """Logged where a ``yield from`` loop ends (its sub-iterator returned); the next events
    are the generator's frame object and the returned value."""

    __slots__ = ("info",)

    def __init__(self, info):
        self.info = info

    def __repr__(self):
        return f"<land {self.info.code.co_qualname}>"


class RelayMark:
    """Logged by ``relay`` before each item; the next events are the delegating frame object
    and the item."""

    __slots__ = ()

    def __repr__(self):
        return "<relayed item>"


RELAYED = RelayMark()


def delegated(iterator, frame, hook):
    """What a traced generator frame delegates to after ``GET_YIELD_FROM_ITER``: ``iterator``
    itself when this run traces it (a generator it made), else ``relay(iterator)``. Logs
    ``(iterator, relayed)``; logs nothing and relays nothing when the frame does not log
    (``hook`` is the do-nothing one: another thread, another run, after the run)."""
    if type(hook) is not types.MethodType:   # the do-nothing hook (no ``getattr``: before
        return iterator                     # its call site is specialised, 3.11 counts it)
    level = hook.__self__
    run = level.run
    if run.closed:
        return iterator
    kind = type(iterator)
    frame_of = iterator.gi_frame if kind is types.GeneratorType else \
        iterator.cr_frame if kind is types.CoroutineType else None
    live, made = run.live_generators, run.generators
    traced = frame_of is not None and (
        live is not None and frame_of in live or made is not None and frame_of in made)
    level.log.append((iterator, not traced))   # as a method: no call 3.11 counts (``headroom``)
    return iterator if traced else relay(iterator, level.append, frame)


def relay(iterator, append, frame):
    """``yield from iterator`` spelled out (PEP 380), logging ``RELAYED``, ``frame`` and each
    item before yielding it; returns what the iterator returned."""
    try:
        item = _send(iterator, None)
    except StopIteration as stop:
        return stop.value
    while True:
        append(RELAYED)
        append(frame)
        append(item)
        try:
            sent = yield item
        except GeneratorExit:
            close = getattr(iterator, "close", None)
            if close is not None:
                close()
            raise
        except BaseException as exc:
            throw = getattr(iterator, "throw", None)
            if throw is None:
                raise
            try:
                item = throw(exc)
            except StopIteration as stop:
                return stop.value
            continue
        try:
            item = _send(iterator, sent)
        except StopIteration as stop:
            return stop.value


def _send(iterator, sent):
    """One step of ``SEND``: ``next`` when nothing is sent and the iterator has ``__next__``,
    else its ``send`` (an iterable coroutine delegating to a coroutine)."""
    if sent is None and hasattr(type(iterator), "__next__"):
        return next(iterator)
    return iterator.send(sent)
