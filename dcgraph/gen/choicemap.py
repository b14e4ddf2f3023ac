"""Choice maps: tries from hierarchical addresses to the values of random choices.

Each node of a ``ChoiceMap`` is empty, holds a value, or has sub-maps keyed by address keys
(never both a value and sub-maps). Values are stored by reference and never copied: a numpy
array placed in a choice map (or read from a trace's choices) must not be mutated afterwards.
"""
from __future__ import annotations

from typing import Iterator

from .address import Address, as_address

__all__ = ["ChoiceMap", "choicemap", "EMPTY", "ChoiceMapError"]

_NONE = object()


class ChoiceMapError(KeyError):
    """A choice map has no value at the address, or a value would overlap sub-maps."""

    def __str__(self):
        return str(self.args[0])


class ChoiceMap:
    """A mutable trie of choices; see the module docstring. ``cm[addr]`` reads a value."""

    __slots__ = ("_value", "_subs")

    def __init__(self):
        self._value = _NONE
        self._subs: dict | None = None

    # -- pickling: the "no value" sentinel is this process's object, so it travels as a flag --
    def __getstate__(self):
        return (self._value is not _NONE, None if self._value is _NONE else self._value, self._subs)

    def __setstate__(self, state):
        has_value, value, subs = state
        self._value = value if has_value else _NONE
        self._subs = subs

    # -- reading ------------------------------------------------------------------------------
    def _node(self, addr) -> "ChoiceMap | None":
        node = self
        for k in as_address(addr):
            subs = node._subs
            node = subs.get(k) if subs else None
            if node is None:
                return None
        return node

    def is_empty(self) -> bool:
        """True when the map holds no value anywhere."""
        if self._value is not _NONE:
            return False
        return all(s.is_empty() for s in (self._subs or {}).values())

    def has_value(self, addr=()) -> bool:
        """Is there a value at ``addr`` (the root itself by default)?"""
        node = self._node(addr)
        return node is not None and node._value is not _NONE

    def get_value(self, addr=()):
        """The value at ``addr``; ``ChoiceMapError`` naming the address when there is none."""
        node = self._node(addr)
        if node is None or node._value is _NONE:
            raise ChoiceMapError(f"no value at address {as_address(addr)}")
        return node._value

    def get_submap(self, addr) -> "ChoiceMap":
        """The sub-map at ``addr`` (an empty map when there is none; not a copy)."""
        node = self._node(addr)
        return EMPTY if node is None else node

    def has_submap(self, addr) -> bool:
        node = self._node(addr)
        return node is not None and not node.is_empty()

    def get_values_shallow(self) -> Iterator[tuple]:
        """``(key, value)`` for the values directly below the root."""
        for k, s in (self._subs or {}).items():
            if s._value is not _NONE:
                yield k, s._value

    def get_submaps_shallow(self) -> Iterator[tuple]:
        """``(key, submap)`` for the non-empty sub-maps directly below the root."""
        for k, s in (self._subs or {}).items():
            if s._value is _NONE and not s.is_empty():
                yield k, s

    def items(self) -> Iterator[tuple]:
        """Every ``(Address, value)`` in the map, depth first in insertion order."""
        if self._value is not _NONE:
            yield Address(), self._value
        for k, s in (self._subs or {}).items():
            for a, v in s.items():
                yield tuple.__new__(Address, (k,) + a), v

    def addresses(self) -> list:
        return [a for a, _ in self.items()]

    def __iter__(self):
        return self.items()

    def __len__(self):
        return sum(1 for _ in self.items())

    def __getitem__(self, addr):
        return self.get_value(addr)

    def __contains__(self, addr) -> bool:
        return self.has_value(addr)

    # -- writing ------------------------------------------------------------------------------
    def _make(self, addr) -> "ChoiceMap":
        node, path = self, []
        for k in as_address(addr):
            path.append(k)
            if node._value is not _NONE:
                raise ChoiceMapError(f"address {Address(*path[:-1])} holds a value; it cannot "
                                     f"have a sub-map at {as_address(addr)}")
            if node._subs is None:
                node._subs = {}
            nxt = node._subs.get(k)
            if nxt is None:
                nxt = node._subs[k] = ChoiceMap()
            node = nxt
        return node

    def set_value(self, addr, value) -> None:
        """Put ``value`` at ``addr`` (replacing a value there; an error over sub-maps)."""
        node = self._make(addr)
        if node._subs and not node.is_empty():
            raise ChoiceMapError(f"address {as_address(addr)} has sub-maps; it cannot hold a value")
        node._subs, node._value = None, value

    def set_submap(self, addr, submap: "ChoiceMap") -> None:
        """Put a copy of ``submap``'s structure at ``addr`` (values are shared, not copied)."""
        a = as_address(addr)
        if not a:
            raise ChoiceMapError("set_submap needs a non-empty address")
        parent = self._make(a[:-1])
        if parent._subs is None:
            parent._subs = {}
        parent._subs[a[-1]] = submap.copy()

    def copy(self) -> "ChoiceMap":
        """A copy of the trie (values shared)."""
        new = ChoiceMap()
        new._value = self._value
        if self._subs:
            new._subs = {k: s.copy() for k, s in self._subs.items()}
        return new

    def merge(self, other: "ChoiceMap") -> "ChoiceMap":
        """A new map with the choices of both; ``ChoiceMapError`` when an address is in both."""
        new = self.copy()
        for a, v in other.items():
            if new._node(a) is not None and not new._node(a).is_empty():
                raise ChoiceMapError(f"merge: address {a} is in both choice maps")
            new.set_value(a, v)
        return new

    # -- conversion and printing --------------------------------------------------------------
    def __eq__(self, other):
        if not isinstance(other, ChoiceMap):
            return NotImplemented
        mine, theirs = dict(self.items()), dict(other.items())
        return mine.keys() == theirs.keys() and all(_same(mine[k], theirs[k]) for k in mine)

    __hash__ = None

    def to_dict(self) -> dict:
        """Nested dicts: key -> value or key -> dict of the sub-map."""
        out = {}
        for k, s in (self._subs or {}).items():
            if s._value is not _NONE:
                out[k] = s._value
            elif not s.is_empty():
                out[k] = s.to_dict()
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "ChoiceMap":
        """Build from nested dicts (a dict value is a sub-map; a tuple key is an address)."""
        cm = cls()
        for k, v in d.items():
            if isinstance(v, dict):
                for a, leaf in cls.from_dict(v).items():
                    cm.set_value(as_address(k) + a, leaf)
            elif isinstance(v, ChoiceMap):
                cm.set_submap(k, v)
            else:
                cm.set_value(k, v)
        return cm

    def _lines(self, prefix: str) -> list:
        lines = []
        entries = [(k, s) for k, s in (self._subs or {}).items() if not s.is_empty()]
        for i, (k, s) in enumerate(entries):
            last = i == len(entries) - 1
            head, more = ("└── ", "    ") if last else ("├── ", "│   ")
            if s._value is not _NONE:
                lines.append(f"{prefix}{head}{k!r} : {s._value!r}")
            else:
                lines.append(f"{prefix}{head}{k!r}")
                lines.extend(s._lines(prefix + more))
        return lines

    def __str__(self):
        if self._value is not _NONE:
            return f"│\n└── {self._value!r}"
        return "\n".join(["│"] + self._lines(""))

    def __repr__(self):
        return f"choicemap({self.to_dict()!r})"

    def __rich__(self):
        from rich.tree import Tree
        tree = Tree("choices")
        _rich_fill(tree, self)
        return tree

    def show(self) -> None:
        """Print the map as a rich tree."""
        from rich import print as rprint
        rprint(self)


def _rich_fill(tree, cm: ChoiceMap) -> None:
    for k, s in (cm._subs or {}).items():
        if s._value is not _NONE:
            tree.add(f"[bold]{k!r}[/bold] : {s._value!r}")
        elif not s.is_empty():
            _rich_fill(tree.add(f"[bold]{k!r}[/bold]"), s)


def _same(a, b) -> bool:
    if a is b:
        return True
    try:
        import numpy as np
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return np.array_equal(a, b)
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def choicemap(d: dict | None = None, **kw) -> ChoiceMap:
    """``choicemap({"x": 1.0, "sub": {"y": 2.0}, ("z", 3): 0.5})``: a choice map from nested
    dicts (keyword arguments add one-key addresses)."""
    cm = ChoiceMap.from_dict(d or {})
    for k, v in kw.items():
        cm.set_value(k, v)
    return cm


class _EmptyChoiceMap(ChoiceMap):
    """The shared, read-only empty choice map."""

    __slots__ = ()

    def _make(self, addr):
        raise ChoiceMapError("the shared empty choice map is read-only; make one with choicemap()")


EMPTY = _EmptyChoiceMap()
