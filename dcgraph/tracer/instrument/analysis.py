"""Static analysis of one code object: basic blocks, stack depths, handlers, phi placement.

Works on the abstract ``bytecode.Bytecode`` (labels, TryBegin/TryEnd pseudo-instructions), never
on raw bytes. The result, ``Structure``, is what both the rewriter (where probes go, how deep
the stack is there) and the replay (which block follows which, where phis are) read.
"""
from __future__ import annotations

import dis
import heapq

from bytecode import Bytecode, Instr, Label, TryBegin, TryEnd

from .versions import opcode_table

ops = opcode_table()     # the running interpreter's opcode tables

__all__ = ["Block", "Structure", "analyse", "Unsupported"]


class Unsupported(Exception):
    """This code object cannot be instrumented (the call is then recorded as primitive)."""


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
    _place_phis(s)
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


def _place_phis(s: Structure) -> None:
    """A phi for a variable at a merge block where two or more definitions reach and the
    variable is live. Definitions are tracked by an abstract interpretation in which every
    value-producing instruction defines fresh ids and loads/stores/copies move them."""
    entry_state: dict[int, tuple] = {}
    handler_locals: dict[int, dict] = {}

    def merge(bi: int, locs: dict, stack: tuple) -> bool:
        old = entry_state.get(bi)
        if old is None:
            entry_state[bi] = (dict(locs), tuple(stack))
            return True
        olocs, ostack = old
        if len(ostack) != len(stack):
            raise Unsupported(f"stack height differs at block {bi}")
        changed = False           # the union, updated in place, skipping shared definitions
        for k, d in locs.items():
            o = olocs.get(k)
            if o is d or (o is not None and d <= o):    # (subset: cost of d, not of o)
                continue
            olocs[k], changed = (o if o is not None else _undef(k)) | d, True
        for k in olocs.keys() - locs.keys():   # bound on earlier paths only
            if ("undef", k) not in olocs[k]:
                olocs[k], changed = olocs[k] | _undef(k), True
        ns = tuple(a | b for a, b in zip(ostack, stack))
        if ns != ostack:
            entry_state[bi], changed = (olocs, ns), True
        return changed

    def merge_names(bi: int, locs: dict, names: set, stack: tuple) -> bool:
        """``merge`` of a handler's entry with a state that differs from the one last merged
        only in the locals ``names`` and the stack (linear in what changed)."""
        olocs, ostack = entry_state[bi]
        changed = False
        for k in names:
            cur, d = olocs.get(k), locs.get(k) or _undef(k)
            if cur is None or not d <= cur:
                olocs[k], changed = (cur if cur is not None else _undef(k)) | d, True
        if len(ostack) != len(stack):
            raise Unsupported(f"stack height differs at block {bi}")
        ns = tuple(a | b for a, b in zip(ostack, stack))
        if ns != ostack:
            entry_state[bi], changed = (olocs, ns), True
        return changed

    argnames = list(s.bytecode.argnames)
    merge(0, {a: frozenset({("arg", a)}) for a in argnames}, ())
    work = _Worklist([0])
    for b in s.blocks:
        if b.handler is not None and b.depth >= 0:
            work.append(b.index)
    consumers: dict = {}
    while work:
        bi = work.pop()
        b = s.blocks[bi]
        if bi not in entry_state:
            if b.handler is None:
                continue
            merge(bi, {}, tuple(frozenset({("handler", bi, j)}) for j in range(b.depth)))
        locs, stack = entry_state[bi]
        locs, stack = _Locals(locs), list(stack)
        merged: dict = {}          # handler -> [stack merged, names stored since]
        for i in range(b.start, b.end):
            h = s.handler_of[i]
            if h is not None:
                hd = s.blocks[h]
                hstack = tuple(stack[: hd.handler[0]]) + tuple(
                    frozenset({("exc", h, j)}) for j in range(hd.depth - hd.handler[0]))
                seen = merged.get(h)
                if len(hstack) != hd.depth:
                    pass
                elif seen is None:       # all locals once per block, then only those stored
                    if merge(h, locs, hstack):
                        work.append(h)
                    merged[h] = [hstack, set()]
                elif seen[1] or seen[0] != hstack:
                    if merge_names(h, locs, seen[1], hstack):
                        work.append(h)
                    seen[0], seen[1] = hstack, set()
            if locs.stored:
                for seen in merged.values():
                    seen[1] |= locs.stored
                locs.stored.clear()
            ins = s.instrs[i]
            last = i == b.end - 1
            if last and b.jump is not None:
                for succ, jump in ((b.jump, True), (b.fall, False)):
                    if succ is None:
                        continue
                    st = _step(ins, i, locs, list(stack), consumers, jump, s)
                    if merge(succ, locs, tuple(st)):
                        work.append(succ)
                break
            stack = _step(ins, i, locs, stack, consumers, False, s)
        else:
            if b.fall is not None and merge(b.fall, locs, tuple(stack)):
                work.append(b.fall)
    s.consumers = consumers
    live_in = _liveness(s)
    for b in s.blocks:
        if len(b.preds) < 2 or b.index not in entry_state or b.handler is not None:
            continue
        locs, stack = entry_state[b.index]
        for name, defs in locs.items():
            if len(defs) > 1 and name in live_in[b.index]:
                b.phis.append(name)
        for j, defs in enumerate(stack):
            if len(defs) > 1:
                b.phis.append(("stack", j))


