"""From the node graph to a sequential program: every read after its write.

A *part* is one statement's instances of one role: ``logical`` (computed at run time; constant ones
were folded into the data), ``param`` (unobserved stochastic) or ``observed``. Parts depend on parts
through the node graph (the statement dependency graph, split where data are missing). Their strongly
connected components, in topological order (statement order among equals), become blocks:

* ``vector``: one part with no dependency on itself; all its instances at once (numpy-vectorised);
* ``loop``: parts whose instances share one iteration list and whose dependencies all point to an
  earlier iteration for some direction of each loop (reversed loops, the self-loop case) or to the
  same iteration in a fixed statement order (fusion, the running-sum case);
* ``unrolled``: the last resort: the component's instances one by one in node topological order.

A cycle among nodes is rejected: a *conditionally specified prior* when a stochastic node is on it,
a *directed cycle* of logical nodes otherwise; the message names the nodes of the cycle.
"""
from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field

from .graph import Graph

__all__ = ["Part", "Block", "sequentialise"]


@dataclass(eq=False)
class Part:
    id: int
    statement: object
    role: str                        # "logical" | "param" | "observed"
    instances: list
    discrete: bool = False

    @property
    def complete(self) -> bool:
        return len(self.instances) == len(self.statement.instances)


@dataclass(eq=False)
class Block:
    kind: str                        # "vector" | "loop" | "unrolled"
    parts: list                      # in intra-iteration order
    steps: list = field(default_factory=list)   # (part, instance) in execution order
    directions: tuple = ()           # per loop level: +1 ascending, -1 descending ("loop")


def make_parts(g: Graph, discrete_families) -> list:
    parts = []
    for stmt in g.statements:
        groups = {}
        for inst in stmt.instances:
            node = g.nodes[inst.node]
            if not stmt.stochastic:
                if node.constant or node.stochastic:
                    continue                    # folded, or the logical side of an observed node
                role = "logical"
            else:
                role = "observed" if node.observed else "param"
            groups.setdefault(role, []).append(inst)
        for role in ("param", "observed", "logical"):
            if groups.get(role):
                discrete = stmt.stochastic and stmt.ast.dist.name in discrete_families
                parts.append(Part(len(parts), stmt, role, groups[role], discrete))
    return parts


def _part_edges(g: Graph, parts, part_of_node):
    edges = {p.id: set() for p in parts}
    for p in parts:
        for inst in p.instances:
            for parent in g.nodes[inst.node].parents:
                src = part_of_node.get(parent)
                if src is not None:
                    edges[src].add(p.id)
    return edges


