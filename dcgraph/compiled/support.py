"""What compiled replay handles, and the node facts its code generators share.

``check_supported(tape) -> ListLengths`` raises ``NotCompilable`` naming the first thing outside
the supported subset and where it is; otherwise it returns the lengths of the lists the path
builds. Supported: any path whose primitives may run twice unobserved (``effects``), lists
built in the call and grown by ``append``/``extend`` (comprehensions included), exceptions
raised by ``raise`` in traced code and caught on the path (``raise SomeClass``: the recorded
instance stands for the new one). Not supported: the root call
raising, exceptions raised by untraced calls (the tape does not record the call that raised),
``except*``, generators, other container mutation, assignments to globals and nonlocals.
"""
from __future__ import annotations

import dis
import types

from ..tape import Argument, Constant, NestedCall, Node, Phi, PrimitiveCall, Raise, Return
from ..tape.printing import format_node
from ..tracer import ops
from .effects import effect_of

__all__ = ["NotCompilable", "GuardFailed", "check_supported", "why_not", "where", "unalias",
           "literal_list", "symbol", "ListLengths"]

_GEN_FLAGS = 0x20 | 0x80 | 0x100 | 0x200   # generator, coroutine, async generator
_NEVER_RERUN = {ops.match_class: "a match statement with a class pattern",
                ops.call_result: "a mutating call's result",
                ops.view_of: "array aliasing", ops.write_through_view: "array aliasing"}
_GROWS = {list.append: "append", list.extend: "extend"}   # list mutations re-run on fresh lists
_FRESH = (ops.build_list,)


class NotCompilable(Exception):
    """The tape (or a rule met at run time) is outside what compiled replay handles; the
    message is the reason, naming the node and source line."""


class GuardFailed(Exception):
    """These arguments take another path than the compiled one (``args[0]``: the number of
    the guarding node, -1 for an iterator that ran out early)."""


class ListLengths(dict):
    """List node (a ``build_list`` or an ``append``/``extend`` of one) -> the list's length
    right after it; ``later``: the versions a later mutation grew (their values at run time
    are not their recorded states); ``checked``: extend node -> length its argument must have."""

    def __init__(self):
        super().__init__()
        self.later, self.checked = set(), {}


def why_not(tape) -> str | None:
    """The reason compiled replay cannot handle ``tape``, or None when it can."""
    try:
        check_supported(tape)
    except NotCompilable as exc:
        return str(exc)
    return None


def check_supported(tape) -> ListLengths:
    """Raise ``NotCompilable`` (with the reason) unless compiled replay handles ``tape``."""
    if tape.raised or type(tape.returned) is not Return:
        raise NotCompilable(f"{tape.name} raised an exception")
    _check_code(tape)
    lengths, memo = ListLengths(), {}
    for node in tape.walk():
        t = type(node)
        if t is NestedCall:
            _check_call(node)
            _check_code(node.child)
        elif t is Raise and node.tape is tape:
            raise NotCompilable(f"an exception was raised ({where(node)})")
        elif t is Constant and node.tape is not None and node.name == "exception" \
                and not _raise_statement(node):
            raise NotCompilable(f"an exception was caught whose raising call is not recorded "
                                f"(raised by an untraced call or as a class) ({where(node)})")
        elif t is Constant and node.tape is not None and node.name in (
                "matched exceptions", "unmatched exceptions"):
            raise NotCompilable(f"an exception group was caught with except* ({where(node)})")
        elif t is PrimitiveCall:
            if node.fn in _FRESH:
                lengths[node] = len(node.args)
            elif node.mutates is not None:
                _grow(node, lengths)
            why = symbol(_NEVER_RERUN, node.fn) or effect_of(node, memo)
            if why is not None:      # a guard failing after it would make it happen twice
                raise NotCompilable(f"{why} ({where(node)})")
    return lengths


