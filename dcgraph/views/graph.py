"""The folded tape as a graph: numbered entries (rows and fold markers) and edges between them.

Shared by the Graphviz and HTML views. Any node of the tape maps to the one entry that shows
it (``resolve``): its row, or the fold marker standing for it, so edges to hidden nodes end at
their marker instead of vanishing. A marker's edges are those of all the nodes it stands for.
"""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Iterator

from ..tape.slicing import dependencies
from ..tape import Argument, Branch, NestedCall, Node, Tape
from .fold import Fold, Row, iter_items

__all__ = ["Entry", "DisplayGraph"]


@dataclass(eq=False)
class Entry:
    """One shown thing: ``item`` is a Row or a Fold; ``call`` the entry id of the nested call
    whose child tape holds it (None at the root)."""
    id: int
    item: Row | Fold
    level: int
    call: int | None

    @property
    def node(self) -> Node | None:
        return self.item.node if isinstance(self.item, Row) else None


class DisplayGraph:
    """Entries of ``items`` (from ``fold.fold``) in display order, with their edges."""

    def __init__(self, tape: Tape, items: list):
        self.tape, self.items = tape, items
        self.entries: list[Entry] = []
        self._by_item: dict[int, int] = {}
        where: dict[int, tuple[list, list]] = {}
        for item, level, parent in iter_items(items):
            e = Entry(len(self.entries), item, level,
                      self._by_item[id(parent)] if parent is not None else None)
            self.entries.append(e)
            self._by_item[id(item)] = e.id
            if isinstance(item, Row):
                t, start = item.node.tape, item.node.index
            else:
                t, start = item.tape, item.start
            starts, ids = where.setdefault(id(t), ([], []))
            starts.append(start)
            ids.append(e.id)
        self._where = where
        self._cache: dict[int, tuple[list, list]] = {}

    def entry(self, item: Row | Fold) -> Entry:
        return self.entries[self._by_item[id(item)]]

    def resolve(self, node: Node) -> int | None:
        """The id of the entry showing ``node`` (None for inline literals)."""
        t, i = node.tape, node.index
        if t is None:
            return None
        while id(t) not in self._where:
            call = t.parent
            if call is None:
                return None          # not under the displayed tape
            t, i = call.tape, call.index
        starts, ids = self._where[id(t)]
        k = bisect_right(starts, i) - 1
        return ids[k] if k >= 0 else None

    def nodes_of(self, e: Entry) -> Iterator[Node]:
        """The tape nodes an entry stands for (a fold: all of them, nested calls included)."""
        if isinstance(e.item, Row):
            yield e.item.node
            return
        f = e.item
        stack = [iter(f.tape.nodes[f.start:f.stop])]
        while stack:
            n = next(stack[-1], None)
            if n is None:
                stack.pop()
                continue
            yield n
            if isinstance(n, NestedCall) and n.child is not None:
                stack.append(iter(n.child.nodes))

    def _links(self, e: Entry) -> tuple[list, list]:
        """(inputs, deps) of an entry as entry ids: direct inputs and argument sources (the
        inverse of ``Tape.users``), and backward-slice dependencies (as ``Tape.slice``)."""
        cached = self._cache.get(e.id)
        if cached is None:
            inputs: dict[int, None] = {}
            deps: dict[int, None] = {}
            for n in self.nodes_of(e):
                srcs = n.source_nodes() if isinstance(n, Argument) else n.inputs
                for s in srcs:
                    inputs[self.resolve(s)] = None
                for s in dependencies(n):
                    deps[self.resolve(s)] = None
            for d in (inputs, deps):
                d.pop(None, None)
                d.pop(e.id, None)
            cached = self._cache[e.id] = (list(inputs), list(deps))
        return cached

    def inputs(self, e: Entry) -> list[int]:
        return self._links(e)[0]

    def deps(self, e: Entry) -> list[int]:
        return self._links(e)[1]

    def data_edges(self) -> list[tuple[int, int]]:
        """(source, target) pairs: inputs and argument sources, and a child's return into its
        call, deduplicated."""
        edges: dict[tuple[int, int], None] = {}
        for e in self.entries:
            for s in self.inputs(e):
                edges[(s, e.id)] = None
            n = e.node
            if isinstance(n, NestedCall) and n.child is not None and n.child.returned is not None:
                r = self.resolve(n.child.returned)
                if r is not None and r != e.id:
                    edges[(r, e.id)] = None
        return list(edges)

    def control_edges(self) -> list[tuple[int, int]]:
        """(branch, next) pairs: from each shown Branch to what ran next in its tape."""
        edges = []
        lists = [self.items] + [e.item.children for e in self.entries
                                if isinstance(e.item, Row) and e.item.children]
        for items in lists:
            for a, b in zip(items, items[1:]):
                if isinstance(a, Row) and isinstance(a.node, Branch):
                    edges.append((self._by_item[id(a)], self._by_item[id(b)]))
        return edges
