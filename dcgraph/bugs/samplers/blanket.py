"""Node-level evaluation of a BUGS model: the Markov blanket of a node, from the graph.

``NodeState(model)`` holds the constrained values of every variable (flat row-major arrays) and
evaluates single nodes with the compile-time ``Evaluator`` and the distribution templates of
``templates.DISTRIBUTIONS`` (the same formulas as the generated code). For an unobserved stochastic
node ``n``:

- ``children(n)``: the stochastic nodes whose parameters read ``n``, directly or through logical
  nodes (``lambda[i] <- theta[i] * t[i]``);
- ``blanket(n)``: ``[n] + children(n)``, the stochastic nodes whose densities involve ``n``;
- ``blanket_logp(n)``: after recomputing the logical nodes between ``n`` and its children, the sum of
  the log densities of ``blanket(n)``: the log full conditional of ``n`` up to a constant. The
  children of one statement are evaluated in one call and the logical nodes refreshed one call
  per statement (``groups``); logical nodes that no stochastic node reads are not refreshed.

``terms`` counts the single-node log densities evaluated (the Gibbs tests count them per update;
one call over ``k`` nodes of a statement counts ``k``).
Censored nodes (``C(,)``, ``I(,)``) have density zero outside their bounds; truncated ones (``T(,)``,
renormalised) are not evaluated here: a blanket holding one is ``supported(n) == False`` and its
node is left to the kernels over the whole model.
"""
from __future__ import annotations

import numpy as np

from .. import syntax as S
from ..errors import BUGSError
from ..evaluate import BINARY, Evaluator
from ..graph import topological_order
from ..functions import FUNCTIONS, LINKS, compiled
from ..templates import DISTRIBUTIONS, callable_of

__all__ = ["NodeState"]


