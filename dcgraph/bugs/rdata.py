"""Read BUGS data and initial values: R list text, JSON text, OpenBUGS rectangular text, or a dict.

``read_data(source) -> dict[str, numpy.ndarray | int | float]`` where ``source`` is a path
(``str`` or ``os.PathLike``) to a file holding R, JSON or OpenBUGS rectangular text (see
``rectangular``), such text itself: R-list text
(``list(N = 3, x = c(1, NA, 2), Y = structure(.Data = c(...), .Dim = c(2, 3)))``), JSON text
(``{"N": 3, "x": [1, null, 2]}``) or a dict of numbers and (nested lists of) numbers/arrays.

Conventions (OpenBUGS):

* ``structure(.Data = v, .Dim = d)`` fills **row-major** (the last index varies fastest), unlike R;
  R's ``dump()`` format (``N <- 30`` / ``"Y" <- structure(c(...), .Dim = c(30L, 5L))``, as JAGS data
  files are written) is read too, and there ``.Data`` fills **column-major**, as R does;
* ``NA`` (JSON ``null``, Python ``None``) marks a missing value: an array holding one becomes a
  float array with ``numpy.nan`` there; a missing scalar becomes ``nan``;
* numbers written without a decimal point or exponent (and R's ``5L``) give ``int`` / ``int64``
  arrays when no element is missing, everything else ``float``;
* ``c(...)`` flattens nested ``c`` and ranges ``a:b`` (integer steps, either direction).

The R text is parsed with lark (``rdata.lark``), never evaluated; errors are ``BUGSDataError``
naming file, line and column.
"""
from __future__ import annotations

import functools
import json
import math
import os
from importlib import resources

import lark
import numpy as np

from .errors import BUGSDataError
from .rectangular import looks_rectangular, read_rectangular

__all__ = ["read_data"]

_MAX_ELEMENTS = 5_000_000   # values in one array
_MAX_NESTING = 32           # array dimensions of JSON / dict input


@functools.lru_cache(maxsize=1)
def _lark() -> lark.Lark:
    grammar = resources.files(__package__).joinpath("rdata.lark").read_text()
    return lark.Lark(grammar, parser="lalr", lexer="contextual", maybe_placeholders=True)


class _Fail(Exception):
    def __init__(self, message, line=None, col=None):
        super().__init__(message)
        self.message, self.line, self.col = message, line, col


class _Vector(list):
    """The elements of ``c(...)`` or of a range (ints, floats, None for NA)."""


def _scalar_value(tok_sign, tok):
    text = str(tok)
    neg = tok_sign is not None and str(tok_sign) == "-"
    if tok.type == "INF":
        value = float("inf")
    elif text.endswith("L"):
        value = int(text[:-1]) if text[:-1].isdigit() else float(text[:-1])
    elif any(c in text for c in ".eE"):
        value = float(text)
        if value == float("inf"):
            raise _Fail(f"number {text} is too large for a 64-bit float", tok.line, tok.column)
    else:
        value = int(text)
    if isinstance(value, int) and value >= 2**63:
        raise _Fail(f"number {text} is too large for a 64-bit integer", tok.line, tok.column)
    return -value if neg else value


