"""Shared by the compiler tests: the 19 examples, compiled once, and an independent evaluator.

``reference_logdensity(model, theta)`` recomputes the log density node by node with ``scipy.stats``
over the unrolled graph (``model.graph``: its nodes, statements and loop environments), sharing no
code with the generated path: its own expression evaluator, index arithmetic, functions, density
table, truncation and constraining transforms.
"""
import functools

import numpy as np
from scipy import special, stats

import dcgraph.bugs as B
from dcgraph.bugs import syntax as S

from examples_dir import EXAMPLES

NAMES = sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir())


@functools.lru_cache(maxsize=None)
def compiled(name: str):
    d = EXAMPLES / name
    return B.compile(d / "model.txt", d / "data.txt", [d / "inits.txt", d / "inits1.txt"])


P_CLIP = (1e-300, 1.0 - 2.0 ** -53)   # the documented clipping of dbin/dbern probabilities


def _p(p):
    return np.clip(p, *P_CLIP)


SCIPY = {   # name -> (frozen scipy distribution of the BUGS parameters, support)
    "dnorm": (lambda mu, tau: stats.norm(mu, 1 / np.sqrt(tau)), "real"),
    "dt": (lambda mu, tau, k: stats.t(k, mu, 1 / np.sqrt(tau)), "real"),
    "dgamma": (lambda r, mu: stats.gamma(r, scale=1 / mu), "positive"),
    "dexp": (lambda lam: stats.expon(scale=1 / lam), "positive"),
    "dweib": (lambda v, lam: stats.weibull_min(v, scale=lam ** (-1 / v)), "positive"),
    "dbeta": (lambda a, b: stats.beta(a, b), "unit"),
    "dunif": (lambda a, b: stats.uniform(a, b - a), "interval"),
    "dlnorm": (lambda mu, tau: stats.lognorm(1 / np.sqrt(tau), scale=np.exp(mu)), "positive"),
    "dbin": (lambda p, n: stats.binom(n, _p(p)), "discrete"),
    "dbern": (lambda p: stats.bernoulli(_p(p)), "discrete"),
    "dpois": (lambda lam: stats.poisson(lam), "discrete"),
    "dflat": (None, "real"),
    "dcat": (None, "discrete"),
}

FUNCS = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "logit": special.logit,
         "ilogit": special.expit, "step": lambda x: float(x >= 0), "phi": stats.norm.cdf,
         "pow": lambda a, b: a ** b, "mean": np.mean, "sum": np.sum,
         "sd": lambda v: np.std(v, ddof=1), "abs": abs, "equals": lambda a, b: float(a == b),
         "inprod": lambda a, b: float(np.dot(a, b)), "cloglog": lambda x: np.log(-np.log(1 - x)),
         "icloglog": lambda x: 1 - np.exp(-np.exp(x))}
INVERSE_LINK = {"logit": special.expit, "log": np.exp, "probit": stats.norm.cdf,
                "cloglog": FUNCS["icloglog"]}


class _Values:
    def __init__(self, graph):
        self.arrays = {k: np.array(v, dtype=float) for k, v in graph.data.items()}
        for name, shape in graph.shapes.items():
            self.arrays.setdefault(name, np.full(shape, np.nan))

    def index(self, var, env):
        axes = []
        for k, ix in enumerate(var.indices):
            size = self.arrays[var.name].shape[k]
            if ix is None:
                axes.append(list(range(size)))
            elif isinstance(ix, S.Range):
                axes.append(list(range(int(self.eval(ix.lower, env)) - 1, int(self.eval(ix.upper, env)))))
            else:
                axes.append(int(round(self.eval(ix, env))) - 1)
        return tuple(axes)

    def eval(self, e, env):
        if isinstance(e, S.Number):
            return float(e.value)
        if isinstance(e, S.Var):
            if not e.indices and e.name in env:
                return float(env[e.name])
            arr = self.arrays[e.name]
            ix = self.index(e, env)
            if not ix:
                return float(arr)
            if any(isinstance(i, list) for i in ix):
                return arr[np.ix_(*[i if isinstance(i, list) else [i] for i in ix])].ravel()
            return float(arr[ix])
        if isinstance(e, S.Unary):
            v = self.eval(e.operand, env)
            return -v if e.op == "-" else v
        if isinstance(e, S.Binary):
            a, b = self.eval(e.left, env), self.eval(e.right, env)
            return {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b != 0 else np.inf,
                    "^": a ** b if e.op == "^" else None}[e.op]
        if isinstance(e, S.Call):
            return FUNCS[e.name](*[self.eval(a, env) for a in e.args])
        raise TypeError(e)

    def set(self, inst, value):
        ix = self.index(inst.statement.ast.target, inst.env)
        if ix:
            self.arrays[inst.statement.ast.target.name][ix] = value
        else:
            self.arrays[inst.statement.ast.target.name] = np.array(value)


