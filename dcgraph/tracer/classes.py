"""Calls of the user's classes and callable objects, traced like Python functions.

``Lin(w)`` runs ``type.__call__`` in C, and ``model(x)`` runs ``type(model).__call__``: left
alone, both would be primitive calls whose bodies the tape never sees. The hook asks
``traced_target(f)`` for a Python function to trace instead:

- a class whose instances are made by ``object.__new__`` and initialised by a Python
  ``__init__`` (plain metaclass, not an exception): ``constructor(cls)``, a function doing what
  ``type.__call__`` does, ``obj = object.__new__(cls)`` then ``type(obj).__init__(obj, ...)``;
- an instance whose type defines ``__call__`` in Python: that function, bound to the instance.

The replay records such a call as a ``NestedCall`` of ``f`` whose child is the traced
function's tape (``self`` of ``__call__`` is the node that held the instance).
"""
from __future__ import annotations

import types

__all__ = ["traced_target", "constructor", "call_method", "instance_self"]

_FUNCTION = types.FunctionType


def constructor(cls, made_for: dict | None):
    """A Python function equivalent to calling ``cls``, made once per class and kept in
    ``made_for`` (one ``track`` run's table: the function holds ``cls``, so a table that
    outlived the run would keep every class it saw alive; None: made per call, kept nowhere)."""
    made = made_for.get(cls) if made_for is not None else None
    if made is None:
        new = object.__new__

        def construct(*args, **kwargs):
            obj = new(cls)
            type(obj).__init__(obj, *args, **kwargs)
            return obj

        construct.__qualname__ = cls.__qualname__
        construct.__name__ = cls.__name__
        construct.__module__ = cls.__module__
        made = construct
        if made_for is not None:
            made_for[cls] = made
    return made


def _plain_class(cls) -> bool:
    """Is calling ``cls`` exactly ``object.__new__(cls)`` then its Python ``__init__``?"""
    return (type(cls) is type and cls.__new__ is object.__new__
            and type(cls.__dict__.get("__init__", None) or getattr(cls, "__init__", None))
            is _FUNCTION and not issubclass(cls, BaseException))


def call_method(obj):
    """``type(obj).__call__`` when it is a Python function (None otherwise)."""
    if isinstance(obj, (type, _FUNCTION, types.MethodType, types.BuiltinFunctionType)):
        return None
    method = getattr(type(obj), "__call__", None)
    return method if type(method) is _FUNCTION else None


def traced_target(f, constructors: dict | None):
    """The Python function to trace for a call of ``f`` (a class or a callable object), or
    None to record it as a primitive (``constructors``: see ``constructor``). The caller checks
    the context's policy on it."""
    if isinstance(f, type):
        return constructor(f, constructors) if _plain_class(f) else None
    return call_method(f)


def instance_self(f, code) -> bool:
    """Is ``code`` the ``__call__`` of ``f``'s type (so the call passes ``f`` as ``self``)?"""
    method = call_method(f)
    return method is not None and method.__code__ is code
