"""Nodes of one statement evaluated together: one numpy call for a whole group of them.

``NodeGroup(state, nodes)``: nodes of one BUGS statement with scalar values (``theta[1:10]`` of
``theta[i] ~ dgamma(alpha, beta)``, or the children ``x[1:10]``) on a ``NodeState``:

- ``value()`` / ``assign(values)``: the nodes' values as an array (in ``nodes`` order);
- ``arg(k)()``: the ``k``-th distribution parameter as an array over the nodes (a logical
  group: ``expr()``, its right-hand side, link inverted);
- ``logp()``: the sum of the nodes' log densities (``state.terms`` grows by their number).

The expressions are evaluated as the generated code evaluates a statement (``emit.expr``): each
variable reference gathers its elements for every node (``Instance.refs``) in one indexing, loop
variables are arrays, and the function and distribution templates broadcast over the nodes. A
group whose references cannot be gathered this way (indices read from unobserved nodes, ragged
vectors, ``C``/``I`` bounds, vector-valued nodes) falls back to the nodes one by one, with the same
results.

``Refresh(state, ids)`` recomputes logical nodes ``ids`` (topologically ordered) in batches: the
nodes of one statement whose logical parents in ``ids`` are already computed, one call per batch
(a self-referencing statement, ``s[j] <- s[j - 1] + x[j]``, gets one batch per node).
"""
from __future__ import annotations

import numpy as np

from .. import syntax as S
from ..evaluate import BINARY
from ..functions import LINKS
from ..templates import DISTRIBUTIONS, callable_of
from .blanket import _OUTSIDE, _plain

__all__ = ["NodeGroup", "Refresh", "by_statement"]


class _Ragged(Exception):
    """The group's references cannot be gathered as one array."""


def by_statement(nodes) -> list:
    """``nodes`` split by defining statement, first appearance order kept."""
    out = {}
    for n in nodes:
        out.setdefault(n.instance.statement.id, []).append(n)
    return list(out.values())


