"""Log-density terms, transforms and draws of scalar stochastic statements (a mixin of the
code generator, ``codegen._Gen``).

``bounds`` gives a statement's support (the family's, tightened by ``T``/``C``/``I`` bounds, which
may read parameters); ``forward``/``inverse`` the map from unconstrained values (identity,
``lo + exp(u)``, ``hi - exp(u)``, ``lo + (hi - lo) expit(u)``) with its log-Jacobian; ``logpdf``
the density term (its numeric addends moved into one constant by ``add_lp``), ``truncation`` the
``T(,)`` normalisation; ``sample`` the ancestral draw.
"""
from __future__ import annotations

import ast

import numpy as np

from .emit import attr_call, name, num
from .linear import merge_linear
from .sums import scalar_names, sum_over
from .templates import callable_of

__all__ = ["ScalarStatements"]


class ScalarStatements:
    """Methods of ``_Gen`` for scalar stochastic statements (see the module docstring)."""

    def bounds(self, part, fam, params, ex):
        em, st = self.em, part.statement.ast
        lo = hi = None
        if fam.support in ("positive", "unit", "count", "positive_count", "binary", "count_n"):
            lo = num(0.0)
        if fam.support == "unit":
            hi = num(1.0)
        if fam.support == "interval":
            lo, hi = params["a"], params["b"]
        if fam.support == "above_c":
            lo = params["c"]
        if fam.support in ("above_mu", "gpar"):
            lo = params["mu"]
        if fam.support in ("gev", "gpar"):
            lo, hi = self._shape_edge(part, fam, params, lo)
        b = st.bounds
        if b is not None:
            if b.lower is not None:
                lo = self._tighter(lo, em.simple(ex(b.lower)), "maximum")
            if b.upper is not None:
                hi = self._tighter(hi, em.simple(ex(b.upper)), "minimum")
        return lo, hi

    def _shape_edge(self, part, fam, params, lo):
        """``dgev``/``dgpar``: the edge ``mu - sigma / eta`` bounds below (``eta > 0``, ``dgev``) or
        above (``eta < 0``); the sign of ``eta`` must be known at compile time."""
        eta = self.em.constant_value(params["eta"])
        signs = set() if eta is None else set(np.sign(np.asarray(eta, dtype=float)).ravel().tolist())
        if eta is None or len(signs) > 1:
            if eta is None and fam.support == "gpar":
                return lo, None
            if eta is None:
                return None, None
            raise self.g.error("the shape parameter eta must have one sign over the loop",
                               part.statement.ast)
        eta = np.asarray(eta, dtype=float)
        if np.all(eta == 0):
            return lo, None
        edge = self.em.simple(ast.BinOp(params["mu"], ast.Sub(), ast.BinOp(
            params["sigma"], ast.Div(), self.em.const(eta))))
        if np.all(eta > 0):
            return (edge if fam.support == "gev" else lo), None
        return lo, edge

    def _tighter(self, old, new, how):
        if old is None:
            return new
        a, b = self.em.constant_value(old), self.em.constant_value(new)
        if a is not None and b is not None:
            return self.em.const(getattr(np, how)(a, b))
        return self.em.simple(attr_call("np", how, old, new))

    def forward(self, u, lo, hi, size):
        em = self.em
        total = (lambda v: v) if size is None else (lambda v: attr_call("np", "sum", v))
        if lo is None and hi is None:
            return u
        if hi is None or lo is None:
            self.jacobian(total(u))
            e = attr_call("np", "exp", u)
            if hi is None:
                return e if em.constant_value(lo) is not None and np.all(em.constant_value(lo) == 0) \
                    else ast.BinOp(lo, ast.Add(), e)
            return ast.BinOp(hi, ast.Sub(), e)
        a, b = em.constant_value(lo), em.constant_value(hi)
        width = em.simple(ast.BinOp(hi, ast.Sub(), lo)) if a is None or b is None \
            else em.const(np.asarray(b, dtype=float) - a)
        jac = ast.BinOp(attr_call("sp", "log_expit", u), ast.Add(),
                        attr_call("sp", "log_expit", ast.UnaryOp(ast.USub(), u)))
        jac = ast.BinOp(attr_call("np", "log", width), ast.Add(), jac)
        self.jacobian(total(jac))
        return ast.BinOp(lo, ast.Add(), ast.BinOp(width, ast.Mult(), attr_call("sp", "expit", u)))

    def inverse(self, x, lo, hi):
        if lo is None and hi is None:
            return x
        if hi is None:
            zero = self.em.constant_value(lo)
            if zero is not None and np.all(np.asarray(zero) == 0):
                return attr_call("np", "log", x)
            return attr_call("np", "log", ast.BinOp(x, ast.Sub(), lo))
        if lo is None:
            return attr_call("np", "log", ast.BinOp(hi, ast.Sub(), x))
        return attr_call("sp", "logit", ast.BinOp(ast.BinOp(x, ast.Sub(), lo), ast.Div(),
                                                  ast.BinOp(hi, ast.Sub(), lo)))

    def jacobian(self, term):
        if self.mode == "density":
            self.add_lp(term)

    def start_loop(self):
        """Before a loop body: ``lp`` must exist, and terms stay inside the loop."""
        if self.mode in ("density", "joint") and self.lp_zero:
            self.em.assign("lp", num(0.0))
            self.lp_zero = False
        self.in_loop = True

    def add_lp(self, term, count=None, x=None):
        """``lp += term`` with numeric addends moved into the constant ``const_lp``; for a term
        summed over ``count`` values (``np.sum`` applied here) only when ``x``, the values, stays
        in the rest (so the rest still has ``count`` elements)."""
        em = self.em
        term = em.fold(term)
        if self.in_loop:                       # a loop body runs many times: no constant moves
            if count is not None:
                term = attr_call("np", "sum", term)
            if self.mode in ("density", "joint"):
                em.assign("lp", ast.BinOp(name("lp"), ast.Add(), term))
            return
        rest, c = _split_constant(em, term)
        if count is not None:
            if rest is None or x is None or not any(
                    isinstance(n, ast.Name) and n.id == x.id for n in ast.walk(rest)):
                rest, c = attr_call("np", "sum", term), 0.0
            else:
                rest, c = sum_over(rest, count, scalar_names(em.body)), c * count
        self.const_lp += c
        if rest is None:
            return
        merged = None if self.lp_zero else merge_linear(em.body, rest)
        if merged is not None:
            rest, self.lp_zero = merged
        if self.lp_zero:
            em.assign("lp", rest)
        elif isinstance(rest, ast.UnaryOp) and isinstance(rest.op, ast.USub):
            em.assign("lp", ast.BinOp(name("lp"), ast.Sub(), rest.operand))
        else:
            em.assign("lp", ast.BinOp(name("lp"), ast.Add(), rest))
        self.lp_zero = False

    def logpdf(self, part, fam, params, x, lo, hi, size):
        em, st = self.em, part.statement.ast
        mapping = dict(params, x=x)
        values = [em.constant_value(v) for v in mapping.values()]
        term = em.template(fam.logpdf, mapping)
        b = st.bounds
        trunc = b is not None and b.kind == "T" and st.dist.name != "dflat"
        if all(v is not None for v in values) and not trunc:
            with np.errstate(all="ignore"):
                self.const_lp += float(np.sum(callable_of(tuple(mapping), fam.logpdf)(*values)))
            return
        self.add_lp(term, size, x if isinstance(x, ast.Name) else None)
        if trunc:
            self.truncation(part, fam, params, b, size, lo, hi)

    def truncation(self, part, fam, params, b, size, lo, hi):
        """``- log(F(hi) - F(lo))`` for ``T(lo, hi)`` (``F(lo - 1)`` for discrete families):
        from the family's cdf template, or at compile time (``distributions.to_dist``) when the
        parameters and bounds are constants."""
        em, st = self.em, part.statement.ast
        consts = [em.constant_value(params[p]) for p in fam.params]
        lo_c = em.constant_value(lo) if b.lower is not None else 0.0
        hi_c = em.constant_value(hi) if b.upper is not None else 0.0
        if all(c is not None for c in consts + [lo_c, hi_c]):
            from .distributions import DISTRIBUTIONS as FAMILIES
            d = FAMILIES[st.dist.name].to_dist(*consts)
            below = 0.0 if b.lower is None else d.cdf(np.asarray(lo_c) - 1.0 if fam.discrete
                                                      else lo_c)
            above = 1.0 if b.upper is None else d.cdf(hi_c)
            with np.errstate(divide="ignore"):
                log_mass = np.log(np.asarray(above, dtype=float) - below)
            total = float(np.sum(np.broadcast_to(log_mass, (size,) if size else np.shape(log_mass))))
            self.add_lp(num(-total))
            return
        if fam.discrete or fam.cdf is None:
            raise self.g.error(f"T(,) truncation of '{st.dist.name}' needs constant parameters "
                               f"and bounds (its cdf is not available in generated code)", st)

        def cdf(at):
            return em.template(fam.cdf, dict(params, x=at))
        lo_e = cdf(lo) if b.lower is not None else num(0.0)
        hi_e = cdf(hi) if b.upper is not None else num(1.0)
        mass = attr_call("np", "log", ast.BinOp(hi_e, ast.Sub(), lo_e))
        if size is not None:
            mass = attr_call("np", "sum", attr_call("np", "broadcast_to", mass,
                             ast.Tuple([ast.Constant(size)], ast.Load())))
        self.add_lp(ast.UnaryOp(ast.USub(), mass))

    def sample(self, part, fam, params, lo, hi, size, index):
        em = self.em
        size_ast = ast.Constant(None) if size is None else ast.Tuple([ast.Constant(size)], ast.Load())
        draw = em.template(fam.sample, dict(params, rng=name("rng"), SIZE=size_ast))
        if part.statement.ast.bounds is not None:
            draw = ast.Call(name("_bounded"), [ast.Lambda(ast.arguments([], [], None, [], [], None, []),
                                               draw), lo or num(-np.inf), hi or num(np.inf)], [])
        draw = em.simple(attr_call("np", "asarray", draw, dtype=ast.Constant("float")))
        if part.role == "observed":
            return draw
        fixed = ast.Subscript(name("fixed"), ast.Constant(self.slot_of[part.id]), ast.Load())
        at = index if isinstance(index, ast.AST) else \
            ast.Constant(index if size is None and part.statement.loops else None)
        return ast.Call(name("_merge"), [draw, fixed, at], [])


def _split_constant(em, e):
    """``(rest, c)`` with ``e == rest + c`` over a chain of ``+``/``-``: ``c`` the sum of its
    numeric scalar addends, ``rest`` the others (None when there are none)."""
    value = em.constant_value(e) if not isinstance(e, ast.Name) else \
        em.namespace.get(e.id) if isinstance(em.namespace.get(e.id), float) else None
    if value is not None and np.ndim(value) == 0:
        return None, float(value)
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub)):
        ra, ca = _split_constant(em, e.left)
        rb, cb = _split_constant(em, e.right)
        sub = isinstance(e.op, ast.Sub)
        if rb is None:
            rest = ra
        elif ra is None:
            rest = ast.UnaryOp(ast.USub(), rb) if sub else rb
        else:
            rest = ast.BinOp(ra, e.op, rb)
        return rest, ca - cb if sub else ca + cb
    return e, 0.0
