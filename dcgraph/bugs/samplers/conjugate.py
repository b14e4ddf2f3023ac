"""Conjugate updates chosen from the model graph, as JAGS and NIMBLE choose them.

``conjugacy(state, node) -> ConjugateRule | None``: the rule of ``RULES`` that applies to the
unobserved stochastic ``node`` (prior family x child families), checked on the syntax trees: every
child's parameter that reads ``node`` must have the form the rule needs (``IDENTITY``: the node
itself; ``LINEAR``: ``c * node``; ``AFFINE``: ``a * node + b``, through logical nodes; ``a``, ``b``,
``c`` may depend on other nodes) and its other parameters must not read ``node``. The coefficients
are evaluated at each update from the current values (``node`` set to 0 and 1).
``rule.draw(rng, state, node)`` draws ``node`` from its closed-form full conditional.

| prior | children (parameter that reads the node) | full conditional |
|---|---|---|
| dnorm, dflat | dnorm (mean, affine) | normal |
| dgamma, dexp, dchisqr | dnorm, dlnorm (precision), dpois, dexp, dgamma (rate), all linear | gamma |
| dbeta | dbern, dbin (probability, the node itself) | beta |
| ddirich | dcat, dmulti (probabilities, the node itself) | Dirichlet |
| dwish | dmnorm (precision, the node itself) | Wishart |
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.stats

from .. import syntax as S
from ..errors import BUGSError

__all__ = ["conjugacy", "ConjugateRule", "RULES", "depends"]

CONST, LINEAR, AFFINE, IDENTITY = 0, 1, 2, 3

# prior family -> {child family: (index of the parameter reading the node, form it must have)}
_GAMMA_CHILDREN = {"dnorm": (1, LINEAR), "dlnorm": (1, LINEAR), "dpois": (0, LINEAR),
                   "dexp": (0, LINEAR), "dgamma": (1, LINEAR)}
RULES = {
    "dnorm": {"dnorm": (0, AFFINE)},
    "dflat": {"dnorm": (0, AFFINE)},
    "dgamma": _GAMMA_CHILDREN, "dexp": _GAMMA_CHILDREN, "dchisqr": _GAMMA_CHILDREN,
    "dbeta": {"dbern": (0, IDENTITY), "dbin": (0, IDENTITY)},
    "ddirich": {"dcat": (0, IDENTITY), "dmulti": (0, IDENTITY)},
    "dwish": {"dmnorm": (1, IDENTITY)},
}
_SCALAR_PRIORS = {"dnorm", "dflat", "dgamma", "dexp", "dchisqr", "dbeta"}


@dataclass(frozen=True)
class ConjugateRule:
    """``prior`` family with ``children`` families (sorted); ``name`` as NIMBLE prints it."""
    prior: str
    children: tuple

    @property
    def name(self) -> str:
        return "conjugate_" + "_".join((self.prior,) + self.children)

    def draw(self, rng, state, node):
        return _DRAW[self.prior](rng, state, node)


def _family(node) -> str:
    return node.instance.statement.ast.dist.name


def conjugacy(state, node):
    """The ``ConjugateRule`` updating ``node`` exactly, or None (see the module docstring)."""
    prior = _family(node)
    table = RULES.get(prior)
    if table is None or node.instance.statement.ast.bounds is not None:
        return None
    if (prior in _SCALAR_PRIORS) != (node.instance.target_shape == ()):
        return None
    children = state.children(node)
    if not children or any(c.instance.statement.ast.bounds is not None for c in children):
        return None
    dep = {node.id, *state._logicals[node.id]}
    families = set()
    for child in children:
        rule = table.get(_family(child))
        if rule is None:
            return None
        position, form = rule
        args = child.instance.statement.ast.dist.args
        for k, arg in enumerate(args):
            f = _form(state, arg, child.instance.env, node, dep)
            if k == position:
                if f is None or f == CONST or (f != IDENTITY and (form == IDENTITY or f > form)):
                    return None
            elif f != CONST:
                return None
        families.add(_family(child))
    return ConjugateRule(prior, tuple(sorted(families)))


# -- forms of expressions in the node ------------------------------------------------------------
def _reads(state, var, env, dep) -> set:
    g = state.graph
    try:
        offsets, _ = state.ev.resolve(var, env)
    except BUGSError:                # an index read from an unobserved node (mixtures): its
        return dep                   # current value is missing, fractional or out of range
    return {g.node_at.get((var.name, int(o))) for o in offsets} & dep


def depends(state, expr, env, dep) -> bool:
    if isinstance(expr, S.Var):
        if not expr.indices and expr.name in env:
            return False
        if any(ix is not None and depends(state, ix, env, dep) for ix in expr.indices):
            return True
        return bool(_reads(state, expr, env, dep))
    if isinstance(expr, S.Range):
        return depends(state, expr.lower, env, dep) or depends(state, expr.upper, env, dep)
    if isinstance(expr, S.Unary):
        return depends(state, expr.operand, env, dep)
    if isinstance(expr, S.Binary):
        return depends(state, expr.left, env, dep) or depends(state, expr.right, env, dep)
    if isinstance(expr, S.Call):
        return any(depends(state, a, env, dep) for a in expr.args)
    return False


def _form(state, expr, env, node, dep):
    """CONST, LINEAR, AFFINE or IDENTITY (the node's whole value) of ``expr`` in ``node``, or
    None for any other dependence."""
    if not depends(state, expr, env, dep):
        return CONST
    if isinstance(expr, S.Var):
        if any(ix is not None and depends(state, ix, env, dep) for ix in expr.indices):
            return None
        try:
            offsets, _ = state.ev.resolve(expr, env)
        except BUGSError:            # an index not resolvable at the current values
            return None
        ids = {state.graph.node_at.get((expr.name, int(o))) for o in offsets}
        if ids == {node.id}:
            return IDENTITY if np.array_equal(offsets, node.offsets) else None
        if len(ids) != 1:
            return None
        logical = state.graph.nodes[ids.pop()]
        st = logical.instance.statement.ast
        if logical.stochastic or st.link is not None or len(offsets) != len(logical.offsets):
            return None
        return _form(state, st.expr, logical.instance.env, node, dep)
    if isinstance(expr, S.Unary):
        f = _form(state, expr.operand, env, node, dep)
        return None if f is None else min(f, AFFINE) if expr.op == "-" else f
    if isinstance(expr, S.Binary):
        a = _form(state, expr.left, env, node, dep)
        b = _form(state, expr.right, env, node, dep)
        if a is None or b is None:
            return None
        a, b = min(a, LINEAR) if a == IDENTITY else a, min(b, LINEAR) if b == IDENTITY else b
        if expr.op in "+-":
            return a if a == b else AFFINE
        if expr.op == "*":
            return b if a == CONST else a if b == CONST else None
        if expr.op == "/":
            return a if b == CONST else None
    return None


# -- closed-form full conditionals ----------------------------------------------------------------
def _coefficients(state, node, children, k):
    """``(a, b)`` per child with ``param_k = a * node + b`` (node restored afterwards)."""
    current = state.get(node)
    state.set(node, 0.0)
    state.refresh(node)
    at0 = [float(state.params(c)[k]) for c in children]
    state.set(node, 1.0)
    state.refresh(node)
    at1 = [float(state.params(c)[k]) for c in children]
    state.set(node, current)
    state.refresh(node)
    return [(b1 - b0, b0) for b0, b1 in zip(at0, at1)]


def _normal(rng, state, node):
    prior = node.instance.statement.ast.dist.name
    m, prec = (0.0, 0.0) if prior == "dflat" else map(float, state.params(node))
    children = state.children(node)
    num = prec * m
    for child, (a, b) in zip(children, _coefficients(state, node, children, 0)):
        tau = float(state.params(child)[1])
        prec += a * a * tau
        num += a * tau * (float(state.get(child)) - b)
    return rng.normal(num / prec, 1.0 / np.sqrt(prec))


def _gamma(rng, state, node):
    prior = node.instance.statement.ast.dist.name
    p = [float(v) for v in state.params(node)]
    shape, rate = {"dgamma": lambda: p, "dexp": lambda: (1.0, p[0]),
                   "dchisqr": lambda: (p[0] / 2.0, 0.5)}[prior]()
    children = state.children(node)
    kinds = [c.instance.statement.ast.dist.name for c in children]
    coef = {}
    for family, position in (("dnorm", 1), ("dlnorm", 1), ("dpois", 0), ("dexp", 0), ("dgamma", 1)):
        group = [c for c, f in zip(children, kinds) if f == family]
        if group:
            coef.update(zip([c.id for c in group], _coefficients(state, node, group, position)))
    for child, family in zip(children, kinds):
        c = coef[child.id][0]
        y = float(state.get(child))
        params = state.params(child)
        if family in ("dnorm", "dlnorm"):
            z = np.log(y) if family == "dlnorm" else y
            shape += 0.5
            rate += 0.5 * c * (z - float(params[0])) ** 2
        elif family == "dpois":
            shape += y
            rate += c
        elif family == "dexp":
            shape += 1.0
            rate += c * y
        else:
            shape += float(params[0])
            rate += c * y
    return rng.gamma(shape, 1.0 / rate)


def _beta(rng, state, node):
    a, b = map(float, state.params(node))
    for child in state.children(node):
        y = float(state.get(child))
        n = 1.0 if child.instance.statement.ast.dist.name == "dbern" else float(state.params(child)[1])
        a, b = a + y, b + n - y
    return rng.beta(a, b)


def _dirichlet(rng, state, node):
    alpha = np.array(state.params(node)[0], dtype=float).copy()
    for child in state.children(node):
        y = np.asarray(state.get(child), dtype=float)
        if child.instance.statement.ast.dist.name == "dcat":
            alpha[int(y) - 1] += 1.0
        else:
            alpha += y
    return rng.dirichlet(alpha)


def _wishart(rng, state, node):
    R, k = state.params(node)
    R = np.array(R, dtype=float).copy()
    k = float(k)
    for child in state.children(node):
        r = np.asarray(state.get(child), dtype=float) - np.asarray(state.params(child)[0], dtype=float)
        R += np.outer(r, r)
        k += 1.0
    return scipy.stats.wishart(df=k, scale=np.linalg.inv(R)).rvs(random_state=rng)


_DRAW = {"dnorm": _normal, "dflat": _normal, "dgamma": _gamma, "dexp": _gamma, "dchisqr": _gamma,
         "dbeta": _beta, "ddirich": _dirichlet, "dwish": _wishart}