class NodeGroup:
    """Nodes of one statement with scalar values, evaluated as arrays (module docstring)."""

    def __init__(self, state, nodes):
        self.state, self.nodes = state, list(nodes)
        self.n = len(self.nodes)
        self.var = self.nodes[0].var
        self.offsets = np.concatenate([n.offsets for n in self.nodes])
        insts = [n.instance for n in self.nodes]
        st = insts[0].statement
        self.vectorised = (self.n > 1 and all(len(n.offsets) == 1 for n in self.nodes)
                           and getattr(st.ast, "bounds", None) is None)
        self._args, self._density = None, None
        if self.vectorised:
            refs = {id(v): k for k, v in enumerate(st.refs)}
            try:
                if isinstance(st.ast, S.Stochastic):
                    fam = DISTRIBUTIONS[st.ast.dist.name]
                    if fam.event != "scalar":
                        raise _Ragged
                    self._arg_exprs = st.ast.dist.args
                    self._args = [self._vector(a, insts, refs) for a in st.ast.dist.args]
                    self._density = callable_of(("x",) + fam.params, fam.logpdf)
                else:
                    value = self._vector(st.ast.expr, insts, refs)
                    if st.ast.link is not None:
                        link = _plain(LINKS[st.ast.link], 1)
                        inner = value
                        value = lambda: link(inner())                    # noqa: E731
                    self._args, self._arg_exprs = [value], [st.ast.expr]
            except _Ragged:
                self.vectorised = False

    # -- values --------------------------------------------------------------------------------
    def value(self) -> np.ndarray:
        return self.state.values[self.var][self.offsets]

    def assign(self, values) -> None:
        self.state.values[self.var][self.offsets] = values

    # -- evaluation ----------------------------------------------------------------------------
    def arg(self, k: int):
        """A function of no arguments: the ``k``-th parameter (logical: the value) per node."""
        if self.vectorised:
            f, n = self._args[k], self.n
            if isinstance(self._arg_exprs[k], S.Number):        # a constant: built once
                constant = np.full(n, f())
                return lambda: constant

            def arg():
                v = f()
                if isinstance(v, float):
                    return np.full(n, v)
                return v if v.shape == (n,) else np.broadcast_to(v, (n,))
            return arg
        state, nodes = self.state, self.nodes
        if isinstance(nodes[0].instance.statement.ast, S.Stochastic):
            return lambda: np.array([float(state.params(m)[k]) for m in nodes])
        fns = [state._logical_closure(m) for m in nodes]
        return lambda: np.array([float(f()) for f in fns])

    def expr(self):
        return self.arg(0)

    def logp(self) -> float:
        """Sum of the nodes' log densities (``-inf`` outside a support)."""
        state = self.state
        if not self.vectorised:
            total = 0.0
            for m in self.nodes:
                total += state._logp(m)
                if total == -np.inf:
                    break
            return total
        state.terms += self.n
        try:
            value = float(np.sum(self._density(self.value(), *[f() for f in self._args])))
        except _OUTSIDE:
            return -np.inf
        return value if value == value else -np.inf

    def _vector(self, expr, insts, refs):
        """``expr`` over the nodes' instances as a function of no arguments (``emit.expr``)."""
        if isinstance(expr, S.Number):
            v = float(expr.value)
            return lambda: v
        if isinstance(expr, S.Var):
            k = refs.get(id(expr))
            if k is None:
                raise _Ragged
            if insts[0].refs[k][0] is None:                          # a loop variable
                vals = np.array([i.env[expr.name] for i in insts], dtype=float)
                return lambda: vals
            if any(k in i.dynamic for i in insts) or len({i.refs[k][1] for i in insts}) > 1:
                raise _Ragged
            offs = np.concatenate([i.refs[k][0] for i in insts])
            shape, values, name = (len(insts),) + insts[0].refs[k][1], self.state.values, expr.name
            if len(shape) == 1:
                return lambda: values[name][offs]
            return lambda: values[name][offs].reshape(shape)
        if isinstance(expr, S.Unary):
            operand = self._vector(expr.operand, insts, refs)
            return (lambda: -operand()) if expr.op == "-" else operand
        if isinstance(expr, S.Binary):
            op = BINARY[expr.op]
            a, b = self._vector(expr.left, insts, refs), self._vector(expr.right, insts, refs)
            return lambda: op(a(), b())
        if isinstance(expr, S.Call):
            try:
                f = _plain(expr.name, len(expr.args))
            except KeyError:
                raise _Ragged from None
            args = [self._vector(x, insts, refs) for x in expr.args]
            return lambda: f(*[x() for x in args])
        raise _Ragged


class Refresh:
    """Recompute the logical nodes ``ids`` (topological order) batch by batch (module docstring)."""

    def __init__(self, state, ids):
        g = state.graph
        ids = list(ids)
        level = {}
        for k in ids:
            level[k] = 1 + max((level[p] for p in g.nodes[k].parents if p in level), default=-1)
        batches = {}
        for k in ids:
            node = g.nodes[k]
            batches.setdefault((level[k], node.instance.statement.id), []).append(node)
        self.state = state
        self.steps = []
        for key in sorted(batches, key=lambda b: b[0]):
            nodes = batches[key]
            group = NodeGroup(state, nodes) if len(nodes) > 1 else None
            if group is not None and group.vectorised:
                self.steps.append((group.var, group.offsets, group.expr()))
            else:
                for m in nodes:
                    self.steps.append((m.var, m.offsets, _scalar_closure(state, m)))

    def __call__(self) -> None:
        values = self.state.values
        for var, offsets, fn in self.steps:
            value = fn()
            values[var][offsets] = value if isinstance(value, float) else np.ravel(value)


def _scalar_closure(state, node):
    fn = state._logical.get(node.id)
    if fn is None:
        fn = state._logical[node.id] = state._logical_closure(node)
    return fn
