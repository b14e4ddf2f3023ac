"""Expressions of compiled replay: a recorded operator-like call written as one Python
expression on its arguments' expressions (``inline``), and the item an unpacking reads from a
tuple display on the path (``tuple_item``)."""
from __future__ import annotations

import keyword
import operator

from ..tape import Constant, PrimitiveCall
from ..tape.printing import UNARY_SYMBOLS
from ..tracer import ops
from .support import symbol, unalias

__all__ = ["inline", "tuple_item"]

_FORMS = {ops.next_item: "_next({0})", operator.getitem: "{0}[{1}]",
          operator.contains: "{1} in {0}", ops.not_contains: "{1} not in {0}"}


def tuple_item(node):
    """The item ``t[k]`` reads when ``t`` is a tuple display on the path and ``k`` a literal
    int (how unpacking is recorded), else None."""
    if node.fn is not operator.getitem or len(node.args) != 2 or node.kwargs \
            or node.fn_node is not None:
        return None
    t, key = unalias(node.args[0]), node.args[1]
    if type(t) is PrimitiveCall and t.fn is ops.build_tuple and not t.kwargs \
            and type(key) is Constant and key.tape is None and type(key.value) is int \
            and -len(t.args) <= key.value < len(t.args):
        return t.args[key.value]
    return None


def inline(fn, a, sym, node) -> str | None:
    """The Python expression of an operator-like call on argument expressions ``a``."""
    if sym is not None:
        return f"{a[0]} {sym} {a[1]}"
    usym = symbol(UNARY_SYMBOLS, fn) if len(a) == 1 else None
    if usym is not None:
        return f"{usym}{a[0]}"
    form = symbol(_FORMS, fn) if len(a) == 2 else None
    if form is not None:
        return form.format(*a)
    name = node.args[1].value if len(a) == 2 else None
    if fn is getattr and type(name) is str and name.isidentifier() and not keyword.iskeyword(name):
        return f"{a[0]}.{name}"
    if fn is ops.build_tuple:
        return f"({''.join(x + ', ' for x in a)})"
    return f"[{', '.join(a)}]" if fn is ops.build_list else None
