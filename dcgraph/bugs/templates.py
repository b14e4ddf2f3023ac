"""Numpy templates for BUGS distributions: with ``functions.FUNCTIONS``, the only code generated
programs call.

Each entry is a Python expression over its parameter names, written here (never taken from user
input) and vectorised: a scalar argument is an array over loop iterations, a vector argument has the
vector on its last axis. Templates name only ``np`` (numpy), ``sp`` (scipy.special), ``rng`` (a
``numpy.random.Generator``), ``SIZE`` / ``SHAPE`` (the draw shape of scalar / multivariate values), ``_dirichlet`` and
``_wishart`` (batched samplers) and the constants of ``NAMESPACE``; every
call they make has a VJP rule in ``dcgraph.ad``, so generated log densities are differentiable.

The function library (and the link inverses) is ``dcgraph.bugs.functions``, the one table that the
evaluator, the parser and the code generator share.
``DISTRIBUTIONS[name] = Family(params, logpdf, sample, support, discrete, cdf, vector, event)``:
``logpdf`` is over the value ``x``; ``support`` is ``"real"``, ``"positive"``, ``"unit"``,
``"interval"`` (between the parameters ``a`` and ``b``), ``"above_c"`` (``dpar``), ``"above_mu"``
(``df``), ``"gev"`` / ``"gpar"`` (edges from ``mu``, ``sigma`` and the sign of a constant ``eta``), for vector and
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

from .functions import template_ast

__all__ = ["DISTRIBUTIONS", "NAMESPACE", "Family", "callable_of", "template_ast"]

NAMESPACE = {"np": np, "sp": sp, "HALF_LOG_2PI": 0.5 * math.log(2 * math.pi), "LOG2": math.log(2.0),
             "P_LO": 1e-300, "P_HI": 1.0 - 2.0 ** -53}


class Family(NamedTuple):
    params: tuple
    logpdf: str
    sample: str
    support: str
    discrete: bool = False
    cdf: Optional[str] = None
    vector: tuple = ()
    event: str = "scalar"            # "vector" (last axis) or "matrix" (last two axes)


# dgev / dgpar: z = (x - mu) / sigma, t = 1 + eta z; eta == 0 is the Gumbel / exponential limit
_Z = "((x - mu) / sigma)"
_E = "np.where(eta == 0, 1.0, eta)"
_LT = "np.log1p(eta * (x - mu) / sigma)"
_EXP1 = "rng.standard_exponential(SIZE)"
# dhyper(n, m, N, psi): log P(k) over k = 0..max(min(n, m)) (last axis), -inf outside the support
_K = "np.arange(0.0, np.max(np.minimum(n, m)) + 1.0)"
_HYPER_W = (f"np.where((np.expand_dims(np.maximum(0.0, n + m - N), -1) <= {_K})"
            f" & ({_K} <= np.expand_dims(np.minimum(n, m), -1)),"
            f" sp.gammaln(np.expand_dims(n, -1) + 1.0) - sp.gammaln({_K} + 1.0)"
            f" - sp.gammaln(np.maximum(np.expand_dims(n, -1) - {_K}, 0.0) + 1.0)"
            f" + sp.gammaln(np.expand_dims(N - n, -1) + 1.0) - sp.gammaln(np.maximum(np.expand_dims(m, -1) - {_K}, 0.0) + 1.0)"
            f" - sp.gammaln(np.maximum(np.expand_dims(N - n - m, -1) + {_K}, 0.0) + 1.0)"
            f" + {_K} * np.expand_dims(np.log(psi), -1), -np.inf)")
_HYPER_LOGP = f"({_HYPER_W} - sp.logsumexp({_HYPER_W}, axis=-1, keepdims=True))"

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
    "dunif": Family(("a", "b"), "np.where((x >= a) & (x <= b), 0.0, -np.inf) - np.log(b - a)", "rng.uniform(a, b, SIZE)", "interval",
                    cdf="(x - a) / (b - a)"),
    "dchisqr": Family(("k",), "sp.xlogy(k / 2.0 - 1.0, x) - x / 2.0 - k / 2.0 * LOG2"
                      " - sp.gammaln(k / 2.0)", "rng.chisquare(k, SIZE)", "positive"),
    "dpar": Family(("alpha", "c"), "np.where(x >= c, 0.0, -np.inf) + np.log(alpha) + alpha * np.log(c)"
                   " - (alpha + 1.0) * np.log(x)",
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
    "dggamma": Family(("r", "mu", "beta"), "np.log(beta) + beta * r * np.log(mu) + sp.xlogy(beta * r - 1.0, x)"
                      " - (mu * x) ** beta - sp.gammaln(r)",
                      "rng.gamma(r, 1.0, SIZE) ** (1.0 / beta) / mu", "positive"),
    "dgev": Family(("mu", "sigma", "eta"), f"-np.log(sigma) + np.where(eta == 0, -{_Z} - np.exp(-{_Z}),"
                   f" -(1.0 + 1.0 / {_E}) * {_LT} - np.exp(-{_LT} / {_E}))",
                   f"mu + sigma * np.where(eta == 0, -np.log({_EXP1}), np.expm1(-eta * np.log({_EXP1})) / {_E})",
                   "gev", cdf=f"np.exp(-np.where(eta == 0, np.exp(-{_Z}), np.exp(-{_LT} / {_E})))"),
    "dgpar": Family(("mu", "sigma", "eta"), f"-np.log(sigma) + np.where(eta == 0, -{_Z}, -(1.0 + 1.0 / {_E}) * {_LT})",
                    f"mu + sigma * np.where(eta == 0, {_EXP1}, np.expm1(eta * {_EXP1}) / {_E})", "gpar",
                    cdf=f"-np.expm1(np.where(eta == 0, -{_Z}, -{_LT} / {_E}))"),
    "df": Family(("n", "m", "mu", "tau"), "sp.gammaln((n + m) / 2.0) - sp.gammaln(n / 2.0) - sp.gammaln(m / 2.0)"
                 " + n / 2.0 * np.log(n / m) + sp.xlogy(n / 2.0 - 1.0, np.sqrt(tau) * (x - mu)) + 0.5 * np.log(tau)"
                 " - (n + m) / 2.0 * np.log1p(n * np.sqrt(tau) * (x - mu) / m)",
                 "mu + rng.f(n, m, SIZE) / np.sqrt(tau)", "above_mu"),
    "dhyper": Family(("n", "m", "N", "psi"), f"np.sum(np.where(np.expand_dims(x, -1) == {_K}, {_HYPER_LOGP}, 0.0), axis=-1)",
                     f"np.sum(np.expand_dims(rng.random(SIZE), -1) > np.cumsum(np.exp({_HYPER_LOGP}), axis=-1),"
                     " axis=-1)", "count", True),
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

ALIASES = {"ddirch": "ddirich", "dbinom": "dbin", "dchisq": "dchisqr", "dgen.gamma": "dggamma"}   # other spellings


@functools.lru_cache(maxsize=None)
def callable_of(params: tuple, body: str):
    """A plain function ``f(*params)`` evaluating the template (for compile-time constants)."""
    args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], kwonlyargs=[],
                         kw_defaults=[], defaults=[])
    tree = ast.Expression(ast.Lambda(args, template_ast(body)))
    ast.fix_missing_locations(tree)
    return eval(compile(tree, "<dcgraph.bugs.templates>", "eval"), dict(NAMESPACE))
