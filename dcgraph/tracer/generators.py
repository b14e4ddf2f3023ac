"""Replaying traced generator frames (coroutines and async generators too: the same frames
to the replay): creation, resumption segments, suspension.

A traced generator frame logs a ``ResumeMark``, its frame object and its arguments when it
starts, the mark, the frame and the value sent in each time it resumes (``resumable.resumed``:
only in the thread and run that started it), and nothing when it yields (the replay reaches
its ``YIELD_VALUE``). Its events therefore interleave with those of
whatever resumed it (a traced frame's ``for`` or ``next``, or a primitive such as ``sum``):
the replay meets a ``ResumeMark`` wherever it reads the log (``Replay.settle``), adds a
``NestedCall`` of ``next`` in the frame being replayed, and drives the generator's own
``Frame`` into that call's child tape (a *segment*) until it yields, returns or raises. The
generator's ``Frame`` (stack, locals, block position) persists from segment to segment.

An exception thrown into a suspended generator (``throw``, ``close``) at a ``yield`` inside
``try``/``with`` logs the handler's mark followed by the frame object and the exception: the
replay resumes the frame by raising at its yield, in a segment of ``throw`` that starts with
``Argument("(thrown)")``. At a ``yield`` outside ``try`` nothing runs and nothing is logged: the
frame ends there, and its last segment ends with that ``Yield``.
"""
from __future__ import annotations

import types

from ..tape import Argument, NestedCall, Phi, PrimitiveCall, Return, Tape, Yield
from . import async_iteration, awaiting, ops
from .delegation import LandMark, RelayMark
from .recorder import BlockMark, Missing, ResumeMark

__all__ = ["GeneratorState", "made", "resume", "SUSPENDED", "resumed_item", "DELEGATION_MARKS",
           "settle_delegation", "yield_from_iter", "send"]

SUSPENDED = object()    # yielded by a generator Frame's replay_steps at YIELD_VALUE
DELEGATION_MARKS = (LandMark, RelayMark)
THROWERS = (types.GeneratorType.throw, types.CoroutineType.throw)


class GeneratorState:
    """One traced generator frame: the call that made it and its replay, between segments."""

    __slots__ = ("node", "info", "fn", "positional", "keywords", "frame", "steps", "done")

    def __init__(self, node: PrimitiveCall, info, fn, positional, keywords):
        self.node, self.info, self.fn = node, info, fn
        self.positional, self.keywords = positional, keywords
        self.frame = None
        self.steps = None
        self.done = False


def made(frame, i: int, f, fn, fn_node, method, args, kwargs, via) -> None:
    """The call at instruction ``i`` of ``frame`` made a traced generator (the ``MadeMark``
    is next in the log, then the generator's frame object, then the generator)."""
    r = frame.r
    info = r.log[r.pos].info
    gen_frame = r.log[r.pos + 1]
    r.pos += 2
    value = r.take()
    if type(f) is types.MethodType and not method:
        from .replay import _owner_node
        args = [_owner_node(fn_node, f.__self__)] + list(args)
    node = frame.add(PrimitiveCall(fn, args, kwargs, value, frame.loc(i), fn_node, method))
    node.via = via
    node.meta["segments"] = []
    target = f.__func__ if type(f) is types.MethodType else f
    state = r.generators[id(gen_frame)] = GeneratorState(node, info, target, list(args), kwargs)
    r.made[id(value)] = state    # a task's result, a delegator's item (``awaiting``, ``throw``)
    frame.stack.append(node)


