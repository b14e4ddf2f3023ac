"""The BUGS function library as one table: name -> parameters, numpy template, vector arguments,
how it differentiates. The compile-time evaluator, the code generator and the parser all read it.

Each ``BUGSFunction`` is written once, as a Python *expression template* over its parameter names
and the globals of ``namespace()`` (``np`` numpy, ``sp`` scipy.special); templates are constants of
this module, so nothing from a model is ever pasted into code. Templates are vectorised: a scalar
argument may be an array over loop instances, a vector argument has its components on the last axis
(``vector`` names those parameters). ``gradient`` says how ``dcgraph.grad`` differentiates it:
``"vjp"`` (every call has a VJP rule in ``dcgraph.ad``), ``"zero"`` (piecewise constant: zero
almost everywhere), ``"none"`` (identity of its argument: ``cut``).

From a row come ``form(n)`` (the parameters, body and vector parameters for ``n`` arguments: ``max``
and ``min`` reduce one array or fold several arguments), ``build(*arg_exprs) -> ast.expr`` and
``evaluate(*values)`` (the template compiled once, for data transformations at compile time).

OpenBUGS conventions (bugs-reference.md, OpenBUGS's ``MathFunc``): ``step(0) = 1``; ``trunc`` is the
floor; ``round`` is the nearest integer with halves away from zero (``MathFunc.Round``:
``round(2.5) = 3``, ``round(-2.5) = -3``; neither numpy's half-to-even nor ``floor(x + 0.5)``);
``rank(v, s)`` counts the components ``<= v[s]``; ``ranked(v, s)`` is the ``s``-th smallest
(``s`` 1-based); ``sd`` divides by ``n - 1``; ``interp.lin`` holds the end values outside the knots.
"""
from __future__ import annotations

import ast
import copy
import functools
from types import MappingProxyType
from typing import NamedTuple, Optional

import numpy as np
import scipy.special

__all__ = ["BUGSFunction", "FUNCTIONS", "LINKS", "namespace", "build_call", "build_link_inverse"]


def namespace() -> dict:
    """The globals that templates refer to (a fresh dict each call)."""
    return {"np": np, "sp": scipy.special}


class BUGSFunction(NamedTuple):
    """One BUGS function. ``reduce`` (``max``/``min``): the body for one array argument; such
    functions also take any number of scalars (folded pairwise with ``body``)."""

    name: str
    params: tuple
    body: str
    vector: tuple
    gradient: str
    doc: str
    reduce: Optional[str] = None

    @property
    def arity(self) -> tuple:
        """``(min, max)`` number of arguments (``max`` None: any number)."""
        return (1, None) if self.reduce else (len(self.params), len(self.params))

    @property
    def kind(self) -> str:
        return "vector" if self.vector or self.reduce else "scalar"

    def form(self, n: int) -> tuple:
        """``(params, body, vector)`` of the template for ``n`` arguments."""
        self._check_arity(n)
        if self.reduce and n == 1:
            return (self.params[0],), self.reduce, (self.params[0],)
        if self.reduce and n > 2:
            names = tuple(f"a{i}" for i in range(n))
            body = names[0]
            for other in names[1:]:
                body = _fold_text(self.body, self.params, body, other)
            return names, body, ()
        return self.params, self.body, self.vector

    def _check_arity(self, n: int) -> None:
        lo, hi = self.arity
        if n < lo or (hi is not None and n > hi):
            raise TypeError(f"BUGS function '{self.name}' takes {lo}"
                            f"{'' if hi == lo else ' or more' if hi is None else f' to {hi}'} "
                            f"arguments, got {n}")

    def build(self, *args: ast.expr) -> ast.expr:
        """An ``ast.expr`` computing this function of the argument expressions ``args``."""
        params, body, _ = self.form(len(args))
        return substitute(body, dict(zip(params, args)))

    def evaluate(self, *values):
        """The function on numbers and numpy arrays (the same template, compiled once)."""
        params, body, _ = self.form(len(values))
        return compiled(params, body)(*values)


def _fold_text(body: str, params: tuple, left: str, right: str) -> str:
    """``body`` with its two parameters replaced by the expressions ``left`` and ``right``."""
    tree = substitute(body, {params[0]: ast.parse(left, mode="eval").body,
                             params[1]: ast.parse(right, mode="eval").body})
    return ast.unparse(tree)


