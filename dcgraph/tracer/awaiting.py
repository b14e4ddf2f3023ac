"""Results that cross an asyncio event loop: which node a future's or task's result is.

A traced coroutine run as a ``Task`` returns its value to the task in C, and a future's result
is set by whoever calls ``set_result``; the awaiting frame then reads it back through
``Future.result()`` (a primitive call of a C method) or at the end of its ``await`` (the land
mark of a relayed ``Future.__await__`` iterator). Neither says where the value came from, so
the replay links them here: a task's result is the last segment of its traced coroutine (the
segment ending in ``Return``, as for ``yield from``), a future's result the value node passed
to its ``set_result`` in traced code, a ``gather`` future's result the ``build_list`` of its
children's results (its callbacks run untraced, called from C). So values and gradients flow
through ``asyncio.run``, ``gather``, ``create_task``, ``TaskGroup`` tasks and ``await`` of
futures. Nothing is linked unless the value is the very
object the node holds.
"""
from __future__ import annotations

import sys
import types

from ..tape import Phi, Return

__all__ = ["future_methods", "primitive", "awaited_result"]

_NONE: dict = {}


def future_methods() -> dict:
    """``{method descriptor: "result" | "set_result"}`` of asyncio's C futures and tasks, once
    asyncio is imported (no future exists before that); empty otherwise."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return _NONE
    table = {}
    for cls in (asyncio.Future, asyncio.Task):
        for name in ("result", "set_result"):
            method = cls.__dict__.get(name)
            if type(method) is types.MethodDescriptorType:
                table[method] = name
    return table


def primitive(frame, kind: str, args, value, i: int):
    """A primitive call of a future's ``result`` or ``set_result`` with argument nodes
    ``args`` and ``value``, at instruction ``i`` of ``frame``: remember what ``set_result``
    stored; for ``result``, the node its value is, or None."""
    future = args[0].value
    if kind == "set_result":
        if len(args) == 2:
            frame.r.future_values[id(future)] = (future, args[1])
        return None
    return result_node(frame, future, value, i)


def result_node(frame, future, value, i: int):
    """The node of ``future``'s result ``value``: what its ``set_result`` was given, the last
    segment of the traced coroutine a task ran, or, for ``gather``'s future, the list of its
    children's results (``ops.build_list``, made in ``frame`` at ``i``); None if none of
    them holds ``value``."""
    r = frame.r
    held = r.future_values.get(id(future))
    if held is not None and held[0] is future and held[1].value is value:
        return held[1]
    get_coro = getattr(type(future), "get_coro", None)
    if get_coro is None:
        return _gathered(frame, future, value, i)
    state = r.made.get(id(get_coro(future)))
    if state is None:
        return None
    segments = state.node.meta["segments"]
    last = segments[-1] if segments else None
    if last is None or last.child is None or type(last.child.returned) is not Return \
            or last.value is not value:
        return None
    return last


def _gathered(frame, future, value, i: int):
    """``gather``'s future (``_children``, its result the list of theirs): ``build_list`` of
    the children's result nodes, when at least one is known."""
    children = getattr(future, "_children", None)
    if type(value) is not list or type(children) is not list or len(children) != len(value):
        return None
    nodes = [result_node(frame, child, item, i) for child, item in zip(children, value)]
    if all(node is None for node in nodes):
        return None
    from . import ops
    items = [node if node is not None else frame.constant("result", item, i)
             for node, item in zip(nodes, value)]
    return frame.call(ops.build_list, items, value, i)


def awaited_result(frame, iterator, value, i: int):
    """The node of the value ``await`` returned from a relayed awaitable's iterator node
    (``ops.awaitable(future)``) at instruction ``i`` of ``frame``, when it is a future's
    result; else None."""
    from . import ops
    while type(iterator) is Phi:
        iterator = iterator.source
    if getattr(iterator, "fn", None) is not ops.awaitable or not iterator.args:
        return None
    return result_node(frame, iterator.args[0].value, value, i)
