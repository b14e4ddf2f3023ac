"""What CPython 3.13 instructions do to the replay's stack of nodes: 3.12's table
(``semantics312``) with the instructions 3.13 changed or added (see ``py313``).

The tapes are the same as on 3.11: ``TO_BOOL`` adds no node (the branch tests the value), a
function made with ``SET_FUNCTION_ATTRIBUTE`` is one ``make_function`` node with 3.11's inputs,
and an f-string field is one ``format_value`` node.
"""
from __future__ import annotations

from .. import ops
from . import py313
from .semantics311 import NULL, _pop_n, registrar
from .semantics312 import H as _H312
from ...tape.nodes import Node

__all__ = ["HANDLERS", "H"]

H: dict = dict(_H312)
H.pop("KW_NAMES", None)
H.pop("FORMAT_VALUE", None)


handles = registrar(H)


@handles("TO_BOOL")
def _to_bool(f, ins, i):
    pass                                # the test that follows reads the value itself


@handles("END_FOR")
def _end_for(f, ins, i):
    f.stack.pop()                       # then POP_TOP pops the iterator


@handles("LOAD_FAST")
def _load_fast(f, ins, i):
    if py313.is_cell_load(ins, f.s.cells):
        _H312["LOAD_CLOSURE"](f, ins, i)
    else:
        _H312["LOAD_FAST"](f, ins, i)


@handles("LOAD_FAST_LOAD_FAST")
def _load_fast_load_fast(f, ins, i):
    _two_locals(f, ins, i, ("LOAD_FAST", "LOAD_FAST"))


@handles("STORE_FAST_LOAD_FAST")
def _store_fast_load_fast(f, ins, i):
    _two_locals(f, ins, i, ("STORE_FAST", "LOAD_FAST"))


@handles("STORE_FAST_STORE_FAST")
def _store_fast_store_fast(f, ins, i):
    _two_locals(f, ins, i, ("STORE_FAST", "STORE_FAST"))


class _Half:
    """One half of a superinstruction, as the 3.12 handlers read it."""

    __slots__ = ("name", "arg")

    def __init__(self, name, arg):
        self.name, self.arg = name, arg


def _two_locals(f, ins, i, names):
    first, second = ins.arg
    maybe_unbound = i in f.s.maybe_unbound
    if maybe_unbound:
        f.r.take()                      # logged once, after both halves
    for name, arg in zip(names, (first, second)):
        if name == "LOAD_FAST":
            node = f.locals.get(arg)
            f.stack.append(node if node is not None else f.r.literal("<unbound>"))
        else:
            _H312["STORE_FAST"](f, _Half(name, arg), i)


@handles("LOAD_GLOBAL")
def _load_global(f, ins, i):
    push_null, name = ins.arg
    _H312["LOAD_GLOBAL"](f, _Half("LOAD_GLOBAL", (False, name)), i)
    if push_null:
        f.stack.append(NULL)


@handles("LOAD_ATTR")
def _load_attr(f, ins, i):
    method, name = ins.arg
    _H312["LOAD_ATTR"](f, _Half("LOAD_ATTR", (False, name)), i)
    if method:
        f.stack.append(NULL)


@handles("LOAD_SUPER_ATTR")
def _load_super_attr(f, ins, i):
    method, two, name = ins.arg
    _H312["LOAD_SUPER_ATTR"](f, _Half("LOAD_SUPER_ATTR", (False, two, name)), i)
    if method:
        f.stack.append(NULL)


@handles("CALL", "CALL_KW")
def _call(f, ins, i):
    names = f.stack.pop().value if ins.name == "CALL_KW" else ()
    args = list(_pop_n(f, ins.arg))
    self_or_null = f.stack.pop()
    callee = f.stack.pop()
    if self_or_null is not NULL:        # [function, self, args]: self is the first argument
        args.insert(0, f.r.resolve(self_or_null) if isinstance(self_or_null, Node)
                    else self_or_null)
    split = len(args) - len(names)
    f.do_call(i, callee, args[:split], dict(zip(names, args[split:])))


@handles("CALL_FUNCTION_EX")
def _call_function_ex(f, ins, i):
    kw = f.use() if ins.arg & 1 else None
    star = f.use()
    f.stack.pop()                       # the NULL
    callee = f.stack.pop()
    args = f.star_arguments(i, star)
    kwargs = f.star_keywords(i, kw) if kw is not None else {}
    f.do_call(i, callee, args, kwargs)


class _Function:
    """A function being made: its code and the attributes set so far (flag -> node)."""

    __slots__ = ("code", "parts", "value")

    def __init__(self, code, value):
        self.code, self.parts, self.value = code, {}, value


def _made(f, i, pending: _Function):
    """One ``make_function`` node with 3.11's inputs: the attributes by flag, then the code."""
    inputs = tuple(pending.parts[k] for k in sorted(pending.parts)) + (pending.code,)
    return f.call(ops.make_function, inputs, pending.value, i)


def _next_sets_attribute(f, i) -> bool:
    return i + 1 < len(f.ops) and f.ops[i + 1].name == "SET_FUNCTION_ATTRIBUTE"


@handles("MAKE_FUNCTION")
def _make_function(f, ins, i):
    pending = _Function(f.use(), f.r.take())
    f.stack.append(pending if _next_sets_attribute(f, i) else _made(f, i, pending))


@handles("SET_FUNCTION_ATTRIBUTE")
def _set_function_attribute(f, ins, i):
    pending, attribute = f.stack.pop(), f.use()
    f.r.take()
    pending.parts[int(ins.arg)] = attribute
    f.stack.append(pending if _next_sets_attribute(f, i) else _made(f, i, pending))


class _Converted:
    """A value with an f-string conversion (``!r``...) awaiting its FORMAT_* instruction."""

    __slots__ = ("node", "conversion")

    def __init__(self, node, conversion: int):
        self.node, self.conversion = node, conversion


@handles("CONVERT_VALUE")
def _convert_value(f, ins, i):
    f.stack.append(_Converted(f.use(), int(ins.arg)))


@handles("FORMAT_SIMPLE", "FORMAT_WITH_SPEC")
def _format(f, ins, i):
    spec = f.use() if ins.name == "FORMAT_WITH_SPEC" else f.r.literal("")
    if isinstance(f.stack[-1], _Converted):
        converted = f.stack.pop()
        value, conversion = converted.node, converted.conversion
    else:
        value, conversion = f.use(), 0
    f.stack.append(f.call(ops.format_value, (value, f.r.literal(conversion), spec),
                          f.r.take(), i))


HANDLERS = H
