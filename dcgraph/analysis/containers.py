"""Element-precise reads of mutated containers, and what a container's length depends on.

A tape makes every mutation (``c[k] = v``, ``lst.append(v)``, ``obj.a = v``) the container's
latest *version*, and a read takes the latest version as input. Followed naively, ``z[t-1]``
after ``z[t] = ...`` depends on every element ever written. ``Containers`` resolves a read to the
write that produced the element instead: the last write to the same constant key, or the append
that put the element at that index, or the list display (``build_list(a, b, ...)``) that made
it. The read then depends on that write's value, its key and the control in force when it ran,
plus the keys of the writes it was resolved past (had one of them hit the key, the value would
differ). Anything undecidable (slices or arrays as keys, ``insert``, ``sort``, unknown lengths, a
container from an unknown call) falls back to the whole version, as ``Tape.slice`` would.

Each container's mutations are indexed as the walk records them (``record``), so a read costs a
few bisections, not a walk over every earlier write.

Sources are frozensets of *source* ids computed by the caller (``Dependence``): ``src(node)``
gives the sources of a node's value, ``mctl(node)`` the control sources in force when a mutation
ran, ``gate(node)`` the branch sources that chose a phi's incoming value or a frame's return.

Lengths are derived backwards from the container's final state (values are recorded by
reference) through the length change of each later mutation.

Known limit: a write made only on the path *not* taken is invisible to a run's tape, so a read
after ``if z: pass else: box[0] = v`` does not depend on ``z`` in a run where ``z`` was true.
"""
from __future__ import annotations

import bisect
import operator

import numpy as np

from ..tracer import ops
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


def _last_at_most(positions, pos: int) -> int:
    """The largest entry ``<= pos`` of the sorted list ``positions`` (-1 when none)."""
    i = bisect.bisect_right(positions, pos)
    return positions[i - 1] if i else -1


