"""Method calls on C objects decided at the call site by the object's class alone.

A call ``obj.name(args)`` whose arguments are plain loads (3.11's ``LOAD_METHOD`` sites in
listed code, ``instrument.probes.method_site``) carries a ``MethodSite``. Its ``owner`` is a
class for which the site has seen ``obj.name`` give a callable the hook returns unchanged in
every run and context (a C method of the class, ``inline_calls``: a callable of a type in
``ALWAYS_PRIMITIVE``, or a bound method of an accepted pair of classes) and for which that
holds of every instance: the class is immutable, its instances have no ``__dict__``, its
attribute lookup is the generic one, and ``name`` is a method found on the class (not a data
descriptor), so ``obj.name`` is that method bound to ``obj``, whatever ``obj``. Then, while
``type(obj) is owner`` (and no substituting run is active), the site does what the plain call
does (``LOAD_METHOD``: no bound method made) and logs nothing: the replay takes the callable as
``getattr(obj, name)`` of the object it already knows (``CodeInfo.method_sites``). Otherwise it
logs a ``CALL_MARK`` and decides as any site, and the first time it takes the callable inline
it asks ``filled`` to fill ``owner`` (once: a class found unfit leaves ``False``).
"""
from __future__ import annotations

import types

__all__ = ["MethodSite", "filled"]

_IMMUTABLE = 1 << 8       # Py_TPFLAGS_IMMUTABLETYPE: the class's attributes cannot change
# ``__getattribute__`` of classes whose instances' attribute lookup is the generic one
# (``PyObject_GenericGetAttr``: an instance dict, then the class's attributes): inherited
# from ``object``, or these classes' own slot wrappers of it
GENERIC_GETATTRIBUTE = frozenset(k.__getattribute__ for k in (
    object, list, dict, tuple, set, frozenset, str, bytes, bytearray, int, float, complex))


class MethodSite:
    """One method-call site's class whose ``name`` it calls without deciding (see the module):
    ``owner`` None (not seen yet), False (never) or the class. Kept by identity among the
    code's constants (unmarshallable, as ``inline_calls.SiteConst``)."""

    __slots__ = ("owner", "name")

    def __init__(self, name: str):
        self.owner, self.name = None, name

    def __repr__(self):
        return f"<method site .{self.name}: {self.owner!r}>"


def filled(site: MethodSite, method) -> None:
    """The site took ``method`` (``obj.<site.name>``) inline as a C method for the first time:
    keep ``type(obj)`` in ``site.owner`` when every instance of it would give the same kind of
    callable, else ``False``."""
    obj = getattr(method, "__self__", None)
    owner = type(obj)
    site.owner = owner if _fits(owner, obj, site.name, method) else False


def _fits(owner: type, obj, name: str, method) -> bool:
    if not owner.__flags__ & _IMMUTABLE or owner.__dictoffset__ or isinstance(obj, type) \
            or owner.__getattribute__ not in GENERIC_GETATTRIBUTE:
        return False
    for klass in owner.__mro__:
        if name in klass.__dict__:
            found = klass.__dict__[name]
            break
    else:
        return False
    get = getattr(type(found), "__get__", None)
    if get is None or hasattr(type(found), "__set__") or hasattr(type(found), "__delete__"):
        return False                     # not a method: a plain value or a data descriptor
    bound = get(found, obj, owner)
    return type(bound) is type(method) and type(bound) in _BOUND_KINDS and bound == method


# what a method found on a C class gives bound (``==`` compares the object by identity and
# the function)
_BOUND_KINDS = frozenset({types.MethodType, types.BuiltinMethodType, types.MethodWrapperType})
