"""OpenBUGS rectangular data format: a header of columns, rows of numbers, ``END``.

::

    age[]  sex[]  Y[,1]  Y[,2]
    26     0      1.5    NA
    52     1      2.0    3.1
    END

``name[]`` is a vector with one element per row; ``name[,k]`` is column ``k`` (1-based) of a matrix
with one row per data row. ``read_rectangular(text, filename=None) -> dict`` with the same value
conventions as ``rdata.read_data`` (``NA`` -> ``nan`` in a float array; integers stay ``int64``).
Parsed with lark, never evaluated; errors are ``BUGSDataError`` with line and column.
"""
from __future__ import annotations

import functools

import lark
import numpy as np

from .errors import BUGSDataError

__all__ = ["read_rectangular", "looks_rectangular"]

_GRAMMAR = r"""
start: _NL* header (_NL+ row)* _NL* END _NL*
header: column+
column: NAME "[" (INT | "," INT)? "]"       -> column
    | NAME "[" "]"                          -> column
row: value+
value: SIGN? NUMBER | NA
NA: "NA"
END: "END"
NAME: /[A-Za-z][A-Za-z0-9._]*/
INT: /\d+/
NUMBER: /(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/
SIGN: "-" | "+"
_NL: /\r?\n/
%ignore /[ \t\f]+/
%ignore /#[^\n]*/
"""


@functools.lru_cache(maxsize=1)
def _lark() -> lark.Lark:
    return lark.Lark(_GRAMMAR, parser="lalr", lexer="contextual")


def looks_rectangular(text: str) -> bool:
    """True when the first non-blank line starts like ``name[]`` or ``name[,k]``."""
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    head = first.split("[", 1)
    return len(head) == 2 and head[0].replace(".", "").isalnum() and head[0][:1].isalpha()


def _number(children):
    if len(children) == 1 and children[0].type == "NA":
        return None
    sign, tok = (None, children[0]) if len(children) == 1 else children
    text = str(tok)
    value = float(text) if any(c in text for c in ".eE") else int(text)
    if isinstance(value, float) and not np.isfinite(value):
        raise BUGSDataError(f"number {text} is too large for a 64-bit float", tok.line, tok.column)
    return -value if sign is not None and str(sign) == "-" else value


def read_rectangular(text: str, filename=None) -> dict:
    """Read OpenBUGS rectangular data (module docstring)."""
    try:
        tree = _lark().parse(text)
    except lark.exceptions.UnexpectedInput as exc:
        tok = getattr(exc, "token", None)
        what = ("unexpected end of data (rectangular data ends with END)" if tok is not None and tok.type == "$END"
                else f"unexpected {str(tok)!r} in rectangular data" if tok is not None
                else f"unexpected character {text[exc.pos_in_stream]!r} in rectangular data")
        raise BUGSDataError(what, exc.line, exc.column, text, filename) from None
    header = next(c for c in tree.children if isinstance(c, lark.Tree) and c.data == "header")
    rows = [c for c in tree.children if isinstance(c, lark.Tree) and c.data == "row"]
    columns = []
    for col in header.children:
        name_tok = col.children[0]
        k = int(col.children[1]) if len(col.children) > 1 else None
        columns.append((str(name_tok), k, name_tok))
    seen = set()
    for name, k, tok in columns:
        if (name, k) in seen:
            raise BUGSDataError(f"column {name}[{'' if k is None else ',' + str(k)}] is given twice",
                                tok.line, tok.column, text, filename)
        if k is not None and k < 1:
            raise BUGSDataError(f"column index of {name} must be 1 or more", tok.line, tok.column, text, filename)
        seen.add((name, k))
    table = []
    for row in rows:
        values = [_number(v.children) for v in row.children]
        if len(values) != len(columns):
            first = row.children[0].children[-1]
            plural = "s" * (len(values) != 1)
            raise BUGSDataError(f"row has {len(values)} value{plural}, the header names {len(columns)} columns",
                                first.line, first.column, text, filename)
        table.append(values)
    return _assemble(columns, table, text, filename)


def _as_array(values) -> np.ndarray:
    if all(isinstance(v, int) for v in values):
        return np.array(values, dtype=np.int64)
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


def _assemble(columns, table, text, filename) -> dict:
    by_name = {}
    for j, (name, k, tok) in enumerate(columns):
        by_name.setdefault(name, []).append((k, j, tok))
    out = {}
    for name, cols in by_name.items():
        kinds = {k is None for k, _, _ in cols}
        if len(kinds) > 1:
            tok = cols[0][2]
            raise BUGSDataError(f"'{name}' is given both as a vector and as matrix columns",
                                tok.line, tok.column, text, filename)
        if None in (k for k, _, _ in cols):
            out[name] = _as_array([row[cols[0][1]] for row in table])
            continue
        width = max(k for k, _, _ in cols)
        missing = sorted(set(range(1, width + 1)) - {k for k, _, _ in cols})
        if missing:
            tok = cols[0][2]
            raise BUGSDataError(f"'{name}' has no column {missing[0]}", tok.line, tok.column, text, filename)
        ordered = sorted(cols)
        flat = [row[j] for row in table for _, j, _ in ordered]
        out[name] = _as_array(flat).reshape(len(table), width)
    return out