def resume(r, thrown: bool = False, landed: bool = False) -> None:
    """Replay one segment of the generator frame whose ``ResumeMark`` (or, ``thrown``, whose
    handler's mark: an exception thrown in at a yield; or, ``landed``, whose ``LandMark``: its
    ``yield from`` ended because ``throw`` made the sub-iterator return) is next in the log,
    as a NestedCall in the frame currently replayed (``r.current``)."""
    from .replay import Frame, ReplayError
    mark, gen_frame = r.log[r.pos], r.log[r.pos + 1]
    state = r.generators.get(id(gen_frame))
    if state is None or state.done or ((thrown or landed) and state.frame is None):
        raise ReplayError(f"{mark!r} at event {r.pos} of a generator frame not made by this run")
    if not thrown:
        r.pos += 2
    consumer = r.current
    node = NestedCall(next, (state.node,), None, None, state.node.loc)
    consumer.add(node)
    child = Tape(state.info.code, state.fn, parent=node)
    node.child = child
    if state.frame is None:
        frame = state.frame = Frame(r, state.info, child)
        frame.token = gen_frame
        frame.call_node = node
        frame.enter(state.positional, state.keywords)
        state.steps = frame.replay_steps()
    elif thrown:                 # the handler reads mark, frame and exception itself
        frame = state.frame
        frame.tape, frame.call_node, frame.thrown = child, node, True
        frame.stack.append(r.literal(None))     # the value a resumption pushes, then raises
        frame.add(Argument("(thrown)", r.log[r.pos + 2]))
        node.fn = types.GeneratorType.throw
    else:
        frame = state.frame
        frame.tape = child
        frame.call_node = node
        sent = r.log[r.pos]
        r.pos += 1
        source = None
        if landed:              # the sub-iterator's return value replaces it on the stack
            source = _returned_segment(frame.stack.pop(), sent, None)
            frame.landing = frame.s.blocks[frame.s.block_of[frame.suspended_at - 1]].jump
            node.fn = types.GeneratorType.throw
        frame.stack.append(frame.add(Argument("(sent)", sent, source)))
    state.node.meta["segments"].append(node)
    exc = r.log[r.pos + 2] if thrown else None
    suspended = r.drive(frame, state.steps)
    ret = child.returned
    if thrown and ret is not None and ret.kind == "Raise" and ret.value is None \
            and ret in r.pending_raises:     # the thrown exception left the frame again (close)
        ret.value = exc
        r.pending_raises.remove(ret)
    if not suspended:
        state.done = True
    value = ret.value if ret is not None and not ret.kind == "Raise" else None
    node.value = node.result = value
    r.resumed = node if suspended else None


def resumed_item(frame, value, iterator, sent=None, fn=next):
    """The segment that just yielded ``value`` to ``frame`` from the generator ``iterator``
    (a ``for`` loop, ``next(g)``, ``g.send(v)`` with ``sent`` the node of ``v``, or
    ``g.throw(e)``), taken once; or None. It stands for the item: the consumer's node is the
    segment itself."""
    r = frame.r
    node = r.resumed
    if node is None or node.value is not value or node.tape is not frame.tape \
            or (node.args[0].value is not iterator
                and not _delegates_to(r, iterator, node.args[0].value)):
        return None
    if (fn in THROWERS) != (node.fn is types.GeneratorType.throw):
        return None
    r.resumed = None
    node.meta["taken"] = True            # its item is this node, not an item of the generator
    if sent is not None:
        first = node.child._nodes[0]
        if type(first) is Argument and first.name == "(sent)" and first.value is sent.value:
            first.source = sent          # the sent value's node, in the consumer
            node.fn = types.CoroutineType.send if type(iterator) is types.CoroutineType \
                else types.GeneratorType.send
            node.args = (node.args[0], sent)
            node.inputs = node.args
    return node


def _delegates_to(r, iterator, generator) -> bool:
    """Is ``iterator``, a traced generator suspended in ``yield from`` (or a coroutine in
    ``await``), delegating to ``generator``, directly or through further delegators? Then
    ``throw`` on it went to ``generator`` in C, and the item that answered is its segment."""
    for _ in range(len(r.made)):
        state = r.made.get(id(iterator))
        frame = state.frame if state is not None else None
        if frame is None or getattr(frame, "suspended_at", None) is None or not frame.stack:
            return False
        below = frame.stack[-1]          # a delegating frame's SEND iterator, under the yield
        while type(below) is Phi:
            below = below.source
        iterator = getattr(below, "value", None)
        if iterator is generator:
            return True
    return False


def yield_value(frame, i: int, async_item: bool = False) -> None:
    """YIELD_VALUE: the segment ends with ``Yield``; the frame suspends (``async_item``: an
    async generator's wrapped item, see ``async_iteration``)."""
    if async_item:
        frame.call_node.meta[async_iteration.ASYNC_ITEM] = True
    value = frame.use()
    frame.suspended_at = i
    frame.add(Yield((value,), value.value, frame.loc(i)))
    frame.tape.result = value.value
    frame.callee = SUSPENDED


# -- ``yield from`` (see ``delegation``) -----------------------------------------------------
def settle_delegation(r, event) -> bool:
    """A ``yield from`` event of a frame other than the one being replayed (``throw`` on a
    delegating generator went to its sub-iterator in C): an item the relay passed straight to
    the ``throw`` caller is skipped (that call's value has it); a sub-iterator that returned
    resumes the delegating frame after its ``yield from``. True if one was replayed."""
    if type(event) not in DELEGATION_MARKS or r.log[r.pos + 1] is getattr(r.current, "token", None):
        return False
    if type(event) is RelayMark:
        r.pos += 3
    else:
        resume(r, landed=True)
    return True


