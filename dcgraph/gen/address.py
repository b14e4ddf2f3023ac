"""Hierarchical addresses of random choices and calls.

An ``Address`` is an immutable, hashable sequence of keys (``str`` or ``int``): ``Address("a", 3,
"x")``. Wherever an address is expected a key (``"x"``, ``3``) means a one-key address and a
tuple means the hierarchical address of its keys (``("a", 3, "x")``): a tuple is never a key.
"""
from __future__ import annotations

import numpy as np

__all__ = ["Address", "as_address", "AddressError"]


def _key(k, keys):
    t = type(k)
    if t is str or t is int:
        return k
    if isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
        return int(k)
    raise AddressError(f"address key {k!r} of {keys!r}: keys are str or int, got {t.__name__}")


class AddressError(TypeError):
    """An address (or one of its keys) has the wrong type."""


class Address(tuple):
    """An immutable sequence of keys; ``first()``, ``rest()``, ``empty()`` as in Gen's notes."""

    __slots__ = ()

    def __new__(cls, *keys):
        return tuple.__new__(cls, tuple(_key(k, keys) for k in keys))

    def empty(self) -> bool:
        """True for the address with no keys."""
        return not self

    def first(self):
        """The first key (``IndexError`` on the empty address)."""
        if not self:
            raise IndexError("first() of the empty address")
        return self[0]

    def rest(self) -> "Address":
        """The address without its first key (``IndexError`` on the empty address)."""
        if not self:
            raise IndexError("rest() of the empty address")
        return tuple.__new__(Address, self[1:])

    def __getnewargs__(self):
        return tuple(self)

    def __add__(self, other) -> "Address":
        return tuple.__new__(Address, tuple(self) + tuple(as_address(other)))

    def __repr__(self):
        return "Address(" + ", ".join(map(repr, self)) + ")"

    def __str__(self):
        return " => ".join(map(repr, self)) if self else "<empty address>"


def as_address(a) -> Address:
    """``a`` as an ``Address``: a key gives a one-key address, a tuple its keys."""
    t = type(a)
    if t is Address:
        return a
    if t is str or t is int:
        return tuple.__new__(Address, (a,))
    if t is tuple:
        for k in a:
            tk = type(k)
            if tk is not str and tk is not int:
                return Address(*a)
        return tuple.__new__(Address, a)
    if isinstance(a, tuple):
        return Address(*a)
    if isinstance(a, np.integer):
        return tuple.__new__(Address, (int(a),))
    raise AddressError(f"{a!r} is not an address: use a str or int key or a tuple of keys")
