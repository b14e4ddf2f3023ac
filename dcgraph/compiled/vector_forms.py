"""Statement forms the vectoriser (``vectorise``) understands, read from generated lines.

A line of straight-line code is split into a *template* (its text with each operand, a local
variable ``v12``/``g7``/``g0_3`` or a number literal, replaced by ``_Po<i>``) and its
*operands* (the replaced texts, in order). Names and numbers share one mark, so the first
iteration of ``s = 0.0; for ...: s = s + t`` (``v7 = 0.0 + v6``) has the template of the
others (``v12 = v7 + v11``); the run decides per operand column what it is. Lines of one
unrolled loop's iterations have equal templates. ``form(template, ns)`` classifies a template
once (cached by the caller):

* ``Form("expr", tree)``: ``_Po0 = <expression>`` of operands, literals, ``+ - * /``, unary
  ``-``/``+`` and one-argument calls of the functions in ``FUNCTIONS`` (by the object the
  namespace binds the name to);
* ``Form("read", ...)``: ``_Po0 = _Po1[_Po2]`` (a list or tuple read at a literal position);
* ``Form("typeguard", ...)``: ``if _type(_Po0) is not T: raise _GF(_Po1)``;
* ``Form("constguard", ...)``: ``if <literal> <cmp> <literal>: raise _GF(...)``;
* None: anything else (a barrier).

Placeholders are numbered in order of appearance (``_Po0 = _Po1 * _Po2``), so the number is
the operand's index; ``_P`` names are used by no code generator.

``FUNCTIONS`` is the table: the scalar function, its numpy ufunc, and whether the two are
both correctly rounded (IEEE ``sqrt``: the same bits on every input). The ufunc is used where
bitwise agreement is not required (the backward pass); in the forward pass only when exact,
or when ``agrees(fn)``: on this machine and numpy build, the ufunc gave the bits of the
``math`` function on every one of ``CALIBRATION`` inputs spread over many magnitudes (tried
once per process, on first use). On the x86-64 machine of the benchmarks (numpy 2.4) float64
``sin``/``cos`` agree (numpy turned its SIMD float64 ``sin``/``cos`` off in 1.25, numpy PR
#23933), while ``exp``/``log``/``tanh`` have SIMD kernels that differ in the last bit on a few
percent of inputs; a SIMD ``sin`` in a later numpy would fail the calibration.
"""
from __future__ import annotations

import ast
import functools
import itertools
import math
import operator
import re

import numpy as np

__all__ = ["Form", "form", "templates", "templates_and_operands", "operands", "agrees",
           "FUNCTIONS"]

# a local name ``\b[vg]\d+(?:_\d+)?\b`` or a number ``(?<![\w.])\d+(?:\.\d*)?(?:[eE][-+]?\d+)?
# (?![\w.])``, written to begin with one character class, so the regex engine skips to the
# next candidate character instead of trying both alternatives at every position
_OPERAND = re.compile(r"[vg\d](?:(?<=[vg])(?<!\w[vg])\d+(?:_\d+)?\b"
                      r"|(?<=\d)(?<![\w.]\d)\d*(?:\.\d*)?(?:[eE][-+]?\d+)?(?![\w.]))")

_SPLIT = re.compile(f"({_OPERAND.pattern})")     # the same matches, kept by ``split``

# scalar function -> (numpy ufunc, exact: the ufunc gives the same bits on every input)
FUNCTIONS = {math.sin: (np.sin, False), math.cos: (np.cos, False), math.exp: (np.exp, False),
             math.log: (np.log, False), math.tanh: (np.tanh, False), math.tan: (np.tan, False),
             math.atan: (np.arctan, False), math.log1p: (np.log1p, False),
             math.expm1: (np.expm1, False), math.sqrt: (np.sqrt, True)}
CALIBRATION = 1 << 14
_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
_UNARY = {ast.USub: "-", ast.UAdd: "+"}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
            ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}


class Form:
    """A classified template: ``kind`` and its parts (see the module)."""

    __slots__ = ("kind", "tree", "slots", "extra")

    def __init__(self, kind, tree=None, slots=(), extra=None):
        self.kind, self.tree, self.slots, self.extra = kind, tree, slots, extra


def templates(text: str) -> list:
    """The templates of the lines of ``text`` (in one pass): operands marked ``\\x00``
    until ``form`` numbers the marks."""
    return _OPERAND.sub("\x00", text).split("\n")


def templates_and_operands(text: str) -> tuple:
    """``(templates(text), flat, offsets)`` in one regex pass: ``flat`` holds the operands of
    every line in order, line ``i``'s being ``flat[offsets[i]:offsets[i + 1]]`` (what
    ``operands`` gives for it)."""
    pieces = _SPLIT.split(text)                   # text, operand, text, operand, ..., text
    shapes = "\x00".join(pieces[0::2]).split("\n")
    offsets = [0, *itertools.accumulate(map(str.count, shapes, itertools.repeat("\x00")))]
    return shapes, pieces[1::2], offsets