def _order(graph):
    pending = {n.id: len(set(n.inputs)) for n in graph.nodes}
    children = {n.id: [] for n in graph.nodes}
    for n in graph.nodes:
        for p in set(n.inputs):
            children[p].append(n.id)
    ready = [i for i, k in pending.items() if k == 0]
    out = []
    while ready:
        i = ready.pop()
        out.append(graph.nodes[i])
        for c in children[i]:
            pending[c] -= 1
            if pending[c] == 0:
                ready.append(c)
    assert len(out) == len(graph.nodes)
    return out


def reference_logdensity(model, theta, discrete=None, jacobian=True):
    """Node-by-node log density (with log-Jacobians) at ``theta``, with scipy."""
    g = model.graph
    theta = np.asarray(theta, dtype=float)
    discrete = model.discrete if discrete is None else discrete
    position = {}
    for p in model.parameters:
        for k, nm in enumerate(p.names):
            position[nm] = (p.discrete, p.slice.start + k)
    vals = _Values(g)
    total = 0.0
    for node in _order(g):
        inst = node.instance
        st = inst.statement.ast
        if not node.stochastic:
            v = vals.eval(st.expr, inst.env)
            vals.set(inst, INVERSE_LINK[st.link](v) if st.link else v)
            continue
        maker, support = SCIPY[st.dist.name]
        args = [vals.eval(a, inst.env) for a in st.dist.args]
        b = st.bounds
        lo = vals.eval(b.lower, inst.env) if b is not None and b.lower is not None else None
        hi = vals.eval(b.upper, inst.env) if b is not None and b.upper is not None else None
        if node.logical is not None:
            lst = node.logical.statement.ast
            x = vals.eval(lst.expr, node.logical.env)
        elif node.observed:
            x = float(np.ravel(g.data[node.var])[node.offsets[0]])
        else:
            disc, k = position[node.name]
            if disc:
                x = float(discrete[k])
            else:
                x, jac = _constrain(theta[k], support, args, lo, hi)
                total += jac if jacobian else 0.0
        vals.set(inst, x)
        if st.dist.name == "dflat":
            continue
        if st.dist.name == "dcat":
            total += np.log(args[0][int(x) - 1])
            continue
        dist = maker(*args)
        total += dist.logpmf(x) if support == "discrete" else dist.logpdf(x)
        if b is not None and b.kind == "T":
            total -= np.log(dist.cdf(np.inf if hi is None else hi) - dist.cdf(-np.inf if lo is None else lo))
    return total


def _constrain(u, support, args, lo, hi):
    low = {"real": None, "positive": 0.0, "unit": 0.0}.get(support, args[0] if support == "interval" else None)
    high = {"unit": 1.0}.get(support, args[1] if support == "interval" else None)
    if lo is not None:
        low = lo if low is None else max(low, lo)
    if hi is not None:
        high = hi if high is None else min(high, hi)
    if low is None and high is None:
        return u, 0.0
    if high is None:
        return low + np.exp(u), u
    if low is None:
        return high - np.exp(u), u
    s = special.expit(u)
    return low + (high - low) * s, np.log(high - low) + np.log(s) + np.log1p(-s)