class _Worklist:
    """Blocks waiting to be (re)visited, each once, lowest index (code order) first: a loop's
    body settles before what follows it, so the fixed point takes few passes."""

    __slots__ = ("heap", "queued")

    def __init__(self, items):
        self.heap, self.queued = [], set()
        for bi in items:
            self.append(bi)

    def append(self, bi: int) -> None:
        if bi not in self.queued:
            self.queued.add(bi)
            heapq.heappush(self.heap, bi)

    def pop(self) -> int:
        bi = heapq.heappop(self.heap)
        self.queued.discard(bi)
        return bi

    def __bool__(self):
        return bool(self.heap)


class _Locals(dict):
    """A block's locals during the abstract interpretation; ``stored`` collects the names
    written since it was last cleared."""

    __slots__ = ("stored",)

    def __init__(self, *args):
        super().__init__(*args)
        self.stored: set = set()

    def __setitem__(self, name, defs):
        dict.__setitem__(self, name, defs)
        self.stored.add(name)


def _step(ins: Instr, i: int, locs: dict, stack: list, consumers: dict, jump: bool,
          s: Structure) -> list:
    """Abstract effect of one instruction on definition sets (locals updated in place)."""
    name = ins.name
    access = ops.local_access(ins, s.cells)
    if access:
        for kind, var in access:
            if kind == "store":
                locs[var] = stack.pop()
                continue
            defs = locs.get(var, _undef(var))
            if kind in ("load", "clear"):
                stack.append(defs)
            if kind != "clear" and ("undef", var) in defs:
                s.maybe_unbound.add(i)       # the load or delete raises UnboundLocalError
            if kind != "load":
                locs[var] = _undef(var)
        return stack
    if name == "COPY":
        stack.append(stack[-ins.arg])
        for d in stack[-1]:
            consumers.setdefault(d, set()).add(("copy", i))
        return stack
    if name == "SWAP":
        stack[-1], stack[-ins.arg] = stack[-ins.arg], stack[-1]
        return stack
    n_pop, n_push = ops.stack_io(ins, jump)
    popped = stack[len(stack) - n_pop:] if n_pop else []
    callee = name in ops.CALLS
    if name in ops.CALLS and name != "CALL_FUNCTION_EX" \
            and not all(_is_null(s, d) for d in popped[ops.NULL_SLOT_OF_CALL]):
        s.self_layout.add(i)     # [function, self, args]: a comprehension's call
    for k, slot in enumerate(popped):
        role = ("callee", i) if callee and k < 2 else i
        for d in slot:
            consumers.setdefault(d, set()).add(role)
    del stack[len(stack) - n_pop:]
    for j in range(n_push):
        stack.append(frozenset({(i, j)}))
    return stack


def _is_null(s: Structure, d) -> bool:
    """Is definition ``d`` the NULL that PUSH_NULL, LOAD_GLOBAL or a (rewritten) method load
    leave beside a callable?"""
    if not isinstance(d[0], int):
        return False
    return ops.null_pushed(s.instrs[d[0]], d[1])


def _undef(name: str) -> frozenset:
    return frozenset({("undef", name)})


def _liveness(s: Structure) -> list[set]:
    """Live local names at each block entry (backward dataflow, handlers included)."""
    use, defs = [], []
    for b in s.blocks:
        u, d = set(), set()
        for i in range(b.start, b.end):
            for kind, var in ops.local_access(s.instrs[i], s.cells):
                if kind in ("load", "clear") and var not in d:
                    u.add(var)
                if kind != "load":
                    d.add(var)
        use.append(u)
        defs.append(d)
    handlers = [{s.handler_of[i] for i in range(b.start, b.end) if s.handler_of[i] is not None}
                for b in s.blocks]
    live_in = [set() for _ in s.blocks]
    changed = True
    while changed:
        changed = False
        for b in reversed(s.blocks):
            out = set()
            for succ in (b.jump, b.fall):
                if succ is not None:
                    out |= live_in[succ]
            through = set()
            for h in handlers[b.index]:
                through |= live_in[h]
            new = use[b.index] | (out - defs[b.index]) | through
            if new != live_in[b.index]:
                live_in[b.index], changed = new, True
    return live_in
