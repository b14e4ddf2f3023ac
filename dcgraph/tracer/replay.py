"""Building tapes from a run's event log.

The replay walks each traced frame's instructions along the blocks the log says ran, keeping a
stack and locals of *nodes* in step with the real frame. Probed instructions take their values
from the log; pure stack and local shuffles need none. Opcode meanings live in the version
modules (``instrument.semantics311``/``312``/``313``, chosen by ``instrument.versions``); this
module drives frames, calls, blocks, phis and exceptions, and keeps the cross-frame maps: the latest version of each mutated container and
the last writer of each global and closure cell.

Traced generator frames resume wherever their consumer is: their events interleave with the
frame being replayed, and ``take``/``peek`` replay them as segments first (``settle``, module
``generators``).

An expected event that is absent means the instruction raised: the frame's exception table
says whether the frame caught it (the log then holds the handler's mark and the exception) or
it left the frame (a ``Raise`` node, and the caller's call instruction raised in turn).
"""
from __future__ import annotations

import types

from .instrument.semantics311 import Folded, Placeholder
from .recorder import MARK_TYPES, BlockMark, EntryMark, MadeMark, Missing, ResumeMark
from . import generators
from ..tape import (Argument, Branch, Constant, Location, NestedCall, Node, Phi, PrimitiveCall,
                   Raise, Return, Tape)
import numpy as np

from . import ops
from .aliasing import ArrayAliasing, flat_write_target, possible_writes
from .classes import instance_self
from .summary import SummaryLog, value_type

ndarray = np.ndarray
_RESUMERS = (next, types.GeneratorType.__next__, types.GeneratorType.send,
             types.GeneratorType.throw)

__all__ = ["Replay", "ReplayError"]


class ReplayError(RuntimeError):
    """The log and the code disagree: a dcgraph bug; the message says where."""


class Returned(Exception):
    """The frame executed RETURN_VALUE."""


class Replay:
    """One run's log, read once from the start."""

    def __init__(self, log: list, ctx, final_exc: BaseException | None):
        self.log, self.pos, self.ctx, self.final_exc = log, 0, ctx, final_exc
        self.versions: dict = {}       # id(container) -> latest node that mutated it
        self.writers: dict = {}        # id(cell) or (filename, name) -> node last stored there
        self.pending_raises: list = []
        self.int_literals: dict = {}
        self.aliasing = ArrayAliasing()
        self.raised_by: dict = {}      # id(exception) -> the node whose value was raised
        self.generators: dict = {}     # id(generator frame object) -> GeneratorState
        self.current: Frame | None = None   # the frame being replayed (reads the log)
        self.resumed = None            # the segment that last yielded (``generators``)

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


def _owner_node(fn_node, owner):
    """The node holding a bound method's ``__self__``: the object its lookup started from."""
    while isinstance(fn_node, Phi):
        fn_node = fn_node.source
    if isinstance(fn_node, PrimitiveCall) and fn_node.fn is getattr and fn_node.args \
            and fn_node.args[0].value is owner:
        return fn_node.args[0]
    return None


def _mutated_node(fn, args, kwargs):
    """The argument node a call of ``fn`` mutates in place, if any (a ufunc's ``out=`` too)."""
    k = ops.mutated_argument(fn)
    if k is not None and k < len(args):
        target = args[k]
    elif kwargs and "out" in kwargs and type(getattr(kwargs["out"], "value", None)) is ndarray:
        target = kwargs["out"]           # any function's out= array
    elif type(fn) is np.ufunc and len(args) > fn.nin \
            and type(getattr(args[fn.nin], "value", None)) is ndarray:
        target = args[fn.nin]            # a ufunc's positional out
    elif len(args) > 2 and (k := ops.out_position(fn)) is not None and k < len(args) \
            and type(getattr(args[k], "value", None)) is ndarray:
        target = args[k]                 # np.dot(a, b, out), np.cumsum(a, 0, None, out)
    else:
        return None
    if isinstance(target, Constant) and target.tape is None:
        return None                      # a literal is never a container we track
    return target if isinstance(target, Node) else None


