"""A root's decision remembered across runs, where nothing it depends on can have changed.

``track(f, ...)`` decides its root ``f`` on every call (``Run.root``: the context's
``is_primitive``, the operator scan of ``guards_operators``, the instrumented copy): about a
microsecond, most of ``track``'s fixed cost on a small function. ``remember(fn, ctx, tail)``
keeps the verdict "traced as ``tail[0]``, no operators within reach" when every input of that
verdict is an identity the next run can test: a plain ``Context`` (its class's ``is_primitive``,
which reads only its ``primitive`` set, empty, and its ``primitive_modules``), ``fn``'s code,
defaults and module, no closure and no keyword defaults (cells and dicts change in place), no
``__dict__`` entry that makes it primitive, and global names whose values the scan never
enters (numbers, strings, functions, library modules, C classes, absent names): then the same
identities give the same verdict. ``known(fn, ctx)`` is the ``tail`` when they all still
hold, else None (decide as usual): the run's memo entry for ``fn`` less its key (the copy, its
code, defaults and keyword defaults, ``run._remember``), plus a fifth field, the
``SiteCache``s of the copy's calls of ``fn`` itself (``CodeInfo.self_sites``), which the run
fills at its start (``Run.took_root``): a recursion's first call then skips the
hook as its later ones do. An entry holds a weak reference to ``fn`` whose callback, a C call
(``dict.pop``: no interrupt lands in it, it cannot fail), drops the entry as ``fn`` dies, before
its id can be reused: the entry for ``id(fn)`` is ``fn``'s own, and ``known`` calls no weak
reference. At most ``_ROOTS_BOUND`` entries are kept (the oldest go first).
"""
from __future__ import annotations

import functools
import types
import weakref

from .context import Context
from .operator_guards import _library_module as library_module
from .operator_reach import LEAF_TYPES

__all__ = ["known", "remember"]

_ROOTS: dict = {}      # id(fn) -> (code, defaults, module, primitive_modules, (name, value) of
                       #            its global names, weakref to fn, memo tail and self sites)
_ROOTS_BOUND = 256
_HEAPTYPE = 1 << 9
_MODULE = types.ModuleType
_IS_PRIMITIVE = Context.is_primitive   # (a patched one is asked every time)


def known(fn: types.FunctionType, ctx):
    """The memo entry's tail (the copy first) remembered for ``fn`` as the root of a run under
    ``ctx`` (not guarding operators, keeping values), or None."""
    hit = _ROOTS.get(id(fn))
    # ``hit`` is ``fn``'s own (an entry goes as its function dies, before its id can be
    # reused, see ``remember``), so ``fn.__closure__`` and ``__globals__``, which cannot be
    # set, are as remembered
    if hit is None or hit[0] is not fn.__code__ or hit[1] is not fn.__defaults__ \
            or hit[2] is not fn.__module__ or fn.__kwdefaults__ is not None \
            or "_dcgraph_vjp" in fn.__dict__ or type(ctx) is not Context \
            or hit[3] is not ctx.primitive_modules or ctx.primitive \
            or Context.is_primitive is not _IS_PRIMITIVE or "is_primitive" in ctx.__dict__:
        return None
    names = hit[4]
    if names:                          # (most roots read a name or two, many none)
        scope = fn.__globals__
        for name, value in names:
            if scope.get(name) is not value:
                return None
    return hit[6]


def remember(fn: types.FunctionType, ctx, tail: tuple) -> None:
    """``fn``, the root of a run under ``ctx``, was found traced as ``tail[0]`` with no
    operators within reach: keep that where ``known`` can test every input of the verdict."""
    if type(ctx) is not Context or Context.is_primitive is not _IS_PRIMITIVE or ctx.primitive \
            or "is_primitive" in ctx.__dict__ or fn.__closure__ is not None \
            or fn.__kwdefaults__ is not None or "_dcgraph_vjp" in fn.__dict__ \
            or fn.__defaults__ is not None and not LEAF_TYPES.issuperset(map(type,
                                                                            fn.__defaults__)):
        return
    scope = fn.__globals__
    values = tuple((name, scope.get(name)) for name in dict.fromkeys(fn.__code__.co_names))
    if not all(_opaque(v, ctx) for _, v in values):
        return
    key = id(fn)
    for stale in list(_ROOTS)[: max(0, len(_ROOTS) - _ROOTS_BOUND + 1)]:
        _ROOTS.pop(stale, None)          # (keys listed in one C call, see ``copies``)
    # the weak reference's callback, a C call (no interrupt can land in it, nor can it fail),
    # drops the entry as ``fn`` dies: an entry for ``id(fn)`` is ``fn``'s own
    _ROOTS[key] = (fn.__code__, fn.__defaults__, fn.__module__, ctx.primitive_modules, values,
                   weakref.ref(fn, functools.partial(_ROOTS.pop, key)),
                   tail + (_self_sites(fn, tail[0]),))


def _self_sites(fn: types.FunctionType, copy: types.FunctionType) -> tuple:
    """The ``SiteCache``s of ``copy``'s calls of ``fn`` (``CodeInfo.self_sites``), where the
    hook would fill them (``fn`` takes no keyword-only parameter), from the instrumentation
    cache while it still holds the info ``copy``'s code came from."""
    if fn.__code__.co_kwonlyargcount:
        return ()
    from .instrument import instrument     # (imports the recorder, which imports this)
    info = instrument(fn.__code__, False, fn.__globals__, True)
    return tuple(info.self_sites.values()) if info.new_code is copy.__code__ else ()


def _opaque(value, ctx) -> bool:
    """Does the operator scan (``guards_operators``) decide ``value`` by its identity alone
    (it never looks inside it)?"""
    kind = type(value)
    if value is None or kind in LEAF_TYPES and kind is not _MODULE:
        return True
    if kind is _MODULE:
        name = value.__name__
        if not isinstance(name, str):
            return False
        return library_module(name, ctx)
    return issubclass(kind, type) and not value.__flags__ & _HEAPTYPE