def _raise_statement(node) -> bool:
    """Was this caught exception raised by a ``raise`` statement of traced code (``raise
    SomeClass``)? Then the path decides that it is raised and the recorded exception stands
    for the new one; an untraced call that raised is not on the tape, so nothing checks that
    it would raise again."""
    loc = node.loc
    if loc is None or loc.code is None or loc.offset is None:
        return False
    return any(ins.offset == loc.offset and ins.opname == "RAISE_VARARGS"
               for ins in dis.get_instructions(loc.code))


def _grow(node, lengths: ListLengths) -> None:
    """An ``append``/``extend`` of a list built on the path: its length afterwards."""
    how = symbol(_GROWS, node.fn)
    target = unalias(node.args[0]) if node.args else None
    if how is None or node.kwargs or len(node.args) != 2 or target not in lengths:
        raise NotCompilable(f"container mutation other than append/extend of a list built "
                            f"in the call ({where(node)})")
    lengths.later.add(target)
    if how == "append":
        lengths[node] = lengths[target] + 1
        return
    items = unalias(node.args[1])
    if items in lengths:
        n = lengths[items]
    elif type(items.value) in (tuple, list, str, range):
        n = len(items.value) if type(items.value) is not list else None
        if n is None:
            raise NotCompilable(f"extend by a list not built in the call ({where(node)})")
        if not (type(items) is Constant and items.tape is None):
            lengths.checked[node] = n
    else:
        raise NotCompilable(f"extend by a {type(items.value).__name__} ({where(node)})")
    lengths[node] = lengths[target] + n


def _check_code(tape) -> None:
    code = tape.code
    if code is None:
        return
    if code.co_flags & _GEN_FLAGS:
        raise NotCompilable(f"{tape.name} is a generator or coroutine")
    for ins in dis.get_instructions(code):
        if ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL") or (
                ins.opname in ("STORE_DEREF", "DELETE_DEREF") and ins.argval in code.co_freevars):
            raise NotCompilable(f"{tape.name} assigns the global or nonlocal {ins.argval!r}")


def _check_call(node) -> None:
    child, fn_node = node.child, node.fn_node
    if child is None:
        raise NotCompilable(f"a traced call without a tape ({where(node)})")
    if fn_node is None:
        return
    if type(fn_node.value) is not types.FunctionType:
        raise NotCompilable(f"a traced call of a {type(fn_node.value).__name__} value "
                            f"({where(node)})")
    made = unalias(fn_node)
    if type(made) is PrimitiveCall and made.fn is ops.make_function and any(
            type(a) is Argument and a.source is None for a in child.nodes):
        raise NotCompilable(f"a function made inside f uses a default argument ({where(node)})")


# -- node facts ---------------------------------------------------------------------------------
def where(node) -> str:
    """A node's dump line, location and source line, for messages."""
    loc = node.loc
    if loc is None:
        return format_node(node)
    return f"{format_node(node)} at {loc}" + (f": {loc.source}" if loc.source else "")


def unalias(node):
    """The node holding the value an alias (phi, bound argument, nested call) stands for."""
    while True:
        t = type(node)
        if t is Phi or (t is Argument and isinstance(node.source, Node)):
            node = node.source
        elif t is NestedCall and node.child is not None and type(node.child.returned) is Return:
            node = node.child.returned.inputs[0]
        else:
            return node


def literal_list(node) -> bool:
    """``build_list()`` then ``extend(constant tuple)``: how CPython builds a list display of
    constants (``[1.0, 0.0, 1.0]``); nothing flows back through it."""
    if node.fn is not list.extend or len(node.args) != 2 or node.kwargs:
        return False
    fresh, items = node.args
    return (type(items) is Constant and items.tape is None and type(fresh) is PrimitiveCall
            and fresh.fn is ops.build_list and not fresh.args)


def symbol(table, fn):
    """``table.get(fn)``, None for an unhashable callable."""
    try:
        return table.get(fn)
    except TypeError:
        return None