class Frame:
    """The replay of one traced frame into ``tape``."""

    def __init__(self, replay: Replay, info, tape: Tape):
        self.r, self.info, self.tape = replay, info, tape
        self.s = info.structure
        self.stack: list = []
        self.locals: dict = {}
        self.kwnames: tuple = ()
        self.next_block: int | None = None
        self.raising: tuple = ()
        self.globals_seen: dict = {}
        self.steps: dict = {}          # id(iterator node) -> items drawn so far
        self.ops = info.ops
        self.callee: Frame | None = None   # a traced callee to replay before going on
        self.call_node: NestedCall | None = None   # the caller's node of this frame
        self.token = None              # a generator's frame object (its identity in the log)
        self.thrown = False            # a suspended generator resumes by raising at its yield
        self.after_call = None         # run after the callee's node is pushed (``operators``)

        self.landing = None            # ... or at the end of its ``yield from`` (this block)

    # -- helpers the opcode handlers use ----------------------------------------------------
    def loc(self, i: int) -> Location:
        return self.ops[i].loc

    def use(self):
        """Pop a node for use as an input (resolved to the container's latest version)."""
        n = self.stack.pop()
        versions = self.r.versions
        if versions:
            v = versions.get(id(getattr(n, "value", None)))
            if v is not None and v.value is n.value:
                n = v
            aliasing = self.r.aliasing
            if aliasing.writes and type(getattr(n, "value", None)) is ndarray:
                n = aliasing.refresh(n, self)
        return n

    def add(self, node: Node) -> Node:
        self.tape.append(node)
        if self.r.aliasing.writes and type(node.value) is ndarray:
            self.r.aliasing.noted(node)
        return node

    def derived(self, fn, args, value) -> Node:
        """A node the replay adds to make a dependency explicit (aliased memory)."""
        return self.add(PrimitiveCall(fn, args, None, value, None))

    def call(self, fn, args, value, i: int, mutated: int | None = None, method=False) -> Node:
        node = PrimitiveCall(fn, args, None, value, self.ops[i].loc, method=method)
        nodes = self.tape._nodes
        node.tape, node.index = self.tape, len(nodes)
        nodes.append(node)
        if mutated is not None:
            self.mutation(node, args[mutated])
        elif self.r.aliasing.writes and type(value) is ndarray:
            self.r.aliasing.noted(node)
        return node

    def mutation(self, node: PrimitiveCall, target: Node) -> None:
        """``node`` mutated the container ``target`` holds: it becomes its latest version."""
        container = target.value
        if type(container) is np.flatiter:   # a.flat[k] = v: a write into the array a
            target = flat_write_target(self, node, target)
            if target is None:
                return
            container = target.value
        node.mutates, node.result, node.value = container, node.value, container
        self.r.versions[id(container)] = node
        if type(container) is ndarray:
            self.r.aliasing.written(node, container)

    def constant(self, name, value, i: int | None) -> Constant:
        return self.add(Constant(name, value, self.loc(i) if i is not None else None))

    # -- the frame ---------------------------------------------------------------------------
    def enter(self, positional, keywords):
        """Consume the argument tuple and create the Argument nodes."""
        values = self.r.take()
        code, params = self.info.code, self.info.params
        argc, kwonly = code.co_argcount, code.co_kwonlyargcount
        named = set(params[: argc + kwonly])
        for j, p in enumerate(params):
            src = None
            if positional is not None:
                if j < argc:
                    src = positional[j] if j < len(positional) else keywords.get(p)
                elif j < argc + kwonly:
                    src = keywords.get(p)
                elif j == argc + kwonly and code.co_flags & 0x04:
                    src = tuple(positional[argc:])
                else:
                    src = {k: v for k, v in keywords.items() if k not in named}
            node = self.add(Argument(p, values[j], src))
            self.locals[p] = node
        for p, cell in zip(self.info.cell_params, values[len(params):]):
            self.r.writers[id(cell)] = self.locals[p]

    def run(self) -> None:
        """Replay this frame and every frame it traced into, with an explicit stack of frames
        (the replay's depth never depends on the recursion limit)."""
        self.r.drive(self, self.replay_steps())

    def replay_steps(self):
        """This frame's replay as a generator: it yields each traced callee's Frame, which the
        driver (``Replay.drive``) replays completely before resuming this one, and
        ``generators.SUSPENDED`` when this frame, a generator, yields (resumed by the next
        segment, raising at the yield when an exception was thrown in)."""
        s, ops, marks = self.s, self.ops, self.info.marks
        bi = 0
        while True:
            block = s.blocks[bi]
            self.next_block = block.fall
            i = block.start
            try:
                for i in range(block.start, block.end):
                    op = ops[i]
                    op.handler(self, op, i)
                    while self.callee is not None:   # (an operator may try another method)
                        callee, self.callee = self.callee, None
                        yield callee
                        if callee is not generators.SUSPENDED:
                            self.returned_from(callee)
                        elif self.thrown:        # resumed by an exception thrown in
                            self.thrown = False
                            raise Missing
                        elif self.landing is not None:   # its sub-iterator returned
                            break
            except Missing:
                handler = self.exception_at(i)
                if handler is None:
                    return
                bi = handler
                continue
            except Returned:
                return
            nxt = self.next_block
            if self.landing is not None:  # resumed where ``yield from`` ends (``generators``)
                bi, self.landing = self.landing, None
                continue
            if nxt is None:
                raise ReplayError(f"{self.info.code.co_qualname}: fell off block §{bi}")
            if marks[nxt] is not None and not s.blocks[nxt].handler:
                self.r.take_mark(marks[nxt])
            for var in s.blocks[nxt].phis:
                self.phi(var, (bi, nxt))
            bi = nxt

    def phi(self, var, edge) -> None:
        if isinstance(var, str):
            src = self.locals.get(var)
            if isinstance(src, Node):
                self.locals[var] = self.add(Phi(var, self.r.resolve(src), edge))
        else:
            j = var[1]
            src = self.stack[j] if j < len(self.stack) else None
            if isinstance(src, Node):
                self.stack[j] = self.add(Phi(f"stack[{j}]", self.r.resolve(src), edge))

    def branch(self, i: int, tested, jump_block: int, fall_block: int | None, jumped: bool,
               taken, op=None) -> None:
        target = jump_block if jumped else fall_block
        edge = (self.s.block_of[i], target)
        if isinstance(tested, Folded):
            self.add(Branch(edge, tested.inputs, taken, tested.op, self.loc(i)))
        elif isinstance(tested, Node):
            self.add(Branch(edge, (self.r.resolve(tested),), taken, op, self.loc(i)))
        self.next_block = target

    def direction(self, block_index: int) -> bool:
        """Did the conditional jump ending ``block_index`` jump? (Read from the next mark.)"""
        block = self.s.blocks[block_index]
        ev = self.r.peek()
        marks = self.info.marks
        if ev is marks[block.jump]:
            return True
        if block.fall is not None and ev is marks[block.fall]:
            return False
        raise Missing   # testing the value raised

    def exception_at(self, i: int) -> int | None:
        """Instruction ``i`` raised: enter this frame's handler, or end the frame with Raise."""
        h = self.s.handler_of[i]
        mark = self.info.marks[h] if h is not None else None
        if mark is not None and self.r.peek() is mark:
            self.r.pos += 2 if self.info.generator else 1     # a generator's: its frame too
            exc = self.r.log[self.r.pos]
            self.r.pos += 1
            self.r.exception_caught(exc)
            depth, lasti = self.s.blocks[h].handler
            del self.stack[depth:]
            if lasti:
                self.stack.append(self.r.literal(-1))
            raiser = self.r.raised_by.get(id(exc))
            if raiser is None or raiser.value is not exc:   # raised by a primitive, or by
                raiser = self.constant("exception", exc, i)  # ``raise SomeClass``
            self.stack.append(raiser)
            self.raising = ()
            return h
        inputs = tuple(n for n in self.raising if isinstance(n, Node))
        node = self.add(Raise(inputs, None, self.loc(i)))
        self.tape.raised = True
        self.r.pending_raises.append(node)
        return None

    def do_return(self, i: int) -> None:
        value = self.use()
        self.add(Return((value,), value.value, self.loc(i)))
        self.tape.result = value.value
        raise Returned

    # -- calls -------------------------------------------------------------------------------
    def do_call(self, i: int, callee, args: list, kwargs: dict) -> None:
        """The callable was logged by the hook; a traced callee's entry mark may follow."""
        f = self.r.take()
        fn, fn_node, method = f, None, False
        if isinstance(callee, Placeholder):
            if callee.obj is not None:
                fn, fn_node, method, args = self._method(i, f, callee, args)
        elif isinstance(callee, Node) and not (isinstance(callee, Constant) and callee.tape is None):
            fn_node = callee
        via = callee.name if isinstance(callee, Placeholder) and callee.obj is None else None
        ev = self.r.peek()
        if type(ev) is EntryMark:
            self.nested_call(i, ev, f, fn, fn_node, method, args, kwargs, via)
            return
        if type(ev) is MadeMark:
            generators.made(self, i, f, fn, fn_node, method, args, kwargs, via)
            return
        value = self.r.take()
        if self.r.resumed is not None and fn in _RESUMERS and args:
            segment = generators.resumed_item(
                self, value, args[0].value,
                args[1] if len(args) == 2 and fn is _RESUMERS[2] else None, fn)
            if segment is not None:      # next(g), g.send(v) of a traced generator: its segment
                self.stack.append(segment)
                return
        node = self.add(PrimitiveCall(fn, args, kwargs, value, self.loc(i), fn_node, method))
        node.via = via
        target = _mutated_node(fn, args, kwargs)
        if target is not None:
            self.mutation(node, target)
            if value is not None and value is not node.value:
                self.stack.append(self.call(ops.call_result, (node,), value, i))
            else:
                self.stack.append(self.r.literal(None) if value is None else node)
            return
        if (any(type(a.value) is ndarray for a in args) or kwargs and any(
                type(a.value) is ndarray for a in kwargs.values())) and self.r.ctx.may_write(fn):
            possible_writes(self, node, i)          # an array handed to unknown code
        self.stack.append(node)

    def _method(self, i, f, callee, args):
        """Normalise ``obj.name(...)``: a method of obj's type with obj as argument 0."""
        obj = callee.obj
        owner = getattr(f, "__self__", None)
        if isinstance(obj, Placeholder):      # a global not logged: its value is f's owner
            if owner is None or isinstance(owner, types.ModuleType):
                return f, None, False, args
            obj = self.constant(obj.name, owner, i)
        if owner is obj.value and not isinstance(owner, types.ModuleType):
            if type(f) is types.MethodType:
                return f.__func__, None, True, [obj] + args
            descriptor = getattr(value_type(owner), callee.name, None)
            if descriptor is not None and callable(descriptor) and not isinstance(owner, type):
                return descriptor, None, True, [obj] + args
        if isinstance(obj.value, types.ModuleType):
            return f, None, False, args
        getter = self.call(getattr, (obj, self.r.literal(callee.name)), f, i)
        return f, getter, False, args

    def nested_call(self, i, ev, f, fn, fn_node, method, args, kwargs, via) -> None:
        bound = type(f) is types.MethodType and not method
        called_object = not bound and instance_self(f, ev.info.code)   # its __call__ runs
        holder = fn_node
        if called_object and holder is None:      # the object's node, before the call's
            holder = self.r.resolve(self.constant(via or type(f).__name__, f, i))
        node = self.add(NestedCall(fn, args, kwargs, None, self.loc(i), fn_node, method))
        node.via = via
        target = f.__func__ if type(f) is types.MethodType else f
        child = Tape(ev.info.code, target, parent=node)
        node.child = child
        self.r.pos += 1
        frame = Frame(self.r, ev.info, child)
        if bound:
            args = [_owner_node(fn_node, f.__self__)] + list(args)   # self, where known
        elif called_object:                      # a callable object: its __call__, self first
            args = [holder] + list(args)
            child.fn = type(f).__call__
        try:
            frame.enter(args, kwargs)
        except Missing:                # interrupted in its prologue (a KeyboardInterrupt)
            self.r.pending_raises.append(child.append(Raise((), None)))
            child.raised = True
            raise
        frame.call_node = node
        self.callee = frame            # replayed by the driver; then ``returned_from``

    def returned_from(self, frame: "Frame") -> None:
        """The traced callee ``frame`` was replayed: its call's value is the next event."""
        node = frame.call_node
        then, self.after_call = self.after_call, None
        try:
            value = self.r.take()      # Missing here: the callee raised, so does this call
        except Missing:
            ret = frame.tape.returned
            if type(ret) is Return:    # it returned, and the caller was interrupted at once
                node.value = node.result = ret.value
            raise
        if self.r.summary:             # the same object: one summary (a list's are fresh)
            ret = frame.tape.returned
            if type(ret) is Return:
                value = ret.value
        node.value = node.result = value
        self.stack.append(node)
        if then is not None:
            then(self)

    def star_arguments(self, i: int, node) -> list:
        """Nodes for the elements of a ``*args`` tuple (the tuple's own inputs when it was
        built here, else ``getitem`` projections)."""
        if isinstance(node, PrimitiveCall) and node.fn in (ops.build_tuple, tuple) \
                and node.fn is ops.build_tuple and len(node.args) == len(node.value):
            return list(node.args)
        value = node.value
        if isinstance(value, (tuple, list)):
            return [self.call(__import__("operator").getitem, (node, self.r.literal(k)), v, i)
                    for k, v in enumerate(value)]
        return [node]

    def star_keywords(self, i: int, node) -> dict:
        value = node.value
        if isinstance(node, PrimitiveCall) and node.fn is ops.build_const_key_dict:
            return dict(zip(node.args[-1].value, node.args[:-1]))
        if isinstance(value, dict):
            import operator
            return {k: self.call(operator.getitem, (node, self.r.literal(k)), v, i)
                    for k, v in value.items()}
        return {}