def _sccs(ids, edges):
    """Tarjan's strongly connected components (iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], itertools.count()
    for root in ids:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = next(counter)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = next(counter)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def _iteration(inst) -> tuple:
    return tuple(inst.env[loop.var] for loop in inst.statement.loops)


def _try_loop(g, comp_parts, part_of_node):
    """A fused/reversed loop for the component, or None."""
    iters = [_iteration(i) for i in comp_parts[0].instances]
    depth = len(comp_parts[0].statement.loops)
    if depth == 0:
        return None
    for p in comp_parts[1:]:
        if [_iteration(i) for i in p.instances] != iters or len(p.statement.loops) != depth:
            return None
    if len(set(iters)) != len(iters):
        return None
    members = {p.id for p in comp_parts}
    deps = []                               # (src part, src iter, dst part, dst iter)
    for p in comp_parts:
        for inst in p.instances:
            for parent in g.nodes[inst.node].parents:
                src = part_of_node.get(parent)
                if src in members:
                    deps.append((src, _iteration(g.nodes[parent].instance), p.id, _iteration(inst)))
    for dirs in itertools.product((1, -1), repeat=depth):
        def key(v):
            return tuple(d * x for d, x in zip(dirs, v))
        same, ok = {p.id: set() for p in comp_parts}, True
        for src, s, dst, t in deps:
            ks, kt = key(s), key(t)
            if ks > kt or (ks == kt and src == dst):
                ok = False
                break
            if ks == kt:
                same[src].add(dst)
        if not ok:
            continue
        order = _topo_parts(comp_parts, same)
        if order is None:
            continue
        by_iter = {p.id: dict(zip(iters, p.instances)) for p in comp_parts}
        steps = [(q, by_iter[q.id][v]) for v in sorted(iters, key=key) for q in order]
        return Block("loop", order, steps, dirs)
    return None


def _kahn(keys, successors: dict) -> tuple[list, dict]:
    """Kahn's topological order of ``keys`` (smallest ready key first, so the order is
    deterministic) under ``successors[key] -> iterable of keys``; returns the order and the
    remaining in-degrees (keys left with one > 0 sit on or behind a cycle)."""
    pending = {k: 0 for k in keys}
    for dsts in successors.values():
        for d in dsts:
            pending[d] += 1
    ready = [k for k, n in pending.items() if n == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        k = heapq.heappop(ready)
        order.append(k)
        for d in successors.get(k, ()):
            pending[d] -= 1
            if pending[d] == 0:
                heapq.heappush(ready, d)
    return order, pending


def _topo_parts(parts, edges):
    byid = {p.id: p for p in parts}
    order, _ = _kahn(byid, edges)
    return [byid[pid] for pid in order] if len(order) == len(parts) else None


def _unroll(g, comp_parts, part_of_node):
    insts = {inst.node: (p, inst) for p in comp_parts for inst in p.instances}
    children = {nid: [] for nid in insts}
    for nid in insts:
        for parent in set(g.nodes[nid].parents):
            if parent in insts:
                children[parent].append(nid)
    order, pending = _kahn(insts, children)
    if len(order) != len(insts):
        raise _cycle_error(g, [n for n, k in pending.items() if k > 0])
    return Block("unrolled", comp_parts, [insts[nid] for nid in order])


def _cycle_error(g: Graph, stuck):
    """Walk parents inside ``stuck`` until a node repeats: that is a cycle; name it."""
    stuck = set(stuck)
    path, seen, nid = [], {}, min(stuck)
    while nid not in seen:
        seen[nid] = len(path)
        path.append(nid)
        nid = next(p for p in g.nodes[nid].parents if p in stuck)
    cycle = path[seen[nid]:]
    cycle.reverse()                                   # parents first
    names = " -> ".join(g.nodes[n].name for n in cycle + cycle[:1])
    first = g.nodes[cycle[0]].instance.statement.ast
    if any(g.nodes[n].stochastic for n in cycle):
        return g.error(f"conditionally specified prior: the nodes {names} depend on each other "
                       f"in a cycle, which defines no joint density", first)
    return g.error(f"directed cycle among logical nodes: {names}", first)


def sequentialise(g: Graph, discrete_families=()) -> tuple:
    """``(parts, blocks)``: the sequential program for ``g``."""
    parts = make_parts(g, set(discrete_families))
    part_of_node = {}
    for p in parts:
        for inst in p.instances:
            if g.nodes[inst.node].constant and p.role == "observed":
                continue
            part_of_node[inst.node] = p.id
    edges = _part_edges(g, parts, part_of_node)
    comps = _sccs([p.id for p in parts], edges)
    comp_of = {pid: k for k, comp in enumerate(comps) for pid in comp}
    cedges = {k: set() for k in range(len(comps))}
    for src, dsts in edges.items():
        for d in dsts:
            if comp_of[src] != comp_of[d]:
                cedges[comp_of[src]].add(comp_of[d])
    pending = {k: 0 for k in cedges}
    for k, ds in cedges.items():
        for d in ds:
            pending[d] += 1
    ready = [(min(parts[p].statement.id for p in comps[k]), k) for k in cedges if pending[k] == 0]
    heapq.heapify(ready)
    blocks = []
    while ready:
        _, k = heapq.heappop(ready)
        comp = [parts[p] for p in comps[k]]
        if len(comp) == 1 and comp[0].id not in edges[comp[0].id]:
            blocks.append(Block("vector", comp))
        else:
            blocks.append(_try_loop(g, comp, part_of_node) or _unroll(g, comp, part_of_node))
        for d in cedges[k]:
            pending[d] -= 1
            if pending[d] == 0:
                heapq.heappush(ready, (min(parts[p].statement.id for p in comps[d]), d))
    return parts, blocks
