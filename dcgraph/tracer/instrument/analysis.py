"""Static analysis of one code object: basic blocks, stack depths, handlers (phis: ``phis.py``).

Works on the abstract ``bytecode.Bytecode`` (labels, TryBegin/TryEnd pseudo-instructions), never
on raw bytes. The result, ``Structure``, is what both the rewriter (where probes go, how deep
the stack is there) and the replay (which block follows which, where phis are) read.
"""
from __future__ import annotations

import dis

from bytecode import Bytecode, Instr, Label, TryBegin, TryEnd

from .phis import place_phis
from .unsupported import Unsupported
from .versions import opcode_table

ops = opcode_table()     # the running interpreter's opcode tables

__all__ = ["Block", "Structure", "analyse", "Unsupported"]


class Block:
    """A basic block: instructions ``start:end`` of ``Structure.instrs``."""

    __slots__ = ("index", "start", "end", "jump", "fall", "depth", "handler", "phis",
                 "marked", "preds")

    def __init__(self, index: int, start: int):
        self.index, self.start, self.end = index, start, start
        self.jump: int | None = None     # block reached when the last instruction jumps
        self.fall: int | None = None     # block reached by falling through
        self.depth: int = -1             # stack depth at entry (the original code's)
        self.handler: tuple | None = None  # (depth, push_lasti) when an exception handler
        self.phis: list = []             # variables merged here: local names or ('stack', j)
        self.marked = False              # a probe logs entry into this block
        self.preds: set = set()


class Structure:
    """Blocks and per-instruction facts of one code object."""

    def __init__(self, bytecode: Bytecode):
        self.bytecode = bytecode
        self.instrs: list[Instr] = []
        self.try_of: list[TryBegin | None] = []   # the exception-table entry covering instr i
        self.block_of: list[int] = []
        self.blocks: list[Block] = []
        self.depth_before: list[int] = []
        self.label_block: dict[int, int] = {}      # id(Label) -> block index
        self.handler_of: list[int | None] = []      # block index of the handler of instr i
        self.consumers: dict = {}                   # def id -> set of instr indices using it
        self.offsets: list[int] = []                # original bytecode offset of instr i
        self.handler_depths: dict = {}              # handler offset -> (depth, push_lasti)
        self.self_layout: set = set()               # calls whose callable has no NULL below
        self.maybe_unbound: set = set()             # LOAD_FAST/DELETE_FAST that may raise
        self.cells: frozenset = frozenset()         # names of the code's cell and free variables


def analyse(bytecode: Bytecode, code) -> Structure:
    """Analyse ``bytecode`` (read from ``code``, whose exception table gives handler depths)."""
    s = Structure(bytecode)
    s.cells = frozenset(code.co_cellvars + code.co_freevars)
    _split_blocks(s)
    _original_offsets(s, code)
    _link_blocks(s)
    _stack_depths(s)
    place_phis(s)
    return s


def _split_blocks(s: Structure) -> None:
    pending_labels: list[Label] = []
    current_try: TryBegin | None = None
    new_block = True
    for item in s.bytecode:
        if isinstance(item, Label):
            pending_labels.append(item)
            new_block = True
            continue
        if isinstance(item, TryBegin):
            current_try = item
            continue
        if isinstance(item, TryEnd):
            current_try = None
            continue
        if not isinstance(item, Instr):
            continue  # SetLineno
        if item.name in ops.UNSUPPORTED:
            raise Unsupported(f"opcode {item.name} is not traced")
        i = len(s.instrs)
        if new_block or not s.blocks:
            s.blocks.append(Block(len(s.blocks), i))
            new_block = False
        for lab in pending_labels:
            s.label_block[id(lab)] = len(s.blocks) - 1
        pending_labels.clear()
        s.instrs.append(item)
        s.try_of.append(current_try)
        s.block_of.append(len(s.blocks) - 1)
        s.blocks[-1].end = i + 1
        if item.name in ops.ENDS_BLOCK:
            new_block = True


def _original_offsets(s: Structure, code) -> None:
    """Offsets of the original instructions, and the exception table's (depth, lasti) per
    handler offset (``bytecode`` does not keep handler depths when reading code)."""
    listing = [x for x in dis.get_instructions(code) if x.opname != "EXTENDED_ARG"]
    if [x.opname for x in listing] != [ins.name for ins in s.instrs]:
        raise Unsupported("instruction listing does not match the original code")
    s.offsets = [x.offset for x in listing]
    s.handler_depths = {e.target: (e.depth, e.lasti)
                        for e in dis.Bytecode(code).exception_entries}


def _link_blocks(s: Structure) -> None:
    n = len(s.blocks)
    for b in s.blocks:
        last = s.instrs[b.end - 1]
        name = last.name
        nxt = b.index + 1 if b.index + 1 < n else None
        if name in ops.UNCONDITIONAL_JUMPS:
            b.jump = s.label_block[id(last.arg)]
        elif name in ops.CONDITIONAL_JUMPS or name == "FOR_ITER" or name in ops.DELEGATING_JUMPS:
            b.jump, b.fall = s.label_block[id(last.arg)], nxt
        elif name not in ops.TERMINATORS:
            b.fall = nxt
        for succ in (b.jump, b.fall):
            if succ is not None:
                s.blocks[succ].preds.add(b.index)
    s.handler_of = [s.label_block[id(t.target)] if t is not None else None for t in s.try_of]
    for i, t in enumerate(s.try_of):
        if t is not None:
            h = s.blocks[s.handler_of[i]]
            entry = s.handler_depths.get(s.offsets[h.start])
            if entry is None:
                raise Unsupported(f"no exception table entry for the handler at block {h.index}")
            h.handler = entry
    for b in s.blocks:
        last = s.instrs[b.end - 1].name
        if last in ops.CONDITIONAL_JUMPS:
            s.blocks[b.jump].marked = True
            if b.fall is not None:
                s.blocks[b.fall].marked = True
        elif last == "FOR_ITER":
            s.blocks[b.jump].marked = True   # the loop body is told apart by its value event
    for b in s.blocks:
        if b.handler is not None:
            b.marked = True


def _stack_depths(s: Structure) -> None:
    """Depth before every instruction, by propagation from the entry and handler entries."""
    s.depth_before = [-1] * len(s.instrs)
    work = [(0, 0)]
    for b in s.blocks:
        if b.handler is not None:
            depth, lasti = b.handler
            if not isinstance(depth, int):
                raise Unsupported("exception table without stack depths")
            work.append((b.index, depth + int(lasti) + 1))
    while work:
        bi, depth = work.pop()
        b = s.blocks[bi]
        if b.depth >= 0:
            if b.depth != depth:
                raise Unsupported(f"inconsistent stack depth at block {bi}")
            continue
        b.depth = depth
        for i in range(b.start, b.end):
            s.depth_before[i] = depth
            ins = s.instrs[i]
            if i == b.end - 1 and (b.jump is not None):
                pops, pushes = ops.stack_io(ins, jump=True)
                work.append((b.jump, depth - pops + pushes))
                if b.fall is not None:
                    pops, pushes = ops.stack_io(ins, jump=False)
                    work.append((b.fall, depth - pops + pushes))
                break
            pops, pushes = ops.stack_io(ins)
            depth += pushes - pops
        else:
            if b.fall is not None:
                work.append((b.fall, depth))