def operands(line: str) -> list:
    """The operands of a line, in order: local names and numbers (as written)."""
    return _OPERAND.findall(line)


def numbered(template: str) -> str:
    """The template with its marks as numbered placeholders ``_Po<i>``."""
    parts = template.split("\x00")
    return "".join(part + (f"_Po{k}" if k < len(parts) - 1 else "")
                   for k, part in enumerate(parts))


def form(template: str, ns: dict):
    """The ``Form`` of a template (None: not one the vectoriser handles)."""
    try:
        tree = ast.parse(numbered(template)).body
    except SyntaxError:
        return None
    if len(tree) != 1:
        return None
    stmt = tree[0]
    if type(stmt) is ast.Assign and len(stmt.targets) == 1 \
            and _is(stmt.targets[0], "_Po0", exact=True):
        value = stmt.value
        if type(value) is ast.Subscript and _is(value.value, "_Po") and _is(value.slice, "_Po"):
            return Form("read", value, (value.value.id, value.slice.id))
        return Form("expr", value) if _expression(value, ns) else None
    if type(stmt) is ast.If and not stmt.orelse and len(stmt.body) == 1 \
            and type(stmt.body[0]) is ast.Raise and _guard_raise(stmt.body[0]):
        test, code = stmt.test, stmt.body[0].exc.args[0].id
        if type(test) is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) is ast.IsNot \
                and type(test.left) is ast.Call and _is(test.left.func, "_type", exact=True) \
                and len(test.left.args) == 1 and _is(test.left.args[0], "_Po") \
                and type(test.comparators[0]) is ast.Name \
                and isinstance(ns.get(test.comparators[0].id), type):
            return Form("typeguard", None, (test.left.args[0].id, code),
                        ns[test.comparators[0].id])
        if type(test) is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) in _COMPARE \
                and _is(test.left, "_Po") and _is(test.comparators[0], "_Po"):
            return Form("constguard", None, (test.left.id, test.comparators[0].id, code),
                        _COMPARE[type(test.ops[0])])
    return None


def _is(node, prefix: str, exact: bool = False) -> bool:
    return type(node) is ast.Name and (node.id == prefix if exact else node.id.startswith(prefix))


def _guard_raise(stmt) -> bool:
    exc = stmt.exc
    return stmt.cause is None and type(exc) is ast.Call and _is(exc.func, "_GF", exact=True) \
        and len(exc.args) == 1 and _is(exc.args[0], "_Po")


def _expression(node, ns: dict) -> bool:
    t = type(node)
    if t is ast.Name:
        return node.id.startswith("_Po")
    if t is ast.BinOp:
        return type(node.op) in _BINARY and _expression(node.left, ns) \
            and _expression(node.right, ns)
    if t is ast.UnaryOp:
        return type(node.op) in _UNARY and _expression(node.operand, ns)
    if t is ast.Call:
        fn = ns.get(node.func.id) if type(node.func) is ast.Name else None
        try:
            known = fn in FUNCTIONS
        except TypeError:
            return False
        return known and len(node.args) == 1 and not node.keywords \
            and _expression(node.args[0], ns)
    return False


@functools.cache
def agrees(fn) -> bool:
    """Does ``fn``'s ufunc give the bits of ``fn`` here (on the calibration inputs)?"""
    ufunc, exact = FUNCTIONS[fn]
    if exact:
        return True
    k = np.arange(CALIBRATION, dtype=float)          # a low-discrepancy sequence in (-1, 1)
    mags = np.repeat(10.0 ** np.arange(-8, 9), CALIBRATION // 17 + 1)[:CALIBRATION]
    x = (2.0 * ((k * 0.6180339887498949 + 0.5 * k * k * 1.4142135623730951e-7) % 1.0) - 1.0) * mags
    if fn in (math.log, math.sqrt):
        x = np.abs(x)
    elif fn is math.log1p:
        x = np.abs(x) - 0.5
    elif fn in (math.exp, math.expm1):
        x = np.clip(x, -700.0, 700.0)
    with np.errstate(all="ignore"):
        try:
            expected = np.array(list(map(fn, x.tolist())))
        except (ValueError, OverflowError):
            return False
        whole = ufunc(x)
        parts = np.concatenate([ufunc(x[k:k + 7]) for k in range(0, 7 * 64, 7)])
    return bool(np.array_equal(whole, expected) and np.array_equal(parts, expected[:len(parts)]))


def binary_symbol(op) -> str:
    return _BINARY[type(op)]


def unary_symbol(op) -> str:
    return _UNARY[type(op)]