class _Builder(lark.visitors.Transformer_NonRecursive):
    def number(self, children):
        sign, tok = (None, children[0]) if len(children) == 1 else children
        return _scalar_value(sign, tok)

    def na(self, children):
        return None

    def range(self, children):
        lo, colon, hi = children
        if not (isinstance(lo, int) and isinstance(hi, int)):
            raise _Fail(f"range {lo}:{hi} needs integer bounds", colon.line, colon.column)
        if abs(hi - lo) + 1 > _MAX_ELEMENTS:
            raise _Fail(f"range {lo}:{hi} has more than {_MAX_ELEMENTS} values", colon.line, colon.column)
        return _Vector(range(lo, hi + 1) if hi >= lo else range(lo, hi - 1, -1))

    def named(self, children):
        tok, value = children
        name = str(tok).strip("\"'")
        return (name, value, tok.line, tok.column)

    def positional(self, children):
        return (None, children[0], None, None)

    def call(self, children):
        tok, args = children[0], [a for a in children[1:] if a is not None]
        fn = str(tok)
        handler = {"c": self._c, "list": self._list, "structure": self._structure}.get(fn)
        if handler is None:
            raise _Fail(f"'{fn}(...)' is not part of the BUGS data format (use list, c or structure)",
                        tok.line, tok.column)
        return handler(tok, args)

    @staticmethod
    def _c(tok, args):
        out = _Vector()
        for name, value, line, col in args:
            if isinstance(value, (dict, np.ndarray, _Structure)):
                raise _Fail("c(...) may hold only numbers, NA, ranges and c(...)", tok.line, tok.column)
            if isinstance(value, list):
                out.extend(value)
            else:
                out.append(value)
            if len(out) > _MAX_ELEMENTS:
                raise _Fail(f"c(...) has more than {_MAX_ELEMENTS} values", tok.line, tok.column)
        return out

    @staticmethod
    def _list(tok, args):
        out = {}
        for name, value, line, col in args:
            if name is None:
                raise _Fail("every element of list(...) needs a name (name = value)", tok.line, tok.column)
            if name in out:
                raise _Fail(f"'{name}' is given twice", line, col)
            if isinstance(value, dict):
                raise _Fail(f"'{name}': nested lists are not BUGS data", line, col)
            out[name] = value
        return out

    @staticmethod
    def _structure(tok, args):
        fields = {}
        for i, (name, value, line, col) in enumerate(args):
            key = ".Data" if name is None and i == 0 else name
            if key not in (".Data", ".Dim"):
                raise _Fail(f"structure(...) takes .Data and .Dim, got {name or 'an unnamed argument'}",
                            line or tok.line, col or tok.column)
            if key in fields:
                raise _Fail(f"{key} is given twice", line, col)
            fields[key] = value
        if ".Data" not in fields:
            raise _Fail("structure(...) needs .Data", tok.line, tok.column)
        data = fields[".Data"]
        if isinstance(data, (dict, _Structure)):
            raise _Fail(".Data must be c(...), a range or a number", tok.line, tok.column)
        data = _Vector([data]) if not isinstance(data, list) else data
        values = _to_array(data)
        if ".Dim" not in fields:
            return values
        dim = fields[".Dim"]
        dim = [dim] if not isinstance(dim, list) else dim
        if not dim or not all(isinstance(d, (int, float)) and float(d).is_integer() and d >= 0 for d in dim):
            raise _Fail(f".Dim must be non-negative integers, got {_show(dim)}", tok.line, tok.column)
        dim = [int(d) for d in dim]
        if math.prod(dim) != values.size:
            raise _Fail(f".Dim = c({', '.join(map(str, dim))}) needs {math.prod(dim)} values, "
                        f".Data has {values.size}", tok.line, tok.column)
        return _Structure(values, tuple(dim))

    def start(self, children):
        return children[0]

    def assignment(self, children):
        tok, _, value = children
        return (str(tok).strip("\"'"), value, tok.line, tok.column)

    def dump(self, children):
        out = {}
        for name, value, line, col in children:
            if name in out:
                raise _Fail(f"'{name}' is given twice", line, col)
            if isinstance(value, dict):
                raise _Fail(f"'{name}': lists are not BUGS data", line, col)
            out[name] = value
        return _Dump(out)


class _Structure:
    """``structure(.Data, .Dim)`` before its fill order is known (row-major in a BUGS list, column-major
    in an R dump)."""

    def __init__(self, values, dim):
        self.values, self.dim = values, dim

    def array(self, column_major: bool) -> np.ndarray:
        return self.values.reshape(self.dim, order="F" if column_major else "C")


class _Dump(dict):
    """The assignments of an R dump file (``name <- value`` lines)."""


def _show(v) -> str:
    return "c(" + ", ".join("NA" if x is None else str(x) for x in v) + ")" if isinstance(v, list) else str(v)


def _to_array(values) -> np.ndarray:
    """Elements (int, float, None) -> int64 array, or float array with nan for None."""
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return np.array(values, dtype=np.int64)
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


def _finish(value, column_major=False):
    if value is None:
        return float("nan")
    if isinstance(value, list):
        return _to_array(value)
    if isinstance(value, _Structure):
        return value.array(column_major)
    return value


def _read_r(text, filename):
    try:
        tree = _lark().parse(text)
    except lark.exceptions.UnexpectedInput as exc:
        raise BUGSDataError(_lark_message(exc, text), *_lark_place(exc, text), text, filename) from None
    try:
        result = _Builder().transform(tree)
    except lark.exceptions.VisitError as exc:
        e = exc.orig_exc
        if not isinstance(e, _Fail):
            raise
        raise BUGSDataError(e.message, e.line, e.col, text, filename) from None
    except _Fail as e:
        raise BUGSDataError(e.message, e.line, e.col, text, filename) from None
    if not isinstance(result, dict):
        raise BUGSDataError("data must be a list(name = value, ...)", 1, 1, text, filename)
    column_major = isinstance(result, _Dump)
    return {name: _finish(v, column_major) for name, v in result.items()}


