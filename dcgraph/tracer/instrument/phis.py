"""Phi placement and liveness for one analysed code object (``analysis.Structure``).

A phi goes at a merge block where two or more definitions of a variable reach and the variable
is live there; definitions are tracked by an abstract interpretation of the stack and locals.
"""
from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

from bytecode import Instr

from .unsupported import Unsupported
from .versions import opcode_table

if TYPE_CHECKING:
    from .analysis import Structure

ops = opcode_table()     # the running interpreter's opcode tables

__all__ = ["place_phis"]


def place_phis(s: Structure) -> None:
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
