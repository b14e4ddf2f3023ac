"""Which recorded primitive calls may have effects that running them again would show.

Compiled replay runs a recorded path's primitives again, and when a guard fails part way the
caller traces ``f`` from the start: every primitive before the guard then runs twice. That is
unobservable only for calls without effects (arithmetic, ``math``, numpy on arrays, reading
containers), so ``effect_of(node)`` names what else a call may do (a random draw, I/O, the next
item of an iterator of the user's, a method of an object it may change, a function of the
user's run from C), and compiled replay is not used for such paths: never run user code twice.
"""
from __future__ import annotations

import functools
import types

import numpy as np

from ..tracer import ops

__all__ = ["effect_of"]

# types whose values the primitives below read without running code of the user's
VALUE_TYPES = (int, float, complex, bool, str, bytes, tuple, list, dict, set, frozenset, range,
               slice, type(None), np.ndarray, np.generic, np.dtype)
# modules (and their submodules) whose functions act on the world, not only on values
EFFECT_MODULES = ("time", "os", "posix", "sys", "io", "_io", "socket", "logging", "subprocess",
                  "shutil", "pathlib", "tempfile", "threading", "_thread", "pickle", "sqlite3",
                  "urllib", "http", "xmlrpc", "asyncio", "select", "signal", "random",
                  "numpy.random", "secrets", "uuid", "webbrowser", "multiprocessing")
EFFECT_BUILTINS = frozenset({print, input, open, next, exec, eval, compile, setattr, delattr,
                             __import__, breakpoint, globals, locals, vars, aiter, anext})
_BUILTIN_ITERATORS = frozenset(type(iter(x)) for x in ([], (), range(0), "", {}, set(), b"",
                                                      {}.items(), {}.values(), reversed([]),
                                                      np.zeros(1)))
_BUILTIN = type(len)
_LIBRARIES = ("numpy", "scipy", "math", "dcgraph")   # Python functions that are not the user's
# builtins that take a function as a value without calling it
_NOT_CALLING = frozenset({getattr, hasattr, isinstance, callable, type, id, len, repr, str})


def _module_name(fn) -> str:
    if isinstance(fn, _BUILTIN):
        owner = fn.__self__
        if isinstance(owner, types.ModuleType):
            return owner.__name__
        return "" if owner is None else f"<method of {type(owner).__name__}>"
    module = getattr(fn, "__module__", None) if isinstance(fn, types.FunctionType) else None
    return module if isinstance(module, str) else ""


@functools.lru_cache(maxsize=4096)
def _in(module: str, prefixes: tuple) -> bool:
    """Is ``module`` one of ``prefixes`` or a submodule of one? (Memoised: few modules.)"""
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _iterator_effect(node) -> str | None:
    """Drawing from the iterator ``node`` holds: effect-free for built-in iterators of values
    and ``enumerate``/``zip``/``reversed`` over them."""
    if _iterates_values(node, 4):
        return None
    return f"draws from a {type(node.value).__name__} iterator"


def _iterates_values(node, depth: int) -> bool:
    it = node.value
    if isinstance(it, VALUE_TYPES) or type(it) in _BUILTIN_ITERATORS:
        return True
    node = _unaliased(node)
    fn = getattr(node, "fn", None)
    if depth and type(node).__name__ == "PrimitiveCall" and (
            fn is iter or type(it) in (enumerate, zip, reversed) and fn is type(it)):
        return all(_iterates_values(a, depth - 1) for a in node.args)
    return False


def _unaliased(node):
    """The node an alias stands for (phis, bound arguments, values returned by nested calls)."""
    while True:
        kind = type(node).__name__
        if kind == "Phi" or (kind == "Argument" and type(node.source).__name__ in _NODE_KINDS):
            node = node.source
        elif kind == "NestedCall" and node.child is not None \
                and type(node.child.returned).__name__ == "Return":
            node = node.child.returned.inputs[0]
        else:
            return node


_NODE_KINDS = frozenset({"Argument", "Constant", "PrimitiveCall", "NestedCall", "Phi"})


def effect_of(node, memo: dict | None = None) -> str | None:
    """What the recorded primitive call ``node`` may do besides computing its value (None when
    running it again is unobservable). ``memo``: a dict the caller keeps while the recorded
    callables stay alive (one tape check), holding what depends on the callable alone."""
    fn = node.fn
    if type(fn).__hash__ is None:
        return f"calls a {type(fn).__name__} object"
    if fn is ops.next_item:
        return _iterator_effect(node.args[0]) if node.args else "draws from an iterator"
    if memo is None:
        facts = _callable_facts(fn)
    else:
        entry = memo.get(id(fn))
        if entry is None or entry[0] is not fn:
            entry = memo[id(fn)] = (fn, _callable_facts(fn))
        facts = entry[1]
    first, objclass, last, scan = facts
    if first is not None:
        return first
    if objclass and node.args and not isinstance(node.args[0].value, VALUE_TYPES):
        return f"a method of a {type(node.args[0].value).__name__} object, which it may change"
    if last is not None or not scan:
        return last
    for a in node.args + tuple(node.kwargs.values()):
        v = a.value
        if isinstance(v, (types.FunctionType, types.MethodType)) and not _in(
                getattr(v, "__module__", None) or "", _LIBRARIES):
            return "runs a function of the user's from C"
    return None


def _callable_facts(fn) -> tuple:
    """What ``effect_of`` decides from the callable alone: ``(effect before the argument
    checks, method of a class (check the object's type), effect after them, scan the
    arguments for functions of the user's)``."""
    from ..analysis.random_primitives import lookup
    if lookup(fn) is not None:
        return "a random draw", False, None, False
    if isinstance(fn, _BUILTIN) and fn in EFFECT_BUILTINS:
        return f"calls {fn.__name__}", False, None, False
    if type(fn) is types.MethodType or (isinstance(fn, _BUILTIN) and fn.__self__ is not None
                                        and not isinstance(fn.__self__, types.ModuleType)):
        owner = fn.__self__
        module = type(owner).__module__
        if not isinstance(owner, VALUE_TYPES) and (
                not _in(module, ("dcgraph", "numpy", "scipy")) or _in(module, EFFECT_MODULES)):
            return f"a method of a {type(owner).__name__} object, which it may change", \
                False, None, False
    objclass = getattr(fn, "__objclass__", None) if not isinstance(fn, types.FunctionType) else None
    module = _module_name(fn)
    if _in(module, EFFECT_MODULES):
        return None, objclass is not None, f"calls {module}", False
    if isinstance(fn, types.FunctionType) and not _in(module, _LIBRARIES):
        return None, objclass is not None, f"runs {fn.__qualname__}, a function of the user's", \
            False
    scan = not (fn in _NOT_CALLING or _in(module, ("dcgraph",)))
    return None, objclass is not None, None, scan
