"""Names of values: the replay binds a node to the variable a store wrote it to.

Called by the opcode handlers (``instrument.semantics*``) at each store: ``STORE_FAST`` and its
3.13 superinstructions, ``STORE_GLOBAL``, ``STORE_DEREF`` (cells and nonlocals) and
``STORE_ATTR`` (``obj.attr``). The contract is ``Node.names`` (``tape/nodes.py``).
"""
from __future__ import annotations

from ..tape import Constant, PrimitiveCall

__all__ = ["bind", "bind_attribute", "attribute_path", "added_name"]

MAX_PATH = 8          # attributes followed back for ``a.b.c...`` (a chain of getattr nodes)
_ONE_NAME: dict = {}  # name -> (name,): the ``names`` of nodes bound once, shared (bounded)


def added_name(names: tuple, name: str) -> tuple:
    """``names`` with ``name`` appended (the caller checked it is absent); a node's first name
    is a tuple shared by every node bound to that name."""
    if names:
        return names + (name,)
    one = _ONE_NAME.get(name)
    if one is None:
        one = (name,)
        if len(_ONE_NAME) < 65536:
            _ONE_NAME[name] = one
    return one


def bind(tape, node, name: str) -> None:
    """A frame recording into ``tape`` stored ``node`` under ``name``: named when it is a node
    of that tape (not a shared literal, not a node of another frame read through a cell)."""
    if getattr(node, "tape", None) is tape and name not in node.names:
        node.names = added_name(node.names, name)


def bind_attribute(tape, frame_locals: dict, obj, attr: str, node) -> None:
    """``obj.attr = node``: named ``path.attr`` when the object has a path (``self.mu``)."""
    path = attribute_path(obj, frame_locals)
    if path is not None:
        bind(tape, node, f"{path}.{attr}")


def attribute_path(node, frame_locals: dict, depth: int = MAX_PATH) -> str | None:
    """The name an attribute store's object goes by: its first name, else a local holding the
    same object (a write makes the object's latest version the input, not the named node),
    else ``path.attr`` of the ``getattr`` it was read by, else None."""
    names = getattr(node, "names", None)
    if names:
        return names[0]
    value = getattr(node, "value", None)
    if value is None:
        return None
    for name, held in frame_locals.items():
        if getattr(held, "value", None) is value:
            return name
    if depth and type(node) is PrimitiveCall and node.fn is getattr and len(node.args) == 2 \
            and type(node.args[1]) is Constant and type(node.args[1].value) is str:
        base = attribute_path(node.args[0], frame_locals, depth - 1)
        if base is not None:
            return f"{base}.{node.args[1].value}"
    return None
