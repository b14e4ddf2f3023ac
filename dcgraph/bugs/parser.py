"""Parse BUGS model text into the syntax tree of ``dcgraph.bugs.syntax``.

``parse(text, filename=None) -> syntax.Model``; ``unparse(node) -> str`` prints a tree (or any
node) back as BUGS text that parses to the same tree up to positions. The grammar is
``grammar.lark`` (lark, LALR(1)); nothing is evaluated. Besides the grammar, the parser checks what it can see locally, each error a
``BUGSSyntaxError`` with line, column and caret:

* a distribution follows ``~`` (known name, right number of parameters) and only there;
* every other call is a known BUGS function with the right number of arguments;
* a link function on the left of ``<-`` is ``logit``, ``log``, ``cloglog`` or ``probit``;
* numbers are finite and fit a 64-bit integer or float;
* nesting (expressions and loops) is at most ``MAX_DEPTH`` deep, so that no later pass recurses
  without bound.

Positions: every node carries the line and column (1-based) where it starts; a ``Binary`` starts
at its left operand, a ``Logical``/``Stochastic`` at its target, a linked ``Logical`` at the link name.
"""
from __future__ import annotations

import difflib
import functools
from importlib import resources

import lark

from . import syntax as S
from .distributions import DISTRIBUTIONS
from .errors import BUGSSyntaxError
from .functions import FUNCTIONS, LINKS

__all__ = ["parse", "unparse", "MAX_DEPTH"]

#: Deepest nesting of expressions and loops accepted (deeper input gets a BUGSSyntaxError).
MAX_DEPTH = 100

_TOKEN_TEXT = {
    "NAME": "a name", "NUMBER": "a number", "ADD_OP": "'+' or '-'", "MUL_OP": "'*' or '/'",
    "POW_OP": "'^'", "BOUNDS_OPEN": "T(, C( or I(", "MODEL": "'model'", "FOR": "'for'", "_IN": "'in'",
    "$END": "end of text",
}

_CHAR_HINTS = {
    "_": " (names start with a letter)",
    "=": " (use '<-' for a logical node or '~' for a stochastic one)",
    '"': " (BUGS has no strings)",
    "'": " (BUGS has no strings)",
}


@functools.lru_cache(maxsize=1)
def _lark() -> lark.Lark:
    grammar = resources.files(__package__).joinpath("grammar.lark").read_text()
    return lark.Lark(grammar, parser="lalr", lexer="contextual", maybe_placeholders=True)


@functools.lru_cache(maxsize=1)
def _terminal_text() -> dict:
    out = {}
    for term in _lark().terminals:
        if term.name in _TOKEN_TEXT:
            out[term.name] = _TOKEN_TEXT[term.name]
        elif term.pattern.type == "str":
            out[term.name] = repr(term.pattern.value)
    out.update({k: v for k, v in _TOKEN_TEXT.items() if k not in out})
    return out