class _Index:
    """The recorded mutations of one container, by what they did (chain positions)."""

    __slots__ = ("appends", "sets", "kinds", "others", "keyed", "len_src")

    def __init__(self):
        self.appends: dict = {}     # list index -> positions of appends that put an element there
        self.sets: dict = {}        # normalised key -> positions of writes to it
        self.kinds: dict = {}       # key kind -> positions of keyed writes of that kind
        self.others: list = []      # positions of every other mutation
        self.keyed: list = []       # positions of keyed writes whose key has sources
        self.len_src: list = []     # sources of the length after each position (None: whole)


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
        self._indexes: dict[int, _Index] = {}
        self._lengths_cache: dict = {}

    # -- lengths -------------------------------------------------------------------------------
    def _delta(self, m) -> int | None:
        """Change in length made by the mutation ``m`` of a list or array (None: unknown)."""
        fn, container = m.fn, m.value
        if isinstance(container, np.ndarray):
            return 0 if fn in _SETTERS else None
        if type(container) is not list:
            return None
        d = _LENGTH_DELTA.get(fn)
        if d is not None:
            return d
        if fn in _SETTERS:
            return 0 if _simple_key(m.args[1].value) == "int" else None
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
        return self._lengths(chain)[pos + 1]

    def _lengths(self, chain: list) -> list:
        """Lengths before the first mutation of ``chain`` and after each one, derived backwards
        from the final state (None from the newest mutation of unknown effect backwards)."""
        key = id(chain)
        out = self._lengths_cache.get(key)
        if out is None:
            n = len(chain[-1].value)
            out = [None] * (len(chain) + 1)
            for i in range(len(chain), 0, -1):
                out[i] = n
                d = self._delta(chain[i - 1])
                n = None if d is None or n is None else n - d
            out[0] = n
            self._lengths_cache[key] = out
        return out

    # -- recording -------------------------------------------------------------------------
    def record(self, m: PrimitiveCall) -> None:
        """Index the mutation ``m`` (called in execution order, before any read of it)."""
        idx = self._indexes.get(id(m.mutates))
        if idx is None:
            idx = self._indexes[id(m.mutates)] = _Index()
        pos = self.position[m]
        self._record_length(idx, m, pos)
        fn, c = m.fn, m.value
        if fn is list.append and type(c) is list and len(m.args) == 2:
            before = self.length(m.args[0])
            if before is not None:
                idx.appends.setdefault(before, []).append(pos)
                return
        elif fn in _SETTERS and len(m.args) == 3:
            key = m.args[1].value
            kind = _simple_key(key)
            if kind == "int" and key < 0 and isinstance(c, (list, np.ndarray)):
                size = self.length(m.args[0])
                key = None if size is None else key + size
            if kind is not None and key is not None:
                idx.sets.setdefault(key, []).append(pos)
                idx.kinds.setdefault(kind, []).append(pos)
                if self.src(m.args[1]):
                    idx.keyed.append(pos)
                return
        idx.others.append(pos)

    def _record_length(self, idx: _Index, m, pos: int) -> None:
        prev = idx.len_src[-1] if idx.len_src else self.length_sources(m.args[0])
        d = self._delta(m)
        if d is None or prev is None:
            idx.len_src.append(None)
        elif d == 0:
            idx.len_src.append(prev)
        else:
            ctl = self.mctl(m)
            idx.len_src.append(prev if not ctl or ctl <= prev else prev | ctl)

    # -- element reads ---------------------------------------------------------------------
    def element(self, version, k) -> frozenset:
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
        extra: frozenset = EMPTY
        v = version
        for _ in range(_MAX_STEPS):
            t = type(v)
            if t is PrimitiveCall and v.mutates is not None:
                found = self._resolve(v, k, kind)
                if found is None:
                    return extra | self.src(v)
                more, answer, v = found
                extra = extra | more
                if answer is not None:
                    return extra | answer
                continue
            if t is Phi:
                extra, v = extra | self.gate(v), v.source
                continue
            if t is Argument:
                if isinstance(v.source, Node):
                    v = v.source
                    continue
                return extra | self.src(v)
            if t is NestedCall:
                ret = v.child.returned if v.child is not None else None
                if type(ret) is Return and ret.inputs and ret.inputs[0].value is v.value:
                    extra, v = extra | self.gate(ret), ret.inputs[0]
                    continue
                return extra | self.src(v)
            if t is PrimitiveCall and v.fn in _SEQUENCE_BUILDERS and kind == "int" \
                    and 0 <= k < len(v.args):
                return extra | self.src(v.args[k])
            if t is PrimitiveCall and v.fn is ops.build_const_key_dict and kind in ("int", "str"):
                keys = v.args[-1].value
                for j, kk in enumerate(keys if isinstance(keys, tuple) else ()):
                    if _simple_key(kk) == kind and kk == k:
                        return extra | self.src(v.args[j])
            return extra | self.src(v)
        return extra | self.src(v)

    def _resolve(self, v, k, kind: str):
        """For a read of key ``k`` from the mutation version ``v``: ``(extra, answer, next)`` with
        the answer's sources when the write that made the element is found, else the version to
        continue from; None when the whole version must be taken."""
        idx = self._indexes.get(id(v.mutates))
        pos = self.position.get(v)
        if idx is None or pos is None:
            return None
        chain = self.chains[id(v.mutates)]
        blocked = _last_at_most(idx.others, pos)
        for other_kind, positions in idx.kinds.items():
            if other_kind != kind:
                blocked = max(blocked, _last_at_most(positions, pos))
        hit = _last_at_most(idx.sets.get(k, ()), pos)
        if kind == "int":
            hit = max(hit, _last_at_most(idx.appends.get(k, ()), pos))
        floor = max(hit, blocked)
        extra = EMPTY
        i = bisect.bisect_right(idx.keyed, floor)
        while i < len(idx.keyed) and idx.keyed[i] <= pos:
            extra = extra | self.src(chain[idx.keyed[i]].args[1])
            i += 1
        if hit > blocked:
            m = chain[hit]
            answer = self.mctl(m) | self.src(m.args[-1])
            if len(m.args) == 3:
                answer = answer | self.src(m.args[1])
            return extra, answer, None
        if blocked >= 0:
            m = chain[blocked]
            if m.fn is setattr and len(m.args) == 3:   # attribute writes leave elements alone
                return extra, None, m.args[0]
            return None if blocked == pos else (extra, None, m)
        return extra, None, chain[0].args[0]

    def attribute(self, version, name) -> frozenset:
        """Sources of ``getattr(version, name)``: the last ``setattr`` of that name, walking
        back past other attributes' writes (and past item writes)."""
        if type(name) is not str:
            return self.src(version)
        extra, v = EMPTY, version
        for _ in range(_MAX_STEPS):
            if type(v) is PrimitiveCall and v.mutates is not None and len(v.args) == 3 \
                    and (v.fn is setattr or v.fn in _SETTERS):
                if v.fn is setattr and v.args[1].value == name:
                    return extra | self.mctl(v) | self.src(v.args[2])
                extra = extra | (self.src(v.args[1]) if v.fn is setattr else EMPTY)
                v = v.args[0]
                continue
            if type(v) is Phi:
                extra, v = extra | self.gate(v), v.source
                continue
            if type(v) is Argument and isinstance(v.source, Node):
                v = v.source
                continue
            return extra | self.src(v)
        return extra | self.src(v)

    # -- lengths as dependences ------------------------------------------------------------
    def length_sources(self, node, depth: int = 0) -> frozenset | None:
        """Sources of ``len(node)`` (or of when iterating ``node`` stops)."""
        if depth > 50:
            return self.src(node)
        t = type(node)
        if t is PrimitiveCall and node.mutates is not None:
            idx = self._indexes.get(id(node.mutates))
            pos = self.position.get(node)
            if idx is not None and pos is not None and pos < len(idx.len_src):
                found = idx.len_src[pos]
                return self.src(node) if found is None else found
            return self.src(node)
        if t is PrimitiveCall:
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
