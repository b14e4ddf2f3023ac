"""When operator sites take their guarded path: which objects need it, and the switch.

Operator instructions the running version tables (``guarded_operator`` in
``instrument.py3xx``) can be guarded (``instrument.guards``): when every tested operand's type
is in ``PLAIN_TYPES`` the instruction runs as before, else ``operators.dispatch_*`` traces the
Python methods it runs. The type tests cost scalar loops about a quarter of their traced time,
so a run guards only once it has met a class defining operators in Python
(``Run.guard_operators``):

- one is within reach (``operator_reach``: items, attributes, class attributes, bounded) of
  the root's arguments or of the object the root is bound to (``operator_arguments``);
- one, or a class with operators, is within reach of what a function it traces starts with:
  the names it reads globally and the attributes of modules and classes it names
  (``mod.CONST``), its closure cells, its defaults (``guards_operators``);
- a call it decides is such a class, an instance of one (``__call__``), or a method bound to
  one (``sees_operators``).

From then on its calls run the guarded variant of their code, and the frames already running
take the guarded path at their *switched* sites, which test ``GUARDING`` first (non-empty while
some run guards: the run appends a token and takes it back at ``close``). Only the sites a call
that the hook may trace precedes are switched: the switch can only turn on inside such a call.
An operator on such an object that runs before any of those signs (an object out of reach at
the start: made by C code from nothing, as ``pickle.loads`` does, or found through a C object
or a computed name, see ``operator_reach``) goes through a plain instruction and is a
primitive node, which ``ad.dunders`` differentiates by tracing the methods during the
backward pass. A run of another thread that finds the switch on only pays the type tests: a
site's outcome never depends on the switch.
"""
from __future__ import annotations

import operator
import sys
import types
import weakref

import numpy as np

from .inline_calls import PLAIN_METHODS, method_accepted
from .operator_reach import LEAF_TYPES, namespace_values, reaches_operators

__all__ = ["PLAIN_TYPES", "PLAIN_ATTRIBUTE_TYPES", "DUNDERS", "OPERATOR_NAMES", "GUARDING",
           "TABLED", "has_python_operators", "guards_operators", "operator_arguments",
           "sees_operators", "plain_c_method", "python_inplace"]

_FUNCTION = types.FunctionType
_HEAPTYPE = 1 << 9
_IMMUTABLE = 1 << 8     # Py_TPFLAGS_IMMUTABLETYPE: the class's attributes cannot change


def _plain_types() -> frozenset:
    builtin = {int, float, complex, bool, str, bytes, bytearray, tuple, list, dict, set,
               frozenset, range, slice, type(None), type, np.ndarray}
    scalars = {t for t in np.sctypeDict.values() if isinstance(t, type)}
    return frozenset(builtin | scalars)


# Types whose operators are C code, whatever the other operand (a user class's reflected
# method is still found: both operands are checked).
PLAIN_TYPES = _plain_types()
# ... and whose attributes are never a user's property (modules too)
PLAIN_ATTRIBUTE_TYPES = PLAIN_TYPES | {types.ModuleType}


def _dunders() -> dict:
    """operator -> (method, reflected method, in-place method); unary ones have only a method.
    ``operator.iadd`` maps to the binary names too: Python falls back to them."""
    table = {}
    for name in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "and",
                 "or", "xor", "lshift", "rshift"):
        method, reflected = f"__{name}__", f"__r{name}__"
        table[getattr(operator, name if hasattr(operator, name) else name + "_")] = \
            (method, reflected, None)
        table[getattr(operator, "i" + name)] = (method, reflected, f"__i{name}__")
    for name in ("neg", "pos", "invert", "getitem"):
        table[getattr(operator, name)] = (f"__{name}__",)
    return table


DUNDERS = _dunders()
OPERATOR_NAMES = frozenset(n for names in DUNDERS.values() for n in names if n is not None)

# Non-empty while some run guards operators: every guarded site tests it first (its truth is
# all that counts; tokens are appended and removed by ``Run``).
GUARDING: list = []


def _tabled() -> bool:
    from .instrument.versions import opcode_table
    return bool(getattr(opcode_table(), "GUARDED_OPERATORS", None))


TABLED = _tabled()      # does the running version guard operator sites at all?


def has_python_operators(cls) -> bool:
    """Does the class ``cls`` (made by a class statement) define an operator in Python? Remembered per class (a class changed later keeps its first answer: guards are a
    tracing choice, never a correctness one, as unguarded operators stay primitive nodes)."""
    if not isinstance(cls, type) or not cls.__flags__ & _HEAPTYPE:
        return False
    hit = _verdicts.get(id(cls))
    if hit is not None and hit[0]() is cls:
        return hit[1]
    verdict = _defines_operators(cls)
    if len(_verdicts) >= _VERDICTS_BOUND:
        _verdicts.clear()
    _verdicts[id(cls)] = (weakref.ref(cls), verdict)
    return verdict


_verdicts: dict = {}      # id(class) -> (weak reference to it, has_python_operators)
_VERDICTS_BOUND = 4096


def _defines_operators(cls) -> bool:
    for klass in cls.__mro__:
        if klass.__flags__ & _HEAPTYPE:
            d = klass.__dict__
            if not OPERATOR_NAMES.isdisjoint(d) and any(
                    type(d[name]) is _FUNCTION for name in OPERATOR_NAMES.intersection(d)):
                return True
    return False


