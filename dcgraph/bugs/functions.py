"""The BUGS function library as data: name -> arity, an ``ast`` builder and a plain callable.

Each ``BUGSFunction`` is written once, as a small Python *expression template* over the argument
placeholders ``A``, ``B``, ``C`` and the module aliases of ``namespace()`` (``_np`` numpy,
``_sp`` scipy.special, ``_la`` numpy.linalg). From it come

* ``build(*arg_exprs) -> ast.expr``: the template with the placeholders replaced by the given
  argument expressions. Generated code therefore calls only whitelisted numpy/scipy functions, all
  of which have VJP rules in ``dcgraph.ad``, so ``dcgraph.grad`` differentiates through them.
* ``evaluate(*values)``: the same template compiled once into a plain function, for data
  transformations evaluated at compile time. Both paths compute exactly the same thing.

Templates are constants of this module; nothing from a model is ever pasted into code.
Vector functions take whole arrays (``sum(x[])``); scalar ones work elementwise on arrays.
OpenBUGS conventions: ``step(0) = 1``; ``trunc`` is the floor (the OpenBUGS manual; JAGS truncates
toward zero); ``rank(v, s)`` counts the components ``<= v[s]`` and ``ranked(v, s)`` is the ``s``-th
smallest (``s`` 1-based); ``sd`` divides by ``n - 1``; ``round`` is ``floor(x + 0.5)`` (JAGS's
source; the OpenBUGS manual says only "nearest integer"); ``interp.lin`` holds the end values
outside the knots.
"""
from __future__ import annotations

import ast
import copy
import functools
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Optional

import numpy as np
import scipy.special
from numpy import linalg

__all__ = ["BUGSFunction", "FUNCTIONS", "LINKS", "namespace", "build_call", "build_link_inverse"]

_PLACEHOLDERS = ("A", "B", "C")


def namespace() -> dict:
    """The globals that built expressions refer to (a fresh dict each call)."""
    return {"_np": np, "_sp": scipy.special, "_la": linalg}


class _Substitute(ast.NodeTransformer):
    def __init__(self, args):
        self.args = dict(zip(_PLACEHOLDERS, args))

    def visit_Name(self, node):
        if node.id in self.args:
            return copy.deepcopy(self.args[node.id])
        return node


@dataclass(frozen=True)
class BUGSFunction:
    """One BUGS function: ``arity`` is ``(min, max)`` (``max`` None: any number)."""

    name: str
    arity: tuple
    template: str               # expression over A, B, C and _np/_sp/_la
    kind: str                   # "scalar" (elementwise) or "vector" (whole arrays)
    doc: str
    builder: Optional[object] = field(default=None, compare=False)  # custom (*args) -> ast.expr

    def build(self, *args: ast.expr) -> ast.expr:
        """An ``ast.expr`` computing this function of the argument expressions ``args``."""
        self._check_arity(len(args))
        if self.builder is not None:
            return self.builder(*args)
        tree = ast.parse(self.template, mode="eval").body
        return ast.fix_missing_locations(_Substitute(args).visit(tree))

    def _check_arity(self, n):
        lo, hi = self.arity
        if n < lo or (hi is not None and n > hi):
            raise TypeError(f"BUGS function '{self.name}' takes {lo}"
                            f"{'' if hi == lo else ' or more' if hi is None else f' to {hi}'} "
                            f"arguments, got {n}")

    @property
    def evaluate(self):
        """The function as a plain Python callable on numbers and numpy arrays."""
        return _compiled(self)


@functools.lru_cache(maxsize=None)
def _compiled(fn: BUGSFunction):
    lo, hi = fn.arity
    if fn.builder is not None:
        def run(*values):
            fn._check_arity(len(values))
            names = [ast.Name(f"_a{i}", ast.Load()) for i in range(len(values))]
            code = compile(ast.fix_missing_locations(ast.Expression(fn.builder(*names))),
                           f"<bugs {fn.name}>", "eval")
            return eval(code, namespace(), {f"_a{i}": v for i, v in enumerate(values)})
        return run
    params = [ast.arg(p) for p in _PLACEHOLDERS[:hi]]
    lam = ast.Lambda(ast.arguments(posonlyargs=[], args=params, kwonlyargs=[], kw_defaults=[], defaults=[]),
                     ast.parse(fn.template, mode="eval").body)
    code = compile(ast.fix_missing_locations(ast.Expression(lam)), f"<bugs {fn.name}>", "eval")
    return eval(code, namespace())


def _fold(np_fn: str, reduce_fn: str):
    """Builder for JAGS-style ``max``/``min``: one array argument reduces, several fold pairwise."""
    def build(*args):
        if len(args) == 1:
            return _call(reduce_fn, args[0])
        out = args[0]
        for a in args[1:]:
            out = _call(np_fn, out, a)
        return out
    return build


def _call(np_name: str, *args) -> ast.expr:
    return ast.Call(ast.Attribute(ast.Name("_np", ast.Load()), np_name, ast.Load()), list(args), [])


