"""Named functions standing for what bytecode does without a call.

A tape records ``BUILD_TUPLE`` as a call of ``build_tuple``, a ``for`` loop's step as
``next_item``, and so on, so every node is a call of a real function that consumers (VJP tables,
printers) can key on. Each function computes what the instruction computed.
"""
from __future__ import annotations

import collections
import functools
import operator
import types

__all__ = ["build_tuple", "build_list", "build_set", "build_dict", "build_const_key_dict",
           "build_string", "format_value", "next_item", "awaitable", "enter_async_context", "not_contains", "make_function",
           "enter_context", "exit_context", "match_mapping", "match_sequence", "match_keys",
           "match_class", "call_result", "unpack_star", "view_of", "write_through_view",
           "view_positions", "MUTATED_ARGUMENT", "mutated_argument",
           "flat_setitem", "possibly_written", "effect_unknown", "out_position"]


def build_tuple(*items):
    return items


def build_list(*items):
    return list(items)


def build_set(*items):
    return set(items)


def build_dict(*keys_and_values):
    """``build_dict(k1, v1, k2, v2, ...)``: a dict display."""
    it = iter(keys_and_values)
    return {k: v for k, v in zip(it, it)}


def build_const_key_dict(*values_then_keys):
    """``build_const_key_dict(v1, ..., vn, (k1, ..., kn))``."""
    *values, keys = values_then_keys
    return dict(zip(keys, values))


def build_string(*parts):
    return "".join(parts)


_CONVERSIONS = {0: None, 1: str, 2: repr, 3: ascii}


def format_value(value, conversion: int = 0, spec: str = ""):
    """An f-string field: ``conversion`` 0 none, 1 !s, 2 !r, 3 !a."""
    convert = _CONVERSIONS[conversion & 3]
    return format(convert(value) if convert else value, spec)


def next_item(iterator, step: int):
    """The ``step``-th item a ``for`` loop drew from ``iterator`` (0-based)."""
    return next(iterator)


def awaitable(obj):
    """The iterator ``await obj`` delegates to: ``obj.__await__()`` (a coroutine is its own)."""
    if isinstance(obj, types.CoroutineType):
        return obj
    return type(obj).__await__(obj)


def enter_async_context(manager):
    """``manager.__aenter__()`` as run by ``async with`` (the awaitable it returns)."""
    return type(manager).__aenter__(manager)


def not_contains(container, item):
    return item not in container


def make_function(*parts):
    """A function object made by ``def``/``lambda`` (its value is recorded, not recomputed)."""
    raise TypeError("make_function is recorded, never re-run")


def enter_context(manager):
    """``manager.__enter__()`` as run by a ``with`` statement."""
    return type(manager).__enter__(manager)


def exit_context(exit_method, exc):
    """``__exit__`` called with the exception leaving a ``with`` block."""
    return exit_method(type(exc), exc, exc.__traceback__)


def match_mapping(subject):
    return isinstance(subject, collections.abc.Mapping)


def match_sequence(subject):
    return (isinstance(subject, collections.abc.Sequence)
            and not isinstance(subject, (str, bytes, bytearray)))


def match_keys(subject, keys):
    try:
        return tuple(subject[k] for k in keys)
    except KeyError:
        return None


def match_class(subject, cls, npositional, names):
    raise TypeError("match_class is recorded, never re-run")


def call_result(mutation):
    """What a mutating call (``list.pop``, ``dict.setdefault``) returned, besides mutating."""
    return mutation.result


def view_of(base, positions):
    """The elements of ``base`` at flat ``positions`` (an index array shaped like the view):
    a view's contents after its base was written through another object."""
    return base.reshape(-1)[positions]


def write_through_view(base, view, positions):
    """``base`` after its elements at flat ``positions`` were written through ``view``."""
    out = base.copy()
    out.reshape(-1)[positions] = view
    return out


