"""Calls decided in the instrumented bytecode itself, without the call hook.

The call hook (``recorder.Level.hook``) is a Python call, about 100 ns even on its fastest
path; for a callable the hook always returns unchanged after logging it (a function or method
written in C, a numpy ufunc or array-function dispatcher: ``ALWAYS_PRIMITIVE``, by exact type)
the instrumented call site does the same inline: it tests ``type(callable) in
INLINE_PRIMITIVES``, and when it is, logs the callable with the frame's ``append`` and keeps
it (``instrument.probes.hook_site``). The log is what the hook would have written.

A site whose callee load gave such a callable (or a class written in C: ``always_primitive``)
when the code was instrumented expects it (``CodeInfo.expected``): when the callable *is* it,
the site logs nothing at all (the replay knows the callable from the code); else it logs a
``CallMark`` and then decides as above, so the replay reads the callable after the mark.

The one exception to "always returned unchanged" is a context that substitutes callables
(``Context.substitute``, asked for every call): while any run with such a context is active
(in any thread) ``INLINE_PRIMITIVES`` is empty, so every site calls the hook (an expecting
site after its mark); the last such run to end fills it again. Counted and locked, like
``headroom``.
"""
from __future__ import annotations

import threading
import types

import numpy as np

__all__ = ["ALWAYS_PRIMITIVE", "INLINE_PRIMITIVES", "always_primitive", "substitution_started",
           "substitution_ended"]

# callables whose decision is "primitive" whatever the context: C functions and methods
# (``recorder._BUILTIN_CALLABLES``), and two C types whose instances the hook's ``decide``
# never traces (not a Python function, not a heap type). By exact type: no subclass.
ALWAYS_PRIMITIVE = frozenset({types.BuiltinFunctionType, types.MethodWrapperType,
                              types.WrapperDescriptorType, types.MethodDescriptorType,
                              types.ClassMethodDescriptorType, np.ufunc, type(np.sum)})
# what the call sites test (a set, identity-keyed as a constant: ``bytecode`` cannot marshal
# types, so it never merges it with another constant); empty while a substituting run is active
INLINE_PRIMITIVES: set = set(ALWAYS_PRIMITIVE)
_HEAPTYPE = 1 << 9


def always_primitive(value) -> bool:
    """Does the hook return ``value`` unchanged whatever the context (but a substituting one)?
    A callable of a type in ``ALWAYS_PRIMITIVE``, or a class written in C (``range``, ``float``,
    ``np.ndarray``: exactly of type ``type``, not a heap type; ``Run.decide`` traces only heap
    types' constructors). What a call site may expect (``CodeInfo.expected``), by identity."""
    t = type(value)
    return t in ALWAYS_PRIMITIVE or t is type and not value.__flags__ & _HEAPTYPE


class _Substituting:
    __slots__ = ("lock", "active")

    def __init__(self):
        self.lock = threading.Lock()
        self.active: dict = {}     # run (by identity) -> None


_substituting = _Substituting()


def substitution_started(run, state: _Substituting = _substituting) -> None:
    """A run whose context substitutes callables starts: every site calls the hook."""
    with state.lock:
        state.active[run] = None
        INLINE_PRIMITIVES.clear()


def substitution_ended(run, state: _Substituting = _substituting) -> None:
    """That run has ended (harmless if it never started or already ended)."""
    with state.lock:
        if state.active.pop(run, 0) is None and not state.active:
            INLINE_PRIMITIVES.update(ALWAYS_PRIMITIVE)