def yield_from_iter(frame, i: int, get=iter) -> None:
    """GET_YIELD_FROM_ITER (``get``: ``iter``) or GET_AWAITABLE (``ops.awaitable``): the
    iterator delegated to (the object itself, or ``get`` of it)."""
    obj = frame.use()
    iterator, _relayed = frame.r.take()
    frame.stack.append(obj if obj.value is iterator else frame.call(get, (obj,), iterator, i))


def send(frame, i: int, keeps_iterator: bool = False) -> None:
    """SEND of ``yield from``: the sub-generator's segment that yielded (its node is the
    item), an item the relay logged (``next_item`` of the iterator), or the returned value
    (the land mark: the sub-generator's last segment, whose value it is)."""
    r = frame.r
    sent = frame.use()
    iterator = frame.stack[-1]
    block = frame.s.blocks[frame.s.block_of[i]]
    log = r.log
    event = log[r.pos] if r.pos < len(log) else None
    if type(event) is ResumeMark:        # the sub-generator's segment (and only it: what
        resume(r)                        # follows its yield is the consumer's)
        event = log[r.pos] if r.pos < len(log) else None
    elif type(event) is BlockMark and event.handler and event.info.generator \
            and log[r.pos + 1] is not frame.token:   # thrown into it by the awaitable
        resume(r, thrown=True)           # (``athrow``/``aclose`` of an async generator)
        event = log[r.pos] if r.pos < len(log) else None
    if r.resumed is not None and type(event) is not LandMark:
        segment = resumed_item(frame, r.resumed.value, iterator.value,
                               sent if sent.value is not None else None)
        if segment is not None:
            frame.stack.append(segment)
            frame.next_block = block.fall
            return
    if type(event) is RelayMark and r.log[r.pos + 1] is frame.token:
        item = r.log[r.pos + 2]
        r.pos += 3
        step = frame.steps.get(id(iterator), 0)
        frame.steps[id(iterator)] = step + 1
        frame.stack.append(frame.call(ops.next_item, (iterator, r.literal(step)), item, i))
        frame.next_block = block.fall
        return
    if type(event) is not LandMark or r.log[r.pos + 1] is not frame.token:
        raise Missing                    # the sub-iterator raised
    value = r.log[r.pos + 2]
    if keeps_iterator:                   # 3.12: END_SEND takes the land mark
        frame.stack.append(returned_node(frame, i, iterator, value, frame.tape))
    else:
        r.pos += 3
        frame.stack.pop()
        frame.stack.append(returned_node(frame, i, iterator, value, frame.tape))
    frame.next_block = block.jump


def end_send(frame, i: int) -> None:
    """3.12's END_SEND, where a ``yield from`` ends: the land mark; [iterator, value] -> value."""
    r = frame.r
    if type(r.log[r.pos]) is not LandMark or r.log[r.pos + 1] is not frame.token:
        from .replay import ReplayError
        raise ReplayError(f"expected the land mark of {frame.info.code.co_qualname} at event {r.pos}")
    r.pos += 3
    value = frame.stack.pop()
    frame.stack.pop()
    frame.stack.append(value)


def cleanup_throw(frame, i: int) -> None:
    """3.12's CLEANUP_THROW (an exception thrown in at a ``yield from``): a StopIteration is
    the sub-iterator's return, [iterator, sent, exc] -> [None, value]; any other exception
    goes on."""
    exc = frame.use()
    frame.use()
    iterator = frame.use()
    if not isinstance(exc.value, StopIteration):
        frame.raising = (exc,)
        raise Missing
    frame.stack.append(frame.r.literal(None))
    frame.stack.append(returned_node(frame, i, iterator, exc.value.value, None))


def returned_node(frame, i, iterator, value, tape):
    """The node of a ``yield from``'s value: the sub-generator's last segment, or a literal."""
    last = _returned_segment(iterator, value, tape)
    if last is not None:
        return last
    last = async_iteration.async_item(frame, iterator, value)   # an async generator's item
    if last is not None:
        return last
    last = awaiting.awaited_result(frame, iterator, value, i)   # ``await future``
    if last is not None:
        return last
    return frame.r.literal(None) if value is None else frame.constant("returned", value, i)


def _returned_segment(iterator, value, tape):
    """The last segment of the traced generator ``iterator`` holds, if it returned ``value``
    (in ``tape``, unless None), taken once: the node of the ``yield from``'s value."""
    while type(iterator) is Phi:
        iterator = iterator.source
    segments = iterator._meta.get("segments") if type(iterator) is PrimitiveCall and \
        iterator._meta is not None else None
    last = segments[-1] if segments else None
    if last is None or (tape is not None and last.tape is not tape) or \
            type(last.child.returned) is not Return or last.value is not value \
            or last.meta.get("taken"):
        return None
    last.meta["taken"] = True
    return last
