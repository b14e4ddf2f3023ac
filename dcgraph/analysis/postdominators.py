"""Static control-flow facts of one code object for control dependence: post-dominators.

A branch at the end of block ``b`` influences what runs after it in the same frame until control
reaches ``b``'s immediate post-dominator. ``FrameFlow`` computes, from the instrumented code's
static structure (``dcgraph.tracer.instrument.instrument(code).structure``), every block's immediate
post-dominator over the normal control-flow edges (a virtual exit follows every block without
successors: returns and raises), the block of each recorded instruction offset, and the unique
successor of blocks that end without a conditional jump (so a run through blocks that recorded
nothing can be followed).

Exceptional edges are ignored: a branch whose region is left by an exception stays open until
its post-dominator is reached or the frame ends (an over-approximation). A block from which the
exit cannot be reached (``while True`` without ``break``) has no post-dominator (None): its
branches influence the rest of the frame.
"""
from __future__ import annotations

import types

from ..tracer.instrument import instrument

__all__ = ["FrameFlow", "frame_flow"]

EXIT = None          # the virtual exit: "the frame ends"


class FrameFlow:
    """Post-dominators and block lookup of one instrumented code object."""

    def __init__(self, code: types.CodeType):
        info = instrument(code)
        if info.error is not None or info.structure is None:
            raise ValueError(f"{code.co_qualname} was not instrumented: {info.error}")
        s = info.structure
        self.code = code
        self.nblocks = len(s.blocks)
        self.succs: list[tuple] = [tuple(x for x in (b.jump, b.fall) if x is not None)
                                   for b in s.blocks]
        self.fall: list = [b.fall for b in s.blocks]
        self.block_at: dict[int, int] = {off: s.block_of[i] for i, off in enumerate(s.offsets)}
        self.instr_at: dict[int, str] = {off: s.instrs[i].name for i, off in enumerate(s.offsets)}
        self.ipdom: list = immediate_postdominators(self.succs)

    def block_of_offset(self, offset) -> int | None:
        return self.block_at.get(offset)

    def unique_successor(self, block: int) -> int | None:
        """The only successor of a block that ends without a conditional jump (else None)."""
        succ = self.succs[block]
        return succ[0] if len(succ) == 1 else None

    def is_for_iter(self, offset) -> bool:
        return self.instr_at.get(offset) == "FOR_ITER"


def immediate_postdominators(succs: list[tuple]) -> list:
    """``ipdom[b]`` for every block (``EXIT`` for the virtual exit, also for blocks that cannot
    reach it). ``succs[b]`` are the normal successors of block ``b``."""
    n = len(succs)
    exit_ = n                           # index of the virtual exit in the sets below
    preds: list[list[int]] = [[] for _ in range(n + 1)]
    for b, ss in enumerate(succs):
        if not ss:
            preds[exit_].append(b)
        for s in ss:
            preds[s].append(b)
    # blocks that reach the exit (backwards from it)
    reaches = {exit_}
    work = [exit_]
    while work:
        x = work.pop()
        for p in preds[x]:
            if p not in reaches:
                reaches.add(p)
                work.append(p)
    everything = frozenset(range(n + 1))
    pdom: list[frozenset] = [everything] * (n + 1)
    pdom[exit_] = frozenset({exit_})
    changed = True
    while changed:
        changed = False
        for b in reversed(range(n)):
            if b not in reaches:
                continue
            ss = succs[b] or (exit_,)
            meet = everything
            for s in ss:
                meet = meet & pdom[s]
            new = meet | {b}
            if new != pdom[b]:
                pdom[b], changed = new, True
    ipdom: list = []
    for b in range(n):
        if b not in reaches:
            ipdom.append(EXIT)
            continue
        strict = pdom[b] - {b}
        # the immediate post-dominator is the strict one post-dominated by all the others
        best = max(strict, key=lambda x: len(pdom[x]))
        ipdom.append(EXIT if best == exit_ else best)
    return ipdom


_flows: dict = {}


def frame_flow(code: types.CodeType) -> FrameFlow:
    """The cached ``FrameFlow`` of ``code``."""
    flow = _flows.get(code)
    if flow is None:
        if len(_flows) > 4096:
            _flows.clear()
        flow = _flows[code] = FrameFlow(code)
    return flow
