"""Does a run start with an object of a class defining operators in Python within reach?

A plain instruction applies such an object's operator untraced (``operator_guards``), so a
run turns its guards on when one is within reach of what its frames start with: the root's
arguments, and each traced function's globals, closure cells and defaults. Reach goes through
the items of lists, tuples, sets, dicts, deques and object arrays, the instance dicts and slots
of Python objects (not those of classes from modules the context keeps primitive), their
classes' attributes, and, for the names a function reads, the
attributes of modules and classes (``mod.CONST``, ``pkg.sub.CONST``, ``Config.SCALE``). No
user code runs during the walk (types are tested with ``issubclass``, never ``isinstance``,
which reads ``__class__``; descriptors are read from the class, containers through their
builtin base's methods).

Bounded: a walk visits at most ``WALK_BOUND`` objects one by one (nested builtin containers of
numbers and strings pass in one ``marshal`` call, in C); a walk that reaches the bound answers
yes (guards on: the tape is complete, at the guarded variant's cost). Objects out of reach stay
unseen: one made by C code from nothing (``pickle.loads``), one reached through a C object
(``functools.partial``, an iterator) or a dynamic lookup (``getattr(mod, name)`` with a
computed name, ``globals()[...]``). An operator on such an object before any other sign is a
primitive node, which ``ad.dunders`` differentiates through the methods.
"""
from __future__ import annotations

import collections
import marshal
import types

import numpy as np

__all__ = ["reaches_operators", "WALK_BOUND", "LEAF_TYPES"]

WALK_BOUND = 4096        # objects one walk visits one by one before it answers yes

_HEAPTYPE = 1 << 9
_CONTAINERS = (list, tuple, set, frozenset, collections.deque)
_ITEMS = {kind: kind.__iter__ for kind in _CONTAINERS}
_MARSHALLED = frozenset({list, tuple, dict, set, frozenset})


def _leaf_types() -> frozenset:
    """Types whose instances hold nothing the walk follows (numbers, strings, code, C
    callables), or that it does not enter (modules and classes: ``namespace_values`` reads
    the names a function uses; calling a class is a sign of its own)."""
    plain = {int, float, complex, bool, str, bytes, bytearray, range, slice, type(None),
             type(Ellipsis), type(NotImplemented), types.ModuleType, types.FunctionType,
             types.BuiltinFunctionType, types.MethodType, types.MethodDescriptorType,
             types.WrapperDescriptorType, types.GetSetDescriptorType,
             types.MemberDescriptorType, types.CodeType, property, staticmethod, classmethod,
             np.ufunc, np.dtype}
    plain |= {t for t in np.sctypeDict.values() if isinstance(t, type)}
    return frozenset(plain)


LEAF_TYPES = _leaf_types()


def _descriptor(kind, name):
    for klass in kind.__mro__:
        found = klass.__dict__.get(name)
        if found is not None:
            return found
    return None


def _fields(obj, kind) -> list:
    """The values an instance of a Python class holds: its dict's, its slots' (read through
    the class's C descriptors, never a user's ``__getattr__`` or property)."""
    values = []
    holder = _descriptor(kind, "__dict__")
    if type(holder) is types.GetSetDescriptorType:
        table = holder.__get__(obj, kind)
        if type(table) is dict:
            values.extend(table.values())
    for klass in kind.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            member = klass.__dict__.get(name)
            if type(member) is types.MemberDescriptorType:
                try:
                    values.append(member.__get__(obj, kind))
                except AttributeError:          # an unset slot
                    pass
    return values


def _items(obj, kind):
    """The items of a container (a subclass's through its builtin base), or None."""
    if issubclass(kind, dict):
        return [*dict.keys(obj), *dict.values(obj)]
    for base, iterate in _ITEMS.items():
        if issubclass(kind, base):
            return list(iterate(obj))
    if issubclass(kind, np.ndarray):
        return obj.ravel().tolist() if obj.dtype.hasobject else None
    return None


def _opaque(kind) -> bool:
    """Is ``kind`` a C type holding nothing the walk follows (not a container, not an
    array)? Remembered per type (C types live as long as their module)."""
    hit = _opaque_kinds.get(kind)
    if hit is None:
        hit = not kind.__flags__ & _HEAPTYPE and not issubclass(
            kind, (dict, np.ndarray, *_CONTAINERS))
        if len(_opaque_kinds) < 1024:
            _opaque_kinds[kind] = hit
    return hit


_opaque_kinds: dict = {}


def reaches_operators(roots, has_operators, ctx, seen: dict | None = None) -> bool:
    """Is an instance of a class for which ``has_operators(cls, ctx)`` holds within reach of
    the objects ``roots`` (see the module's docstring)? ``seen``: id -> object of those a walk
    of the same run already found clear (they are kept alive, so an id is never reused)."""
    stack = None
    for obj in roots:
        kind = type(obj)
        if kind in LEAF_TYPES or kind is np.ndarray and not obj.dtype.hasobject:
            continue
        if kind in _MARSHALLED:
            try:                  # only builtin numbers, strings and containers inside: clear
                marshal.dumps(obj, 2)
                continue
            except (ValueError, RecursionError):
                pass
        if stack is None:
            stack = []
        stack.append(obj)
    if stack is None:
        return False
    if seen is None:
        seen = {}
    visits = 0
    while stack:
        obj = stack.pop()
        kind = type(obj)
        if kind in LEAF_TYPES or id(obj) in seen or _opaque(kind) or issubclass(kind, type):
            continue
        seen[id(obj)] = obj
        if kind in _MARSHALLED:
            try:                  # only builtin numbers, strings and containers inside: clear
                marshal.dumps(obj, 2)
                continue
            except (ValueError, RecursionError):
                pass
        visits += 1
        if visits > WALK_BOUND:
            return True
        items = _items(obj, kind)
        if kind.__flags__ & _HEAPTYPE:
            if has_operators(kind, ctx):
                return True
            module = kind.__module__
            if isinstance(module, str) and module.partition(".")[0] in ctx.primitive_modules:
                continue                         # a library's object: its own business
            stack.extend(v for v in _fields(obj, kind) if type(v) not in LEAF_TYPES)
            for klass in kind.__mro__:           # class attributes: once per class and run
                if klass.__flags__ & _HEAPTYPE and id(klass) not in seen:
                    seen[id(klass)] = klass
                    stack.extend(v for v in klass.__dict__.values()
                                 if type(v) not in LEAF_TYPES)
        if items and not LEAF_TYPES.issuperset(map(type, items)):
            stack.extend(v for v in items if type(v) not in LEAF_TYPES)
    return False


def namespace_values(spaces: list, names, has_operators, ctx):
    """The values that the attribute names ``names`` (a function's ``co_names``) have in the
    modules and classes ``spaces``, following modules and classes found that way
    (``pkg.sub.CONST``); True instead when one is a class with operators."""
    values, done = [], set()
    while spaces:
        space = spaces.pop()
        if id(space) in done:
            continue
        done.add(id(space))
        table = vars(space) if type(space) is types.ModuleType else None
        for name in names:
            value = table.get(name) if table is not None else _descriptor(space, name)
            if value is None:
                continue
            kind = type(value)
            if kind is types.ModuleType:
                spaces.append(value)
            elif kind in LEAF_TYPES:
                continue
            elif issubclass(kind, type):
                if has_operators(value, ctx):
                    return True
                if value.__flags__ & _HEAPTYPE:
                    spaces.append(value)
            else:
                values.append(value)
    return values