class _Substitute(ast.NodeTransformer):
    def __init__(self, mapping: dict):
        self.mapping = mapping

    def visit_Name(self, node):
        if node.id in self.mapping:
            return copy.deepcopy(self.mapping[node.id])
        return node


@functools.lru_cache(maxsize=None)
def template_ast(body: str) -> ast.expr:
    """The parsed expression of a template (cached; callers copy before changing it)."""
    return ast.parse(body, mode="eval").body


def substitute(body: str, mapping: dict) -> ast.expr:
    """The template ``body`` with its parameter names replaced by the ``ast`` expressions given."""
    tree = _Substitute(mapping).visit(copy.deepcopy(template_ast(body)))
    return ast.fix_missing_locations(tree)


@functools.lru_cache(maxsize=None)
def compiled(params: tuple, body: str):
    """A plain function ``f(*params)`` evaluating the template ``body`` in ``namespace()``."""
    args = ast.arguments(posonlyargs=[], args=[ast.arg(p) for p in params], kwonlyargs=[],
                         kw_defaults=[], defaults=[])
    tree = ast.fix_missing_locations(ast.Expression(ast.Lambda(args, template_ast(body))))
    return eval(compile(tree, "<dcgraph.bugs.functions>", "eval"), namespace())


_POSITION = "(np.arange(1, np.shape(v)[-1] + 1) == np.expand_dims(s, -1))"
_SLOPE = "(np.expand_dims(e, -1) - x[..., :-1]) / (x[..., 1:] - x[..., :-1])"
_ROWS = [
    # name, params, body, vector params, gradient, doc
    ("abs", "x", "np.abs(x)", "", "vjp", "absolute value"),
    ("arccos", "x", "np.arccos(x)", "", "vjp", "inverse cosine"),
    ("arccosh", "x", "np.arccosh(x)", "", "vjp", "inverse hyperbolic cosine"),
    ("arcsin", "x", "np.arcsin(x)", "", "vjp", "inverse sine"),
    ("arcsinh", "x", "np.arcsinh(x)", "", "vjp", "inverse hyperbolic sine"),
    ("arctan", "x", "np.arctan(x)", "", "vjp", "inverse tangent"),
    ("arctanh", "x", "np.arctanh(x)", "", "vjp", "inverse hyperbolic tangent"),
    ("cloglog", "x", "np.log(-np.log1p(-x))", "", "vjp", "log(-log(1 - x))"),
    ("cos", "x", "np.cos(x)", "", "vjp", "cosine"),
    ("cosh", "x", "np.cosh(x)", "", "vjp", "hyperbolic cosine"),
    ("cut", "x", "x", "", "none", "x (cuts feedback in OpenBUGS; the identity for a log density)"),
    ("equals", "a b", "np.where(np.equal(a, b), 1.0, 0.0)", "", "zero", "1 if x == y else 0"),
    ("exp", "x", "np.exp(x)", "", "vjp", "exponential"),
    ("icloglog", "x", "-np.expm1(-np.exp(x))", "", "vjp", "1 - exp(-exp(x)), inverse of cloglog"),
    ("ifelse", "c a b", "np.where(np.not_equal(c, 0), a, b)", "", "vjp", "y if x != 0 else z (JAGS)"),
    ("ilogit", "x", "sp.expit(x)", "", "vjp", "1 / (1 + exp(-x)), inverse of logit"),
    ("log", "x", "np.log(x)", "", "vjp", "natural logarithm"),
    ("logfact", "x", "sp.gammaln(x + 1.0)", "", "vjp", "log(x!)"),
    ("loggam", "x", "sp.gammaln(x)", "", "vjp", "log Gamma(x)"),
    ("logit", "x", "sp.logit(x)", "", "vjp", "log(x / (1 - x))"),
    ("phi", "x", "sp.ndtr(x)", "", "vjp", "standard normal CDF, inverse of probit"),
    ("pow", "a b", "np.power(a, b)", "", "vjp", "x ^ y"),
    ("probit", "x", "sp.ndtri(x)", "", "vjp", "standard normal quantile"),
    ("round", "x", "np.sign(x) * np.floor(np.abs(x) + 0.5)", "", "zero",
     "nearest integer, halves away from zero (OpenBUGS MathFunc.Round)"),
    ("sin", "x", "np.sin(x)", "", "vjp", "sine"),
    ("sinh", "x", "np.sinh(x)", "", "vjp", "hyperbolic sine"),
    ("sqrt", "x", "np.sqrt(x)", "", "vjp", "square root"),
    ("step", "x", "np.heaviside(x, 1.0)", "", "zero", "1 if x >= 0 else 0 (step(0) = 1)"),
    ("tan", "x", "np.tan(x)", "", "vjp", "tangent"),
    ("tanh", "x", "np.tanh(x)", "", "vjp", "hyperbolic tangent"),
    ("trunc", "x", "np.floor(x)", "", "zero", "greatest integer <= x (OpenBUGS manual; JAGS truncates toward 0)"),
    # ---- vector and matrix functions (components on the last axis or axes)
    ("inprod", "a b", "np.sum(a * b, axis=-1)", "a b", "vjp", "sum of x[i] * y[i]"),
    ("interp.lin", "e x y",
     f"np.sum((y[..., 1:] - y[..., :-1]) * np.clip({_SLOPE}, 0.0, 1.0), axis=-1) + y[..., 0]",
     "x y", "vjp", "piecewise-linear interpolation of knots (x[], y[]) at e; end values held outside"),
    ("eigen.vals", "m", "np.linalg.eigvalsh(m)", "m", "vjp",
     "eigenvalues of a symmetric matrix, in increasing order"),
    ("inverse", "m", "np.linalg.inv(m)", "m", "vjp", "matrix inverse"),
    ("logdet", "m", "np.linalg.slogdet(m)[1]", "m", "vjp", "log of the determinant of a positive-definite matrix"),
    ("mean", "x", "np.mean(x, axis=-1)", "x", "vjp", "mean of the components"),
    ("prod", "x", "np.prod(x, axis=-1)", "x", "vjp", "product of the components"),
    ("rank", "v s", f"np.sum(1.0 * (v <= np.expand_dims(np.sum(v * {_POSITION}, axis=-1), -1)), axis=-1)",
     "v", "zero", "number of components <= v[s] (OpenBUGS)"),
    ("ranked", "v s", f"np.sum(np.sort(v, axis=-1) * {_POSITION}, axis=-1)", "v", "vjp",
     "the s-th smallest component"),
    ("sd", "x", "np.std(x, axis=-1, ddof=1)", "x", "vjp", "standard deviation, n - 1 denominator"),
    ("sort", "x", "np.sort(x, axis=-1)", "x", "vjp", "components in increasing order"),
    ("sum", "x", "np.sum(x, axis=-1)", "x", "vjp", "sum of the components"),
    ("t", "m", "np.swapaxes(m, -1, -2)", "m", "vjp", "matrix transpose (JAGS)"),
]

