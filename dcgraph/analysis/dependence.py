"""Data and control dependence of a run on a set of *source* nodes (random choices).

``Dependence(tape, source_params)`` walks a whole run once in execution order. ``source_params``
says which nodes are sources (it returns the tuple of a source's parameter nodes, None for other
nodes); a nested call that is a source is not entered. For every node it computes:

* ``data(node)``: the sources the node's value was computed from through non-source nodes
  (a source's own value is just itself). Element reads are precise (``containers``); a ``Phi``
  also depends on the branches that chose its incoming edge, and a ``Return`` on the branches of
  its frame still open when it ran (gated SSA: ``p = a if z else b`` depends on ``z``); a mutation
  depends on the control in force when it ran (``if z: lst.append(v)``).
* ``control(node)`` (sources only, and branches): the sources of every branch whose region was
  open when the node ran, in its frame and in the frames of the calls that led to it.

A branch at the end of block ``b`` opens a region that ends when its frame reaches ``b``'s
immediate post-dominator (``postdominators``); a branch's sources are those of its tested
values and of the regions open when it ran, so control dependence is transitive (each draw of
a recursive ``geom`` depends on all earlier ones). A ``for`` loop step (``next_item``) is a branch
whose sources are what the iterable's length depends on; the exit is the ``exhausted`` branch.
Where control moves between blocks without a recorded branch, the unique successors are followed
so that regions ending in blocks that recorded nothing are closed too.

Known limits: writes to globals and closure cells inside a branch region are not gated (the
read gets the stored value's sources only); exceptional control flow only ever keeps regions open
longer (an over-approximation).
"""
from __future__ import annotations

import operator
from typing import Callable

from ..tracer import ops
from ..tape import (Argument, Branch, Constant, NestedCall, Node, Phi, PrimitiveCall, Raise,
                    Return, Tape, Yield)
from .containers import Containers
from .postdominators import frame_flow

__all__ = ["Dependence", "walk_skipping_sources"]

EMPTY: frozenset = frozenset()


def _union(sets) -> frozenset:
    out = EMPTY
    for s in sets:
        if s and s is not out:
            out = s if not out else out | s
    return out


class _Frame:
    """Control state of one frame during the walk."""

    __slots__ = ("tape", "flow", "nodes", "pos", "cur", "entries", "inherited", "pre_entry",
                 "_own", "_full", "site")

    def __init__(self, tape: Tape, inherited: frozenset, site):
        self.tape, self.site, self.inherited = tape, site, inherited
        self.nodes, self.pos = tape.nodes, 0
        try:
            self.flow = frame_flow(tape.code) if tape.code is not None else None
        except ValueError:
            self.flow = None
        self.cur = 0
        self.entries: dict = {}          # ipdom block (None = frame end) -> (own, full)
        self.pre_entry = EMPTY
        self._own = self._full = None

    def own(self) -> frozenset:
        if self._own is None:
            self._own = _union(e[0] for e in self.entries.values())
        return self._own

    def ctl(self) -> frozenset:
        if self._full is None:
            self._full = self.inherited | _union(e[1] for e in self.entries.values())
        return self._full

    def push(self, ipdom, own: frozenset, full: frozenset) -> None:
        old = self.entries.get(ipdom)
        if old is not None:            # a later instance with the same end replaces it
            own, full = old[0] | own, old[1] | full
        self.entries[ipdom] = (own, full)
        self._own = self._full = None

    def enter(self, block: int) -> None:
        self.pre_entry = self.own()
        if block in self.entries:
            del self.entries[block]
            self._own = self._full = None
        self.cur = block

    def advance(self, to: int) -> None:
        """Control went from the current block to ``to`` without a recorded branch."""
        if to == self.cur or self.flow is None:
            return
        path, b = [], self.cur
        for _ in range(self.flow.nblocks):
            b = self.flow.unique_successor(b)
            if b is None:
                break
            path.append(b)
            if b == to:
                for x in path:
                    self.enter(x)
                return
        self.enter(to)

    def block_of(self, n: Node):
        if type(n) is Phi:
            return n.edge[1]
        if type(n) is Branch:
            return n.edge[0]
        loc = n.loc
        if loc is None or self.flow is None or loc.code is not self.tape.code:
            return None
        return self.flow.block_of_offset(loc.offset)


