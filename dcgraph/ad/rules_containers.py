"""VJP rules for item and attribute access and for the bytecode-level builders.

``operator.getitem``/``setitem``/``delitem`` on lists, tuples, dicts and numpy arrays (integer,
slice, fancy and boolean indexing), ``getattr``/``setattr``, ``build_tuple``/``build_list``/
``build_dict``/``build_const_key_dict``, ``unpack_star`` and ``call_result``.

A write ``c[k] = v`` is a functional update: the adjoint of the new version gives ``v`` its
entry ``k`` and the previous version everything else. List positions are those at the time of
the access (``sweep.length`` recovers lengths of lists that changed later).
"""
from __future__ import annotations

import inspect
import operator

import numpy as np

from ..tracer import ops
from .dunders import pull_through_python, python_operator, python_property
from .registry import defnode, definplace, defzero
from .rules_memory import pull_copy
from .values import RESULT, Sparse, dense_array, unbroadcast

ndarray = np.ndarray
_INT = (int, np.integer)


# -- helpers ---------------------------------------------------------------------------------
def seq_adjoint_to(sweep, node, g) -> None:
    """Give a sequence adjoint (Sparse over positions) to ``node`` (list, tuple, array, ...)."""
    if g is None or not g or not sweep.wants(node):
        return
    sweep.add(node, g)


def _without(g, *keys) -> Sparse | None:
    if type(g) is not Sparse:
        return None
    return Sparse({k: v for k, v in g.items() if k not in keys})


def _shifted(g, p: int, by: int, drop=()) -> Sparse | None:
    """Sparse positions ``k >= p`` moved by ``by``; other int positions kept; RESULT dropped."""
    if type(g) is not Sparse:
        return None
    out = Sparse()
    for k, v in g.items():
        if type(k) is int and k not in drop:
            out[k + by if k >= p else k] = v
    return out


def _simple_index(key) -> bool:
    if type(key) is tuple:
        return all(isinstance(k, (_INT, slice)) or k is None or k is Ellipsis for k in key)
    return isinstance(key, (_INT, slice)) or key is None or key is Ellipsis


def _int_key(key, shape):
    """Normalised int or tuple-of-ints index, or None when ``key`` is anything else."""
    if isinstance(key, _INT) and not isinstance(key, (bool, np.bool_)) and shape:
        k = int(key)
        return k + shape[0] if k < 0 else k
    if type(key) is tuple and key and len(key) <= len(shape) and all(
            isinstance(k, _INT) and not isinstance(k, (bool, np.bool_)) for k in key):
        return tuple(int(k) + n if k < 0 else int(k) for k, n in zip(key, shape))
    return None


def _array_read_adjoint(shape, dtype, key, g, result):
    """Adjoint of array ``a`` from the adjoint ``g`` of ``a[key]``."""
    k = _int_key(key, shape)
    if k is not None:
        return Sparse({k: g})
    if type(g) is Sparse:
        g = dense_array(np.shape(result), g)
    out = np.zeros(shape, dtype=np.result_type(dtype, float))
    if _simple_index(key):
        out[key] = g
    else:
        np.add.at(out, key, g)
    return out


def add_array_read(buf, a, key, g, result):
    """``buf`` plus the adjoint of array ``a`` from the adjoint ``g`` of ``result = a[key]``,
    added in place: ``buf`` is None (a zero buffer is made) or a buffer the caller owns.
    Compiled replay accumulates every read of one array into one buffer this way."""
    if buf is None:
        buf = np.zeros(a.shape, dtype=np.result_type(a.dtype, float))
    if type(g) is Sparse:
        g = dense_array(np.shape(result), g)
    tk = type(key)
    if tk is int or tk is slice or _simple_index(key):
        buf[key] += g
    else:
        np.add.at(buf, key, g)
    return buf


