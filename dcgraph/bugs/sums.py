"""The sum over ``count`` broadcast values of a log-density term, with the scalar parts taken out:
``sum(a - s * v) = count * a - s * sum(v)`` when ``a`` and ``s`` are scalars. Fewer array
operations in the generated code means fewer array adjoints in its gradient (each costs a
broadcast and an ``unbroadcast`` sum), which is most of the gradient's time on small models.

``scalar_names(body)`` infers, from the generated statements so far, which names hold scalars:
a name is scalar when its value is a number, an integer subscript of an argument
(``theta[3]``, the flat parameter vector), or arithmetic and elementwise ``np``/``sp`` calls of scalars. Anything else is
taken as an array (the rewrite then leaves it inside the sum), so the inference errs only on the
safe side.
"""
from __future__ import annotations

import ast

__all__ = ["scalar_names", "sum_over"]

# elementwise calls: scalar in, scalar out
_ELEMENTWISE = {"exp", "log", "log1p", "expm1", "square", "sqrt", "abs", "sin", "cos", "tanh",
                "expit", "logit", "gammaln", "xlogy", "xlog1py", "ndtr", "log_expit", "power"}


def scalar_names(body: list, arguments=("theta",)) -> set:
    """The names assigned in ``body`` (a list of ``ast`` statements) that hold scalars."""
    out = set()
    for st in body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            ident = st.targets[0].id
            if _is_scalar(st.value, out, arguments):
                out.add(ident)
            else:
                out.discard(ident)
        else:                                   # a loop or branch: forget what it assigns
            for node in ast.walk(st):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    out.discard(node.id)
    return out


def _is_scalar(e, scalars: set, arguments) -> bool:
    if isinstance(e, ast.Constant):
        return isinstance(e.value, (int, float))
    if isinstance(e, ast.Name):
        return e.id in scalars
    if isinstance(e, ast.UnaryOp):
        return _is_scalar(e.operand, scalars, arguments)
    if isinstance(e, ast.BinOp):
        return _is_scalar(e.left, scalars, arguments) and _is_scalar(e.right, scalars, arguments)
    if isinstance(e, ast.Subscript):
        return (isinstance(e.value, ast.Name) and e.value.id in arguments
                and isinstance(e.slice, ast.Constant) and type(e.slice.value) is int)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and not e.keywords:
        return (isinstance(e.func.value, ast.Name) and e.func.value.id in ("np", "sp")
                and e.func.attr in _ELEMENTWISE and all(_is_scalar(a, scalars, arguments) for a in e.args))
    return False


def sum_over(e: ast.expr, count: int, scalars: set) -> ast.expr:
    """An expression for ``np.sum(e)``, where ``e`` broadcasts to ``count`` values. Each
    sub-expression left in an ``np.sum`` is one that still has ``count`` values."""
    def scalar(x):
        return _is_scalar(x, scalars, ())

    def go(x):
        if scalar(x):
            if isinstance(x, ast.Constant):
                return ast.Constant(float(count) * x.value)
            if isinstance(x, ast.BinOp) and isinstance(x.op, ast.Mult) and isinstance(x.left, ast.Constant):
                return ast.BinOp(ast.Constant(float(count) * x.left.value), ast.Mult(), x.right)
            return ast.BinOp(ast.Constant(float(count)), ast.Mult(), x)
        # split only around a known scalar: the other side then has all ``count`` values (two
        # array-looking sides stay in one sum, as one may be a scalar the inference missed)
        if isinstance(x, ast.BinOp) and isinstance(x.op, (ast.Add, ast.Sub)) and (
                scalar(x.left) or scalar(x.right)):
            return ast.BinOp(go(x.left), x.op, go(x.right))
        if isinstance(x, ast.UnaryOp) and isinstance(x.op, ast.USub):
            return ast.UnaryOp(ast.USub(), go(x.operand))
        if isinstance(x, ast.BinOp) and isinstance(x.op, ast.Mult) and scalar(x.left):
            return ast.BinOp(x.left, ast.Mult(), go(x.right))
        if isinstance(x, ast.BinOp) and isinstance(x.op, (ast.Mult, ast.Div)) and scalar(x.right):
            return ast.BinOp(go(x.left), x.op, x.right)
        return ast.Call(ast.Attribute(ast.Name("np", ast.Load()), "sum", ast.Load()), [x], [])
    return go(e)