def view_positions(view, base):
    """Flat positions in C-contiguous ``base`` of the elements of ``view`` (an index array
    shaped like ``view``), or None when they cannot be derived from strides."""
    import numpy as np
    if not base.flags.c_contiguous or view.itemsize != base.itemsize:
        return None
    item = base.itemsize
    offset = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    if offset % item or any(st % item for st in view.strides):
        return None
    flat = np.arange(base.size)
    start = offset // item
    if not 0 <= start < max(base.size, 1):
        return None
    strides = tuple(st // item * flat.itemsize for st in view.strides)
    positions = np.lib.stride_tricks.as_strided(flat[start:], shape=view.shape, strides=strides)
    return positions.copy()


def flat_setitem(array, key, value):
    """``array.flat[key] = value`` (a write through ``ndarray.flat``, recorded on the array)."""
    array.flat[key] = value


def possibly_written(array, call):
    """``array`` after it was passed to a call of unknown effect (``call``: that call's node
    value), which may have written into it. Recorded, never re-run."""
    raise TypeError("possibly_written is recorded, never re-run")


def unpack_star(sequence, before: int, after: int):
    """The starred part of ``a, *b, c = sequence``."""
    items = list(sequence)
    return items[before:len(items) - after]


# Callables that mutate one of their arguments in place -> index of that argument (``self``
# is argument 0 for methods). The replay makes such a call the container's latest version.
MUTATED_ARGUMENT = {
    operator.setitem: 0, operator.delitem: 0, setattr: 0, delattr: 0,
    list.append: 0, list.extend: 0, list.insert: 0, list.pop: 0, list.remove: 0,
    list.clear: 0, list.sort: 0, list.reverse: 0, list.__setitem__: 0, list.__delitem__: 0,
    list.__iadd__: 0, dict.update: 0, dict.setdefault: 0, dict.pop: 0, dict.popitem: 0,
    dict.clear: 0, dict.__setitem__: 0, dict.__delitem__: 0, set.add: 0, set.discard: 0,
    set.remove: 0, set.pop: 0, set.clear: 0, set.update: 0, set.difference_update: 0,
    set.intersection_update: 0, set.symmetric_difference_update: 0,
    bytearray.append: 0, bytearray.extend: 0,
    collections.deque.append: 0, collections.deque.appendleft: 0, collections.deque.extend: 0,
    collections.deque.extendleft: 0, collections.deque.pop: 0, collections.deque.popleft: 0,
    collections.deque.rotate: 0, collections.deque.clear: 0,
}


_LIBRARY_CALLABLES = (types.BuiltinFunctionType, types.MethodDescriptorType,
                      types.WrapperDescriptorType, types.FunctionType, type)


def mutated_argument(fn) -> int | None:
    """Index of the argument ``fn`` mutates in place, if it is known to (a user's callable
    object is never hashed or compared: it is not in the table)."""
    if not isinstance(fn, _LIBRARY_CALLABLES) \
            and not type(fn).__module__.startswith(("numpy", "_cython")):
        return None
    index = MUTATED_ARGUMENT.get(fn)
    if index is not None:
        return index
    return _numpy_mutated_argument(fn)


@functools.cache
def _numpy_writers() -> frozenset:
    """numpy functions writing into their argument 0 (a set: one hash per lookup)."""
    import numpy as np
    return frozenset((np.ndarray.fill, np.ndarray.sort, np.ndarray.resize, np.ndarray.put,
                      np.copyto, np.put, np.place, np.putmask, np.fill_diagonal,
                      np.put_along_axis, np.ndarray.partition, np.ndarray.setfield,
                      np.random.shuffle))


def _numpy_mutated_argument(fn) -> int | None:
    import numpy as np
    if fn in _numpy_writers():
        return 0
    if fn is np.random.Generator.shuffle or fn is np.ufunc.at:
        return 1          # rng.shuffle(x), add.at(a, ...): argument 0 is the owner
    if getattr(fn, "__name__", None) == "at" and type(getattr(fn, "__self__", None)) is np.ufunc:
        return 0          # np.add.at(a, indices, b)
    return None


_OUT_POSITIONS: dict = {}     # filled as numpy functions are first met (not at import)


def out_position(fn) -> int | None:
    """Position of a numpy function's ``out`` parameter when it can be passed positionally
    (``np.dot(a, b, out)``, ``np.cumsum(a, 0, None, out)``), else None."""
    try:
        return _OUT_POSITIONS[fn]
    except KeyError:
        pass
    except TypeError:
        return None
    pos = None
    module = getattr(fn, "__module__", None) or getattr(
        getattr(fn, "__objclass__", None), "__module__", None) or ""
    if module.partition(".")[0] == "numpy":
        import inspect
        try:
            params = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):
            params = []
        for k, p in enumerate(params):
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                break
            if p.name == "out":
                pos = k
                break
    if len(_OUT_POSITIONS) < 4096:
        _OUT_POSITIONS[fn] = pos
    return pos


# Top-level modules whose functions never write into an array argument except as the tables
# above say: a primitive from anywhere else that receives an array may have written into it.
KNOWN_EFFECT_MODULES = frozenset({
    "builtins", "_operator", "operator", "math", "cmath", "numpy", "scipy", "dcgraph",
    "functools", "_functools", "itertools", "statistics", "random", "_random", "copy",
    "json", "logging", "pprint", "reprlib", "warnings", "io", "_io", "time", "collections",
    "_collections", "typing", "abc", "enum", "string", "re", "fractions", "decimal",
    "_decimal", "numbers", "dataclasses", "contextlib", "inspect", "types", "sys"})


def effect_unknown(fn) -> bool:
    """May a primitive call of ``fn`` write into an array argument unseen? True unless ``fn``
    comes from a module whose effects are known (``KNOWN_EFFECT_MODULES``)."""
    module = getattr(fn, "__module__", None)
    if not isinstance(module, str):
        owner = getattr(fn, "__objclass__", None)
        if owner is None:
            owner = type(getattr(fn, "__self__", None))
        module = getattr(owner, "__module__", None) or ""
    return module.partition(".")[0] not in KNOWN_EFFECT_MODULES