def _user_operators(cls, ctx) -> bool:
    """Is ``cls`` a class defining operators in Python, from a module the context traces?"""
    if not has_python_operators(cls):
        return False
    module = getattr(cls, "__module__", None)
    return not (isinstance(module, str) and module.partition(".")[0] in ctx.primitive_modules)


def _named(value, ctx) -> bool:
    """Is ``value`` such a class, or an instance of one?"""
    kind = type(value)     # (``isinstance`` would read a proxy's ``__class__``)
    return _user_operators(value if issubclass(kind, type) else kind, ctx)


def guards_operators(fn, ctx, seen: dict | None = None) -> bool:
    """Is a class defining operators in Python (classes of modules the context ``ctx`` keeps
    primitive do not count: their methods are never traced), or an instance of one, within
    reach (``operator_reach``) of what ``fn`` starts with: the names it reads globally and
    their attributes it names (``mod.CONST``), its closure cells and its defaults? ``seen``:
    the run's objects already found clear. False on a version whose table guards no
    operators."""
    if not TABLED:
        return False
    scope = fn.__globals__
    roots, spaces = [], None
    for name in fn.__code__.co_names:
        value = scope.get(name)
        if value is None:
            continue
        kind = type(value)
        if kind is _MODULE:
            if not _library_module(value.__name__, ctx):
                spaces = [value] if spaces is None else spaces + [value]
        elif kind in LEAF_TYPES:
            continue
        elif _named(value, ctx):
            return True
        elif not issubclass(kind, type):
            roots.append(value)
        elif value.__flags__ & _HEAPTYPE and not _primitive_module(value.__module__, ctx):
            spaces = [value] if spaces is None else spaces + [value]
    if fn.__closure__ is not None:
        for cell in fn.__closure__:
            try:
                value = cell.cell_contents
            except ValueError:              # an empty cell
                continue
            if _named(value, ctx):
                return True
            roots.append(value)
    if fn.__defaults__ is not None:
        roots.extend(fn.__defaults__)
    if fn.__kwdefaults__:
        roots.extend(fn.__kwdefaults__.values())
    if spaces is not None:
        found = namespace_values(spaces, fn.__code__.co_names, _user_operators, ctx)
        if found is True:
            return True
        roots.extend(found)
    return bool(roots) and reaches_operators(roots, _user_operators, ctx, seen)


_MODULE = types.ModuleType


def _primitive_module(name, ctx) -> bool:
    return isinstance(name, str) and name.partition(".")[0] in ctx.primitive_modules


def _library_module(name, ctx) -> bool:
    """Is the module ``name`` one whose attributes are never the user's objects: the standard
    library's (``math``) or one the context keeps primitive?"""
    if not isinstance(name, str):
        return False
    top = name.partition(".")[0]
    return top in _STANDARD_LIBRARY or top in ctx.primitive_modules


_STANDARD_LIBRARY = sys.stdlib_module_names


def operator_arguments(args: tuple, kwargs: dict, ctx, f=None, seen: dict | None = None) -> bool:
    """Is an instance of a class defining operators in Python within reach (``operator_reach``)
    of the root's arguments, or of the object the root ``f`` is bound to or is (a method's
    ``__self__``, a callable object)?"""
    if not TABLED:
        return False
    if kwargs:
        args = (*args, *kwargs.values())
    if f is not None and type(f) is not _FUNCTION:
        args = (*args, f.__self__ if type(f) is types.MethodType else f)
    return reaches_operators(args, _user_operators, ctx, seen)


def sees_operators(f, ctx) -> bool:
    """Is the callable ``f`` (a call being decided) a class defining operators in Python, an
    instance of one, or a method bound to one?"""
    if not TABLED:
        return False
    if type(f) is types.MethodType:
        f = f.__self__
    return _named(f, ctx)


def plain_c_method(f) -> bool:
    """Is the bound method ``f`` one that ``Run.decide`` would find primitive, and no sign of
    operators (``sees_operators``), in every run and context: its function is not a Python
    function, a class, or an object whose class has a Python ``__call__``; its object is not a
    class, and its class defines no operator in Python; both classes are immutable (C types:
    ``rng.random``), so the answer, kept per pair of classes, holds for good; an accepted pair
    is handed to ``inline_calls.method_accepted`` (the hook and the call sites test it)."""
    key = (type(f.__self__), type(f.__func__))
    known = _c_methods.get(key)
    if known is None:
        known = _plain_c_method(*key)
        if len(_c_methods) >= _VERDICTS_BOUND:
            _c_methods.clear()
        _c_methods[key] = known
    if known and key not in PLAIN_METHODS:
        method_accepted(key)
    return known


_c_methods: dict = {}     # (class of the object, class of the function) -> plain_c_method


def _plain_c_method(owner: type, kind: type) -> bool:
    if not owner.__flags__ & kind.__flags__ & _IMMUTABLE or kind is _FUNCTION \
            or issubclass(owner, type) or issubclass(kind, type) or has_python_operators(owner):
        return False
    call = next((k.__dict__["__call__"] for k in kind.__mro__ if "__call__" in k.__dict__), None)
    return type(call) is not _FUNCTION


def python_inplace(fn, obj) -> bool:
    """Is ``fn`` an in-place operator that ``obj``'s class defines in Python (so ``obj op= x``
    may have changed ``obj``, and an unguarded replay records it as a mutation)?"""
    names = DUNDERS.get(fn)
    return names is not None and len(names) == 3 and names[2] is not None \
        and type(getattr(type(obj), names[2], None)) is _FUNCTION
