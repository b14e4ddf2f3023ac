"""CPython 3.11 semantics for the replay: instructions that build values (tuples, lists,
dicts, strings, functions, unpacking, iteration, imports). Registers into ``semantics311``'s
table (which imports this module)."""
from __future__ import annotations

import operator

from .. import ops
from .semantics311 import _pop_n, handles

__all__ = []


# -- building values ---------------------------------------------------------------------------
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