def _suggest(name: str, choices) -> str:
    close = difflib.get_close_matches(name, list(choices), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


class _Builder(lark.visitors.Transformer_NonRecursive):
    """Lark tree -> syntax nodes, with the local checks (raises ``_Fail``)."""

    def __init__(self):
        super().__init__()
        self.depth = {}          # id(node) -> nesting depth
        self.loose_calls = []    # calls not (yet) claimed by a '~'

    # ------------------------------------------------------------- helpers
    def _fail(self, message, line, col):
        raise _Fail(message, line, col)

    def _nest(self, node, *children):
        d = 1 + max((self.depth.get(id(c), 0) for c in children if c is not None), default=0)
        if d > MAX_DEPTH:
            self._fail(f"nesting deeper than {MAX_DEPTH} levels (split the expression with "
                       f"intermediate logical nodes)", node.line, node.col)
        self.depth[id(node)] = d
        return node

    # ----------------------------------------------------------- expressions
    def number(self, children):
        (tok,) = children
        text = str(tok)
        if any(c in text for c in ".eE"):
            value = float(text)
            if value != value or value in (float("inf"), float("-inf")):
                self._fail(f"number {text} is too large for a 64-bit float", tok.line, tok.column)
        else:
            value = int(text)
            if value >= 2**63:
                self._fail(f"number {text} is too large for a 64-bit integer", tok.line, tok.column)
        return self._nest(S.Number(value, tok.line, tok.column))

    def var(self, children):
        tok, indices = children[0], (children[1] if len(children) > 1 else None)
        idx = () if indices is None else tuple(indices)
        return self._nest(S.Var(str(tok), idx, tok.line, tok.column), *idx)

    def indices(self, children):
        out, current = [], None       # a COMMA token closes one index (which may be empty)
        for c in children:
            if isinstance(c, lark.Token) and c.type == "COMMA":
                out.append(current)
                current = None
            else:
                current = c
        return out + [current]

    def range(self, children):
        lo, hi = children
        return self._nest(S.Range(lo, hi, lo.line, lo.col), lo, hi)

    def call(self, children):
        tok, args = children[0], tuple(a for a in children[1:] if a is not None)   # f() gives [tok, None]
        node = S.Call(str(tok), args, tok.line, tok.column)
        if node.name in FUNCTIONS:
            lo, hi = FUNCTIONS[node.name].arity
            if not (lo <= len(args) and (hi is None or len(args) <= hi)):
                want = str(lo) if lo == hi else (f"at least {lo}" if hi is None else f"{lo} to {hi}")
                self._fail(f"function '{node.name}' takes {want} argument{'' if want == '1' else 's'}, "
                           f"got {len(args)}", node.line, node.col)
        else:
            self.loose_calls.append(node)
        return self._nest(node, *args)

    def unary(self, children):
        op, operand = children
        return self._nest(S.Unary(str(op), operand, op.line, op.column), operand)

    def binary(self, children):
        left, op, right = children
        return self._nest(S.Binary(str(op), left, right, left.line, left.col), left, right)

    # ------------------------------------------------------------ statements
    def bounds(self, children):
        tok, lo, hi = children
        return self._nest(S.Bounds(str(tok)[0], lo, hi, tok.line, tok.column), lo, hi)

    def stochastic(self, children):
        target, dist = children[0], children[1]
        bounds = children[2] if len(children) > 2 else None
        if not isinstance(dist, S.Call):
            self._fail("the right of '~' must be a distribution, such as dnorm(mu, tau)", dist.line, dist.col)
        if dist.name not in DISTRIBUTIONS:
            hint = (" (it is a function: use '<-')" if dist.name in FUNCTIONS
                    else _suggest(dist.name, DISTRIBUTIONS))
            self._fail(f"unknown distribution '{dist.name}'{hint}", dist.line, dist.col)
        params = DISTRIBUTIONS[dist.name].params
        if len(dist.args) != len(params):
            names = f" ({', '.join(params)})" if params else ""
            self._fail(f"distribution '{dist.name}' takes {_plural(len(params), 'parameter')}{names}, "
                       f"got {len(dist.args)}", dist.line, dist.col)
        self.loose_calls = [c for c in self.loose_calls if c is not dist]
        return self._nest(S.Stochastic(target, dist, bounds, target.line, target.col), target, dist, bounds)

    def logical(self, children):
        target, expr = children
        return self._nest(S.Logical(target, expr, None, target.line, target.col), target, expr)

    def linked(self, children):
        tok, target, expr = children
        if str(tok) not in LINKS:
            self._fail(f"'{tok}' is not a link function: only {', '.join(LINKS)} may be applied to "
                       f"the left of '<-'", tok.line, tok.column)
        return self._nest(S.Logical(target, expr, str(tok), tok.line, tok.column), target, expr)

    def for_loop(self, children):
        tok, var, lo, hi, body = children
        node = S.For(str(var), lo, hi, body, tok.line, tok.column)
        return self._nest(node, lo, hi, *body)

    def body(self, children):
        return tuple(c for c in children if isinstance(c, (S.Stochastic, S.Logical, S.For)))

    def start(self, children):
        tok, body = children
        for call in sorted(self.loose_calls, key=lambda c: (c.line, c.col)):
            if call.name in DISTRIBUTIONS:
                self._fail(f"'{call.name}' is a distribution: it can only follow '~'", call.line, call.col)
            self._fail(f"unknown function '{call.name}'{_suggest(call.name, FUNCTIONS)}", call.line, call.col)
        return S.Model(body, tok.line, tok.column)


class _Fail(Exception):
    def __init__(self, message, line, col):
        super().__init__(message)
        self.message, self.line, self.col = message, line, col


def _describe_token(tok) -> str:
    if tok.type == "$END":
        return "end of text"
    text = str(tok)
    kind = {"NAME": "name ", "NUMBER": "number "}.get(tok.type, "")
    return f"{kind}'{text.rstrip()}'" if len(text) <= 40 else f"{kind}'{text[:40]}...'"


def _syntax_error(exc, text: str) -> tuple:
    """(message, line, col) for a lark parse error."""
    if isinstance(exc, lark.UnexpectedCharacters):
        char = text[exc.pos_in_stream] if 0 <= exc.pos_in_stream < len(text) else exc.char
        return f"unexpected character {char!r}{_CHAR_HINTS.get(char, '')}", exc.line, exc.column
    names = _terminal_text()
    accepted = getattr(exc, "accepts", None) or getattr(exc, "expected", None) or ()
    expected = sorted({names.get(t, t) for t in accepted})
    want = ""
    if expected:
        want = "; expected " + (expected[0] if len(expected) == 1 else
                                "one of " + ", ".join(expected))
    tok = getattr(exc, "token", None)
    if tok is None or tok.type == "$END":
        lines = text.splitlines() or [""]
        return f"unexpected end of text{want}", len(lines), len(lines[-1]) + 1
    return f"unexpected {_describe_token(tok)}{want}", tok.line, tok.column


def parse(text, filename=None) -> S.Model:
    """Parse BUGS model ``text`` (str or UTF-8 bytes) into a ``syntax.Model``.

    Raises ``BUGSSyntaxError`` (file, line, column, caret) for anything that is not a BUGS model.
    """
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BUGSSyntaxError(f"model text is not UTF-8: {exc.reason} at byte {exc.start}",
                                  filename=filename) from None
    if not isinstance(text, str):
        raise TypeError(f"parse: model text must be a str, got {type(text).__name__}")
    text = text.lstrip("\ufeff")
    try:
        tree = _lark().parse(text)
    except lark.exceptions.UnexpectedInput as exc:
        message, line, col = _syntax_error(exc, text)
        raise BUGSSyntaxError(message, line, col, text, filename) from None
    try:
        return _Builder().transform(tree)
    except lark.exceptions.VisitError as exc:
        if isinstance(exc.orig_exc, _Fail):
            e = exc.orig_exc
            raise BUGSSyntaxError(e.message, e.line, e.col, text, filename) from None
        raise
    except _Fail as exc:
        raise BUGSSyntaxError(exc.message, exc.line, exc.col, text, filename) from None


# ----------------------------------------------------------------------------------- unparse
_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "^": 4}