_FOLDS = [
    # name, pairwise body, body for one array, doc
    ("max", "np.maximum(a, b)", "np.max(a, axis=-1)", "largest argument, or largest component of one array"),
    ("min", "np.minimum(a, b)", "np.min(a, axis=-1)", "smallest argument, or smallest component of one array"),
]


def _table() -> MappingProxyType:
    rows = {name: BUGSFunction(name, tuple(params.split()), body, tuple(vector.split()), gradient, doc)
            for name, params, body, vector, gradient, doc in _ROWS}
    for name, pairwise, reduce, doc in _FOLDS:
        rows[name] = BUGSFunction(name, ("a", "b"), pairwise, (), "vjp", doc, reduce)
    return MappingProxyType(dict(sorted(rows.items())))


#: Read-only table name -> BUGSFunction (OpenBUGS and JAGS function library).
FUNCTIONS = _table()

#: Link functions allowed on the left of ``<-`` -> the name of their inverse in ``FUNCTIONS``.
LINKS = MappingProxyType({"logit": "ilogit", "log": "exp", "cloglog": "icloglog", "probit": "phi"})


def build_call(name: str, *args: ast.expr) -> ast.expr:
    """``FUNCTIONS[name].build(*args)``, with a ``KeyError`` naming an unknown function."""
    if name not in FUNCTIONS:
        raise KeyError(f"unknown BUGS function '{name}'")
    return FUNCTIONS[name].build(*args)


def build_link_inverse(link: str, expr: ast.expr) -> ast.expr:
    """``link(x) <- expr`` means ``x <- inverse_link(expr)``: the ``ast.expr`` for the right side."""
    if link not in LINKS:
        raise KeyError(f"unknown link function '{link}'")
    return FUNCTIONS[LINKS[link]].build(expr)
