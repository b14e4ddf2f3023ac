"""Unrolling a BUGS model with its data into a node graph (``graph.Graph``).

``build_graph(model, data, source, filename) -> Graph``. One ``Node`` per scalar element (or per
multivariate block) that a statement defines: stochastic (``~``) or logical (``<-``), observed when
the data give its value (``NA`` leaves it unobserved), constant when it is data or computable from
data (such logical nodes are evaluated here, and a node both logical and stochastic is observed with
that value). Variable shapes come from the data, else from the largest index any statement defines.
Every statement instance keeps its loop environment and, per variable reference of the statement
(``Statement.refs``, in order), the flat offsets it reads: the sequentialiser and the code generator
work from those. Indices are evaluated here (data, loop variables, nested indexing through data or
constant nodes); an index that is an unobserved discrete node (``mu[T[i]]``, mixtures) makes every
element it may select a parent and is resolved at run time (``Instance.dynamic``). Errors name the
node and the statement's line.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from . import syntax as S
from .evaluate import Evaluator, NotConstant
from .functions import FUNCTIONS, LINKS
from .graph import Graph, Instance, Node, Statement, element_name, topological_order
from .templates import ALIASES, DISTRIBUTIONS
from .walk import collect_calls, collect_refs, statement_exprs

__all__ = ["build_graph"]


class _Builder:
    def __init__(self, model, data, source, filename):
        self.g = Graph(model, [], [], {}, {}, {}, source, filename)
        for name, value in data.items():
            arr = np.asarray(value, dtype=float)
            self.g.data[name] = arr
            self.g.shapes[name] = arr.shape
        self.ev = Evaluator(self._lookup, self.g.shapes, self.g.error)
        self.folding = set()

    # -- statements and instances -----------------------------------------------------------
    def walk(self, body, loops):
        for st in body:
            if isinstance(st, S.For):
                self.walk(st.body, loops + (st,))
            else:
                if isinstance(st, S.Stochastic) and st.dist.name in ALIASES:
                    st = replace(st, dist=replace(st.dist, name=ALIASES[st.dist.name]))
                self._check_names(st)
                stmt = Statement(len(self.g.statements), st, loops)
                for e in statement_exprs(st):
                    collect_refs(e, stmt.refs)
                self.g.statements.append(stmt)

    def _check_names(self, st):
        calls = []
        if isinstance(st, S.Stochastic):
            fam = DISTRIBUTIONS.get(st.dist.name)
            if fam is None:
                raise self.g.error(f"unknown distribution '{st.dist.name}'", st.dist)
            if len(st.dist.args) != len(fam.params):
                raise self.g.error(f"'{st.dist.name}' takes {len(fam.params)} parameter(s), "
                                   f"got {len(st.dist.args)}", st.dist)
        if isinstance(st, S.Logical) and st.link is not None and st.link not in LINKS:
            raise self.g.error(f"unknown link function '{st.link}'", st)
        for e in statement_exprs(st):
            collect_calls(e, calls)
        for c in calls:
            if c.name not in FUNCTIONS:
                raise self.g.error(f"unknown function '{c.name}'", c)

    def unroll_targets(self):
        for stmt in self.g.statements:
            for env in self._environments(stmt.loops, 0, {}):
                stmt.instances.append(Instance(stmt, env, None, ()))
        # shapes of defined variables: from data, else the largest index defined
        extent = {}
        for stmt in self.g.statements:
            target = stmt.ast.target
            for inst in stmt.instances:
                top = []
                for index in target.indices:
                    if index is None:
                        raise self.g.error(f"empty index in the target '{target.name}' needs "
                                           f"data giving its size", target)
                    if isinstance(index, S.Range):
                        top.append(self.ev.integer(index.upper, inst.env, "range end"))
                    else:
                        top.append(self.ev.integer(index, inst.env, f"index of '{target.name}'"))
                old = extent.setdefault(target.name, top)
                if len(old) != len(top):
                    raise self.g.error(f"'{target.name}' is used with {len(old)} and "
                                       f"{len(top)} indices", target)
                extent[target.name] = [max(a, b) for a, b in zip(old, top)]
        for name, top in extent.items():
            if name not in self.g.shapes:
                self.g.shapes[name] = tuple(top)
        for stmt in self.g.statements:
            for inst in stmt.instances:
                inst.target, inst.target_shape = self.ev.resolve(stmt.ast.target, inst.env)

    def _environments(self, loops, depth, env):
        if depth == len(loops):
            yield dict(env)
            return
        loop = loops[depth]
        lo = self.ev.integer(loop.lower, env, f"lower bound of loop '{loop.var}'")
        hi = self.ev.integer(loop.upper, env, f"upper bound of loop '{loop.var}'")
        for i in range(lo, hi + 1):
            env[loop.var] = i
            yield from self._environments(loops, depth + 1, env)
        env.pop(loop.var, None)

    # -- nodes ------------------------------------------------------------------------------
    def make_nodes(self):
        g = self.g
        for stmt in g.statements:
            for inst in stmt.instances:
                key = (stmt.ast.target.name, int(inst.target[0]))
                shape = g.shapes[key[0]]
                existing = g.node_at.get(key)
                if existing is not None:
                    node = g.nodes[existing]
                    if node.stochastic == stmt.stochastic or (node.logical is not None):
                        raise g.error(f"node {node.name} is defined twice (also at line "
                                      f"{node.instance.statement.line})", stmt.ast)
                    if stmt.stochastic:
                        node.logical, node.instance, node.stochastic = node.instance, inst, True
                    else:
                        node.logical = inst
                    inst.node = node.id
                    continue
                for off in inst.target[1:]:
                    if (key[0], int(off)) in g.node_at:
                        raise g.error(f"node {element_name(key[0], shape, int(off))} is defined "
                                      f"twice", stmt.ast)
                node = Node(len(g.nodes), shape, key[0], inst.target, stmt.stochastic, inst)
                g.nodes.append(node)
                inst.node = node.id
                for off in inst.target:
                    g.node_at[(key[0], int(off))] = node.id
        for node in g.nodes:
            given = g.data.get(node.var)
            if given is None:
                continue
            vals = given.ravel()[node.offsets]
            if node.stochastic and node.logical is None:
                if np.all(np.isfinite(vals)):
                    node.observed, node.constant = True, True
                    node.value = vals[0] if node.instance.target_shape == () else \
                        vals.reshape(node.instance.target_shape)
                elif np.any(np.isfinite(vals)):
                    raise g.error(f"data for {node.name} are partly missing", node.instance.statement.ast)
            elif np.any(np.isfinite(vals)):
                raise g.error(f"data given for the logical node {node.name}",
                              (node.logical or node.instance).statement.ast)

    def _lookup(self, var, offsets):
        g = self.g
        out = np.empty(len(offsets))
        data = g.data.get(var.name)
        for k, off in enumerate(offsets):
            nid = g.node_at.get((var.name, int(off)))
            if nid is None:
                if data is None or not np.isfinite(data.ravel()[off]):
                    shape = g.shapes.get(var.name, ())
                    what = element_name(var.name, shape, int(off))
                    raise g.error(f"undefined variable {what}: no data and no statement "
                                  f"defines it", var)
                out[k] = data.ravel()[off]
                continue
            node = g.nodes[nid]
            if not node.constant:
                self._fold(node)
            if not node.constant:
                raise NotConstant(node.name)
            value = np.ravel(node.value)
            out[k] = value[list(node.offsets).index(int(off))] if len(value) > 1 else value[0]
        return out

    def _fold(self, node):
        """Evaluate a logical definition whose inputs are all constant (data transformations)."""
        inst = node.logical if node.stochastic else node.instance
        if inst is None or node.id in self.folding:
            return
        self.folding.add(node.id)
        try:
            value = self._eval_instance(inst)
        except NotConstant:
            return
        finally:
            self.folding.discard(node.id)
        node.value, node.constant = value, True
        node.observed = node.stochastic

    def topological(self):
        return [self.g.nodes[i] for i in topological_order(self.g.nodes)]

    def _eval_instance(self, inst):
        st = inst.statement.ast
        value = self.ev.value(st.expr, inst.env)
        if st.link is not None:
            value = FUNCTIONS[LINKS[st.link]].evaluate(value)
        return value

    def resolve_references(self):
        g = self.g
        for stmt in g.statements:
            for inst in stmt.instances:
                parents = set()
                for var in stmt.refs:
                    if not var.indices and var.name in inst.env:
                        inst.refs.append((None, ()))
                        continue
                    try:
                        offsets, shape = self.ev.resolve(var, inst.env)
                    except NotConstant:
                        offsets, shape = self._dynamic(var, inst, len(inst.refs), parents)
                    self._lookup_defined(var, offsets)
                    inst.refs.append((offsets, shape))
                    self._index_inputs(var, inst.env, parents)
                    for off in offsets:
                        nid = g.node_at.get((var.name, int(off)))
                        if nid is not None:
                            parents.add(nid)
                node = g.nodes[inst.node]
                node.parents = sorted(set(node.parents) | parents)

    def _dynamic(self, var, inst, k, parents: set):
        """A reference indexed by unobserved discrete nodes (``mu[T[i]]``, mixtures): every
        element it may read is a parent; ``inst.dynamic[k] = (base, [(stride, var, offset)])``
        gives the offset read at run time, ``base + sum(stride * (index - 1))``."""
        g = self.g
        shape = g.shapes.get(var.name)
        if shape is None or len(var.indices) != len(shape):
            return self.ev.resolve(var, inst.env)          # raises the located error
        strides = [int(np.prod(shape[d + 1:], dtype=np.int64)) for d in range(len(shape))]
        base, terms, axes = 0, [], []
        for dim, (ix, size) in enumerate(zip(var.indices, shape)):
            if ix is None or isinstance(ix, S.Range):
                raise g.error(f"'{var.name}' mixes a range with a stochastic index", var)
            try:
                i = self.ev.integer(ix, inst.env, f"index of '{var.name}'")
            except NotConstant as exc:
                nid = None
                if isinstance(ix, S.Var):
                    offs, sh = self.ev.resolve(ix, inst.env)
                    nid = g.node_at.get((ix.name, int(offs[0]))) if sh == () else None
                node = g.nodes[nid] if nid is not None else None
                if node is None or not node.stochastic or node.observed or \
                        not DISTRIBUTIONS[node.instance.statement.ast.dist.name].discrete:
                    raise g.error(f"index of '{var.name}' depends on the unobserved node "
                                  f"{exc.node_name}: a stochastic index must be a discrete "
                                  f"stochastic node itself (like T[i] ~ dcat(p[]))", var) from None
                terms.append((strides[dim], ix.name, int(node.offsets[0])))
                parents.add(node.id)
                axes.append(np.arange(size))
                continue
            if not 1 <= i <= size:
                raise g.error(f"index {i} out of range for '{var.name}' "
                              f"(dimension {dim + 1} is 1..{size})", var)
            base += (i - 1) * strides[dim]
            axes.append(np.array([i - 1]))
        grids = np.meshgrid(*axes, indexing="ij")
        candidates = np.ravel_multi_index(tuple(x.ravel() for x in grids), shape).astype(np.int64)
        inst.dynamic[k] = (base, terms)
        return candidates, ()

    def _index_inputs(self, var, env, out: set):
        """Nodes read by ``var``'s index expressions (nested indexing: ``mu[group[i]]``)."""
        inner = []
        for ix in var.indices:
            for e in ((ix.lower, ix.upper) if isinstance(ix, S.Range) else (ix,)):
                if e is not None:
                    collect_refs(e, inner)
        for v in inner:
            if v.indices or v.name not in env:
                offsets, _ = self.ev.resolve(v, env)
                out.update(self.g.node_at[(v.name, int(o))] for o in offsets
                           if (v.name, int(o)) in self.g.node_at)
                self._index_inputs(v, env, out)

    def _lookup_defined(self, var, offsets):
        g = self.g
        data = g.data.get(var.name)
        for off in offsets:
            if (var.name, int(off)) in g.node_at:
                continue
            if data is None or not np.isfinite(data.ravel()[off]):
                what = element_name(var.name, g.shapes.get(var.name, ()), int(off))
                raise g.error(f"undefined variable {what}: no data and no statement defines it",
                              var)

    def fold_all(self):
        for node in self.topological():
            if not node.constant and (not node.stochastic or node.logical is not None):
                self._fold(node)
            if node.stochastic and node.logical is not None and not node.constant:
                raise self.g.error(f"{node.name} is both stochastic and logical but its logical "
                                   f"value is not computable from data", node.logical.statement.ast)
        for node in self.g.nodes:
            node.inputs = list(node.parents)
            node.parents = [p for p in node.parents if not self.g.nodes[p].constant
                            or self.g.nodes[p].stochastic]


def build_graph(model: S.Model, data: dict, source: str = None, filename: str = None) -> Graph:
    """Unroll ``model`` with ``data`` (name -> number or row-major array, NaN for NA)."""
    b = _Builder(model, data, source, filename)
    b.walk(model.body, ())
    b.unroll_targets()
    b.make_nodes()
    b.resolve_references()
    b.fold_all()
    return b.g