def _prec(e) -> int:
    if isinstance(e, S.Binary):
        return _PRECEDENCE[e.op]
    return 3 if isinstance(e, S.Unary) else 5


def _expr(e) -> str:
    if e is None:
        return ""
    if isinstance(e, S.Number):
        return repr(e.value)
    if isinstance(e, S.Var):
        return e.name if not e.indices else f"{e.name}[{', '.join(_expr(i) for i in e.indices)}]"
    if isinstance(e, S.Range):
        return f"{_expr(e.lower)}:{_expr(e.upper)}"
    if isinstance(e, S.Call):
        return f"{e.name}({', '.join(_expr(a) for a in e.args)})"
    if isinstance(e, S.Unary):
        inner = _expr(e.operand)
        return f"{e.op}({inner})" if _prec(e.operand) < 3 else f"{e.op}{inner}"
    if isinstance(e, S.Binary):
        p = _PRECEDENCE[e.op]
        left, right = _expr(e.left), _expr(e.right)
        if _prec(e.left) < p or (e.op == "^" and _prec(e.left) <= p):
            left = f"({left})"
        # left-associative operators: a right operand of the same precedence keeps its parentheses
        # (``a + (b + c)`` is another tree than ``a + b + c``, even where the value is the same)
        if _prec(e.right) < p or (p < 4 and _prec(e.right) == p) or (e.op == "^" and _prec(e.right) < 3):
            right = f"({right})"
        return f"{left} {e.op} {right}" if p < 4 else f"{left}^{right}"
    raise TypeError(f"unparse: not a BUGS syntax node: {e!r}")


def _statement(st, indent: str) -> list:
    if isinstance(st, S.For):
        lines = [f"{indent}for ({st.var} in {_expr(st.lower)}:{_expr(st.upper)}) {{"]
        for inner in st.body:
            lines += _statement(inner, indent + "    ")
        return lines + [indent + "}"]
    if isinstance(st, S.Stochastic):
        b = st.bounds
        bounds = "" if b is None else f" {b.kind}({_expr(b.lower)}, {_expr(b.upper)})"
        return [f"{indent}{_expr(st.target)} ~ {_expr(st.dist)}{bounds}"]
    if isinstance(st, S.Logical):
        target = _expr(st.target) if st.link is None else f"{st.link}({_expr(st.target)})"
        return [f"{indent}{target} <- {_expr(st.expr)}"]
    raise TypeError(f"unparse: not a BUGS statement: {st!r}")


def unparse(node) -> str:
    """BUGS text for a ``Model``, a statement or an expression (4-space indentation)."""
    if isinstance(node, S.Model):
        return "\n".join(["model {"] + [ln for st in node.body for ln in _statement(st, "    ")] + ["}"])
    if isinstance(node, (S.For, S.Stochastic, S.Logical)):
        return "\n".join(_statement(node, ""))
    return _expr(node)