class Dependence:
    """Data and control sources of every node of one run (see the module docstring)."""

    def __init__(self, tape: Tape, source_params: Callable[[Node], tuple | None]):
        self.source_params = source_params
        self.sources: list[Node] = []
        self.source_index: dict = {}
        self._data: dict = {}
        self._ctl: dict = {}
        self._param_data: dict = {}
        self._mctl: dict = {}
        self._gate: dict = {}
        self.containers = Containers(walk_skipping_sources(tape, source_params), self.data,
                                     lambda n: self._mctl.get(n, EMPTY),
                                     lambda n: self._gate.get(n, EMPTY))
        self._run(tape)

    # -- results -------------------------------------------------------------------------------
    def data(self, node) -> frozenset:
        """Indices (into ``sources``) of the sources ``node``'s value depends on."""
        d = self._data.get(node)
        if d is not None:
            return d
        if node in self._mctl:
            return self._version_data(node)
        return EMPTY

    def _version_data(self, version) -> frozenset:
        """Sources of a whole container version: every write and the control of each write.
        Computed on demand (element reads rarely need it), walking back to the nearest known
        version, so a loop of writes costs linear, not quadratic, time."""
        acc: set = set()
        stack, seen = [version], set()
        while stack:
            n = stack.pop()
            if id(n) in seen:
                continue
            seen.add(id(n))
            d = self._data.get(n)
            if d is not None:
                acc |= d
            elif n in self._mctl:
                acc |= self._mctl[n]
                stack.extend(n.inputs)
        out = self._data[version] = frozenset(acc)
        return out

    def control(self, node) -> frozenset:
        """Indices of the sources that decided whether ``node`` (a source or branch) ran."""
        return self._ctl.get(node, EMPTY)

    def parameter_data(self, source) -> frozenset:
        """Indices of the sources the parameters of the source ``source`` depend on."""
        return self._param_data.get(source, EMPTY)

    # -- the walk ------------------------------------------------------------------------------
    def _run(self, root: Tape) -> None:
        stack = [_Frame(root, EMPTY, None)]
        while stack:
            f = stack[-1]
            if f.pos >= len(f.nodes):
                stack.pop()
                if f.site is not None:
                    self._finish_call(f.site)
                continue
            n = f.nodes[f.pos]
            f.pos += 1
            child = self._node(f, n)
            if child is not None:      # a callable computed from a draw decides what runs
                inherited = f.ctl() | (self.data(n.fn_node) if n.fn_node is not None else EMPTY)
                stack.append(_Frame(child, inherited, n))

    def _finish_call(self, call: NestedCall) -> None:
        ret = call.child.returned
        if isinstance(ret, Return):        # Return, or a generator segment's Yield
            self._data[call] = self.data(ret)
        else:
            self._data[call] = _union(self.data(i) for i in call.inputs)

    def _node(self, f: _Frame, n: Node):
        """Process ``n``; return a child tape to walk (a nested call's), else None."""
        t = type(n)
        block = f.block_of(n)
        if t is Phi:
            if block != f.cur:
                f.advance(n.edge[0])
                f.enter(block)
            gate = f.pre_entry
            self._gate[n] = gate
            self._data[n] = self.data(n.source) | gate
            return None
        if block is not None:
            f.advance(block)
        if t is Branch:
            self._branch(f, n)
            return None
        params = self.source_params(n) if isinstance(n, PrimitiveCall) else None
        if params is not None:
            k = self.source_index[n] = len(self.sources)
            self.sources.append(n)
            self._ctl[n] = f.ctl()
            pd = _union(self.data(p) for p in params)
            if n.fn_node is not None:
                pd = pd | self.data(n.fn_node)
            self._param_data[n] = pd
            if n.mutates is not None:      # rng.shuffle(x): x's new version holds the draw
                self._mctl[n] = f.ctl() | {k}
                self.containers.record(n)
            else:
                self._data[n] = frozenset((k,))
            return None
        if t is NestedCall:
            if n.child is not None:
                return n.child
            self._data[n] = _union(self.data(i) for i in n.inputs)
            return None
        if t is PrimitiveCall:
            self._call(f, n)
            return None
        if t is Argument:
            self._data[n] = _union(self.data(s) for s in n.source_nodes())
        elif t is Return or t is Yield:
            gate = f.own()
            self._gate[n] = gate
            self._data[n] = _union(self.data(i) for i in n.inputs) | gate
        elif t is Constant:
            self._data[n] = _union(self.data(i) for i in n.inputs)
        elif t is Raise:
            pass
        return None

    def _branch(self, f: _Frame, n: Branch) -> None:
        if n.op == "exhausted" and n.inputs:
            own = self.containers.length_sources(n.inputs[0])
        else:
            own = _union(self.data(i) for i in n.inputs)
        full = own | f.ctl()
        self._ctl[n] = f.ctl()
        if f.flow is not None:
            f.push(f.flow.ipdom[n.edge[0]], own, full)
            f.enter(n.edge[1])

    def _call(self, f: _Frame, n: PrimitiveCall) -> None:
        fn, args = n.fn, n.args
        c = self.containers
        extra = self.data(n.fn_node) if n.fn_node is not None else EMPTY
        if n.mutates is not None:
            self._mctl[n] = f.ctl()        # its data (the whole container's) is computed lazily
            c.record(n)
            return
        if fn is operator.getitem and len(args) == 2 and not n.kwargs:
            d = c.element(args[0], args[1].value) | self.data(args[1])
        elif fn is getattr and len(args) == 2 and not n.kwargs:
            d = c.attribute(args[0], args[1].value)
        elif fn is len and len(args) == 1 and not n.kwargs:
            d = c.length_sources(args[0])
        elif fn is ops.next_item and len(args) == 2:
            d = self._item(args[0], args[1].value)
            if f.flow is not None and n.loc is not None and f.flow.is_for_iter(n.loc.offset):
                own = c.length_sources(args[0])
                self._ctl[n] = f.ctl()
                block = f.cur
                f.push(f.flow.ipdom[block], own, own | f.ctl())
                fall = f.flow.fall[block]
                if fall is not None:
                    f.enter(fall)
        else:
            d = _union(self.data(i) for i in n.inputs) | self._yielded(n.inputs)
        self._data[n] = d | extra

    def _yielded(self, inputs) -> frozenset:
        """What the traced generators among ``inputs`` (or iterated by them) had yielded so far:
        their segments ran after the generator's call, inside a consumer such as ``sum(g)`` or
        ``list(zip(g, h))``, so the consumer depends on them."""
        out, todo, seen = EMPTY, list(inputs), 0
        while todo and seen < 64:
            i, seen = todo.pop(), seen + 1
            if type(i) in (Argument, Phi) and isinstance(getattr(i, "source", None), Node):
                todo.append(i.source)
            elif type(i) is PrimitiveCall:
                if i._meta and "segments" in i._meta:
                    out = out | _union(self._data.get(s, EMPTY) for s in i._meta["segments"])
                elif i.fn in (iter, zip, enumerate):
                    todo.extend(i.args)
        return out

    def _item(self, iterator: Node, step) -> frozenset:
        """Sources of the ``step``-th item drawn from ``iterator`` (precise for ``iter(list)``,
        also when the iterator was passed into a comprehension's frame)."""
        it, gates = iterator, EMPTY
        for _ in range(1000):
            if type(it) is Argument and isinstance(it.source, Node):
                it = it.source
            elif type(it) is Phi:
                gates, it = gates | self._gate.get(it, EMPTY), it.source
            else:
                break
        if (type(it) is PrimitiveCall and it.fn is iter and len(it.args) == 1
                and type(step) is int):
            seq = it.args[0]
            if isinstance(seq.value, (list, tuple)):
                return gates | self.containers.element(seq, step)
        return self.data(iterator) | self._yielded((iterator,))


def walk_skipping_sources(tape: Tape, source_params):
    """Every node of the run except those inside nested calls that are sources."""
    stack = [iter(tape.nodes)]
    while stack:
        for n in stack[-1]:
            yield n
            if type(n) is NestedCall and n.child is not None and source_params(n) is None:
                stack.append(iter(n.child.nodes))
                break
        else:
            stack.pop()
