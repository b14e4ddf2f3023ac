"""What each CPython 3.11 instruction does to the replay's stack of nodes (part 1: stack,
locals, operators, names, attributes, closures, building values; part 2 is
``semantics311_flow``).

``HANDLERS[opname](frame, instr, i)`` consumes the instruction's events (``frame.r.take()``; an
absent event raises ``Missing``: the instruction raised) and pushes, pops and records nodes.
Probe placement for the same instructions is in ``py311``; the two must agree.
"""
from __future__ import annotations

import operator

from .. import ops
from . import py311

__all__ = ["HANDLERS", "Folded", "Placeholder", "NULL"]


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


def handles(*names):
    def register(fn):
        for name in names:
            H[name] = fn
        return fn
    return register


@handles("NOP", "RESUME", "PRECALL", "MAKE_CELL", "COPY_FREE_VARS", "EXTENDED_ARG", "CACHE")
def _nothing(f, ins, i):
    pass


@handles("LOAD_FAST")
def _load_fast(f, ins, i):
    if i in f.s.maybe_unbound:
        f.r.take()                      # absent: UnboundLocalError here
    node = f.locals.get(ins.arg)
    f.stack.append(node if node is not None else f.r.literal("<unbound>"))


@handles("STORE_FAST")
def _store_fast(f, ins, i):
    f.locals[ins.arg] = f.stack.pop()


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
    f.stack.append(writer if writer is not None else f.r.literal(f"<cell {ins.arg.name}>"))


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


@handles("BINARY_OP")
def _binary_op(f, ins, i):
    b, a = f.use(), f.use()
    value = f.r.take()
    inplace = ins.arg >= py311.INPLACE_FIRST and value is a.value and _is_mutable(value)
    f.stack.append(f.call(py311.BINARY_OPS[ins.arg], (a, b), value, i, 0 if inplace else None))


def _is_mutable(value) -> bool:
    if isinstance(value, _MUTABLE):
        return True
    import numpy as np
    return isinstance(value, np.ndarray)


@handles("UNARY_POSITIVE", "UNARY_NEGATIVE", "UNARY_NOT", "UNARY_INVERT")
def _unary(f, ins, i):
    a = f.use()
    f.stack.append(f.call(py311.UNARY_OPS[ins.name], (a,), f.r.take(), i))


def _test(f, ins, i, fn, symbol, a, b):
    if i in f.info.folded:
        f.stack.append(Folded(symbol, (a, b)))
    else:
        f.stack.append(f.call(fn, (a, b) if fn is not operator.contains else (b, a), f.r.take(), i))


@handles("COMPARE_OP")
def _compare_op(f, ins, i):
    b, a = f.use(), f.use()
    k = int(ins.arg)
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
    k, c = f.use(), f.use()
    f.stack.append(f.call(operator.getitem, (c, k), f.r.take(), i))


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
    if i in f.info.callee_producer:
        f.stack.append(Placeholder(None, name))
        return
    if i in f.info.owner_producer:
        f.stack.append(Placeholder(Placeholder.GLOBAL, name))
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
    f.r.writers[(f.info.code.co_filename, ins.arg)] = f.use()


@handles("DELETE_GLOBAL")
def _delete_global(f, ins, i):
    f.r.take()
    f.r.writers.pop((f.info.code.co_filename, ins.arg), None)


@handles("LOAD_ATTR", "LOAD_METHOD")
def _load_attr(f, ins, i):
    obj = f.use()
    method = ins.name == "LOAD_METHOD"
    if method:
        f.stack.append(NULL)
    if i in f.info.callee_producer:
        f.stack.append(Placeholder(obj, ins.arg))
        return
    f.stack.append(f.call(getattr, (obj, f.r.literal(ins.arg)), f.r.take(), i))


@handles("STORE_ATTR")
def _store_attr(f, ins, i):
    obj, v = f.use(), f.use()
    f.r.take()
    f.call(setattr, (obj, f.r.literal(ins.arg), v), None, i, 0)


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
    value = f.use()
    f.r.writers[id(f.r.take())] = value


@handles("DELETE_DEREF")
def _delete_deref(f, ins, i):
    f.r.writers.pop(id(f.r.take()), None)


# -- building values ---------------------------------------------------------------------------
def _pop_n(f, n: int) -> tuple:
    items = [f.use() for _ in range(n)]
    items.reverse()
    return tuple(items)


