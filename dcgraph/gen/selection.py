"""Selections: sets of addresses (with everything below them), as in Gen.

``addr in sel`` asks whether the choice at ``addr`` is selected; ``sel[key]`` is the
sub-selection below a key (for a sub-call). ``select("x", ("z", 3))`` selects those addresses
and everything below them; ``all_selection`` selects everything; ``complement(sel)`` inverts.
"""
from __future__ import annotations

from .address import Address, as_address

__all__ = ["Selection", "StaticSelection", "AllSelection", "ComplementSelection", "select",
           "all_selection", "complement", "EMPTY_SELECTION"]


class Selection:
    """Base class: ``__contains__(address)`` and ``__getitem__(key) -> Selection``."""

    def __contains__(self, addr) -> bool:
        raise NotImplementedError

    def __getitem__(self, key) -> "Selection":
        raise NotImplementedError

    def is_empty(self) -> bool:
        return False

    def addresses(self) -> list | None:
        """The selected addresses when they are finitely listed (None otherwise)."""
        return None

    def __invert__(self):
        return complement(self)


class StaticSelection(Selection):
    """The listed addresses and everything below them (a trie of keys)."""

    __slots__ = ("_subs", "_all")

    def __init__(self, addresses=()):
        self._subs: dict = {}
        self._all = False
        for a in addresses:
            self.add(a)

    def add(self, addr) -> None:
        node = self
        for k in as_address(addr):
            if node._all:
                return
            node = node._subs.setdefault(k, StaticSelection())
        node._all, node._subs = True, {}

    def __contains__(self, addr) -> bool:
        node = self
        for k in as_address(addr):
            if node._all:
                return True
            node = node._subs.get(k)
            if node is None:
                return False
        return node._all

    def __getitem__(self, key) -> Selection:
        node = self
        for k in as_address(key):
            if node._all:
                return all_selection
            node = node._subs.get(k)
            if node is None:
                return EMPTY_SELECTION
        return all_selection if node._all else node

    def is_empty(self) -> bool:
        return not self._all and all(s.is_empty() for s in self._subs.values())

    def addresses(self) -> list:
        if self._all:
            return [Address()]
        out = []
        for k, s in self._subs.items():
            out.extend(tuple.__new__(Address, (k,) + a) for a in s.addresses())
        return out

    def __repr__(self):
        return "select(" + ", ".join(repr(a[0]) if len(a) == 1 else repr(tuple(a))
                                     for a in self.addresses()) + ")"


class AllSelection(Selection):
    """Every address."""

    def __contains__(self, addr) -> bool:
        return True

    def __getitem__(self, key) -> Selection:
        return self

    def __repr__(self):
        return "all_selection"


class ComplementSelection(Selection):
    """Every address not in ``inner``."""

    def __init__(self, inner: Selection):
        self.inner = inner

    def __contains__(self, addr) -> bool:
        return addr not in self.inner

    def __getitem__(self, key) -> Selection:
        return complement(self.inner[key])

    def is_empty(self) -> bool:
        return isinstance(self.inner, AllSelection)

    def __repr__(self):
        return f"complement({self.inner!r})"


def select(*addresses) -> StaticSelection:
    """The selection of these addresses (keys or tuples) and everything below them."""
    return StaticSelection(addresses)


def complement(sel: Selection) -> Selection:
    """Every address ``sel`` does not select."""
    if isinstance(sel, ComplementSelection):
        return sel.inner
    return ComplementSelection(sel)


all_selection = AllSelection()
EMPTY_SELECTION = StaticSelection()
