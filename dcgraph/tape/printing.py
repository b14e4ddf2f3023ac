"""The plain text dump of a tape: one node per line, nested calls indented.

    @0: Argument n = 2
    @2: [L4] u = @1.random() = 0.6778
    @3: goto §2 since @2 < 0.3 == False
    @4: [L5] geom(@0 + 1 ...) = 3      (then the callee's tape, indented)
    @5: return @4 = 3

A node bound to variables shows their names before what it did, in the order of the stores
(``a = b = @3 * 2 = 4``); an Argument's or Phi's own name is not repeated.
"""
from __future__ import annotations

import operator
import re
import weakref

import numpy as np

from .nodes import (Argument, Branch, Constant, NestedCall, Node, Phi, PrimitiveCall, Raise,
                   Return, Tape)

__all__ = ["format_tape", "format_node", "short_repr", "ref", "call_text", "printable",
           "int_text", "shown_names", "names_text"]

BINARY_SYMBOLS = {
    operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
    operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.matmul: "@",
    operator.lshift: "<<", operator.rshift: ">>", operator.and_: "&", operator.or_: "|",
    operator.xor: "^", operator.iadd: "+=", operator.isub: "-=", operator.imul: "*=",
    operator.itruediv: "/=", operator.ifloordiv: "//=", operator.imod: "%=", operator.ipow: "**=",
    operator.imatmul: "@=", operator.ilshift: "<<=", operator.irshift: ">>=", operator.iand: "&=",
    operator.ior: "|=", operator.ixor: "^=", operator.lt: "<", operator.le: "<=",
    operator.eq: "==", operator.ne: "!=", operator.gt: ">", operator.ge: ">=",
    operator.is_: "is", operator.is_not: "is not",
}
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
UNARY_SYMBOLS = {operator.neg: "-", operator.pos: "+", operator.invert: "~", operator.not_: "not "}
# control characters (terminal escape sequences start with one) and bidirectional overrides
_UNPRINTABLE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_MAX_DIGITS = 1000     # longer ints are written by their size (str() refuses over 4,300 digits)


def printable(text: str) -> str:
    """``text`` with control characters written as escapes (``\\x1b``): text from values,
    names, source lines or a JSON file never drives the terminal or reorders a line."""
    if _UNPRINTABLE.search(text) is None:
        return text
    return _UNPRINTABLE.sub(lambda m: ascii(m.group())[1:-1], text)


def int_text(value: int) -> str:
    """An int's digits, or ``<int of N digits>`` when it has more than 1,000 of them."""
    bits = value.bit_length()
    if bits < _MAX_DIGITS * 3:
        return str(value)
    digits = int(bits * 0.30102999566398120) + 1
    return f"<int of about {digits:,} digits>"


def _symbol(table: dict, fn):
    """``table[fn]`` for a builtin ``fn`` (a user's callable is never hashed here)."""
    return table.get(fn) if type(fn) is _BUILTIN else None


_BUILTIN = type(len)


def short_repr(value, width: int = 60) -> str:
    """A one-line repr: floats to 4 significant digits, arrays as shape/dtype, long text cut,
    control characters escaped. Never raises."""
    try:
        return _short_repr(value, width)
    except Exception as exc:  # a hostile value (an exception's ``args`` property, ...)
        return f"<{type(value).__name__}: {type(exc).__name__}>"


def _short_repr(value, width: int) -> str:
    if isinstance(value, float):
        text = format(value, ".4g")
        return text if any(c in text for c in ".einn") else text + ".0"
    if type(value) is int:
        text = int_text(value)
        return text if len(text) <= width else text[: width - 3] + "..."
    if isinstance(value, np.ndarray):
        if value.size <= 4:
            text = np.array2string(value, precision=4, separator=", ").replace("\n", "")
            return f"array({text})"
        return f"array(shape={value.shape}, dtype={value.dtype})"
    if isinstance(value, BaseException):
        text = f"{type(value).__name__}({', '.join(short_repr(a, 30) for a in value.args)})"
    else:
        try:
            text = repr(value)
        except Exception as exc:  # a user's __repr__ may fail; the dump must not
            text = f"<{type(value).__name__}: repr failed: {type(exc).__name__}>"
    if not isinstance(text, str):
        text = f"<{type(value).__name__}>"
    text = printable(_ADDRESS.sub("", text.replace("\n", " ")))
    return text if len(text) <= width else text[: width - 3] + "..."


def ref(node: Node, here: Tape | None = None) -> str:
    """How a node is referred to from a line of tape ``here``: ``@i`` within the same tape, the
    absolute position ``@[5.3]`` (call-site indices from the root, then the index) for a node
    of another tape, or a literal's repr inline."""
    if isinstance(node, Constant) and node.tape is None:
        return short_repr(node.value, 30)
    if here is None or node.tape is here:
        return f"@{node.index}"
    return "@[" + ".".join(str(k) for k in node.order_key()) + "]"


