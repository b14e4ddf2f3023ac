"""Folding a tape for display: which nodes a view shows, and markers for the ones it hides.

Every view draws ``fold(tape, ...)``: a list of items, each a ``Row`` (one shown node; a nested
call's row holds its child tape's items) or a ``Fold`` (a contiguous run of one tape's nodes,
shown as one "… n more" marker). Three things fold:

* **loops**: a run of repeated iterations keeps its first ``head`` and last ``tail`` iterations;
  an iteration starts at each recurrence of the first node (by bytecode site) that repeats;
* **depth**: the child of a call ``depth`` levels below the root is one marker;
* **budget**: once ``max_nodes`` rows are shown, the rest of each tape is one marker.

Contract: nothing is dropped silently. For every tape, its rows and folds cover its nodes in
order, each exactly once, so ``count(items) == (shown, folded)`` with ``shown + folded`` the
number of nodes under the tape (``Tape.walk``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

from ..tape import Argument, Constant, NestedCall, Node, Phi, Tape

__all__ = ["Row", "Fold", "fold", "count", "iter_items", "subtree_size", "MAX_LEVELS"]

MAX_LEVELS = 64   # depth=None still stops here (with a marker): deeper trees help no reader


@dataclass(eq=False)
class Row:
    """One shown node; for a nested call, ``children`` are its child tape's items."""
    node: Node
    children: list | None = None


@dataclass(eq=False)
class Fold:
    """Nodes ``tape.nodes[start:stop]`` (and everything under them) shown as one marker."""
    tape: Tape
    start: int
    stop: int
    count: int              # nodes folded, including those under folded nested calls
    reason: str             # "loop", "depth" or "budget"
    iterations: int = 0     # for "loop": how many iterations are folded
    line: int | None = field(default=None)

    @property
    def label(self) -> str:
        if self.reason == "loop":
            where = f" of the loop at L{self.line}" if self.line is not None else ""
            return f"… {self.iterations:,} more iterations{where} ({self.count:,} nodes)"
        if self.reason == "depth":
            return f"… {self.count:,} more nodes inside {self.tape.name}"
        return f"… {self.count:,} more nodes (max_nodes reached)"


def fold(tape: Tape, depth: int | None = None, max_nodes: int | None = None,
         head: int = 2, tail: int = 2) -> list:
    """The items a view of ``tape`` shows (see the module docstring).

    ``depth``: levels of nested calls expanded (0: the root's nodes only; None: all, up to
    ``MAX_LEVELS``); ``max_nodes``: rows shown at most (None: no limit); ``head``/``tail``:
    iterations kept before/after a loop's fold.
    """
    if depth is not None and depth < 0:
        raise ValueError(f"fold: depth must be >= 0 or None, got {depth}")
    if max_nodes is not None and max_nodes < 1:
        raise ValueError(f"fold: max_nodes must be >= 1 or None, got {max_nodes}")
    if head < 0 or tail < 0:
        raise ValueError(f"fold: head and tail must be >= 0, got {head} and {tail}")
    levels = MAX_LEVELS if depth is None else min(depth, MAX_LEVELS)
    return _Folder(levels, max_nodes, head, tail).tape_items(tape, 0)


def count(items: list) -> tuple[int, int]:
    """``(shown, folded)``: rows, and nodes represented by fold markers, under ``items``."""
    shown = folded = 0
    for item, _level, _parent in iter_items(items):
        if isinstance(item, Row):
            shown += 1
        else:
            folded += item.count
    return shown, folded


def iter_items(items: list, level: int = 0, parent: Row | None = None
               ) -> Iterator[tuple[Row | Fold, int, Row | None]]:
    """Every item in display order with its nesting level and the call row holding it."""
    stack = [(iter(items), level, parent)]
    while stack:
        it, lvl, par = stack[-1]
        item = next(it, None)
        if item is None:
            stack.pop()
            continue
        yield item, lvl, par
        if isinstance(item, Row) and item.children:
            stack.append((iter(item.children), lvl + 1, item))


def subtree_size(tape: Tape, sizes: dict | None = None) -> int:
    """Number of nodes under ``tape`` (its own and its nested calls'), without recursion."""
    sizes = {} if sizes is None else sizes
    order, stack = [], [tape]
    while stack:
        t = stack.pop()
        if id(t) in sizes:
            continue
        order.append(t)
        stack.extend(n.child for n in t.nodes if isinstance(n, NestedCall) and n.child is not None)
    for t in reversed(order):
        sizes[id(t)] = len(t.nodes) + sum(sizes[id(n.child)] for n in t.nodes
                                          if isinstance(n, NestedCall) and n.child is not None)
    return sizes[id(tape)]


