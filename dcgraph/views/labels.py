"""What a view writes for one node: its operation text (``@2 + 1``, ``goto §3 since …``) and a
display style per kind. Values are written by ``values``; references are ``@index`` in the
node's own tape, literals inline, as in the plain dump."""
from __future__ import annotations

from ..tape.printing import call_text, format_node, names_text, printable, ref
from ..tape.location import plain_getattr
from ..tape import Argument, Branch, Constant, Node, Phi, PrimitiveCall, Raise, Return

__all__ = ["op_text", "value_sep", "fn_label", "has_value", "KIND_STYLE", "KIND_MARK"]

# rich styles per kind: data nodes plain colours, control (Branch, Phi) italic and dim-coloured
KIND_STYLE = {
    "Argument": "bold green", "Constant": "cyan", "PrimitiveCall": "default",
    "NestedCall": "bold blue", "Branch": "italic magenta", "Phi": "italic yellow",
    "Return": "bold green", "Raise": "bold red", "Fold": "dim",
}
# a one-character mark per kind, so kinds differ without colour too
KIND_MARK = {
    "Argument": "→", "Constant": "#", "PrimitiveCall": "·", "NestedCall": "▸", "Branch": "◇",
    "Phi": "»", "Return": "←", "Raise": "×",
}


def fn_label(n: PrimitiveCall) -> str:
    """The called function's qualified name (``Random.random``, ``geom``)."""
    fn = n.fn
    name = plain_getattr(fn, "__qualname__")
    return printable(name if isinstance(name, str) else n.fn_name)


def op_text(n: Node) -> str:
    """What the node did, after the names it was bound to (``mu = @3 * 2``), without its index,
    location or value (control characters escaped)."""
    if isinstance(n, (Branch, Phi)):            # the plain dump's line already names them
        text = format_node(n)
        return text[len(f"@{n.index}: "):]
    return printable(names_text(n) + _op_text(n))


def _op_text(n: Node) -> str:
    if isinstance(n, Argument):
        return f"arg {n.name}"
    if isinstance(n, Constant):
        return f"const {n.name}"
    if isinstance(n, PrimitiveCall):
        return call_text(n)
    if isinstance(n, Return):
        return f"return {ref(n.inputs[0])}" if n.inputs else "return"
    if isinstance(n, Raise):
        return "raise"
    return n.kind



def has_value(n: Node) -> bool:
    """Whether a view writes the node's value (Branch and Phi lines already say it)."""
    return not isinstance(n, (Branch, Phi))


def value_sep(n: Node) -> str:
    """`` = `` before a value; `` ⇒ `` when the node mutated a container (its value)."""
    return " ⇒ " if isinstance(n, PrimitiveCall) and n.mutates is not None else " = "
