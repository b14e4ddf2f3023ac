"""Printing syntax trees and the sequential program in BUGS syntax.

``render_expr(e, env)`` writes an expression back as BUGS text; with a loop environment ``env``
(loop variable -> value) indices are evaluated where they can be (``x[i - 1]`` with i = 3 prints
``x[2]``). ``render_program(graph, blocks)`` prints the blocks of ``sequential``: ``~`` for
parameters, ``≂`` for observed statements, ``<-`` for logical ones; loops keep their headers (a
reversed loop prints ``for (i in rev(lo:hi))``), parts covering only some of a statement's
instances say how many, and unrolled blocks list their instances in execution order.
"""
from __future__ import annotations

from . import syntax as S

__all__ = ["render_expr", "render_program", "MARKS"]

MARKS = {"param": "~", "observed": "≂", "logical": "<-"}
_PREC = {"+": 1, "-": 1, "*": 2, "/": 2, "^": 4}


def _number(v) -> str:
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return f"{v:.1f}"
    return repr(v) if not isinstance(v, float) else f"{v:g}" if abs(v) < 1e-4 or abs(v) > 1e15 \
        else repr(v)


def _index(e, env, evaluate) -> str:
    if e is None:
        return ""
    if isinstance(e, S.Range):
        return f"{_index(e.lower, env, evaluate)}:{_index(e.upper, env, evaluate)}"
    if env and evaluate is not None:
        try:
            return str(evaluate(e, env))
        except Exception:       # not evaluable here (reads a parameter): print it as written
            pass
    return render_expr(e, env, evaluate)


def render_expr(e, env=None, evaluate=None, prec: int = 0) -> str:
    if isinstance(e, S.Number):
        return _number(e.value)
    if isinstance(e, S.Var):
        if not e.indices:
            return str(env[e.name]) if env and e.name in env else e.name
        return f"{e.name}[{', '.join(_index(i, env, evaluate) for i in e.indices)}]"
    if isinstance(e, S.Call):
        return f"{e.name}({', '.join(render_expr(a, env, evaluate) for a in e.args)})"
    if isinstance(e, S.Unary):
        text = f"{e.op}{render_expr(e.operand, env, evaluate, 3)}"
        return f"({text})" if prec > 3 else text
    if isinstance(e, S.Binary):
        p = _PREC[e.op]
        left = render_expr(e.left, env, evaluate, p if e.op != "^" else p + 1)
        right = render_expr(e.right, env, evaluate, p + 1 if e.op != "^" else p)
        text = f"{left} {e.op} {right}"
        return f"({text})" if p < prec else text
    raise TypeError(type(e).__name__)


def render_statement(ast, role: str, env=None, evaluate=None) -> str:
    target = render_expr(ast.target, env, evaluate)
    if isinstance(ast, S.Logical):
        lhs = f"{ast.link}({target})" if ast.link else target
        return f"{lhs} <- {render_expr(ast.expr, env, evaluate)}"
    text = f"{target} {MARKS[role]} {render_expr(ast.dist, env, evaluate)}"
    b = ast.bounds
    if b is not None:
        lo = "" if b.lower is None else render_expr(b.lower, env, evaluate)
        hi = "" if b.upper is None else render_expr(b.upper, env, evaluate)
        text += f" {b.kind}({lo}, {hi})"
    return text


def render_program(graph, blocks) -> str:
    from .evaluate import Evaluator

    ev = Evaluator(lambda var, offs: graph.data[var.name].ravel()[offs], graph.shapes, graph.error)

    def evaluate(e, env):
        value = ev.value(e, env)
        if float(value) != int(value):
            raise ValueError(value)
        return int(value)
    lines = []
    for block in blocks:
        if block.kind == "unrolled":
            lines.append("# unrolled")
            for part, inst in block.steps:
                lines.append(render_statement(part.statement.ast, part.role, inst.env, evaluate))
            continue
        lead = block.parts[0].statement
        depth = len(lead.loops)
        dirs = block.directions or (1,) * depth
        for k, loop in enumerate(lead.loops):
            rng = f"{render_expr(loop.lower)}:{render_expr(loop.upper)}"
            rng = f"rev({rng})" if dirs[k] < 0 else rng
            lines.append("    " * k + f"for ({loop.var} in {rng}) {{")
        for part in block.parts:
            rename = {old.var: new.var for old, new in zip(part.statement.loops, lead.loops)}
            text = render_statement(_renamed(part.statement.ast, rename), part.role)
            if not part.complete:
                text += f"    # {len(part.instances)} of {len(part.statement.instances)}"
            lines.append("    " * depth + text)
        for k in reversed(range(depth)):
            lines.append("    " * k + "}")
    return "\n".join(lines)


def _renamed(node, rename: dict):
    """A copy of a statement or expression with loop variables renamed (for fused loops)."""
    if not rename or all(k == v for k, v in rename.items()):
        return node
    if isinstance(node, S.Var):
        if not node.indices and node.name in rename:
            return S.Var(rename[node.name], (), node.line, node.col)
        return S.Var(node.name, tuple(_renamed(i, rename) for i in node.indices),
                     node.line, node.col)
    if node is None or isinstance(node, S.Number):
        return node
    fields = {}
    for f in node.__dataclass_fields__:
        v = getattr(node, f)
        if isinstance(v, tuple):
            v = tuple(_renamed(x, rename) if not isinstance(x, (str, int)) else x for x in v)
        elif hasattr(v, "__dataclass_fields__"):
            v = _renamed(v, rename)
        fields[f] = v
    return type(node)(**fields)
