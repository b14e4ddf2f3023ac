"""Merging linear log-density terms: ``lp = lp + t4`` (a log-Jacobian) followed later by
``lp = lp + (-0.999 * t4 - 0.001 * p7)`` (the prior) becomes one ``lp = lp + (0.001 * t4 -
0.001 * p7)``: one array-free statement with fewer operations for the gradient to replay.

``merge_linear(body, term)``: when ``term`` and the last statement of ``body`` that assigns ``lp``
are both sums of ``coefficient * name`` terms sharing a name, and no statement after that one
reads ``lp``, that statement is removed from ``body`` and the combined term is returned with
``True`` when the removed statement started ``lp`` (``lp = L``); otherwise ``None``.
"""
from __future__ import annotations

import ast

__all__ = ["merge_linear"]


def _linear(e, scale=1.0, out=None):
    """``{name: coefficient}`` of a sum of ``c * name`` terms, or None."""
    out = {} if out is None else out
    if isinstance(e, ast.Name):
        out[e.id] = out.get(e.id, 0.0) + scale
        return out
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        return _linear(e.operand, -scale, out)
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub)):
        if _linear(e.left, scale, out) is None:
            return None
        return _linear(e.right, -scale if isinstance(e.op, ast.Sub) else scale, out)
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mult):
        for c, x in ((e.left, e.right), (e.right, e.left)):
            value = _number(c)
            if value is not None and isinstance(x, ast.Name):
                out[x.id] = out.get(x.id, 0.0) + scale * value
                return out
    return None


def _number(e):
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        inner = _number(e.operand)
        return None if inner is None else -inner
    if isinstance(e, ast.Constant) and type(e.value) in (int, float):
        return float(e.value)
    return None


def _expr(coefs: dict) -> ast.expr:
    out = None
    for ident, c in coefs.items():
        if c == 0.0:
            continue
        term = ast.Name(ident, ast.Load()) if abs(c) == 1.0 else \
            ast.BinOp(ast.Constant(abs(c)), ast.Mult(), ast.Name(ident, ast.Load()))
        if out is None:
            out = term if c > 0 else ast.UnaryOp(ast.USub(), term)
        else:
            out = ast.BinOp(out, ast.Add() if c > 0 else ast.Sub(), term)
    return out if out is not None else ast.Constant(0.0)


def _reads_lp(st) -> bool:
    return any(isinstance(n, ast.Name) and n.id == "lp" for n in ast.walk(st))


def merge_linear(body: list, term: ast.expr):
    new = _linear(term)
    if new is None:
        return None
    for j in range(len(body) - 1, -1, -1):
        st = body[j]
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name) \
                and st.targets[0].id == "lp":
            break
        if _reads_lp(st):
            return None
    else:
        return None
    value, first = st.value, True
    if isinstance(value, ast.BinOp) and isinstance(value.left, ast.Name) and value.left.id == "lp":
        if not isinstance(value.op, (ast.Add, ast.Sub)) or _reads_lp(value.right):
            return None
        value, first = (value.right if isinstance(value.op, ast.Add)
                        else ast.UnaryOp(ast.USub(), value.right)), False
    elif _reads_lp(value):
        return None
    old = _linear(value)
    if old is None or not set(old) & set(new):
        return None
    for ident, c in new.items():
        old[ident] = old.get(ident, 0.0) + c
    del body[j]
    return _expr(old), first
