"""Element-precise reads of mutated containers, and what a container's length depends on.

A tape makes every mutation (``c[k] = v``, ``lst.append(v)``, ``obj.a = v``) the container's
latest *version*, and a read takes the latest version as input. Followed naively, ``z[t-1]``
after ``z[t] = ...`` depends on every element ever written. ``Containers`` walks a read back
along the version chain instead: a write to another constant key is skipped, a write to the same
key (or the append that put the element there) is the answer, and the list's creation
(``build_list(a, b, ...)``) names each element. Anything it cannot decide (slices, arrays as keys,
``insert``, ``sort``, unknown lengths, a container from an unknown call) falls back to the whole
version, as ``Tape.slice`` would.

Sources are returned as frozensets of *source* ids computed by the caller (``Dependence``): the
callback ``src(node)`` gives the sources of a node's value, ``mctl(node)`` the control sources in
force when a mutation ran, ``gate(node)`` the branch sources that chose a phi's incoming value or
a frame's return.

Lengths are derived backwards from the container's final state (values are recorded by
reference) through the length change of each later mutation.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import ops
from ..tape import Argument, NestedCall, Node, Phi, PrimitiveCall, Return

__all__ = ["Containers"]

EMPTY: frozenset = frozenset()

_SETTERS = {operator.setitem, list.__setitem__, dict.__setitem__}
_LENGTH_DELTA = {list.append: 1, list.insert: 1, list.pop: -1, list.remove: -1, list.sort: 0,
                 list.reverse: 0}
_SEQUENCE_BUILDERS = (ops.build_list, ops.build_tuple)
_MAX_STEPS = 100_000


def _simple_key(k) -> str | None:
    """The kind of a key whose equality decides aliasing ('int', 'str', 'tuple<n>'), else None."""
    t = type(k)
    if t is bool:
        return None
    if t is int or isinstance(k, np.integer):
        return "int"
    if t is str:
        return "str"
    if t is tuple and all(type(e) is not bool and (type(e) is int or isinstance(e, np.integer))
                          for e in k):
        return f"tuple{len(k)}"
    return None


def _alias_target(node):
    """The node that made the container ``node`` stands for (through arguments, phis, returns)."""
    for _ in range(1000):
        t = type(node)
        if t is Argument and isinstance(node.source, Node):
            node = node.source
        elif t is Phi:
            node = node.source
        elif t is NestedCall and node.child is not None and type(node.child.returned) is Return \
                and node.child.returned.inputs and node.child.returned.inputs[0].value is node.value:
            node = node.child.returned.inputs[0]
        else:
            return node
    return node


class Containers:
    """Version chains of one run and element/length resolution over them."""

    def __init__(self, nodes, src, mctl, gate):
        self.src, self.mctl, self.gate = src, mctl, gate
        chains: dict[int, list] = {}
        self.position: dict = {}
        for n in nodes:
            if isinstance(n, PrimitiveCall) and n.mutates is not None:
                chain = chains.setdefault(id(n.mutates), [])
                self.position[n] = len(chain)
                chain.append(n)
        self.chains = chains
        self._length_after: dict = {}

    # -- lengths -------------------------------------------------------------------------------
    def _delta(self, m) -> int | None:
        fn = m.fn
        d = _LENGTH_DELTA.get(fn)
        if d is not None:
            return d
        if fn in _SETTERS or fn is setattr:
            if fn is setattr or _simple_key(m.args[1].value) == "int":
                return 0
            return None
        if (fn is list.extend or fn is operator.iadd) and len(m.args) > 1:
            v = m.args[1].value
            return len(v) if isinstance(v, (tuple, str, range)) else None
        return None

    def length(self, version) -> int | None:
        """Length of ``version``'s container at that version (None when unknown)."""
        version = _alias_target(version)
        value = version.value
        if isinstance(value, np.ndarray):
            return value.shape[0] if value.ndim else None
        if not isinstance(value, (list, tuple, str, range)):
            return None
        chain = self.chains.get(id(value))
        if not chain:
            return len(value)
        pos = self.position.get(version)
        if pos is None:
            if type(version) is PrimitiveCall and version.fn in _SEQUENCE_BUILDERS:
                return len(version.args)
            pos = -1                      # the version before any mutation
        return self._length_after_position(chain, pos)

    def _length_after_position(self, chain: list, pos: int) -> int | None:
        key = (id(chain), pos)
        if key in self._length_after:
            return self._length_after[key]
        n = len(chain[-1].value) if chain else None
        for m in reversed(chain[pos + 1:]):
            d = self._delta(m)
            if d is None or n is None:
                n = None
                break
            n -= d
        self._length_after[key] = n
        return n

    # -- element reads ---------------------------------------------------------------------
    def element(self, version, k, setters=_SETTERS) -> frozenset:
        """Sources of ``version[k]`` for the key value ``k`` (without the key's own sources)."""
        kind = _simple_key(k)
        if kind is None:
            return self.src(version)
        if kind == "int" and k < 0:
            if not isinstance(version.value, (list, tuple, np.ndarray)):
                return self.src(version)
            size = self.length(version)
            if size is None:
                return self.src(version)
            k = k + size
        return self._walk(version, k, kind, setters, is_attr=False)

    def attribute(self, version, name) -> frozenset:
        """Sources of ``getattr(version, name)`` for the attribute name ``name``."""
        if type(name) is not str:
            return self.src(version)
        return self._walk(version, name, "str", (setattr,), is_attr=True)

    def _walk(self, v, k, kind: str, setters, is_attr: bool) -> frozenset:
        extra: frozenset = EMPTY
        for _ in range(_MAX_STEPS):
            t = type(v)
            if t is PrimitiveCall and v.mutates is not None:
                fn = v.fn
                if fn in setters and len(v.args) == 3:
                    k2 = v.args[1].value
                    if _simple_key(k2) != kind:
                        return extra | self.src(v)
                    if kind == "int" and k2 < 0:
                        if not isinstance(v.value, (list, np.ndarray)):
                            return extra | self.src(v)
                        size = self.length(v.args[0])
                        if size is None:
                            return extra | self.src(v)
                        k2 = k2 + size
                    extra = extra | self.mctl(v) | self.src(v.args[1])
                    if k2 == k:
                        return extra | self.src(v.args[2])
                    v = v.args[0]
                    continue
                if not is_attr and fn is list.append and len(v.args) == 2:
                    before = self.length(v.args[0])
                    if before is None:
                        return extra | self.src(v)
                    extra = extra | self.mctl(v)
                    if before == k:
                        return extra | self.src(v.args[1])
                    v = v.args[0]
                    continue
                if is_attr and fn in _SETTERS:      # item writes leave attributes alone
                    v = v.args[0]
                    continue
                return extra | self.src(v)
            if t is Phi:
                extra = extra | self.gate(v)
                v = v.source
                continue
            if t is Argument:
                if isinstance(v.source, Node):
                    v = v.source
                    continue
                return extra | self.src(v)
            if t is NestedCall:
                child = v.child
                ret = child.returned if child is not None else None
                if type(ret) is Return and ret.inputs and ret.inputs[0].value is v.value:
                    extra = extra | self.gate(ret)
                    v = ret.inputs[0]
                    continue
                return extra | self.src(v)
            if (t is PrimitiveCall and not is_attr and v.fn in _SEQUENCE_BUILDERS
                    and kind == "int" and 0 <= k < len(v.args)):
                return extra | self.src(v.args[k])
            if t is PrimitiveCall and not is_attr and v.fn is ops.build_const_key_dict:
                keys = v.args[-1].value
                if isinstance(keys, tuple) and kind in ("int", "str"):
                    for j, kk in enumerate(keys):
                        if _simple_key(kk) == kind and kk == k:
                            return extra | self.src(v.args[j])
                return extra | self.src(v)
            return extra | self.src(v)
        return extra | self.src(v)

    # -- lengths as dependences ------------------------------------------------------------
    def length_sources(self, node, depth: int = 0) -> frozenset:
        """Sources of ``len(node)`` (or of when iterating ``node`` stops)."""
        if depth > 50:
            return self.src(node)
        t = type(node)
        if t is PrimitiveCall and node.mutates is None:
            fn = node.fn
            if fn in (iter, enumerate, reversed) and len(node.args) == 1 and not node.kwargs:
                return self.length_sources(node.args[0], depth + 1)
            if fn is zip and not node.kwargs:
                out = EMPTY
                for a in node.args:
                    out = out | self.length_sources(a, depth + 1)
                return out
            if fn in _SEQUENCE_BUILDERS:
                return EMPTY
            if fn is range or fn is len:
                return self.src(node)
            return self.src(node)
        if t is PrimitiveCall:                  # a mutation of known length change
            if self._delta(node) is not None:
                return self.mctl(node) | self.length_sources(node.args[0], depth + 1)
            return self.src(node)
        if t is Phi:
            return self.gate(node) | self.length_sources(node.source, depth + 1)
        if t is Argument and isinstance(node.source, Node):
            return self.length_sources(node.source, depth + 1)
        if t is NestedCall and node.child is not None:
            ret = node.child.returned
            if type(ret) is Return and ret.inputs and ret.inputs[0].value is node.value:
                return self.gate(ret) | self.length_sources(ret.inputs[0], depth + 1)
        return self.src(node)
