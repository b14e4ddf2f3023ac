"""Walks over BUGS syntax trees: the variables a statement reads, the functions it calls."""
from __future__ import annotations

from . import syntax as S

__all__ = ["collect_refs", "collect_calls", "statement_exprs"]


def collect_refs(expr, out: list):
    """Variables whose values ``expr`` reads (not those only used inside an index)."""
    if isinstance(expr, S.Var):
        out.append(expr)
    elif isinstance(expr, S.Call):
        for a in expr.args:
            collect_refs(a, out)
    elif isinstance(expr, S.Unary):
        collect_refs(expr.operand, out)
    elif isinstance(expr, S.Binary):
        collect_refs(expr.left, out)
        collect_refs(expr.right, out)


def statement_exprs(ast) -> list:
    """The expressions a statement reads: the right-hand side, or the parameters and bounds."""
    if isinstance(ast, S.Logical):
        return [ast.expr]
    exprs = list(ast.dist.args)
    if ast.bounds is not None:
        exprs += [b for b in (ast.bounds.lower, ast.bounds.upper) if b is not None]
    return exprs


def collect_calls(expr, out: list):
    """Function calls in ``expr``, index expressions included."""
    if isinstance(expr, S.Call):
        out.append(expr)
        for a in expr.args:
            collect_calls(a, out)
    elif isinstance(expr, S.Unary):
        collect_calls(expr.operand, out)
    elif isinstance(expr, S.Binary):
        collect_calls(expr.left, out)
        collect_calls(expr.right, out)
    elif isinstance(expr, S.Var):
        for i in expr.indices:
            if isinstance(i, S.Range):
                collect_calls(i.lower, out)
                collect_calls(i.upper, out)
            elif i is not None:
                collect_calls(i, out)
