"""Replaying ``async for``, ``async with`` and the items of traced async generators.

An async generator's frame is traced like a generator's (segments per resumption), but its
consumer never resumes it directly: ``async for`` (``GET_AITER``, then per item ``GET_ANEXT``
and an ``await`` loop) and ``await agen.asend(v)``/``athrow``/``aclose`` await an
``async_generator_asend``/``athrow`` object, a C awaitable that the consumer's ``await`` relays
(``delegation.relay``). A segment that ends in a wrapped ``yield`` (``wraps_async_item`` in the
version's table) delivers its item as the ``StopIteration`` that ends the consumer's ``await``:
the land mark's value is that segment's value, so the consumer's item *is* the segment, as a
``for`` loop's item is a generator's segment. A segment ending at an ``await`` inside the async
generator yields unwrapped: the relay passes that item on to the event loop.

``async for`` ends when ``__anext__``'s awaitable raises ``StopAsyncIteration``, caught by the
loop's handler, ``END_ASYNC_FOR``.
"""
from __future__ import annotations

from ..tape import Argument, Phi, PrimitiveCall
from . import ops
from .recorder import Missing

__all__ = ["get_aiter", "get_anext", "end_async_for", "before_async_with", "async_item",
           "ASYNC_ITEM"]

ASYNC_ITEM = "async_item"     # segment meta key: it ended in a wrapped ``yield``


def get_aiter(frame, i: int) -> None:
    """GET_AITER: [obj] -> [aiter(obj)]."""
    obj = frame.use()
    frame.stack.append(frame.call(aiter, (obj,), frame.r.take(), i))


def get_anext(frame, i: int) -> None:
    """GET_ANEXT: [aiter] -> [aiter, anext(aiter)] (the awaitable of the next item, logged by
    the ``delegated`` probe)."""
    it = frame.stack[-1]
    awaitable, _relayed = frame.r.take()
    frame.stack.append(frame.call(anext, (it,), awaitable, i))


def end_async_for(frame, i: int) -> None:
    """END_ASYNC_FOR (``async for``'s handler): [aiter, exc] -> []; re-raises anything but
    ``StopAsyncIteration``."""
    exc = frame.use()
    frame.use()
    if not isinstance(exc.value, StopAsyncIteration):
        frame.raising = (exc,)
        raise Missing


def before_async_with(frame, i: int) -> None:
    """BEFORE_ASYNC_WITH: [manager] -> [manager.__aexit__, manager.__aenter__()]."""
    manager = frame.use()
    awaitable, exit_method = frame.r.take()
    frame.stack.append(frame.call(getattr, (manager, frame.r.literal("__aexit__")), exit_method, i))
    frame.stack.append(frame.call(ops.enter_async_context, (manager,), awaitable, i))


def async_item(frame, iterator, value):
    """The async generator segment whose wrapped ``yield`` just delivered ``value`` to
    ``frame``'s ``await`` (run in ``frame``'s tape, taken once), or None. A value sent in by
    ``asend(v)`` gets the node of ``v`` as its source."""
    r = frame.r
    node = r.resumed
    if node is None or node.value is not value or node.tape is not frame.tape \
            or not node.meta.get(ASYNC_ITEM) or node.meta.get("taken"):
        return None
    r.resumed = None
    node.meta["taken"] = True
    while type(iterator) is Phi:
        iterator = iterator.source
    made = iterator.args[0] if type(iterator) is PrimitiveCall and iterator.fn is ops.awaitable \
        and iterator.args else iterator     # ``asend(v)`` is its own awaitable
    first = node.child._nodes[0] if node.child._nodes else None
    if type(made) is PrimitiveCall and len(made.args) == 2 and made.fn_name == "asend" \
            and type(first) is Argument and first.name == "(sent)" \
            and first.value is made.args[1].value and first.source is None:
        first.source = made.args[1]      # ``await agen.asend(v)``: the sent value's node
    return node
