"""Does a run start with an object of a class defining operators in Python within reach?

A plain instruction applies such an object's operator untraced (``operator_guards``), so a
run turns its guards on when one is within reach of what its frames start with: the root's
arguments, and each traced function's globals, closure cells and defaults. Reach goes through
the items of lists, tuples, sets, dicts, deques and object arrays, the instance dicts and
slots of Python objects (not those of classes from modules the context keeps primitive), their
classes' attributes, and, for the names a function reads, the attributes of modules and
classes (``mod.CONST``, ``pkg.sub.CONST``, ``Config.SCALE``; ``operator_guards`` leaves out
the standard library's modules). No user code runs during the walk: types are tested with
``issubclass`` (``isinstance`` reads ``__class__``), descriptors are read from the class,
containers through their builtin base's methods.

Bounded: a walk visits at most ``WALK_BOUND`` objects one by one, breadth first, and queues
at most eight times as many (nested builtin containers of numbers and strings pass in a few
``gc.get_referents`` calls, in C, one per level): about a millisecond. What lies deeper, or further down a long list,
stays unseen, so a program holding a large graph of objects is traced as before. Out of reach, then: what lies past the bound, an object made by C code from
nothing (``pickle.loads``), one found through a C object (``functools.partial``, an
iterator), a computed name (``getattr(mod, name)``, ``globals()[...]``) or a standard-library
module's attribute. An operator on such an object before any other sign is a primitive node,
which ``ad.dunders`` differentiates through the methods.
"""
from __future__ import annotations

import collections
import types
from gc import get_referents
from itertools import chain, islice

import numpy as np

__all__ = ["reaches_operators", "WALK_BOUND", "LEAF_TYPES", "CLEAR_TYPES"]

WALK_BOUND = 1024        # objects one walk visits one by one (about 1 us each)

_HEAPTYPE = 1 << 9
_CONTAINERS = (list, tuple, set, frozenset, collections.deque)
_ITEMS = {kind: kind.__iter__ for kind in _CONTAINERS}
_QUEUE_BOUND = 8 * WALK_BOUND   # most objects a walk queues: items past it are left out
_PLAIN_CONTAINERS = frozenset({list, tuple, dict, set, frozenset})


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


_OPAQUE, _FOUND = 0, 1       # plans that end a visit: nothing to follow; operators found
# Types whose instances a walk passes at a glance: ``LEAF_TYPES`` and the C types (never
# freed) found to hold nothing to follow (added by walks, at most ``_OPAQUE_BOUND``). A root
# whose arguments are all such needs no walk (``track``).
CLEAR_TYPES: set = set(LEAF_TYPES)
_OPAQUE_BOUND = len(LEAF_TYPES) + 1024


def _plan(kind, has_operators, ctx, stack):
    """How a walk visits instances of ``kind``: ``_OPAQUE``, ``_FOUND``, or (how to list a
    container's items or None, the instance dict's C descriptor or None, the slots' C
    descriptors). Pushes the class attributes of a Python class (once per walk)."""
    heap = kind.__flags__ & _HEAPTYPE
    if heap:
        if has_operators(kind, ctx):
            return _FOUND
        module = kind.__module__
        if isinstance(module, str) and module.partition(".")[0] in ctx.primitive_modules:
            return _OPAQUE                       # a library's object: its own business
    items = None
    if issubclass(kind, dict):
        items = _dict_items
    elif issubclass(kind, np.ndarray):
        items = _array_items
    else:
        for base, iterate in _ITEMS.items():
            if issubclass(kind, base):
                items = iterate
                break
    if not heap:
        return (items, None, ()) if items is not None else _OPAQUE
    holder = _descriptor(kind, "__dict__")
    members = []
    for klass in kind.__mro__:
        if klass.__flags__ & _HEAPTYPE:
            stack.extend(v for v in klass.__dict__.values() if type(v) not in LEAF_TYPES)
        slots = klass.__dict__.get("__slots__", ())
        for name in (slots,) if type(slots) is str else slots:
            member = klass.__dict__.get(name)
            if type(member) is types.MemberDescriptorType:
                members.append(member)
    return items, holder if type(holder) is types.GetSetDescriptorType else None, members


