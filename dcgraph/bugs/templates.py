"""Numpy templates for BUGS functions and distributions: the only code generated programs call.

Each entry is a Python expression over its parameter names, written here (never taken from user
input) and vectorised: a scalar argument is an array over loop iterations, a vector argument has the
vector on its last axis. Templates name only ``np`` (numpy), ``sp`` (scipy.special), ``rng`` (a
``numpy.random.Generator``), ``SIZE`` / ``SHAPE`` (the draw shape of scalar / multivariate values), ``_dirichlet`` and
``_wishart`` (batched samplers) and the constants of ``NAMESPACE``; every
call they make has a VJP rule in ``dcgraph.ad``, so generated log densities are differentiable.

``FUNCTIONS[name] = Function(params, body, vector)``: ``vector`` names the parameters that are
vectors. ``LINKS[name]`` is the inverse applied when ``name(x) <- e`` is written on the left.
``DISTRIBUTIONS[name] = Family(params, logpdf, sample, support, discrete, cdf, vector, event)``:
``logpdf`` is over the value ``x``; ``support`` is ``"real"``, ``"positive"``, ``"unit"``,
``"interval"`` (between the parameters ``a`` and ``b``), ``"above_c"`` (``dpar``), for vector and
matrix values (``event``) ``"real_vector"``, ``"simplex"``, ``"pd"``, or a discrete kind; ``cdf`` (optional) is used for ``T(,)`` normalisation when the parameters are not constant.
Probabilities of ``dbern``/``dbin`` are clipped to ``[P_LO, P_HI]`` (``1 - 2^-53``), so an inverse
link that rounds to exactly 0 or 1 gives a finite log density (as OpenBUGS does); ``dpois`` reads
``log(lam)`` only where ``x > 0`` so a zero rate (an empty risk set) has a zero gradient, not NaN.
``callable_of(template_params, body)`` turns a template into a plain function for compile-time
evaluation.
"""
from __future__ import annotations

import ast
import functools
import math
from typing import NamedTuple, Optional

import numpy as np
import scipy.special as sp

__all__ = ["FUNCTIONS", "LINKS", "DISTRIBUTIONS", "NAMESPACE", "Function", "Family",
           "callable_of", "template_ast"]

NAMESPACE = {"np": np, "sp": sp, "HALF_LOG_2PI": 0.5 * math.log(2 * math.pi), "LOG2": math.log(2.0),
             "P_LO": 1e-300, "P_HI": 1.0 - 2.0 ** -53}


class Function(NamedTuple):
    params: tuple
    body: str
    vector: tuple = ()


class Family(NamedTuple):
    params: tuple
    logpdf: str
    sample: str
    support: str
    discrete: bool = False
    cdf: Optional[str] = None
    vector: tuple = ()
    event: str = "scalar"            # "vector" (last axis) or "matrix" (last two axes)


def _f(params: str, body: str, vector: str = "") -> Function:
    return Function(tuple(params.split()), body, tuple(vector.split()))


def _vec(name: str) -> Function:
    return _f("x", f"np.{name}(x, axis=-1)", "x")


