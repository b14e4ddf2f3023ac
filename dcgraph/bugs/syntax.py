"""The BUGS syntax tree: what the parser produces and the graph compiler consumes.

A closed set of node kinds, each a frozen dataclass carrying ``line`` and ``col`` (1-based, in the
model text) so every later error can name the place. Names keep their BUGS spelling (``alpha.c``);
nothing in this tree is ever pasted into generated code.

Statements
    ``Model(body)``                           the whole ``model { ... }``
    ``For(var, lower, upper, body)``          ``for (var in lower:upper) { body }``
    ``Stochastic(target, dist, bounds)``      ``target ~ dist`` with optional ``T(,)``/``C(,)``/``I(,)``
    ``Logical(target, expr, link)``           ``target <- expr`` or ``link(target) <- expr``

Expressions
    ``Number(value)``                         a literal, already parsed to float or int
    ``Var(name, indices)``                    ``name`` (indices ``()``) or ``name[i, j]``; each index is
                                              an expression, a ``Range`` or ``None`` (empty: ``x[i, ]``)
    ``Range(lower, upper)``                   ``lower:upper`` inside an index
    ``Call(name, args)``                      a BUGS function or a distribution (``dnorm(mu, tau)``)
    ``Unary(op, operand)``                    ``-x`` (op is ``"-"`` or ``"+"``)
    ``Binary(op, left, right)``               ``+ - * / ^`` (``^`` is ``pow``)
    ``Bounds(kind, lower, upper)``            ``kind`` in ``"T"``, ``"C"``, ``"I"``; either bound may be None
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union


@dataclass(frozen=True)
class Number:
    value: Union[int, float]
    line: int = 0
    col: int = 0


@dataclass(frozen=True)
class Range:
    lower: "Expr"
    upper: "Expr"
    line: int = 0
    col: int = 0


@dataclass(frozen=True)
class Var:
    name: str
    indices: tuple = ()          # of Expr | Range | None
    line: int = 0
    col: int = 0


@dataclass(frozen=True)
class Call:
    name: str
    args: tuple = ()             # of Expr (a distribution's or function's arguments)
    line: int = 0
    col: int = 0


@dataclass(frozen=True)
class Unary:
    op: str
    operand: "Expr"
    line: int = 0
    col: int = 0


@dataclass(frozen=True)
class Binary:
    op: str
    left: "Expr"
    right: "Expr"
    line: int = 0
    col: int = 0


Expr = Union[Number, Var, Call, Unary, Binary]


@dataclass(frozen=True)
class Bounds:
    kind: str                    # "T" truncation, "C" censoring, "I" (WinBUGS; read as OpenBUGS does)
    lower: Optional[Expr]
    upper: Optional[Expr]
    line: int = 0
    col: int = 0


@dataclass(frozen=True)
class Stochastic:
    target: Var
    dist: Call
    bounds: Optional[Bounds] = None
    line: int = 0
    col: int = 0


@dataclass(frozen=True)
class Logical:
    target: Var
    expr: Expr
    link: Optional[str] = None   # "logit", "log", "cloglog", "probit" when written on the left
    line: int = 0
    col: int = 0


@dataclass(frozen=True)
class For:
    var: str
    lower: Expr
    upper: Expr
    body: tuple = ()             # of Statement
    line: int = 0
    col: int = 0


Statement = Union[Stochastic, Logical, For]


@dataclass(frozen=True)
class Model:
    body: tuple = ()             # of Statement
    line: int = 0
    col: int = 0