def call_text(n: PrimitiveCall) -> str:
    here = n.tape
    args = [ref(a, here) for a in n.args]
    fn = n.fn
    symbol = _symbol(BINARY_SYMBOLS, fn) if len(args) == 2 else _symbol(UNARY_SYMBOLS, fn)
    if not n.kwargs and len(args) == 2 and symbol is not None:
        return f"{args[0]} {symbol} {args[1]}"
    if not n.kwargs and len(args) == 1 and symbol is not None:
        return f"{symbol}{args[0]}"
    if fn is operator.contains and len(args) == 2:
        return f"{args[1]} in {args[0]}"
    if fn is operator.getitem and len(args) == 2:
        return f"{args[0]}[{args[1]}]"
    if fn is operator.setitem and len(args) == 3:
        return f"{args[0]}[{args[1]}] = {args[2]}"
    if fn is operator.delitem and len(args) == 2:
        return f"del {args[0]}[{args[1]}]"
    if (fn is getattr or fn is setattr or fn is delattr) and len(args) >= 2 \
            and isinstance(n.args[1], Constant):
        attr = f"{args[0]}.{printable(str(n.args[1].value))}"
        if fn is getattr:
            return attr
        return f"{attr} = {args[2]}" if fn is setattr else f"del {attr}"
    rest = args + [f"{k}={ref(v, here)}" for k, v in n.kwargs.items()]
    if n.method and args:
        return f"{args[0]}.{n.fn_name}({', '.join(rest[1:])})"
    callee = n.fn_name if n.fn_node is None else f"{n.fn_name}<{ref(n.fn_node, here)}>"
    return f"{callee}({', '.join(rest)})"


def shown_names(n: Node) -> tuple:
    """The names a view writes for ``n``: its ``names`` less its own (an Argument's, a Phi's)."""
    own = getattr(n, "name", None)
    return tuple(x for x in n.names if x != own)


def names_text(n: Node) -> str:
    """``a = b = `` for a node bound to ``a`` and ``b``; ``''`` when it has no names to show."""
    return "".join(f"{x} = " for x in shown_names(n))


def format_node(n: Node) -> str:
    """One line for one node (without indentation or its child tape), printable."""
    return printable(_format_node(n))


def _format_node(n: Node) -> str:
    head = f"@{n.index}: "
    here = n.tape
    loc = f"[L{n.line}] " if n.line is not None else ""
    named = names_text(n) if n.names else ""
    if isinstance(n, Argument):
        return f"{head}{named}Argument {n.name} = {short_repr(n.value)}"
    if isinstance(n, Constant):
        return f"{head}{loc}{named}Constant {n.name} = {short_repr(n.value)}"
    if isinstance(n, PrimitiveCall):
        if isinstance(n, NestedCall) and n.child is not None and n.child.raised:
            raised = n.child.nodes[-1].value
            return f"{head}{loc}{named}{call_text(n)} raised {short_repr(raised)}"
        if n.mutates is not None:
            return f"{head}{loc}{named}{call_text(n)} ⇒ {short_repr(n.value)}"
        return f"{head}{loc}{named}{call_text(n)} = {short_repr(n.value)}"
    if isinstance(n, Branch):
        if n.op == "exhausted":
            why = f"{ref(n.inputs[0], here)} exhausted"
        elif n.op is None:
            why = f"{ref(n.inputs[0], here)} == {n.taken}"
        elif n.op == "is None":
            why = f"{ref(n.inputs[0], here)} is None == {n.taken}"
        elif n.op == "in" or n.op == "not in":
            why = f"{ref(n.inputs[0], here)} {n.op} {ref(n.inputs[1], here)} == {n.taken}"
        else:
            why = f"{ref(n.inputs[0], here)} {n.op} {ref(n.inputs[1], here)} == {n.taken}"
        return f"{head}goto §{n.target} since {why}"
    if isinstance(n, Phi):
        return f"{head}{named}φ {n.name} = {ref(n.source, here)} (from §{n.edge[0]})"
    if isinstance(n, Return):
        verb = "yield" if n.kind == "Yield" else "return"
        return f"{head}{verb} {ref(n.inputs[0], here)} = {short_repr(n.value)}"
    if isinstance(n, Raise):
        return f"{head}{loc}raise {short_repr(n.value)}"
    return f"{head}{n.kind}"


def format_tape(tape: Tape, indent: str = "    ") -> str:
    """The whole dump; literal constants are shown inline, not as lines of their own."""
    lines: list[str] = []
    final = _final_versions(tape.root)
    todo = [iter(tape.nodes)]          # an explicit stack: any depth prints
    while todo:
        for n in todo[-1]:
            line = format_node(n) + final_state_note(n, final)
            lines.append(indent * (len(todo) - 1) + line)
            if isinstance(n, NestedCall) and n.child is not None:
                todo.append(iter(n.child.nodes))
                break
        else:
            todo.pop()
    return "\n".join(lines)


def final_state_note(n: Node, final: dict | None = None) -> str:
    """`` (final state, after @k)`` when the container or array ``n`` holds was changed later, by
    ``@k`` (values are recorded by reference, so views show the final state); else ``''``.
    ``final`` is ``_final_versions`` of the root tape (computed once per root when omitted)."""
    if isinstance(n, (Branch, Phi)):
        return ""
    if final is None:
        root = n.tape.root
        final = _FINAL.get(root)
        if final is None:
            final = _FINAL[root] = _final_versions(root)
    last = final.get(id(n.value)) if final else None
    if last is None or last is n or not n.order_key() < last.order_key():
        return ""
    return f" (final state, after {ref(last, n.tape)})"


_FINAL: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # root tape -> its final map


def _final_versions(tape: Tape) -> dict:
    """id(container) -> the last node of the run that mutated it: values are recorded by
    reference, so a node holding a container mutated later shows its final state."""
    final: dict = {}
    for n in tape.root.walk():
        if isinstance(n, PrimitiveCall) and n.mutates is not None:
            final[id(n.mutates)] = n
    return final
