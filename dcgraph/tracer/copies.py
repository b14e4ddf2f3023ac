"""Instrumented copies of Python functions, cached per function.

``instrumented_copy(fn)`` is a function like ``fn`` (same globals, name, defaults, closure and
attributes) whose code is the instrumented code (``instrument``); the code itself is cached by
``instrument.rewrite``, the copy here, per function, while the function keeps its code and
defaults. An entry holds a weak reference to its function and goes when the function does.
"""
from __future__ import annotations

import functools
import types
import weakref

__all__ = ["instrumented_copy"]

_copies: dict = {}     # id(fn), or (id(fn), guarded, listed) for another variant -> (weakref to fn,
                       # its code, instrumented copy or None, its defaults, its kwdefaults)
_COPIES_BOUND = 256    # the cache holds at most this many copies (and what they capture)


def instrumented_copy(fn: types.FunctionType, unsupported: dict | None = None,
                      guarded: bool = False, listed: bool = True):
    """The instrumented copy of ``fn`` (cached while fn's code, defaults and closure are
    unchanged; an entry goes when ``fn`` does), or None when its code cannot be instrumented
    (the reason goes into ``unsupported``). ``guarded``, ``listed``: see ``instrument``."""
    key = id(fn) if listed and not guarded else (id(fn), guarded, listed)
    hit = _copies.get(key)
    code = fn.__code__
    if hit is not None and hit[0]() is fn and hit[1] is code and hit[3] is fn.__defaults__ \
            and hit[4] is fn.__kwdefaults__:
        copy = hit[2]
        if copy is None and unsupported is not None:
            unsupported[code] = _instrument(code, guarded, fn.__globals__, listed).error
        return copy
    info = _instrument(code, guarded, fn.__globals__, listed)
    if info.error is not None:
        if unsupported is not None:
            unsupported[fn.__code__] = info.error
        copy = None
    else:
        copy = types.FunctionType(info.new_code, fn.__globals__, fn.__name__, fn.__defaults__,
                                  fn.__closure__)
        copy.__kwdefaults__ = fn.__kwdefaults__
        copy.__qualname__ = fn.__qualname__
        copy.__dict__.update(fn.__dict__)
        if info.generator:
            from .resumable import starter    # (imports the recorder, which imports this)
            copy = starter(copy, info, fn)
    if info.error is not None and info.transient:
        return None                      # e.g. a RecursionError: try again next time
    # the oldest entries; the keys are listed in one C call: ``_forget`` may run at any
    # bytecode boundary (3.12 collects there) and would break a live iterator over the dict
    for stale in list(_copies)[: max(0, len(_copies) - _COPIES_BOUND + 1)]:
        _copies.pop(stale, None)
    _copies[key] = (weakref.ref(fn, functools.partial(_forget, key)), code, copy,
                    fn.__defaults__, fn.__kwdefaults__)
    return copy


def _forget(key, ref, copies: dict = _copies) -> None:
    """``fn`` was collected: drop its entry (unless the id was reused meanwhile). The cache is
    bound as a default: at interpreter exit the module's globals may already be gone."""
    hit = copies.get(key)
    if hit is not None and hit[0] is ref:
        copies.pop(key, None)


def _instrument(code, guarded: bool = False, scope: dict | None = None, listed: bool = True):
    from .instrument import instrument
    return instrument(code, guarded, scope, listed)
