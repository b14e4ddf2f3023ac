"""Compile-time evaluation of BUGS expressions: loop bounds, indices and data transformations.

``Evaluator(lookup, where)`` evaluates a syntax-tree expression under a loop environment (a dict of
loop variable -> int). ``lookup(var, offsets, shape)`` returns the values of the referenced elements
or raises ``NotConstant``; ``resolve(var, env, shapes)`` turns a ``Var`` into the flat row-major
offsets it denotes and their shape (``()`` for one element, ``(n,)`` for a range, ...). Functions
come from ``functions.FUNCTIONS``; nothing is evaluated with ``eval`` on user text.
"""
from __future__ import annotations

import operator

import numpy as np

from . import syntax as S
from .functions import FUNCTIONS

__all__ = ["Evaluator", "NotConstant", "BINARY"]

def _divide(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b != 0:
        return a / b
    return np.divide(a, b)


def _power(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > 0:
        return float(a) ** b
    return np.power(np.asarray(a, dtype=float), b)


BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": _divide, "^": _power}


class NotConstant(Exception):
    """The expression depends on a node whose value is not known at compile time."""

    def __init__(self, node_name: str):
        super().__init__(node_name)
        self.node_name = node_name


class Evaluator:
    """Evaluates expressions to numpy values; ``error(message, ast_node)`` builds located errors."""

    def __init__(self, lookup, shapes: dict, error):
        self.lookup = lookup
        self.shapes = shapes
        self.error = error

    # -- indices ---------------------------------------------------------------------------
    def integer(self, expr, env, what: str) -> int:
        if isinstance(expr, S.Var) and not expr.indices and expr.name in env:
            return env[expr.name]
        value = self.value(expr, env)
        if isinstance(value, int):
            return value
        value = np.asarray(value, dtype=float)
        if value.shape != () or not np.isfinite(value) or value != np.floor(value):
            raise self.error(f"{what} must be a whole number, got {float(value)!r}"
                             if value.shape == () else f"{what} must be a single number", expr)
        return int(value)

    def resolve(self, var: S.Var, env: dict, shape=None):
        """``(offsets, shape)``: the flat offsets (int array) of ``var``'s elements in its array."""
        shape = self.shapes.get(var.name) if shape is None else shape
        if shape is None:
            raise self.error(f"undefined variable '{var.name}'", var)
        if len(var.indices) != len(shape):
            raise self.error(f"'{var.name}' has {len(shape)} dimension(s) (shape "
                             f"{tuple(int(s) for s in shape)}) but is used with "
                             f"{len(var.indices)} index(es)", var)
        if all(ix is not None and not isinstance(ix, S.Range) for ix in var.indices):
            flat = 0
            for dim, (index, size) in enumerate(zip(var.indices, shape)):
                i = self.integer(index, env, f"index of '{var.name}'")
                if not 1 <= i <= size:
                    raise self.error(f"index {i} out of range for '{var.name}' "
                                     f"(dimension {dim + 1} is 1..{size})", var)
                flat = flat * size + (i - 1)
            return np.array([flat], dtype=np.int64), ()
        axes, out_shape = [], []
        for dim, (index, size) in enumerate(zip(var.indices, shape)):
            if index is None:
                values = np.arange(1, size + 1)
                out_shape.append(size)
            elif isinstance(index, S.Range):
                lo = self.integer(index.lower, env, f"range start of '{var.name}'")
                hi = self.integer(index.upper, env, f"range end of '{var.name}'")
                values = np.arange(lo, hi + 1)
                out_shape.append(len(values))
            else:
                values = np.array([self.integer(index, env, f"index of '{var.name}'")])
            bad = values[(values < 1) | (values > size)]
            if len(bad):
                raise self.error(f"index {int(bad[0])} out of range for '{var.name}' "
                                 f"(dimension {dim + 1} is 1..{size})", var)
            axes.append(values - 1)
        if not axes:
            return np.zeros(1, dtype=np.int64), ()
        grids = np.meshgrid(*axes, indexing="ij")
        flat = np.ravel_multi_index(tuple(g.ravel() for g in grids), shape)
        return flat.astype(np.int64), tuple(out_shape)

    # -- values ----------------------------------------------------------------------------
    def value(self, expr, env: dict):
        if isinstance(expr, S.Number):
            return expr.value
        if isinstance(expr, S.Var):
            if not expr.indices and expr.name in env:
                return env[expr.name]
            offsets, shape = self.resolve(expr, env)
            values = np.asarray(self.lookup(expr, offsets), dtype=float)
            if shape:
                return values.reshape(shape)
            value = float(values[0])
            return int(value) if value.is_integer() and abs(value) < 2 ** 53 else value
        if isinstance(expr, S.Unary):
            operand = self.value(expr.operand, env)
            return -operand if expr.op == "-" else operand
        if isinstance(expr, S.Binary):
            with np.errstate(all="ignore"):
                return BINARY[expr.op](self.value(expr.left, env), self.value(expr.right, env))
        if isinstance(expr, S.Call):
            fn = FUNCTIONS.get(expr.name)
            if fn is None:
                raise self.error(f"unknown function '{expr.name}'", expr)
            try:
                fn.form(len(expr.args))
            except TypeError as err:
                raise self.error(str(err), expr) from None
            args = [self.value(a, env) for a in expr.args]
            with np.errstate(all="ignore"):
                return fn.evaluate(*args)
        raise self.error(f"unexpected expression {type(expr).__name__}", expr)
