"""Where a run's groups hold copies of one inner body: candidate blocks for ``GridRun``.

``inner_blocks(codes, lines)`` reads one group's line codes (templates numbered by
``vectorise``; negative: a barrier) and gives the blocks ``(j0, q, m)``: ``m >= 2``
consecutive copies of the ``q`` lines from ``j0``, the most lines saved first, at most
``MAX_BLOCKS`` of them (each costs a construction when it fails).
"""
from __future__ import annotations

__all__ = ["inner_blocks", "MAX_BLOCKS"]

MAX_BLOCKS = 3                      # candidate inner blocks tried per run


def inner_blocks(codes: list, lines=None) -> list:
    """Candidate inner blocks ``(j0, q, m)`` of one group's line codes (all forms known):
    ``m >= 2`` consecutive copies of lines ``j0 ... j0 + q - 1``, most lines saved first;
    among the rotations of one periodic stretch, those whose copies read fewest values of the
    copy before (other than a line's own previous value: a sum) first, when ``lines(j)``
    gives line ``j``'s ``(target or None, operands read)``."""
    p, found = len(codes), []
    for q in range(1, p // 2 + 1):
        for j0 in range(0, p - 2 * q + 1):
            if codes[j0] != codes[j0 + q] or codes[j0] < 0:
                continue
            block = codes[j0:j0 + q]
            if min(block) < 0 or codes[j0 + q:j0 + 2 * q] != block:
                continue
            if j0 >= q and codes[j0 - q:j0] == block:
                continue                 # not the first copy
            m = 2
            while j0 + (m + 1) * q <= p and codes[j0 + m * q:j0 + (m + 1) * q] == block:
                m += 1
            found.append(((m - 1) * q, -j0, q, m))
    found.sort(reverse=True)
    if len(found) > MAX_BLOCKS:                 # the best, and those saving as many lines
        least = found[MAX_BLOCKS - 1][0]
        found = [b for b in found if b[0] >= least]
    if lines is not None:
        found.sort(key=lambda b: (-b[0], _crossings(lines, -b[1], b[2], b[3]), -b[1]))
    return [(-j0, q, m) for _, j0, q, m in found[:MAX_BLOCKS]]


def _crossings(lines, j0: int, q: int, m: int) -> int:
    """How many reads of copies ``1 ... m - 1`` take a value another line of the copy before
    defined (the block's copies would then not be independent columns)."""
    current, count = {}, 0
    for c in range(m):
        for u in range(q):
            target, reads = lines(j0 + c * q + u)
            for x in reads:
                d = current.get(x)
                if d is not None and d[0] < c and (d[0] < c - 1 or d[1] != u):
                    count += 1
            if target is not None:
                current[target] = (c, u)
    return count
