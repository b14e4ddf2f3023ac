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

A bound method (``types.MethodType``: ``rng.random``, a Cython method of a C class) is taken
inline the same way when ``type(obj)`` is in ``INLINE_OWNERS`` and ``type(func)`` in
``INLINE_KINDS``: the classes of the pairs ``operator_guards.plain_c_method`` has accepted in
this process (``method_accepted``), for which the hook returns the method unchanged in every
run and context and guards nothing. Its verdict is a test of the object's class and a test of
the function's class, so any pair of an accepted owner and an accepted kind is accepted too.
The site makes two ``type`` calls and two set tests, all in C.

A Python function the hook has decided traced is taken by the site too, once the hook has
filled the site's ``SiteCache`` (listed code, one level for every depth): the site checks the
frame's hook, the function, its code and its defaults against the entry, logs the function
and calls the copy, without the hook's frame.

The one exception to "always returned unchanged" is a context that substitutes callables
(``Context.substitute``, asked for every call): while any run with such a context is active
(in any thread) ``INLINE_PRIMITIVES``, ``INLINE_OWNERS`` and ``INLINE_KINDS`` are empty, so every site calls
the hook (an expecting site after its mark); the last such run to end fills them again. Counted and locked, like
``headroom``.
"""
from __future__ import annotations

import threading
import types

import numpy as np

__all__ = ["ALWAYS_PRIMITIVE", "INLINE_PRIMITIVES", "INLINE_OWNERS", "INLINE_KINDS", "PLAIN_METHODS",
           "SITE_KINDS", "SITE_OWNERS", "SITE_PRIMITIVES", "SiteCache", "SiteConst", "always_primitive",
           "method_accepted", "placed_sets", "substitution_started", "substitution_ended"]

# callables whose decision is "primitive" whatever the context: C functions and methods
# (``recorder._BUILTIN_CALLABLES``), and two C types whose instances the hook's ``decide``
# never traces (not a Python function, not a heap type). By exact type: no subclass.
ALWAYS_PRIMITIVE = frozenset({types.BuiltinFunctionType, types.MethodWrapperType,
                              types.WrapperDescriptorType, types.MethodDescriptorType,
                              types.ClassMethodDescriptorType, np.ufunc, type(np.sum)})


class SiteConst:
    """What a call site's ``LOAD_CONST`` holds for one of the sets below until its code is
    assembled (``instrument.rewrite``), when ``placed_sets`` puts the set in its place. The
    sets are exact ``set``s (``in`` on a subclass of ``set`` runs its ``__contains__`` method,
    about 20 ns a test more), and ``bytecode`` merges constants that marshal alike (two empty
    sets would become one); a ``SiteConst`` cannot be marshalled, so it is kept by identity."""

    __slots__ = ("target",)

    def __init__(self, target: set):
        self.target = target


class SiteCache:
    """One call site's memory of its last traced Python callee in a run (listed code only,
    ``probes.hook_site``): ``entry`` is ``NO_SITE_ENTRY`` or ``(hook, f, code, defaults,
    copy)``, filled by ``Level.hook`` where it returned ``copy`` for ``f`` with nothing else
    to do (one level serves every depth, ``f`` takes no keyword-only parameter). The site
    takes ``copy`` itself, logging ``f`` as the hook would, while the frame's hook is
    ``hook``, and ``f`` still has that code and those defaults; else it calls
    ``hook(f, site)``. The run empties the entries it filled when it closes or forgets its
    decisions (``Level.forget_sites``), so an entry never outlives them (nor keeps the run
    alive). Kept by identity among the code's constants, as ``SiteConst``.

    ``positional``: None, or the number of positional arguments the site always passes (no
    keywords, no unpacking; ``CodeInfo.site_caches``) where that is the ``co_argcount`` of
    the Python function its callee load gave when instrumented: such a site does not test
    ``f``'s defaults, which no call of it reads, and is filled only for an ``f`` whose code
    takes exactly that many positional parameters and no keyword-only one (about 20 ns a
    call: 3.11 does not specialise reading a function's ``__defaults__``)."""

    __slots__ = ("entry", "positional")

    def __init__(self, positional: int | None = None):
        self.entry = NO_SITE_ENTRY
        self.positional = positional


NO_SITE_ENTRY = (None, None, None, None, None)

# what the call sites test; empty while a substituting run is active
INLINE_PRIMITIVES: set = set(ALWAYS_PRIMITIVE)
# (class of the object, class of the function) of bound methods ``plain_c_method`` accepted:
# all of them (``PLAIN_METHODS``, the hook's test), and the classes of the objects and of the
# functions the sites test (``INLINE_OWNERS``, ``INLINE_KINDS``; empty while a substituting
# run is active)
PLAIN_METHODS: set = set()
INLINE_OWNERS: set = set()
INLINE_KINDS: set = set()
# the sites' stand-ins for the three sets (``SiteConst``)
SITE_PRIMITIVES = SiteConst(INLINE_PRIMITIVES)
SITE_OWNERS = SiteConst(INLINE_OWNERS)
SITE_KINDS = SiteConst(INLINE_KINDS)


def placed_sets(code):
    """``code`` with each ``SiteConst`` among its constants replaced by its set."""
    consts = code.co_consts
    if not any(type(c) is SiteConst for c in consts):
        return code
    return code.replace(co_consts=tuple(c.target if type(c) is SiteConst else c
                                        for c in consts))


_METHODS_BOUND = 4096
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
        INLINE_OWNERS.clear()
        INLINE_KINDS.clear()


def substitution_ended(run, state: _Substituting = _substituting) -> None:
    """That run has ended (harmless if it never started or already ended)."""
    with state.lock:
        if state.active.pop(run, 0) is None and not state.active:
            INLINE_PRIMITIVES.update(ALWAYS_PRIMITIVE)
            INLINE_OWNERS.update(owner for owner, _ in PLAIN_METHODS)
            INLINE_KINDS.update(kind for _, kind in PLAIN_METHODS)


def method_accepted(pair: tuple, state: _Substituting = _substituting) -> None:
    """``operator_guards.plain_c_method`` accepted the pair (class of the object, class of the
    function) for good: the hook returns such methods at once, and the sites take them inline
    (from now, or when no substituting run is active any more). Bounded: past the bound both
    sets start again (those pairs then reach the hook once more)."""
    with state.lock:
        if len(PLAIN_METHODS) >= _METHODS_BOUND:
            PLAIN_METHODS.clear()
            INLINE_OWNERS.clear()
            INLINE_KINDS.clear()
        PLAIN_METHODS.add(pair)
        if not state.active:
            INLINE_OWNERS.add(pair[0])
            INLINE_KINDS.add(pair[1])
