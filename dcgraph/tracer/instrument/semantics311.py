"""What each CPython 3.11 instruction does to the replay's stack of nodes (part 1: stack,
locals, operators, names, attributes, closures; building values is ``semantics311_build``, and
control flow, calls and exceptions ``semantics311_flow``).

``HANDLERS[opname](frame, instr, i)`` consumes the instruction's events (``frame.r.take()``; an
absent event raises ``Missing``: the instruction raised) and pushes, pops and records nodes.
Probe placement for the same instructions is in ``py311``; the two must agree.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import ops
from ..events import MARK_TYPES
from ..naming import _ONE_NAME, added_name, bind, bind_attribute
from ...tape.nodes import PrimitiveCall, append_call
from ..operator_guards import python_inplace
from ..operators import replay_operator
from . import py311

__all__ = ["HANDLERS", "Folded", "Placeholder", "NULL", "inert"]


class _Null:
    __slots__ = ()

    def __repr__(self):
        return "NULL"


NULL = _Null()


class Placeholder:
    """A value not logged: a global or ``obj.name`` that only serves as the next call's callable
    (``obj`` None for a global), or a global only used as the owner of such a method."""

    __slots__ = ("obj", "name")
    GLOBAL = "global"      # ``obj`` of a global whose value only serves ``global.name(...)``

    def __init__(self, obj, name):
        self.obj, self.name = obj, name


class Folded:
    """A comparison consumed by the conditional jump after it (becomes part of the Branch)."""

    __slots__ = ("op", "inputs")

    def __init__(self, op, inputs):
        self.op, self.inputs = op, inputs


H: dict = {}


def registrar(table: dict):
    """A decorator factory registering a handler under opcode names in ``table``."""
    def handles(*names):
        def register(fn):
            for name in names:
                table[name] = fn
            return fn
        return register
    return handles


handles = registrar(H)


@handles("NOP", "RESUME", "PRECALL", "MAKE_CELL", "COPY_FREE_VARS", "EXTENDED_ARG", "CACHE")
def _nothing(f, ins, i):
    pass


inert = _nothing   # the handler of instructions whose replay does nothing (the replay skips them)


@handles("LOAD_FAST")
def _load_fast(f, ins, i):
    if i in f.s.maybe_unbound:
        f.r.take()                      # absent: UnboundLocalError here
    node = f.locals.get(ins.arg)
    f.stack.append(node if node is not None else f.r.literal("<unbound>"))


@handles("STORE_FAST")
def _store_fast(f, ins, i):
    node = f.locals[ins.arg] = f.stack.pop()
    if getattr(node, "tape", None) is f.tape:     # ``naming.bind``, inlined: the most frequent
        names = node.names
        if not names:
            one = _ONE_NAME.get(ins.arg)
            node.names = one if one is not None else added_name(names, ins.arg)
        elif ins.arg not in names:
            node.names = added_name(names, ins.arg)


@handles("DELETE_FAST")
def _delete_fast(f, ins, i):
    if i in f.s.maybe_unbound:
        f.r.take()
    f.locals.pop(ins.arg, None)


@handles("LOAD_CONST")
def _load_const(f, ins, i):
    f.stack.append(f.info.literals[i])


@handles("LOAD_CLOSURE")
def _load_closure(f, ins, i):
    """A cell captured by a new closure stands for the value last stored in it."""
    writer = f.r.writers.get(id(f.r.take()))
    f.stack.append(writer if writer is not None else f.r.literal(f"<cell {getattr(ins.arg, 'name', ins.arg)}>"))


@handles("LOAD_ASSERTION_ERROR")
def _load_assertion_error(f, ins, i):
    f.stack.append(f.r.literal(AssertionError))


@handles("POP_TOP", "POP_EXCEPT")
def _pop_top(f, ins, i):
    f.stack.pop()


@handles("PUSH_NULL")
def _push_null(f, ins, i):
    f.stack.append(NULL)


@handles("COPY")
def _copy(f, ins, i):
    f.stack.append(f.stack[-ins.arg])


@handles("SWAP")
def _swap(f, ins, i):
    st = f.stack
    st[-1], st[-ins.arg] = st[-ins.arg], st[-1]


@handles("KW_NAMES")
def _kw_names(f, ins, i):
    f.kwnames = tuple(ins.arg)


@handles("PUSH_EXC_INFO")
def _push_exc_info(f, ins, i):
    exc = f.stack.pop()
    f.stack.append(f.r.literal("<previous exception>"))
    f.stack.append(exc)


# -- operators -------------------------------------------------------------------------------
_MUTABLE = (list, dict, set, bytearray)
_BINARY_OPS = py311.BINARY_OPS
_INPLACE_FIRST = py311.INPLACE_FIRST
_ndarray = np.ndarray


@handles("BINARY_OP")
def _binary_op(f, ins, i):
    if f.versions:
        b, a = f.use(), f.use()
    else:                           # ``use`` without versions to resolve: a pop
        stack = f.stack
        b, a = stack.pop(), stack.pop()
    fn = _BINARY_OPS[ins.arg]
    if i in f.guarded_sites and replay_operator(f, i, fn, (a, b)):
        return                      # a user class's methods ran (``tracer.operators``)
    if ins.arg >= _INPLACE_FIRST:
        r = f.r
        pos, log = r.pos, r.log       # the value, as ``r.peek()`` gives it:
        ev = log[pos] if pos < len(log) and type(log[pos]) not in MARK_TYPES else r.peek()
        if ev is a.value and (_is_mutable(ev) or python_inplace(fn, ev)):
            f.stack.append(f.call(fn, (a, b), r.take(), i, 0))   # in place: a's new version
            return
    _push_call(f, fn, (a, b), i)


def _push_call(f, fn, args: tuple, i: int) -> None:
    """``f.stack.append(f.call(fn, args, f.r.take(), i))`` in one call (the common case)."""
    r = f.r
    pos, log = r.pos, r.log
    if pos < len(log) and type(value := log[pos]) not in MARK_TYPES:
        r.pos = pos + 1
    else:
        value = r.take()
    node = append_call(f.tape, PrimitiveCall, fn, args, None, value, f.ops[i].loc)
    if type(value) is _ndarray and r.aliasing.writes:
        r.aliasing.noted(node)
    f.stack.append(node)


def _is_mutable(value) -> bool:
    return isinstance(value, _MUTABLE) or isinstance(value, _ndarray)


@handles("UNARY_POSITIVE", "UNARY_NEGATIVE", "UNARY_NOT", "UNARY_INVERT")
def _unary(f, ins, i):
    a = f.use()
    if i not in f.guarded_sites or not replay_operator(f, i, py311.UNARY_OPS[ins.name], (a,)):
        _push_call(f, py311.UNARY_OPS[ins.name], (a,), i)


def _test(f, ins, i, fn, symbol, a, b):
    if i in f.info.folded:
        f.stack.append(Folded(symbol, (a, b)))
    else:
        _push_call(f, fn, (a, b) if fn is not operator.contains else (b, a), i)


@handles("COMPARE_OP")
def _compare_op(f, ins, i):
    if f.versions:
        b, a = f.use(), f.use()
    else:
        stack = f.stack
        b, a = stack.pop(), stack.pop()
    k = py311.compare_index(ins.arg)
    _test(f, ins, i, py311.COMPARE_OPS[k], py311.COMPARE_SYMBOLS[k], a, b)


@handles("IS_OP")
def _is_op(f, ins, i):
    b, a = f.use(), f.use()
    fn, symbol = (operator.is_not, "is not") if ins.arg else (operator.is_, "is")
    _test(f, ins, i, fn, symbol, a, b)


@handles("CONTAINS_OP")
def _contains_op(f, ins, i):
    b, a = f.use(), f.use()
    if ins.arg:
        if i in f.info.folded:
            f.stack.append(Folded("not in", (a, b)))
        else:
            f.stack.append(f.call(ops.not_contains, (b, a), f.r.take(), i))
    else:
        _test(f, ins, i, operator.contains, "in", a, b)


@handles("CHECK_EXC_MATCH")
def _check_exc_match(f, ins, i):
    typ = f.use()
    exc = f.stack[-1]
    if i in f.info.folded:
        f.stack.append(Folded("matches", (exc, typ)))
    else:
        f.stack.append(f.call(isinstance, (exc, typ), f.r.take(), i))


@handles("BINARY_SUBSCR")
def _binary_subscr(f, ins, i):
    if f.versions:
        k, c = f.use(), f.use()
    else:
        stack = f.stack
        k, c = stack.pop(), stack.pop()
    if i not in f.guarded_sites or not replay_operator(f, i, operator.getitem, (c, k)):
        _push_call(f, operator.getitem, (c, k), i)


@handles("STORE_SUBSCR")
def _store_subscr(f, ins, i):
    k, c, v = f.use(), f.use(), f.use()
    f.r.take()
    f.call(operator.setitem, (c, k, v), None, i, 0)


@handles("DELETE_SUBSCR")
def _delete_subscr(f, ins, i):
    k, c = f.use(), f.use()
    f.r.take()
    f.call(operator.delitem, (c, k), None, i, 0)


# -- names, attributes, closures ---------------------------------------------------------------
@handles("LOAD_GLOBAL")
def _load_global(f, ins, i):
    push_null, name = ins.arg
    if push_null:
        f.stack.append(NULL)
    if i in f.info.callee_producer or i in f.info.owner_producer:
        placeholders = f.blocks.placeholders    # one per site (``Placeholder``s are never changed)
        held = placeholders.get(i)
        if held is None:
            held = placeholders[i] = Placeholder(
                None if i in f.info.callee_producer else Placeholder.GLOBAL, name)
        f.stack.append(held)
        return
    value = f.r.take()
    key = (f.info.code.co_filename, name)
    node = f.r.writers.get(key)
    if node is None or node.value is not value:
        node = f.globals_seen.get(name)
        if node is None or node.value is not value:
            node = f.globals_seen[name] = f.constant(name, value, i)
    f.stack.append(node)


@handles("STORE_GLOBAL")
def _store_global(f, ins, i):
    bind(f.tape, f.stack[-1], ins.arg)      # the value as computed (``use`` gives its version)
    f.r.writers[(f.info.code.co_filename, ins.arg)] = f.use()


@handles("DELETE_GLOBAL")
def _delete_global(f, ins, i):
    f.r.take()
    f.r.writers.pop((f.info.code.co_filename, ins.arg), None)


@handles("LOAD_ATTR", "LOAD_METHOD")
def _load_attr(f, ins, i):
    obj = f.use() if f.versions else f.stack.pop()
    method = ins.name == "LOAD_METHOD"
    if method:
        f.stack.append(NULL)
    if i in f.info.callee_producer:
        if type(obj) is Placeholder:          # ``module.name``: one per site
            placeholders = f.blocks.placeholders
            held = placeholders.get(i)
            if held is None or held.obj is not obj:
                held = placeholders[i] = Placeholder(obj, ins.arg)
            f.stack.append(held)
        else:
            f.stack.append(Placeholder(obj, ins.arg))
        return
    if not method and i in f.guarded_sites and replay_operator(f, i, getattr, (obj,)):
        return                      # a property's Python getter ran (``tracer.operators``)
    f.stack.append(f.call(getattr, (obj, f.r.literal(ins.arg)), f.r.take(), i))


@handles("STORE_ATTR")
def _store_attr(f, ins, i):
    named, stored = f.stack[-1], f.stack[-2]     # as loaded (``use`` gives their versions)
    obj, v = f.use(), f.use()
    f.r.take()
    f.call(setattr, (obj, f.r.literal(ins.arg), v), None, i, 0)
    bind_attribute(f.tape, f.locals, named, ins.arg, stored)


@handles("DELETE_ATTR")
def _delete_attr(f, ins, i):
    obj = f.use()
    f.r.take()
    f.call(delattr, (obj, f.r.literal(ins.arg)), None, i, 0)


@handles("LOAD_DEREF", "LOAD_CLASSDEREF")
def _load_deref(f, ins, i):
    cell, value = f.r.take()
    node = f.r.writers.get(id(cell))
    if node is None or node.value is not value:
        node = f.constant(ins.arg.name, value, i)
        f.r.writers[id(cell)] = node
    f.stack.append(node)


@handles("STORE_DEREF")
def _store_deref(f, ins, i):
    bind(f.tape, f.stack[-1], getattr(ins.arg, "name", ins.arg))
    value = f.use()
    f.r.writers[id(f.r.take())] = value


@handles("DELETE_DEREF")
def _delete_deref(f, ins, i):
    f.r.writers.pop(id(f.r.take()), None)


def _pop_n(f, n: int) -> tuple:
    if not f.versions:              # ``use`` without versions to resolve: a pop
        if not n:
            return ()
        stack = f.stack
        items = tuple(stack[-n:])
        del stack[-n:]
        return items
    items = [f.use() for _ in range(n)]
    items.reverse()
    return tuple(items)


# building values, control flow, calls, with/match/exceptions register the rest of the table
from . import semantics311_build, semantics311_flow  # noqa: E402,F401

HANDLERS = H
