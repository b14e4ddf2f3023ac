"""Replaying one traced frame: its stack and locals of nodes, blocks, phis, branches and
exceptions.

A ``Frame`` walks its code's instructions along the blocks the log says ran (``replay_steps``),
keeping a stack and locals of *nodes* in step with the real frame; the opcode handlers (the
version modules ``instrument.semantics311``/``312``/``313``) call its helpers, and its calls are
replayed by the methods it inherits from ``CallReplay`` (module ``call_replay``). It reads the
log and the cross-frame maps through ``self.r``, the run's ``Replay`` (module ``replay``). A
traced callee becomes a child ``Frame``, which the driver (``Replay.drive``) replays completely
before this frame resumes.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .instrument.semantics311 import Folded, inert
from .instrument.semantics311_flow import jump
from .recorder import Missing
from . import generators
from ..tape import Argument, Branch, Constant, Location, NestedCall, Node, Phi, PrimitiveCall, \
    Raise, Return, Tape
from ..tape.nodes import append_call, append_phi
import numpy as np

from .aliasing import flat_write_target
from .call_replay import CallReplay
from .fused_runs import CodeFacts, warm_up

if TYPE_CHECKING:
    from .replay import Replay

ndarray = np.ndarray

__all__ = ["Frame", "ReplayError", "Returned"]

class ReplayBlocks(list):
    """Per block of a code object, the replay's steps ``(handler, op, index)`` (instructions
    whose replay does nothing left out, and a final unconditional jump); ``following``: per
    block the block that follows unless a step says otherwise (the jump's target, else the
    fall-through); ``edges``: one ``(from, to)`` tuple per edge, and ``placeholders``, those
    of sites whose placeholder is the same every time."""

    def __init__(self, steps, following, info=None):
        super().__init__(steps)
        self.following: list = following
        blocks = info.structure.blocks if info is not None else ()
        self.starts: list = [b.start for b in blocks]    # per block: its first instruction
        # per block: the mark read on entering it (None for exception handlers, whose mark
        # the exception's handling reads), and its phis (None when it has none)
        self.entry_marks: list = [m if m is not None and not b.handler else None
                                  for m, b in zip(info.marks, blocks)] if blocks else []
        self.phis: list = [b.phis or None for b in blocks]
        self.entries: list = [None] * len(self.phis)   # per block: its phis' ``entry_function``
        self.edges: dict = {}
        self.placeholders: dict = {}   # instruction index -> its ``Placeholder`` (handlers)
        self.mode = None               # the fusion settings they were made under (fused_runs)


def replay_blocks(info) -> ReplayBlocks:
    """``info.replay_blocks``, made on first use (equal results if two threads race)."""
    ops = info.ops
    steps, following = [], []
    for b in info.structure.blocks:
        block = [(op.handler, op, i) for i in range(b.start, b.end)
                 if (op := ops[i]).handler is not inert]
        if block and block[-1][0] is jump:
            block.pop()
            following.append(b.jump)
        else:
            following.append(b.fall)
        steps.append(block)
    blocks = ReplayBlocks(steps, following, info)
    warm_up(blocks, CodeFacts(info, EVERY_SITE if info.guarded else info.switched,
                              blocks.placeholders), _local_names)
    info.replay_blocks = blocks
    return blocks


class _EverySite:
    """The operator sites of code instrumented with every site guarded."""

    __slots__ = ()

    def __contains__(self, i) -> bool:
        return True


EVERY_SITE = _EverySite()
_LOCAL_NAMES: dict = {}        # a local's name -> the ``names`` of its phis (shared tuples)


def _local_names(var: str) -> tuple:
    names = _LOCAL_NAMES.get(var)
    if names is None:
        names = (var,) if var.isidentifier() else ()
        if len(_LOCAL_NAMES) < 65536:
            _LOCAL_NAMES[var] = names
    return names


class ReplayError(RuntimeError):
    """The log and the code disagree: a dcgraph bug; the message says where."""


class Returned(Exception):
    """The frame executed RETURN_VALUE."""


class Frame(CallReplay):
    """The replay of one traced frame into ``tape``."""

    raised_at = None    # the instruction of a fused run that raised (module ``fused_runs``)

    def __init__(self, replay: Replay, info, tape: Tape):
        self.r, self.info, self.tape = replay, info, tape
        self.s = info.structure
        self.stack: list = []
        self.locals: dict = {}
        self.versions = replay.versions   # the run's (the same dict: ``use`` reads it often)
        blocks = info.replay_blocks
        self.blocks = blocks if blocks is not None else replay_blocks(info)
        # operator sites whose dispatch may have logged an ``Attempt`` (``tracer.operators``)
        self.guarded_sites = EVERY_SITE if info.guarded else info.switched
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
        return self.used(n) if self.versions else n

    def used(self, n):
        """What ``use`` gives for ``n`` popped while containers have versions: the latest
        version of its container, refreshed after writes through aliased arrays."""
        v = self.versions.get(id(getattr(n, "value", None)))
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
        node = append_call(self.tape, PrimitiveCall, fn,
                           args if type(args) is tuple else tuple(args), None, value,
                           self.ops[i].loc, None, method)
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
        """Consume the argument values (each apart where ``CodeInfo.args_apart``, else one
        tuple) and create the Argument nodes. All are taken before any node is made: an entry
        cut short (an interrupt in the prologue) raises ``Missing`` having made none."""
        info, take = self.info, self.r.take
        values = [take() for _ in range(len(info.params) + len(info.cell_params))] \
            if info.args_apart else take()
        code, params = info.code, info.params
        argc, kwonly = code.co_argcount, code.co_kwonlyargcount
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
                    named = params[: argc + kwonly]
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
        steps = self.blocks
        following, starts, entry_marks = steps.following, steps.starts, steps.entry_marks
        phis_of, entries = steps.phis, steps.entries
        bi = 0
        while True:
            self.next_block = following[bi]
            i = starts[bi]
            try:
                for handler, op, i in steps[bi]:
                    handler(self, op, i)
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
                if self.raised_at is not None:    # in a fused run: its instruction
                    i, self.raised_at = self.raised_at, None
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
            mark = entry_marks[nxt]
            if mark is not None:
                r = self.r
                pos = r.pos
                if pos < len(r.log) and r.log[pos] is mark:
                    r.pos = pos + 1
                else:
                    r.take_mark(mark)
            phis = phis_of[nxt]
            if phis is not None:
                edges = steps.edges
                edge = edges.get((bi, nxt))
                if edge is None:           # one tuple per edge, shared by its phis
                    edge = edges[(bi, nxt)] = (bi, nxt)
                entry = entries[nxt]
                if entry is not None:      # the phis made by generated code (``fused_runs``)
                    entry(self, edge)
                    bi = nxt
                    continue
                for var in phis:
                    src = self.locals.get(var) if type(var) is str else None
                    if isinstance(src, Node) and not self.versions:   # ``phi``, inlined
                        names = _LOCAL_NAMES.get(var)
                        node = self.locals[var] = append_phi(
                            self.tape, var, src, edge,
                            names if names is not None else _local_names(var))
                        if self.r.aliasing.writes and type(node.value) is ndarray:
                            self.r.aliasing.noted(node)
                    else:
                        self.phi(var, edge)
            bi = nxt

    def phi(self, var, edge) -> None:
        if type(var) is str:
            src = self.locals.get(var)
            if isinstance(src, Node):
                if self.versions:
                    src = self.r.resolve(src)
                names = _LOCAL_NAMES.get(var)
                node = append_phi(self.tape, var, src, edge,
                                  names if names is not None else _local_names(var))
                if self.r.aliasing.writes and type(node.value) is ndarray:
                    self.r.aliasing.noted(node)
                self.locals[var] = node
        else:
            j = var[1]
            src = self.stack[j] if j < len(self.stack) else None
            if isinstance(src, Node):
                if self.versions:
                    src = self.r.resolve(src)
                node = append_phi(self.tape, f"stack[{j}]", src, edge, ())
                if self.r.aliasing.writes and type(node.value) is ndarray:
                    self.r.aliasing.noted(node)
                self.stack[j] = node

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
