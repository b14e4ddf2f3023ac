"""One vectorised conjugate update for exchangeable nodes of one statement.

``grouped(state, updates) -> GroupConjugate | None``: ``updates`` = ``[(node, rule)]`` of one
parameter part (``theta[i] ~ dgamma(alpha, beta)`` for ``i`` in ``1:N``), every node with the same
``conjugate.ConjugateRule`` of a scalar family (normal, gamma, beta). The part is grouped when its
nodes are conditionally independent given the rest: no node is a child of another and no child is
shared (``x[i] ~ dpois(theta[i] * t[i])``: disjoint Markov blankets); a lone node is a group of
one. The full conditionals are then computed as arrays: the prior's parameters and each child
statement's parameters in one call per statement (``groups.NodeGroup``), the coefficients of
the children's parameters in the nodes (``a * node + b``) from the current values (for the
linear forms of the gamma rules) or from all nodes moved by one at once (no child reads two nodes
of the group), the sufficient statistics summed per node (``np.bincount`` over the children's
owners); one numpy draw with array parameters draws them all. These are the conditionals
``ConjugateRule.draw`` draws from node by node. ``log_conditional()`` is the log density of the
current values under them (``collapsed`` integrates a node out with it).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from .groups import NodeGroup, by_statement

__all__ = ["GroupConjugate", "grouped"]

_VECTORISED = {"dnorm", "dflat", "dgamma", "dexp", "dchisqr", "dbeta"}


def grouped(state, updates):
    """The ``GroupConjugate`` of ``updates`` (one part's nodes), or None (module docstring)."""
    nodes = [n for n, _ in updates]
    rule = updates[0][1]
    if rule.prior not in _VECTORISED or len({r for _, r in updates}) != 1:
        return None
    ids, seen = {n.id for n in nodes}, set()
    for n in nodes:
        kids = set(state._children[n.id])
        if kids & ids or kids & seen:
            return None
        seen |= kids
    return GroupConjugate(state, nodes, rule)


class GroupConjugate:
    """Draws every node of ``nodes`` from its full conditional in one vectorised update."""
    adaptive = False
    grouped = True

    def __init__(self, state, nodes, rule):
        self.state, self.nodes, self.rule = state, list(nodes), rule
        self.name = rule.name
        self.n = len(self.nodes)
        self.prior = NodeGroup(state, self.nodes)
        owner_of = {c.id: k for k, n in enumerate(self.nodes) for c in state.children(n)}
        self.children = []                 # (family, NodeGroup, owner index per child)
        for part in by_statement([c for n in self.nodes for c in state.children(n)]):
            self.children.append((part[0].instance.statement.ast.dist.name, NodeGroup(state, part),
                                  np.array([owner_of[c.id] for c in part])))
        self.refresh = state.refresher(self.nodes)
        self._zeros = np.zeros(self.n)
        n_args = len(self.nodes[0].instance.statement.ast.dist.args)
        self._prior_args = [self.prior.arg(k) for k in range(n_args)]

    def __reduce__(self):
        """Pickled as its nodes and rule (the array closures are rebuilt)."""
        return GroupConjugate, (self.state, self.nodes, self.rule)

    def update(self, rng) -> None:
        """Draw all the nodes, write them and refresh the logical nodes below them."""
        with np.errstate(all="ignore"):
            family, params = _POSTERIOR[self.rule.prior](self)
            values = _SAMPLE[family](rng, *params)
        self.prior.assign(values)
        self.refresh()

    def log_conditional(self) -> float:
        """Log density of the nodes' current values under their full conditionals (summed;
        the caller sets the floating-point error state)."""
        family, params = _POSTERIOR[self.rule.prior](self)
        if self.n == 1:                      # floats: math is faster than numpy on one value
            try:
                value = _LOGPDF_ONE[family](float(self.prior.value()[0]), *params)
            except (ValueError, ZeroDivisionError, OverflowError):
                return -np.inf
        else:
            value = float(_LOGPDF[family](self.prior.value(), *params).sum())
        return value if value == value else -np.inf

    def _coefficients(self, positions, linear: bool):
        """``[(a, b)]`` per child group: its parameter ``positions[k]`` is ``a * node + b``;
        ``linear`` (``b == 0``): ``a`` from the current values when no node is zero."""
        current = self.prior.value()
        now = self._child_args(positions)
        if linear and current.all() and np.isfinite(current).all():
            return [(p / current[owner], 0.0) for p, (_, _, owner) in zip(now, self.children)]
        self.prior.assign(current + 1.0)
        self.refresh()
        moved = self._child_args(positions)
        self.prior.assign(current)
        self.refresh()
        out = []
        for p0, p1, (_, _, owner) in zip(now, moved, self.children):
            a = p1 - p0
            out.append((a, p0 - a * current[owner]))
        return out

    def _child_args(self, positions) -> list:
        return [np.asarray(group.arg(k)(), dtype=float)
                for k, (_, group, _) in zip(positions, self.children)]

    def _sum(self, owner, values):
        """Per node, the sum of ``values`` (one per child, or one for all) over its children."""
        if self.n == 1:                      # one node (a float), all children its own
            return float(values.sum()) if np.ndim(values) else len(owner) * float(values)
        if np.ndim(values) == 0:
            return np.bincount(owner, minlength=self.n) * float(values)
        return np.bincount(owner, weights=values, minlength=self.n)

    def _params(self):
        """The prior's parameters: arrays over the nodes (floats for one node)."""
        if self.n == 1:
            return [float(f()[0]) for f in self._prior_args]
        zeros = self._zeros
        return [f() + zeros for f in self._prior_args]


# -- full conditionals: (family, parameters as arrays over the nodes) --------------------------
def _normal(g):
    if g.rule.prior == "dflat":
        m, prec = (0.0, 0.0) if g.n == 1 else (g._zeros.copy(), g._zeros.copy())
    else:
        m, prec = g._params()
    num = prec * m
    for (_, group, owner), (a, b) in zip(g.children, g._coefficients([0] * len(g.children), False)):
        tau = group.arg(1)()
        prec = prec + g._sum(owner, a * a * tau)
        num = num + g._sum(owner, a * tau * (group.value() - b))
    return "normal", (num / prec, prec)


_GAMMA_POSITION = {"dnorm": 1, "dlnorm": 1, "dpois": 0, "dexp": 0, "dgamma": 1}


def _gamma(g):
    p = g._params()
    shape, rate = {"dgamma": lambda: (p[0], p[1]), "dexp": lambda: (1.0, p[0]),
                   "dchisqr": lambda: (p[0] / 2.0, 0.5)}[g.rule.prior]()
    coef = g._coefficients([_GAMMA_POSITION[f] for f, _, _ in g.children], True)
    for (family, group, owner), (c, _) in zip(g.children, coef):
        y = group.value()
        if family in ("dnorm", "dlnorm"):
            z = np.log(y) if family == "dlnorm" else y
            shape = shape + g._sum(owner, 0.5)
            rate = rate + g._sum(owner, 0.5 * c * (z - group.arg(0)()) ** 2)
        elif family == "dpois":
            shape, rate = shape + g._sum(owner, y), rate + g._sum(owner, c)
        elif family == "dexp":
            shape, rate = shape + g._sum(owner, 1.0), rate + g._sum(owner, c * y)
        else:
            shape, rate = shape + g._sum(owner, group.arg(0)()), rate + g._sum(owner, c * y)
    return "gamma", (shape, rate)


def _beta(g):
    a, b = g._params()
    for family, group, owner in g.children:
        y = group.value()
        n = 1.0 if family == "dbern" else group.arg(1)()
        a, b = a + g._sum(owner, y), b + g._sum(owner, n - y)
    return "beta", (a, b)


_POSTERIOR = {"dnorm": _normal, "dflat": _normal, "dgamma": _gamma, "dexp": _gamma,
              "dchisqr": _gamma, "dbeta": _beta}
_SAMPLE = {"normal": lambda rng, m, prec: rng.normal(m, 1.0 / np.sqrt(prec)),
           "gamma": lambda rng, shape, rate: rng.gamma(shape, 1.0 / rate),
           "beta": lambda rng, a, b: rng.beta(a, b)}
_LOGPDF = {
    "normal": lambda x, m, prec: 0.5 * np.log(prec / (2 * np.pi)) - 0.5 * prec * (x - m) ** 2,
    "gamma": lambda x, shape, rate: (shape * np.log(rate) - gammaln(shape)
                                     + (shape - 1.0) * np.log(x) - rate * x),
    "beta": lambda x, a, b: ((a - 1.0) * np.log(x) + (b - 1.0) * np.log1p(-x)
                             - gammaln(a) - gammaln(b) + gammaln(a + b)),
}

def _normal_one(x, m, prec):
    return 0.5 * math.log(prec / (2 * math.pi)) - 0.5 * prec * (x - m) ** 2


def _gamma_one(x, shape, rate):
    return shape * math.log(rate) - math.lgamma(shape) + (shape - 1.0) * math.log(x) - rate * x


def _beta_one(x, a, b):
    return ((a - 1.0) * math.log(x) + (b - 1.0) * math.log1p(-x) - math.lgamma(a) - math.lgamma(b)
            + math.lgamma(a + b))


_LOGPDF_ONE = {"normal": _normal_one, "gamma": _gamma_one, "beta": _beta_one}
