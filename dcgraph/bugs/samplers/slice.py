"""Slice sampling of one univariate continuous node on its Markov blanket (Neal 2003).

``SliceUpdate.draw(rng, state, node, width) -> (value, jump)``: one stepping-out and shrinkage
update of scalar ``node`` from its full conditional ``NodeState.blanket_logp`` (only the blanket
is evaluated). The node is moved on an unconstrained scale ``u``: its support ``[lo, hi]`` (the
family's, from the current parameters, tightened by ``C``/``I`` bounds) maps to the real line by
``x = u``, ``lo + exp(u)``, ``hi - exp(u)`` or ``lo + (hi - lo) expit(u)``, the log-Jacobian
added; a value outside any other constraint has density zero (the slice rejects it). ``width``
is the initial interval on the ``u`` scale; ``jump = |u_new - u_old|`` lets the kernel adapt it
during warm-up (``nodes.NodeKernel``). Every loop is bounded: at most ``max_steps`` stepping-out
evaluations and ``max_shrink`` shrinkage proposals; a non-finite density at the current value or
an exhausted shrinkage keeps the current value.

``piecewise_constant`` and ``coupled_nodes`` let ``assign`` choose the nodes to slice.
"""
from __future__ import annotations

import math

import numpy as np

from .. import syntax as S
from ..functions import FUNCTIONS
from ..templates import DISTRIBUTIONS
from .conjugate import depends

__all__ = ["SliceUpdate", "node_support", "piecewise_constant", "coupled_nodes"]


def node_support(state, node) -> tuple:
    """``(lo, hi)`` of scalar ``node``'s value given its current parameters (infinite if none)."""
    st = node.instance.statement.ast
    fam = DISTRIBUTIONS[st.dist.name]
    params = dict(zip(fam.params, state.params(node))) if fam.params else {}
    lo, hi = -math.inf, math.inf
    if fam.support in ("positive", "unit"):
        lo = 0.0
    if fam.support == "unit":
        hi = 1.0
    if fam.support == "interval":
        lo, hi = float(params["a"]), float(params["b"])
    if fam.support == "above_c":
        lo = float(params["c"])
    if fam.support in ("above_mu", "gpar"):
        lo = float(params["mu"])
    b, env = st.bounds, node.instance.env
    if b is not None and b.lower is not None:
        lo = max(lo, float(state._closure(b.lower, env)()))
    if b is not None and b.upper is not None:
        hi = min(hi, float(state._closure(b.upper, env)()))
    return lo, hi


def _to_u(x, lo, hi):
    if lo > -math.inf and hi < math.inf:
        p = (x - lo) / (hi - lo)
        return math.log(p) - math.log1p(-p) if 0.0 < p < 1.0 else math.nan
    if lo > -math.inf:
        return math.log(x - lo) if x > lo else math.nan
    if hi < math.inf:
        return math.log(hi - x) if x < hi else math.nan
    return x


def _from_u(u, lo, hi):
    """``(x, log |dx/du|)``."""
    if lo > -math.inf and hi < math.inf:
        e = -math.log1p(math.exp(-u)) if u > 0 else u - math.log1p(math.exp(u))   # log expit(u)
        f = -math.log1p(math.exp(u)) if u < 0 else -u - math.log1p(math.exp(-u))  # log expit(-u)
        return lo + (hi - lo) * math.exp(e), math.log(hi - lo) + e + f
    if lo > -math.inf or hi < math.inf:
        if u > 700.0:
            return math.nan, -math.inf
        return (lo + math.exp(u) if lo > -math.inf else hi - math.exp(u)), u
    return u, 0.0


class SliceUpdate:
    """A stepping-out and shrinkage slice update of a scalar node (see the module docstring)."""
    name = "slice"
    adaptive = True

    def __init__(self, max_steps: int = 50, max_shrink: int = 100):
        self.max_steps, self.max_shrink = int(max_steps), int(max_shrink)

    def draw(self, rng, state, node, width, logp=None):
        """``(value, jump)``; ``logp()``: the log density at the current values (default:
        ``state.blanket_logp(node)``)."""
        x0 = float(state.get(node))
        if logp is None:
            def logp():
                return state.blanket_logp(node)
        lo, hi = node_support(state, node)
        u0 = _to_u(x0, lo, hi)

        def logf(u):
            x, logj = _from_u(u, lo, hi)
            if not (lo <= x <= hi) or logj == -math.inf:
                return -math.inf
            state.set(node, x)
            return logp() + logj

        level = logf(u0) - rng.standard_exponential() if math.isfinite(u0) else math.nan
        if not math.isfinite(level):            # no slice to sample at this value: keep it
            state.set(node, x0)
            return x0, 0.0
        left = u0 - width * rng.random()
        right = left + width
        steps_left = int(self.max_steps * rng.random())
        steps_right = self.max_steps - 1 - steps_left
        while steps_left > 0 and logf(left) > level:
            left -= width
            steps_left -= 1
        while steps_right > 0 and logf(right) > level:
            right += width
            steps_right -= 1
        u = u0
        for _ in range(self.max_shrink):
            proposal = left + (right - left) * rng.random()
            if logf(proposal) > level:
                u = proposal
                break
            if proposal < u0:
                left = proposal
            else:
                right = proposal
        x = _from_u(u, lo, hi)[0] if u != u0 else x0
        state.set(node, x)
        return x, abs(u - u0)


# -- which nodes the auto assignment slice-samples ---------------------------------------------
def _zero_gradient(expr, env, state, dep) -> bool:
    """``expr`` reads ``dep`` through a piecewise-constant function, an index or a bound."""
    if isinstance(expr, S.Call):
        row = FUNCTIONS.get(expr.name)
        if row is not None and row.gradient == "zero" and any(
                depends(state, a, env, dep) for a in expr.args):
            return True
        return any(_zero_gradient(a, env, state, dep) for a in expr.args)
    if isinstance(expr, S.Var):
        return any(ix is not None and depends(state, ix, env, dep) for ix in expr.indices)
    if isinstance(expr, S.Range):
        return depends(state, expr, env, dep)
    if isinstance(expr, S.Unary):
        return _zero_gradient(expr.operand, env, state, dep)
    if isinstance(expr, S.Binary):
        return (_zero_gradient(expr.left, env, state, dep)
                or _zero_gradient(expr.right, env, state, dep))
    return False


def piecewise_constant(state, node) -> bool:
    """The blanket's log density is piecewise constant in ``node`` along some path (``step``,
    ``equals``, ``round``, ``trunc``, an index or a ``C``/``I`` bound reading it): its gradient is
    zero almost everywhere there, so NUTS cannot move it."""
    dep = {node.id, *state._logicals[node.id]}
    g = state.graph
    for k in state._logicals[node.id]:
        logical = g.nodes[k]
        if _zero_gradient(logical.instance.statement.ast.expr, logical.instance.env, state, dep):
            return True
    for child in state.children(node):
        st, env = child.instance.statement.ast, child.instance.env
        if any(_zero_gradient(a, env, state, dep) for a in st.dist.args):
            return True
        b = st.bounds
        if b is not None and any(e is not None and depends(state, e, env, dep)
                                 for e in (b.lower, b.upper)):
            return True
    return False


def coupled_nodes(state, node) -> set:
    """Ids of the unobserved stochastic nodes in ``node``'s Markov blanket: its children, its
    parents and its children's other parents (through logical nodes)."""
    parents = state.stochastic_parents
    kids = state._children[node.id]
    out = set(kids) | parents(node.id)
    for k in kids:
        out |= parents(k)
    out.discard(node.id)
    return {k for k in out if not state.graph.nodes[k].observed}