def _plain_data(obj) -> bool:
    """Is the builtin container ``obj`` made only of builtin numbers, strings, bytes and such
    containers, however nested (then it is clear)? Read level by level with
    ``gc.get_referents`` (C code: no user code runs and nothing is copied, not even the
    buffer of an array inside); a long one is tried only when its first items are such."""
    if len(obj) > _PREFIX and not _PLAIN.issuperset(
            map(type, islice(dict.values(obj) if type(obj) is dict else obj, _PREFIX))):
        return False
    level, count = (obj,), 0
    for _ in range(_PLAIN_LEVELS):
        level = get_referents(*level)
        if not level:
            return True
        count += len(level)
        if count > _PLAIN_ITEMS or not _PLAIN.issuperset(map(type, level)):
            return False
    return False            # deeper than that (or a cycle): the walk decides


_PREFIX = 256
_PLAIN = frozenset({int, float, complex, bool, str, bytes, type(None), list, tuple, dict, set,
                    frozenset})
_PLAIN_LEVELS, _PLAIN_ITEMS = 16, 1 << 20


def _dict_items(obj):
    return chain(dict.keys(obj), dict.values(obj))


def _array_items(obj):
    return obj.flat if obj.dtype.hasobject else ()


def reaches_operators(roots, has_operators, ctx, seen: dict | None = None) -> bool:
    """Is an instance of a class for which ``has_operators(cls, ctx)`` holds within reach of
    the objects ``roots`` (see the module's docstring)? ``seen``: id -> object of those a walk
    of the same run already visited (they are kept alive, so an id is never reused)."""
    stack, failed = None, set()
    for obj in roots:
        kind = type(obj)
        if kind in CLEAR_TYPES or kind is np.ndarray and not obj.dtype.hasobject:
            continue
        if kind in _PLAIN_CONTAINERS:
            if _plain_data(obj):
                continue
            failed.add(id(obj))
        if stack is None:
            stack = collections.deque()
        stack.append(obj)
    if stack is None:
        return False
    if seen is None:
        seen = {}
    plans: dict = {}
    visits = 0
    pop, push, leaves = stack.popleft, stack.append, LEAF_TYPES     # breadth first
    while stack:
        obj = pop()
        kind = type(obj)
        if kind in leaves or id(obj) in seen:
            continue
        seen[id(obj)] = obj
        plan = plans.get(kind)
        if plan is None:
            plan = plans[kind] = _plan(kind, has_operators, ctx, stack) \
                if not issubclass(kind, type) else _OPAQUE
            if plan is _OPAQUE and not kind.__flags__ & _HEAPTYPE and \
                    len(CLEAR_TYPES) < _OPAQUE_BOUND:
                CLEAR_TYPES.add(kind)           # a C type: the same answer for every walk
        if plan is _OPAQUE:
            continue
        if plan is _FOUND:
            return True
        if kind in _PLAIN_CONTAINERS and id(obj) not in failed and _plain_data(obj):
            continue
        visits += 1
        if visits > WALK_BOUND:
            return False          # past the bound: what lies beyond stays unseen
        items, holder, members = plan
        room = _QUEUE_BOUND - len(stack)         # more than the walk could ever visit
        if room <= 0:
            continue
        if holder is not None:
            table = holder.__get__(obj, kind)
            if type(table) is dict:
                stack.extend(v for v in islice(table.values(), room) if type(v) not in leaves)
        for member in members:
            try:
                v = member.__get__(obj, kind)
            except AttributeError:              # an unset slot
                continue
            if type(v) not in leaves:
                push(v)
        if items is not None:
            values = list(islice(items(obj), room))
            if values and not leaves.issuperset(map(type, values)):
                stack.extend(v for v in values if type(v) not in leaves)
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