# -- reads -----------------------------------------------------------------------------------
def getitem_rule(sweep, node, g):
    c, k = node.args
    if not sweep.wants(c):
        return
    cv = c.value
    key = k.value
    t = type(cv)
    if (t is list or t is tuple) and type(key) is int:      # the common case first
        sweep.add(c, Sparse({key + sweep.length(c) if key < 0 else key: g}))
    elif t is ndarray:
        sweep.add(c, _array_read_adjoint(cv.shape, cv.dtype, key, g, node.value))
    elif isinstance(cv, (list, tuple)):
        if isinstance(key, _INT):
            key = int(key)
            sweep.add(c, Sparse({key + sweep.length(c) if key < 0 else key: g}))
        elif type(key) is slice:
            if type(g) is Sparse:
                idx = range(*key.indices(sweep.length(c)))
                sweep.add(c, Sparse({idx[j]: v for j, v in g.items() if type(j) is int}))
        else:
            sweep.unsupported(node, g, f"index of type {type(key).__name__}")
    elif isinstance(cv, dict):
        sweep.add(c, Sparse({key: g}))
    elif t is np.flatiter:                              # a.flat[k]: an adjoint shaped like a
        out = np.zeros(cv.base.size)
        np.add.at(out, np.arange(cv.base.size)[key], np.asarray(g, dtype=float))
        sweep.add(c, out.reshape(cv.base.shape))
    elif python_operator(operator.getitem, (cv, key)):
        pull_through_python(sweep, node, g)            # the class's own __getitem__
    else:
        sweep.unsupported(node, g, f"item of a {t.__name__}")


def _computed_attribute(obj, name: str) -> bool:
    """Is ``obj.name`` computed by code (a data descriptor such as a property, a custom
    ``__getattribute__``/``__getattr__``) rather than read from the instance's fields?"""
    t = type(obj)
    if t.__getattribute__ is not object.__getattribute__:
        return True
    attr = inspect.getattr_static(t, name, None)
    if attr is not None and hasattr(type(attr), "__get__") and (
            hasattr(type(attr), "__set__") or hasattr(type(attr), "__delete__")):
        return True                                   # data descriptors win over fields
    fields = getattr(obj, "__dict__", None)
    if isinstance(fields, dict) and name in fields:
        return False
    return attr is None and hasattr(t, "__getattr__")


def getattr_rule(sweep, node, g):
    obj = node.args[0]
    name = node.args[1].value
    if not sweep.wants(obj):
        return
    v = obj.value
    if type(v) is ndarray:
        if name == "T" or name == "mT":
            sweep.add(obj, np.swapaxes(g, -1, -2) if name == "mT" else np.transpose(g))
        elif name == "real" or name == "flat":      # a.flat's adjoint is shaped like a
            sweep.add(obj, g)
        else:
            sweep.unsupported(node, g, f"attribute {name!r} of an ndarray")
        return
    if python_property(v, name):
        pull_through_python(sweep, node, g)            # the property's own getter
        return
    if _computed_attribute(v, name):
        # a property or other descriptor computed the value from state the tape does not
        # show: a field adjoint would be a silent zero
        sweep.unsupported(node, g, f"attribute {name!r} is computed by its type "
                          f"({type(v).__name__}.{name}); read plain attributes or call a method")
        return
    sweep.add(obj, Sparse({name: g}))


defnode(operator.getitem, getitem_rule, sparse=True)
defnode(getattr, getattr_rule)
defzero(len)
defzero(object.__new__)          # a fresh instance (its attributes are set after)
defzero(isinstance)
defzero(hasattr)
defzero(range)


# -- writes ----------------------------------------------------------------------------------
def setitem_inplace(sweep, node, g):
    c, k, v = node.args
    key = k.value
    cv = node.value
    if type(cv) is ndarray:
        _array_write(sweep, node, g, c, key, v, cv)
    elif type(cv) is list:
        _list_write(sweep, node, g, c, key, v)
    elif isinstance(cv, dict):
        sweep.add(c, _without(g, key, RESULT))
        if type(g) is Sparse and key in g:
            sweep.add(v, g[key])
    else:
        sweep.unsupported(node, g, f"item assignment on a {type(cv).__name__}")


def _array_write(sweep, node, g, c, key, v, cv):
    k = _int_key(key, cv.shape)
    if type(g) is Sparse and k is not None and all(type(j) is type(k) and (
            type(k) is int or len(j) == len(k)) for j in g):
        sweep.add(c, _without(g, k))
        part = g.get(k)
        if part is not None and sweep.wants(v):
            sweep.add(v, unbroadcast(sweep.value(v), dense_array(np.shape(cv[key]), part)))
        return
    if not _simple_index(key):        # fancy or boolean: repeats, last writer wins
        pull_copy(sweep, node, g, 0, 2)
        return
    g = dense_array(cv.shape, g, cv.dtype)
    if sweep.wants(v):
        sweep.add(v, unbroadcast(sweep.value(v), g[key]))
    if sweep.wants(c):
        rest = np.array(g, dtype=np.result_type(g.dtype, float), copy=True)
        rest[key] = 0.0
        sweep.add(c, rest)