_BUILDERS = {"BUILD_TUPLE": ops.build_tuple, "BUILD_LIST": ops.build_list,
             "BUILD_SET": ops.build_set, "BUILD_STRING": ops.build_string, "BUILD_SLICE": slice}


@handles(*_BUILDERS)
def _build(f, ins, i):
    items = _pop_n(f, ins.arg)
    f.stack.append(f.call(_BUILDERS[ins.name], items, f.r.take(), i))


@handles("BUILD_MAP")
def _build_map(f, ins, i):
    f.stack.append(f.call(ops.build_dict, _pop_n(f, 2 * ins.arg), f.r.take(), i))


@handles("BUILD_CONST_KEY_MAP")
def _build_const_key_map(f, ins, i):
    f.stack.append(f.call(ops.build_const_key_dict, _pop_n(f, ins.arg + 1), f.r.take(), i))


@handles("LIST_TO_TUPLE")
def _list_to_tuple(f, ins, i):
    a = f.use()
    f.stack.append(f.call(tuple, (a,), f.r.take(), i))


@handles("FORMAT_VALUE")
def _format_value(f, ins, i):
    spec = f.use() if int(ins.arg) & 0x04 else f.r.literal("")
    value = f.use()
    conv = f.r.literal(int(ins.arg) & 0x03)
    f.stack.append(f.call(ops.format_value, (value, conv, spec), f.r.take(), i))


@handles("MAKE_FUNCTION")
def _make_function(f, ins, i):
    parts = _pop_n(f, 1 + bin(int(ins.arg) & 0xF).count("1"))
    f.stack.append(f.call(ops.make_function, parts, f.r.take(), i))


_CONTAINER_UPDATES = {"LIST_APPEND": list.append, "SET_ADD": set.add, "LIST_EXTEND": list.extend,
                      "SET_UPDATE": set.update, "DICT_UPDATE": dict.update,
                      "DICT_MERGE": dict.update}


@handles(*_CONTAINER_UPDATES)
def _container_update(f, ins, i):
    item = f.use()
    container = f.r.resolve(f.stack[-ins.arg])
    if ins.name != "LIST_APPEND":
        f.r.take()
    f.call(_CONTAINER_UPDATES[ins.name], (container, item), None, i, 0, method=True)


@handles("MAP_ADD")
def _map_add(f, ins, i):
    value, key = f.use(), f.use()
    container = f.r.resolve(f.stack[-ins.arg])
    f.r.take()
    f.call(operator.setitem, (container, key, value), None, i, 0)


@handles("UNPACK_SEQUENCE", "UNPACK_EX")
def _unpack(f, ins, i):
    seq = f.use()
    values = f.r.take()
    n = len(values)
    if ins.name == "UNPACK_SEQUENCE":
        index = list(range(n))
        star = None
    else:
        before, after = ins.arg & 0xFF, ins.arg >> 8
        index = list(range(before)) + [None] + [k - after for k in range(after)]
        star = (before, after)
    nodes = []
    for k, v in zip(index, values):
        if k is None:
            nodes.append(f.call(ops.unpack_star, (seq, f.r.literal(star[0]), f.r.literal(star[1])), v, i))
        else:
            nodes.append(f.call(operator.getitem, (seq, f.r.literal(k)), v, i))
    f.stack.extend(reversed(nodes))


@handles("GET_ITER")
def _get_iter(f, ins, i):
    a = f.use()
    f.stack.append(f.call(iter, (a,), f.r.take(), i))


@handles("GET_LEN")
def _get_len(f, ins, i):
    a = f.r.resolve(f.stack[-1])
    f.stack.append(f.call(len, (a,), f.r.take(), i))


@handles("IMPORT_NAME")
def _import_name(f, ins, i):
    f.use(), f.use()
    f.stack.append(f.constant(ins.arg, f.r.take(), i))


@handles("IMPORT_FROM")
def _import_from(f, ins, i):
    module = f.r.resolve(f.stack[-1])
    f.stack.append(f.call(getattr, (module, f.r.literal(ins.arg)), f.r.take(), i))


@handles("IMPORT_STAR", "PRINT_EXPR")
def _consume_one(f, ins, i):
    f.use()
    f.r.take()


@handles("LOAD_BUILD_CLASS")
def _load_build_class(f, ins, i):
    f.stack.append(f.constant("__build_class__", f.r.take(), i))


# control flow, calls, with/match/exceptions register the rest of the table
from . import semantics311_flow  # noqa: E402,F401

HANDLERS = H