FUNCTIONS = {
    "abs": _f("x", "np.abs(x)"), "arccos": _f("x", "np.arccos(x)"),
    "arccosh": _f("x", "np.arccosh(x)"), "arcsin": _f("x", "np.arcsin(x)"),
    "arcsinh": _f("x", "np.arcsinh(x)"), "arctan": _f("x", "np.arctan(x)"),
    "arctanh": _f("x", "np.arctanh(x)"), "cloglog": _f("x", "np.log(-np.log1p(-x))"),
    "cos": _f("x", "np.cos(x)"), "cosh": _f("x", "np.cosh(x)"), "cut": _f("x", "x"),
    "equals": _f("a b", "1.0 * (a == b)"), "exp": _f("x", "np.exp(x)"),
    "icloglog": _f("x", "1.0 - np.exp(-np.exp(x))"), "ilogit": _f("x", "sp.expit(x)"),
    "log": _f("x", "np.log(x)"), "logfact": _f("x", "sp.gammaln(x + 1.0)"),
    "loggam": _f("x", "sp.gammaln(x)"), "logit": _f("x", "sp.logit(x)"),
    "max": _f("a b", "np.maximum(a, b)"), "min": _f("a b", "np.minimum(a, b)"),
    "phi": _f("x", "sp.ndtr(x)"), "pow": _f("a b", "np.power(a, b)"),
    "probit": _f("x", "sp.ndtri(x)"), "round": _f("x", "np.round(x)"),
    "sin": _f("x", "np.sin(x)"), "sinh": _f("x", "np.sinh(x)"), "sqrt": _f("x", "np.sqrt(x)"),
    "tan": _f("x", "np.tan(x)"), "tanh": _f("x", "np.tanh(x)"), "trunc": _f("x", "np.floor(x)"),
    "step": _f("x", "1.0 * (x >= 0)"),
    "inprod": _f("a b", "np.sum(a * b, axis=-1)", "a b"),
    "mean": _vec("mean"), "sum": _vec("sum"), "prod": _vec("prod"),
    "sd": _f("x", "np.std(x, axis=-1, ddof=1)", "x"),
    "ifelse": _f("c a b", "np.where(c != 0, a, b)"),
    "sort": _f("x", "np.sort(x, axis=-1)", "x"),
    "rank": _f("v s", "np.sum(1.0 * (v <= np.expand_dims(np.sum(v * (np.arange(1, np.shape(v)[-1] + 1)"
               " == np.expand_dims(s, -1)), axis=-1), -1)), axis=-1)", "v"),
    "ranked": _f("v s", "np.sum(np.sort(v, axis=-1) * (np.arange(1, np.shape(v)[-1] + 1)"
                 " == np.expand_dims(s, -1)), axis=-1)", "v"),
    "inverse": _f("m", "np.linalg.inv(m)", "m"),
    "logdet": _f("m", "np.linalg.slogdet(m)[1]", "m"),
    "t": _f("m", "np.swapaxes(m, -1, -2)", "m"),
}

LINKS = {"logit": "ilogit", "log": "exp", "cloglog": "icloglog", "probit": "phi"}

_NORMAL = "0.5 * np.log(tau) - HALF_LOG_2PI - 0.5 * tau * np.square(x - mu)"