def _list_write(sweep, node, g, c, key, v):
    if type(g) is not Sparse:
        return
    if isinstance(key, _INT):
        key = int(key)
        p = key + sweep.length(c) if key < 0 else key
        sweep.add(c, _without(g, p, RESULT))
        if p in g:
            sweep.add(v, g[p])
        return
    if type(key) is not slice:
        sweep.unsupported(node, g, f"list index of type {type(key).__name__}")
        return
    n_prev = sweep.length(c)
    start, stop, step = key.indices(n_prev)
    if step != 1:
        idx = range(start, stop, step)
        sweep.add(c, _without(g, RESULT, *idx))
        seq_adjoint_to(sweep, v, Sparse({j: g[p] for j, p in enumerate(idx) if p in g}))
        return
    stop = max(stop, start)
    n_new = sweep.length(node) - n_prev + (stop - start)
    prev = Sparse()
    part = Sparse()
    for p, a in g.items():
        if type(p) is not int:
            continue
        if p < start:
            prev[p] = a
        elif p < start + n_new:
            part[p - start] = a
        else:
            prev[p - n_new + (stop - start)] = a
    sweep.add(c, prev)
    seq_adjoint_to(sweep, v, part)


def delitem_inplace(sweep, node, g):
    c, k = node.args
    key = k.value
    cv = node.value
    if isinstance(cv, dict):
        sweep.add(c, _without(g, RESULT))
        return
    if type(cv) is not list:
        sweep.unsupported(node, g, f"del on a {type(cv).__name__}")
        return
    n_prev = sweep.length(c)
    if isinstance(key, _INT):
        p = int(key) + n_prev if key < 0 else int(key)
        sweep.add(c, _shifted(g, p, 1))
        return
    removed = sorted(range(*key.indices(n_prev)))
    kept = [p for p in range(n_prev) if p not in set(removed)]
    if type(g) is Sparse:
        sweep.add(c, Sparse({kept[j]: a for j, a in g.items() if type(j) is int and j < len(kept)}))


def setattr_inplace(sweep, node, g):
    obj, name, v = node.args
    sweep.add(obj, _without(g, name.value, RESULT))
    if type(g) is Sparse and name.value in g:
        sweep.add(v, g[name.value])


definplace(operator.setitem, setitem_inplace, sparse=True)
definplace(operator.delitem, delitem_inplace)
definplace(list.__setitem__, setitem_inplace)
definplace(dict.__setitem__, setitem_inplace)
definplace(setattr, setattr_inplace)


# -- builders --------------------------------------------------------------------------------
def build_seq_rule(sweep, node, g):
    """``build_tuple(*items)`` / ``build_list(*items)``: item i gets entry i."""
    if type(g) is not Sparse:
        return
    args = node.args
    n = len(args)
    add = sweep.add
    for i, a in g.items():
        if type(i) is int and i < n:
            add(args[i], a)


def build_dict_rule(sweep, node, g):
    """``build_dict(k1, v1, k2, v2, ...)``: the last value stored under each key gets it."""
    if type(g) is not Sparse:
        return
    args = node.args
    last = {args[j].value: args[j + 1] for j in range(0, len(args) - 1, 2)}
    for key, a in g.items():
        if key in last:
            sweep.add(last[key], a)


def build_const_key_dict_rule(sweep, node, g):
    """``build_const_key_dict(v1, ..., vn, keys)``."""
    if type(g) is not Sparse:
        return
    *values, keys = node.args
    last = dict(zip(keys.value, values))
    for key, a in g.items():
        if key in last:
            sweep.add(last[key], a)


def unpack_star_rule(sweep, node, g):
    """``unpack_star(seq, before, after)``: the starred list is ``seq[before:len-after]``."""
    seq, before = node.args[0], node.args[1].value
    if type(g) is Sparse:
        seq_adjoint_to(sweep, seq, Sparse({j + before: a for j, a in g.items() if type(j) is int}))


def call_result_rule(sweep, node, g):
    """What a mutating call returned: its adjoint rides on the mutation under RESULT."""
    sweep.add(node.args[0], Sparse({RESULT: g}))


defnode(ops.build_tuple, build_seq_rule)
defnode(ops.build_list, build_seq_rule)
defnode(ops.build_dict, build_dict_rule)
defnode(ops.build_const_key_dict, build_const_key_dict_rule)
defnode(ops.unpack_star, unpack_star_rule)
defnode(ops.call_result, call_result_rule)
defzero(ops.build_string)
defzero(ops.format_value)
defzero(ops.build_set)
defzero(ops.not_contains)
defzero(ops.match_mapping)
defzero(ops.match_sequence)