def _lark_place(exc, text):
    if isinstance(exc, lark.UnexpectedToken) and exc.token.type == "$END" or isinstance(exc, lark.UnexpectedEOF):
        lines = text.splitlines() or [""]
        return len(lines), len(lines[-1]) + 1
    return exc.line, exc.column


def _lark_message(exc, text) -> str:
    if isinstance(exc, lark.UnexpectedCharacters):
        return f"unexpected character {text[exc.pos_in_stream]!r} in R data"
    tok = getattr(exc, "token", None)
    if tok is None or tok.type == "$END":
        return "unexpected end of data (a ')' is missing?)"
    return f"unexpected '{tok}' in R data"


def _from_json(text, filename):
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BUGSDataError(f"invalid JSON: {exc.msg}", exc.lineno, exc.colno, text, filename) from None
    except RecursionError:
        raise BUGSDataError("JSON nested too deeply", filename=filename) from None
    if not isinstance(obj, dict):
        raise BUGSDataError("JSON data must be an object {\"name\": value, ...}", 1, 1, text, filename)
    return _from_dict(obj, filename)


def _nested_to_array(name, value, filename):
    """Nested lists/tuples/arrays of numbers and None -> (int64 or float-with-nan) array."""
    flat, shape = [], None

    def walk(v, depth, dims):
        nonlocal shape
        if isinstance(v, np.ndarray):
            v = v.tolist()
        if isinstance(v, (list, tuple)):
            if depth >= _MAX_NESTING:
                raise BUGSDataError(f"'{name}': nested deeper than {_MAX_NESTING} levels", filename=filename)
            dims = dims + [len(v)]
            for x in v:
                walk(x, depth + 1, dims)
            if not v:
                record(dims)
            return
        record(dims)
        if v is None:
            flat.append(None)
        elif isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise BUGSDataError(f"'{name}': values must be numbers or missing (None/NA), got {v!r}",
                                filename=filename)
        else:
            flat.append(int(v) if isinstance(v, (int, np.integer)) else float(v))

    def record(dims):
        nonlocal shape
        if shape is None:
            shape = list(dims)
        elif shape != list(dims):
            raise BUGSDataError(f"'{name}': nested lists are ragged (not a rectangular array)", filename=filename)

    walk(value, 0, [])
    arr = _to_array(flat)
    return arr.reshape(shape) if shape else arr.reshape(())


def _from_dict(obj, filename=None):
    out = {}
    for name, value in obj.items():
        if not isinstance(name, str) or not name:
            raise BUGSDataError(f"data names must be non-empty strings, got {name!r}", filename=filename)
        if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
            arr = value.astype(np.int64) if value.dtype.kind in "iu" else value.astype(float)
            if value.dtype.kind == "b":
                raise BUGSDataError(f"'{name}': boolean arrays are not BUGS data", filename=filename)
        else:
            arr = _nested_to_array(name, value, filename)
        if arr.ndim == 0:
            v = arr.item()
            out[name] = v
        else:
            out[name] = arr
    return out


def _looks_like_path(source: str) -> bool:
    if "\n" in source or len(source) >= 4096 or not source.strip():
        return False
    return os.path.isfile(source) or not any(c in source for c in "(<={[")


def read_data(source) -> dict:
    """Read data or inits from a path, R-list text, JSON text or a dict (see the module docstring)."""
    filename = None
    if isinstance(source, dict):
        return _from_dict(source)
    if isinstance(source, os.PathLike) or (isinstance(source, str) and _looks_like_path(source)):
        filename = os.fspath(source)
        try:
            with open(filename, encoding="utf-8") as fh:
                source = fh.read()
        except FileNotFoundError:
            raise BUGSDataError("no such data file", filename=filename) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise BUGSDataError(f"cannot read data file: {exc}", filename=filename) from None
    if isinstance(source, (bytes, bytearray)):
        source = bytes(source).decode("utf-8", errors="strict")
    if not isinstance(source, str):
        raise TypeError(f"read_data: expected a path, text or dict, got {type(source).__name__}")
    text = source.lstrip("\ufeff")
    if not text.strip():
        raise BUGSDataError("data text is empty", filename=filename)
    if text.lstrip()[:1] in "{[":
        return _from_json(text, filename)
    if looks_rectangular(text):
        return read_rectangular(text, filename)
    return _read_r(text, filename)