DISTRIBUTIONS = {
    "dnorm": Family(("mu", "tau"), _NORMAL, "rng.normal(mu, 1.0 / np.sqrt(tau), SIZE)", "real",
                    cdf="sp.ndtr((x - mu) * np.sqrt(tau))"),
    "dlnorm": Family(("mu", "tau"), "0.5 * np.log(tau) - HALF_LOG_2PI - np.log(x)"
                     " - 0.5 * tau * np.square(np.log(x) - mu)",
                     "rng.lognormal(mu, 1.0 / np.sqrt(tau), SIZE)", "positive",
                     cdf="sp.ndtr((np.log(x) - mu) * np.sqrt(tau))"),
    "dt": Family(("mu", "tau", "k"), "sp.gammaln((k + 1.0) / 2.0) - sp.gammaln(k / 2.0)"
                 " + 0.5 * np.log(tau / (k * np.pi))"
                 " - (k + 1.0) / 2.0 * np.log1p(tau * np.square(x - mu) / k)",
                 "mu + rng.standard_t(k, SIZE) / np.sqrt(tau)", "real"),
    "dgamma": Family(("r", "mu"), "r * np.log(mu) + sp.xlogy(r - 1.0, x) - mu * x - sp.gammaln(r)",
                     "rng.gamma(r, 1.0 / mu, SIZE)", "positive"),
    "dexp": Family(("lam",), "np.log(lam) - lam * x", "rng.exponential(1.0 / lam, SIZE)",
                   "positive", cdf="-np.expm1(-lam * x)"),
    "dweib": Family(("v", "lam"), "np.log(v) + np.log(lam) + sp.xlogy(v - 1.0, x) - lam * x ** v",
                    "(rng.exponential(1.0, SIZE) / lam) ** (1.0 / v)", "positive",
                    cdf="-np.expm1(-lam * x ** v)"),
    "dbeta": Family(("a", "b"), "sp.xlogy(a - 1.0, x) + sp.xlog1py(b - 1.0, -x) - sp.betaln(a, b)",
                    "rng.beta(a, b, SIZE)", "unit"),
    "dunif": Family(("a", "b"), "0.0 * x - np.log(b - a)", "rng.uniform(a, b, SIZE)", "interval",
                    cdf="(x - a) / (b - a)"),
    "dchisqr": Family(("k",), "sp.xlogy(k / 2.0 - 1.0, x) - x / 2.0 - k / 2.0 * LOG2"
                      " - sp.gammaln(k / 2.0)", "rng.chisquare(k, SIZE)", "positive"),
    "dpar": Family(("alpha", "c"), "np.log(alpha) + alpha * np.log(c) - (alpha + 1.0) * np.log(x)",
                   "c * (1.0 - rng.random(SIZE)) ** (-1.0 / alpha)", "above_c"),
    "ddexp": Family(("mu", "tau"), "np.log(tau / 2.0) - tau * np.abs(x - mu)",
                    "rng.laplace(mu, 1.0 / tau, SIZE)", "real"),
    "dlogis": Family(("mu", "tau"), "np.log(tau) + tau * (x - mu)"
                     " - 2.0 * np.logaddexp(0.0, tau * (x - mu))",
                     "rng.logistic(mu, 1.0 / tau, SIZE)", "real",
                     cdf="sp.expit(tau * (x - mu))"),
    "dflat": Family((), "0.0 * x", "rng.normal(0.0, 1.0, SIZE)", "real"),
    "dbern": Family(("p",), "sp.xlogy(x, np.clip(p, P_LO, P_HI))"
                    " + sp.xlog1py(1.0 - x, -np.clip(p, P_LO, P_HI))",
                    "rng.binomial(1, p, SIZE)", "binary", True),
    "dbin": Family(("p", "n"), "sp.gammaln(n + 1.0) - sp.gammaln(x + 1.0) - sp.gammaln(n - x + 1.0)"
                   " + sp.xlogy(x, np.clip(p, P_LO, P_HI)) + sp.xlog1py(n - x, -np.clip(p, P_LO, P_HI))",
                   "rng.binomial(np.asarray(n, dtype=np.int64), p, SIZE)", "count_n", True),
    "dpois": Family(("lam",), "sp.xlogy(x, lam + (x == 0)) - lam - sp.gammaln(x + 1.0)",
                    "rng.poisson(lam, SIZE)", "count", True),
    "dnegbin": Family(("p", "r"), "sp.gammaln(x + r) - sp.gammaln(r) - sp.gammaln(x + 1.0)"
                      " + r * np.log(p) + sp.xlog1py(x, -p)",
                      "rng.negative_binomial(r, p, SIZE)", "count", True),
    "dgeom": Family(("p",), "np.log(p) + sp.xlog1py(x - 1.0, -p)", "rng.geometric(p, SIZE)",
                    "positive_count", True),
    "dgeom0": Family(("p",), "np.log(p) + sp.xlog1py(x, -p)", "rng.geometric(p, SIZE) - 1",
                     "count", True),
    "dcat": Family(("p",), "np.log(np.sum(p * (np.expand_dims(x, -1)"
                   " == np.arange(1, np.shape(p)[-1] + 1)), axis=-1))",
                   "np.sum(np.expand_dims(rng.random(SIZE), -1) * np.sum(p, axis=-1, keepdims=True)"
                   " > np.cumsum(p, axis=-1), axis=-1) + 1", "category", True, vector=("p",)),
    "dbetabin": Family(("a", "b", "n"), "sp.gammaln(n + 1.0) - sp.gammaln(x + 1.0)"
                       " - sp.gammaln(n - x + 1.0) + sp.betaln(x + a, n - x + b) - sp.betaln(a, b)",
                       "rng.binomial(np.asarray(n, dtype=np.int64), rng.beta(a, b, SIZE))",
                       "count_n", True),
    "dinvgamma": Family(("a", "b"), "a * np.log(b) - sp.gammaln(a) - (a + 1.0) * np.log(x) - b / x",
                        "b / rng.gamma(a, 1.0, SIZE)", "positive"),
    "dloglik": Family(("lam",), "lam + 0.0 * x", "0.0 * lam", "real"),
    "dmnorm.vcov": Family(("mu", "S"), "-0.5 * np.linalg.slogdet(S)[1] - HALF_LOG_2PI * np.shape(x)[-1]"
                          " - 0.5 * np.sum((x - mu) * np.linalg.solve(S, np.expand_dims(x - mu, -1))"
                          "[..., 0], axis=-1)",
                          "mu + np.matmul(np.linalg.cholesky(S),"
                          " np.expand_dims(rng.normal(0.0, 1.0, SHAPE), -1))[..., 0]",
                          "real_vector", vector=("mu", "S"), event="vector"),
    "dmnorm": Family(("mu", "T"), "0.5 * np.linalg.slogdet(T)[1] - HALF_LOG_2PI * np.shape(x)[-1]"
                     " - 0.5 * np.sum((x - mu) * np.matmul(T, np.expand_dims(x - mu, -1))[..., 0], axis=-1)",
                     "mu + np.linalg.solve(np.swapaxes(np.linalg.cholesky(T), -1, -2),"
                     " np.expand_dims(rng.normal(0.0, 1.0, SHAPE), -1))[..., 0]",
                     "real_vector", vector=("mu", "T"), event="vector"),
    "dmt": Family(("mu", "T", "k"), "sp.gammaln((k + np.shape(x)[-1]) / 2.0) - sp.gammaln(k / 2.0)"
                  " - 0.5 * np.shape(x)[-1] * np.log(k * np.pi) + 0.5 * np.linalg.slogdet(T)[1]"
                  " - (k + np.shape(x)[-1]) / 2.0 * np.log1p("
                  "np.sum((x - mu) * np.matmul(T, np.expand_dims(x - mu, -1))[..., 0], axis=-1) / k)",
                  "mu + np.linalg.solve(np.swapaxes(np.linalg.cholesky(T), -1, -2),"
                  " np.expand_dims(rng.normal(0.0, 1.0, SHAPE), -1))[..., 0]"
                  " / np.sqrt(np.expand_dims(rng.chisquare(k, SHAPE[:-1]) / k, -1))",
                  "real_vector", vector=("mu", "T"), event="vector"),
    "ddirich": Family(("alpha",), "sp.gammaln(np.sum(alpha, axis=-1))"
                      " - np.sum(sp.gammaln(alpha), axis=-1) + np.sum(sp.xlogy(alpha - 1.0, x), axis=-1)",
                      "_dirichlet(rng, alpha, SHAPE)",
                      "simplex", vector=("alpha",), event="vector"),
    "dmulti": Family(("p", "N"), "sp.gammaln(N + 1.0) - np.sum(sp.gammaln(x + 1.0), axis=-1)"
                     " + np.sum(sp.xlogy(x, np.clip(p, P_LO, 1.0)), axis=-1)",
                     "rng.multinomial(np.asarray(N, dtype=np.int64), p / np.sum(p, axis=-1,"
                     " keepdims=True))", "count_vector", True, vector=("p",), event="vector"),
    "dwish": Family(("R", "k"), "0.5 * k * np.linalg.slogdet(R)[1]"
                    " - 0.5 * k * np.shape(x)[-1] * LOG2"
                    " - np.shape(x)[-1] * (np.shape(x)[-1] - 1) / 4.0 * np.log(np.pi)"
                    " - np.sum(sp.gammaln(np.expand_dims(k, -1) / 2.0"
                    " + (1.0 - np.arange(1, np.shape(x)[-1] + 1)) / 2.0), axis=-1)"
                    " + 0.5 * (k - np.shape(x)[-1] - 1.0) * np.linalg.slogdet(x)[1]"
                    " - 0.5 * np.sum(np.sum(R * np.swapaxes(x, -1, -2), axis=-1), axis=-1)",
                    "_wishart(rng, R, k, SHAPE)", "pd", vector=("R",), event="matrix"),
}

ALIASES = {"ddirch": "ddirich", "dbinom": "dbin", "dchisq": "dchisqr"}   # other spellings


@functools.lru_cache(maxsize=None)
def template_ast(body: str) -> ast.expr:
    """The parsed expression of a template (cached; callers copy before changing it)."""
    return ast.parse(body, mode="eval").body


@functools.lru_cache(maxsize=None)
def callable_of(params: tuple, body: str):
    """A plain function ``f(*params)`` evaluating the template (for compile-time constants)."""
    args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], kwonlyargs=[],
                         kw_defaults=[], defaults=[])
    tree = ast.Expression(ast.Lambda(args, template_ast(body)))
    ast.fix_missing_locations(tree)
    return eval(compile(tree, "<dcgraph.bugs.templates>", "eval"), dict(NAMESPACE))