class NodeState:
    """Constrained values of every variable of ``model`` and node-level log densities."""

    def __init__(self, model):
        g = self.graph = model.graph
        self.ev = Evaluator(self._lookup, g.shapes, g.error)
        self.values = {}
        self.terms = 0
        order = self._topo = {nid: k for k, nid in enumerate(topological_order(g.nodes))}
        kids = [[] for _ in g.nodes]
        for node in g.nodes:
            for p in set(node.parents):
                kids[p].append(node.id)
        self._children, self._logicals = {}, {}
        self._params, self._logical, self._density = {}, {}, {}
        self._refresh, self._blanket_groups = {}, {}
        live = set()       # logical nodes some stochastic node depends on (the others: monitors)
        for k in sorted(order, key=order.get, reverse=True):
            if not g.nodes[k].stochastic and any(g.nodes[c].stochastic or c in live for c in kids[k]):
                live.add(k)
        self._live = live
        self.load({})
        self._static = Evaluator(self._constant_lookup, g.shapes, g.error)
        for node in g.nodes:
            if node.stochastic and not node.observed:
                stoch, logic, stack, seen = set(), set(), list(kids[node.id]), set()
                while stack:
                    k = stack.pop()
                    if k in seen:
                        continue
                    seen.add(k)
                    if g.nodes[k].stochastic:
                        stoch.add(k)
                    else:
                        logic.add(k)
                        stack.extend(kids[k])
                self._children[node.id] = sorted(stoch)
                self._logicals[node.id] = sorted(logic, key=order.get)

    def __getstate__(self):
        state = dict(self.__dict__)
        for k in ("_params", "_logical", "_density", "_refresh", "_blanket_groups"):
            state[k] = {}                                         # closures: rebuilt on use
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    # -- values ------------------------------------------------------------------------------
    def load(self, named: dict) -> None:
        """Set the values from named constrained values (``BUGSModel.constrained``)."""
        base = self.__dict__.get("_base")
        if base is None:              # data and constants: built once, copied on each load
            base = self._base = self._fixed_values()
        self.values.clear()           # in place: the compiled closures hold this dict
        self.values.update({k: v.copy() for k, v in base.items()})
        for k, v in named.items():
            self.values[k] = np.array(v, dtype=float).ravel()

    def _fixed_values(self) -> dict:
        """Every variable as a flat array: data and constant nodes filled in, the rest NaN."""
        g = self.graph
        values = {k: np.full(int(np.prod(s, dtype=np.int64)), np.nan) for k, s in g.shapes.items()}
        values.update({k: np.array(v, dtype=float).ravel() for k, v in g.data.items()})
        for node in g.nodes:
            if node.constant:
                values[node.var][node.offsets] = np.ravel(node.value)
        return values

    def named(self) -> dict:
        """The values as arrays in the variables' shapes."""
        return {k: v.reshape(self.graph.shapes[k]) if self.graph.shapes.get(k) else v[0]
                for k, v in self.values.items()}

    def get(self, node) -> np.ndarray:
        """The value of ``node`` in its instance's shape."""
        v = self.values[node.var][node.offsets]
        return v.reshape(node.instance.target_shape) if node.instance.target_shape else v[0]

    def set(self, node, value) -> None:
        self.values[node.var][node.offsets] = value if isinstance(value, float) else np.ravel(value)

    def _lookup(self, var, offsets):
        return self.values[var.name][offsets]

    def _constant_lookup(self, var, offsets):
        g = self.graph
        for off in offsets:
            nid = g.node_at.get((var.name, int(off)))
            if nid is not None and not g.nodes[nid].constant:
                raise NotConstant(f"{var.name} is not constant")
        return self.values[var.name][offsets]

    # -- graph -------------------------------------------------------------------------------
    def children(self, node) -> list:
        return [self.graph.nodes[k] for k in self._children[node.id]]

    def stochastic_parents(self, k) -> set:
        """Ids of the unobserved stochastic nodes that node ``k`` is a child of."""
        if not hasattr(self, "_parents_of"):
            self._parents_of = {}
            for m, kids in self._children.items():
                for c in kids:
                    self._parents_of.setdefault(c, set()).add(m)
        return self._parents_of.get(k, set())

    def blanket(self, node) -> list:
        return [node] + self.children(node)

    def supported(self, node) -> bool:
        """No truncated (``T``) node in the blanket (``C``/``I`` bounds are indicators)."""
        return all(n.instance.statement.ast.bounds is None or n.instance.statement.ast.bounds.kind
                   != "T" for n in self.blanket(node))

    # -- evaluation --------------------------------------------------------------------------
    def params(self, node) -> list:
        """The values of the distribution parameters of stochastic ``node``."""
        fns = self._params.get(node.id)
        if fns is None:
            inst = node.instance
            fns = self._params[node.id] = [self._closure(p, inst.env)
                                           for p in inst.statement.ast.dist.args]
        return [f() for f in fns]

    def refresh(self, node) -> None:
        """Recompute the logical nodes between ``node`` and its stochastic children (those no
        stochastic node reads, kept for monitors only, are left as they are)."""
        fn = self._refresh.get(node.id)
        if fn is None:
            fn = self._refresh[node.id] = self.refresher([node])
        fn()

    def refresher(self, nodes):
        """A function of no arguments refreshing the logical nodes below ``nodes`` (batched by
        statement, ``groups.Refresh``)."""
        from .groups import Refresh
        ids = {k for n in nodes for k in self._logicals[n.id] if k in self._live}
        return Refresh(self, sorted(ids, key=self._topo.get))

    def _logical_closure(self, logical):
        st = logical.instance.statement.ast
        value = self._closure(st.expr, logical.instance.env)
        if st.link is None:
            return value
        link = _plain(LINKS[st.link], 1)
        return lambda: link(value())

    def _closure(self, expr, env):
        """A function of no arguments evaluating ``expr`` on the current values: indices read
        only from data and constants are resolved once; others are evaluated each time."""
        if isinstance(expr, S.Number):
            v = expr.value
            return lambda: v
        if isinstance(expr, S.Var):
            if not expr.indices and expr.name in env:
                v = env[expr.name]
                return lambda: v
            try:
                offsets, shape = self._static.resolve(expr, env)
            except (NotConstant, BUGSError):  # an index read from an unobserved node
                return lambda: self.ev.value(expr, env)
            values, name = self.values, expr.name
            if shape:
                return lambda: values[name][offsets].reshape(shape)
            off = int(offsets[0])
            return lambda: float(values[name][off])
        if isinstance(expr, S.Unary):
            operand = self._closure(expr.operand, env)
            return (lambda: -operand()) if expr.op == "-" else operand
        if isinstance(expr, S.Binary):
            op, a, b = BINARY[expr.op], self._closure(expr.left, env), self._closure(expr.right, env)
            return lambda: op(a(), b())
        if isinstance(expr, S.Call) and expr.name in FUNCTIONS:
            f, args = _plain(expr.name, len(expr.args)), [self._closure(x, env) for x in expr.args]
            return lambda: f(*[x() for x in args])
        return lambda: self.ev.value(expr, env)

    def logp(self, node) -> float:
        """Log density of stochastic ``node`` given its parents (one term)."""
        with np.errstate(all="ignore"):
            return self._logp(node)

    def _logp(self, node) -> float:
        """``logp`` without its floating-point error state (the caller sets it)."""
        self.terms += 1
        density = self._density.get(node.id)
        if density is None:
            fam = DISTRIBUTIONS[node.instance.statement.ast.dist.name]
            density = self._density[node.id] = callable_of(("x",) + fam.params, fam.logpdf)
        try:
            value = density(self.get(node), *self.params(node))
        except _OUTSIDE:             # an index out of range (mixtures), a singular matrix, ...
            return -np.inf
        value = float(value) if isinstance(value, float) else float(np.sum(value))
        bounds = node.instance.statement.ast.bounds
        if bounds is not None and value > -np.inf:           # C(lo, hi), I(lo, hi): indicators
            x, env = self.get(node), node.instance.env
            lo = self._closure(bounds.lower, env)() if bounds.lower is not None else -np.inf
            hi = self._closure(bounds.upper, env)() if bounds.upper is not None else np.inf
            if np.any(x < lo) or np.any(x > hi):
                return -np.inf
        return value if value == value else -np.inf

    def blanket_logp(self, node) -> float:
        """Log full conditional of ``node`` up to a constant (its logical paths refreshed)."""
        try:
            self.refresh(node)
        except _OUTSIDE:
            return -np.inf
        groups = self._blanket_groups.get(node.id)
        if groups is None:
            groups = self._blanket_groups[node.id] = self.grouped(self.children(node))
        total = 0.0
        with np.errstate(all="ignore"):
            total += self._logp(node)
            for group in groups:
                if total == -np.inf:
                    break
                total += group.logp()
        return total

    def grouped(self, nodes) -> list:
        """``nodes`` as ``groups.NodeGroup``s, one per statement (each evaluated in one call)."""
        from .groups import NodeGroup, by_statement
        return [NodeGroup(self, ns) for ns in by_statement(nodes)]


class NotConstant(LookupError):
    """An element that compile-time resolution reads is not a constant (an unobserved node)."""


# what a value outside a node's support raises while evaluating (a programming error such as a
# NameError is never turned into a zero density)
_OUTSIDE = (BUGSError, IndexError, ValueError, ArithmeticError)


def _plain(name: str, n: int):
    """The BUGS function ``name`` of ``n`` arguments as a plain function (compiled once)."""
    params, body, _ = FUNCTIONS[name].form(n)
    return compiled(params, body)