_INDEX = "_np.asarray(B).astype(_np.int64) - 1"
_ROWS = [
    # name, arity, template, kind, doc
    ("abs", 1, "_np.abs(A)", "scalar", "absolute value"),
    ("arccos", 1, "_np.arccos(A)", "scalar", "inverse cosine"),
    ("arccosh", 1, "_np.arccosh(A)", "scalar", "inverse hyperbolic cosine"),
    ("arcsin", 1, "_np.arcsin(A)", "scalar", "inverse sine"),
    ("arcsinh", 1, "_np.arcsinh(A)", "scalar", "inverse hyperbolic sine"),
    ("arctan", 1, "_np.arctan(A)", "scalar", "inverse tangent"),
    ("arctanh", 1, "_np.arctanh(A)", "scalar", "inverse hyperbolic tangent"),
    ("cloglog", 1, "_np.log(-_np.log1p(-A))", "scalar", "log(-log(1 - x))"),
    ("cos", 1, "_np.cos(A)", "scalar", "cosine"),
    ("cosh", 1, "_np.cosh(A)", "scalar", "hyperbolic cosine"),
    ("cut", 1, "A", "scalar", "x (cuts feedback in OpenBUGS; the identity for a log density)"),
    ("equals", 2, "_np.where(_np.equal(A, B), 1.0, 0.0)", "scalar", "1 if x == y else 0"),
    ("exp", 1, "_np.exp(A)", "scalar", "exponential"),
    ("icloglog", 1, "-_np.expm1(-_np.exp(A))", "scalar", "1 - exp(-exp(x)), inverse of cloglog"),
    ("ifelse", 3, "_np.where(_np.not_equal(A, 0), B, C)", "scalar", "y if x != 0 else z (JAGS)"),
    ("ilogit", 1, "_sp.expit(A)", "scalar", "1 / (1 + exp(-x)), inverse of logit"),
    ("log", 1, "_np.log(A)", "scalar", "natural logarithm"),
    ("logfact", 1, "_sp.gammaln(A + 1.0)", "scalar", "log(x!)"),
    ("loggam", 1, "_sp.gammaln(A)", "scalar", "log Gamma(x)"),
    ("logit", 1, "_sp.logit(A)", "scalar", "log(x / (1 - x))"),
    ("phi", 1, "_sp.ndtr(A)", "scalar", "standard normal CDF, inverse of probit"),
    ("pow", 2, "_np.power(A, B)", "scalar", "x ^ y"),
    ("probit", 1, "_sp.ndtri(A)", "scalar", "standard normal quantile"),
    ("round", 1, "_np.floor(A + 0.5)", "scalar", "floor(x + 0.5): nearest integer, halves up (as JAGS)"),
    ("sin", 1, "_np.sin(A)", "scalar", "sine"),
    ("sinh", 1, "_np.sinh(A)", "scalar", "hyperbolic sine"),
    ("sqrt", 1, "_np.sqrt(A)", "scalar", "square root"),
    ("step", 1, "_np.heaviside(A, 1.0)", "scalar", "1 if x >= 0 else 0 (step(0) = 1)"),
    ("tan", 1, "_np.tan(A)", "scalar", "tangent"),
    ("tanh", 1, "_np.tanh(A)", "scalar", "hyperbolic tangent"),
    ("trunc", 1, "_np.floor(A)", "scalar", "greatest integer <= x (OpenBUGS manual; JAGS truncates toward 0)"),
    # ---- vector and matrix functions
    ("inprod", 2, "_np.sum(_np.multiply(A, B))", "vector", "sum of x[i] * y[i]"),
    ("interp.lin", 3,
     "_np.sum((C[1:] - C[:-1]) * _np.clip((_np.expand_dims(A, -1) - B[:-1]) / (B[1:] - B[:-1]), 0.0, 1.0),"
     " axis=-1) + C[0]",
     "vector", "piecewise-linear interpolation of knots (x[], y[]) at e; end values held outside"),
    ("eigen.vals", 1, "_la.eigvalsh(A)", "vector", "eigenvalues of a symmetric matrix, in increasing order"),
    ("inverse", 1, "_la.inv(A)", "vector", "matrix inverse"),
    ("logdet", 1, "_la.slogdet(A)[1]", "vector", "log of the determinant of a positive-definite matrix"),
    ("mean", 1, "_np.mean(A)", "vector", "mean of the components"),
    ("prod", 1, "_np.prod(A)", "vector", "product of the components"),
    ("rank", 2, f"_np.sum(_np.less_equal(A, _np.take(A, {_INDEX})))", "vector",
     "number of components <= v[s] (OpenBUGS)"),
    ("ranked", 2, f"_np.take(_np.sort(A), {_INDEX})", "vector", "the s-th smallest component"),
    ("sd", 1, "_np.sqrt(_np.sum((A - _np.mean(A)) ** 2) / (_np.size(A) - 1))", "vector",
     "standard deviation, n - 1 denominator"),
    ("sort", 1, "_np.sort(A)", "vector", "components in increasing order"),
    ("sum", 1, "_np.sum(A)", "vector", "sum of the components"),
    ("t", 1, "_np.transpose(A)", "vector", "matrix transpose (JAGS)"),
]

_FOLDS = [
    ("max", "maximum", "max", "largest argument, or largest component of one array"),
    ("min", "minimum", "min", "smallest argument, or smallest component of one array"),
]


def _table() -> MappingProxyType:
    rows = {}
    for name, n, template, kind, doc in _ROWS:
        rows[name] = BUGSFunction(name, (n, n), template, kind, doc)
    for name, pairwise, reduce, doc in _FOLDS:
        rows[name] = BUGSFunction(name, (1, None), f"_np.{pairwise}(A, B) or _np.{reduce}(A)", "vector",
                                  doc, builder=_fold(pairwise, reduce))
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