def _key(n: Node):
    """The code site of a node: equal keys in one frame mean a loop went round."""
    if isinstance(n, Phi):
        return ("Phi", n.name, n.edge[1])
    if isinstance(n, Argument):
        return ("Argument", n.name)
    loc = n.loc
    if loc is None:
        return (n.kind, getattr(n, "name", None)) if isinstance(n, Constant) else (n.kind,)
    return (n.kind, loc.offset, loc.line)


def _find_loop(keys: list, lo: int, hi: int):
    """The outermost loop in ``keys[lo:hi]``: (iteration start indices, end) or None."""
    first: dict = {}
    last: dict = {}
    for i in range(lo, hi):
        k = keys[i]
        if k in first:
            last[k] = i
        else:
            first[k] = i
    if not last:
        return None
    anchor = min(last, key=first.__getitem__)
    start, end = first[anchor], last[anchor]
    starts = [i for i in range(start, end + 1) if keys[i] == anchor]
    i = start
    while i <= end:      # the last iteration runs to the last node of a site seen in the loop
        end = max(end, last.get(keys[i], i))
        i += 1
    return starts, end + 1


class _Folder:
    def __init__(self, levels: int, max_nodes: int | None, head: int, tail: int):
        self.levels, self.max_nodes, self.head, self.tail = levels, max_nodes, head, tail
        self.shown = 0
        self.sizes: dict = {}
        self.prefixes: dict = {}

    def weight(self, tape: Tape, lo: int, hi: int) -> int:
        """Nodes under ``tape.nodes[lo:hi]``, nested calls' children included."""
        prefix = self.prefixes.get(id(tape))
        if prefix is None:
            subtree_size(tape, self.sizes)
            prefix = [0]
            for n in tape.nodes:
                child = n.child if isinstance(n, NestedCall) else None
                prefix.append(prefix[-1] + 1 + (self.sizes[id(child)] if child is not None else 0))
            self.prefixes[id(tape)] = prefix
        return prefix[hi] - prefix[lo]

    def tape_items(self, tape: Tape, level: int) -> list:
        keys = [_key(n) for n in tape.nodes]
        out: list = []
        self.segment(tape, keys, 0, len(keys), level, out)
        return out

    def segment(self, tape: Tape, keys: list, lo: int, hi: int, level: int, out: list) -> None:
        while lo < hi:
            loop = _find_loop(keys, lo, hi)
            if loop is None:
                self.rows(tape, lo, hi, level, out)
                return
            starts, end = loop
            self.rows(tape, lo, starts[0], level, out)
            bounds = starts + [end]
            n = len(starts)
            if n <= self.head + self.tail + 1:
                kept = range(n)
            else:
                kept = list(range(self.head)) + list(range(n - self.tail, n))
            for j in range(n):
                if j in kept:
                    self.segment(tape, keys, bounds[j], bounds[j + 1], level, out)
                elif j == self.head:
                    a, b = bounds[j], bounds[n - self.tail]
                    line = tape.nodes[a].line
                    if line is None and a + 1 < b:
                        line = tape.nodes[a + 1].line
                    self.emit(out, Fold(tape, a, b, self.weight(tape, a, b), "loop",
                                        n - self.head - self.tail, line))
            lo = end

    def rows(self, tape: Tape, lo: int, hi: int, level: int, out: list) -> None:
        nodes = tape.nodes
        for i in range(lo, hi):
            if self.max_nodes is not None and self.shown >= self.max_nodes:
                self.emit(out, Fold(tape, i, hi, self.weight(tape, i, hi), "budget"))
                return
            node = nodes[i]
            self.shown += 1
            row = Row(node)
            child = node.child if isinstance(node, NestedCall) else None
            if child is not None:
                if level < self.levels:
                    row.children = self.tape_items(child, level + 1)
                elif child.nodes:
                    row.children = [Fold(child, 0, len(child.nodes),
                                         subtree_size(child, self.sizes), "depth")]
                else:
                    row.children = []
            out.append(row)

    @staticmethod
    def emit(out: list, fold_: Fold) -> None:
        """Append a fold, merging it into a budget fold it continues."""
        prev = out[-1] if out else None
        if (isinstance(prev, Fold) and prev.reason == fold_.reason == "budget"
                and prev.tape is fold_.tape and prev.stop == fold_.start):
            prev.stop, prev.count = fold_.stop, prev.count + fold_.count
        else:
            out.append(fold_)
