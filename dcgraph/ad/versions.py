"""Container states at the time a node was recorded.

Tapes record values by reference, so a container node's ``value`` is the container's *final*
state. A rule that needs a version's contents (``b * w`` read ``b`` before ``b[0] = 5``) or a
list's length at the time (``lst[-1]`` before ``lst.append(v)``) asks ``Versions``: it keeps
each mutated container's chain of mutation nodes, derives list lengths backwards from the final
state, and rebuilds an earlier state by re-running the container's creation and the mutations
up to that time on a private copy. Arrays that share memory (an array and its views) share
one chain: a write through a view changes the base, and a view's earlier state is re-derived
from the rebuilt base. A state it cannot rebuild (the container came from a random draw, a
root argument, or an untraceable source) raises ``StaleValueError``.
"""
from __future__ import annotations

import bisect
import copy
import operator

import numpy as np

from ..tracer.aliasing import covers
from .effects import effect_of
from ..tracer.ops import mutated_argument, out_position, possibly_written
from ..tape import Argument, NestedCall, Phi, PrimitiveCall, Return

__all__ = ["Versions", "StaleValueError"]

_LATE = float("inf")


class StaleValueError(RuntimeError):
    """The state of a container at an earlier time is needed but cannot be rebuilt."""


def when(node) -> tuple:
    """Execution time of ``node``'s value: a NestedCall's value exists after its child ran."""
    key = node.order_key()
    return key + (_LATE,) if type(node) is NestedCall else key


def _mutated_target(node):
    """The argument node ``node`` mutated: by the primitive's table, a ufunc's ``out=``, or
    argument 0."""
    fn = node.fn
    k = mutated_argument(fn)
    if k is None and "out" in node.kwargs:
        return node.kwargs["out"]
    if k is None and type(fn) is np.ufunc and len(node.args) > fn.nin:
        return node.args[fn.nin]
    if k is None and len(node.args) > 2:
        k = out_position(fn)             # np.dot(a, b, out)
        if k is not None and k >= len(node.args):
            k = None
    return node.args[0 if k is None else k]


_APPEND_LIKE = {list.append: 1, list.insert: 1, list.pop: -1, list.remove: -1,
                list.sort: 0, list.reverse: 0}


class Versions:
    """Mutation chains of one run (built by walking the whole run once)."""

    def __init__(self, root):
        chains: dict = {}
        for n in root.walk():
            if type(n) is PrimitiveCall and n.mutates is not None:
                chains.setdefault(memory_key(n.mutates), []).append(n)
        self.chains = chains
        self.root = root
        self._first: dict | None = None     # id(container) -> the first node holding it
        self._whens: dict = {}
        self._lengths: dict = {}
        self._states: dict = {}

    # -- queries -------------------------------------------------------------------------
    def _position(self, node, chain) -> int:
        """How many mutations of the container ran no later than ``node``."""
        whens = self._whens.get(id(chain))
        if whens is None:
            whens = self._whens[id(chain)] = [when(m) for m in chain]
        return bisect.bisect_right(whens, when(node))

    def stale(self, node) -> bool:
        """Was ``node``'s container (or memory it shares) mutated after ``node``?"""
        chain = self.chains.get(memory_key(node.value))
        if chain is None or chain[-1] is node:
            return False
        return self._position(node, chain) < len(chain)

    def value_at(self, node):
        """The state of ``node``'s value when ``node`` was recorded (its value if unchanged)."""
        v = node.value
        if not isinstance(v, _MUTABLE):
            return v
        chain = self.chains.get(memory_key(v))
        if chain is None or chain[-1] is node:
            return v
        k = self._position(node, chain)
        if k == len(chain):
            return v
        key = (id(chain), k)
        state = self._states.get(key)
        if state is None:
            state = self._rebuild(chain, k, node)
            self._states[key] = state
        return self._alias(node, state, chain)

    def length_at(self, node) -> int:
        """``len`` of a list/tuple/dict node's value when ``node`` was recorded."""
        v = node.value
        chain = self.chains.get(id(v))
        if chain is None or chain[-1] is node:
            return len(v)
        k = self._position(node, chain)
        if k == len(chain):
            return len(v)
        lengths = self._lengths
        # lengths[m] = length after mutation m; walk back from the newest known one
        i = len(chain) - 1
        while i > k and chain[i - 1] in lengths:
            i -= 1
        n = lengths.get(chain[i], len(v) if i == len(chain) - 1 else None)
        while n is not None and i >= k:
            lengths[chain[i]] = n
            d = self._delta(chain[i])
            n = None if d is None else n - d
            i -= 1
        if n is None:
            n = len(self.value_at(node))
        return n

    def size(self, node) -> int:
        v = node.value
        return self.length_at(node) if type(v) in (list, dict) else len(v)

    # -- internals -----------------------------------------------------------------------
    def _delta(self, m) -> int | None:
        """Change in length made by mutation ``m`` (None when not derivable backwards)."""
        fn = m.fn
        try:
            d = _APPEND_LIKE.get(fn)
        except TypeError:
            return None
        if d is not None:
            return d
        if fn is list.extend or fn is operator.iadd:
            return self.size(m.args[1]) if len(m.args) > 1 else None
        if fn is operator.setitem and type(m.args[1].value) is int:
            return 0
        if fn is operator.delitem and type(m.args[1].value) is int:
            return -1
        return None

    def _rebuild(self, chain, k: int, node):
        """Re-run the memory's creation and its first ``k`` mutations on a private copy;
        returns the private copy of the root container (views are re-derived from it)."""
        origin = self._root_node(_mutated_target(chain[0]))
        state = _copy(self._origin_value(origin, node))
        for m in chain[:k]:
            if m.fn is possibly_written:
                raise StaleValueError(
                    f"dcgraph.ad: the array read at {node.loc} was passed before to "
                    f"{getattr(m.args[1], 'fn_name', '?')} at {m.loc}, whose effect is unknown:"
                    f" its state then cannot be rebuilt")
            target = _mutated_target(m)
            args = [self._alias(a, state, chain) if a is target else self.value_at(a)
                    for a in m.args]
            kwargs = {name: self._alias(a, state, chain) if a is target else self.value_at(a)
                      for name, a in m.kwargs.items()}
            m.fn(*args, **kwargs)
        return state

    def _origin_value(self, origin, node):
        """Re-run the (non-random) call that created the root container ``origin``."""
        target = origin.value
        for _ in range(10000):
            origin = _unwrap(origin)
            if type(origin) is not PrimitiveCall or _is_random(origin.fn) or effect_of(origin):
                break                    # never run user code (or effects) in the backward pass
            args = [self.value_at(a) for a in origin.args]
            kwargs = {name: self.value_at(a) for name, a in origin.kwargs.items()}
            fresh = origin.fn(*args, **kwargs)
            if fresh is not target and not (isinstance(fresh, np.ndarray)
                                            and np.shares_memory(fresh, target)):
                return fresh
            alias = [a for a in origin.args if a.value is target]
            if alias:
                origin = alias[0]
                continue
            first = self._first_holder(target)     # read back from where it was stored:
            if first is None or first is origin:   # go to where it was made
                break
            origin = first
        loc = node.loc
        raise StaleValueError(
            f"dcgraph.ad: the container read at {loc} was mutated later, and its earlier state "
            f"cannot be rebuilt (it comes from {origin!r}"
            f"{' at ' + repr(origin.loc) if origin.loc is not None else ''}); "
            f"copy it before mutating it (e.g. x = x.copy())")

    def _first_holder(self, value):
        """The first node of the run that held ``value`` (its creation, when it was made in
        the run: ``self.adj = {}`` read back later through ``getattr``)."""
        if self._first is None:
            first: dict = {}
            for n in self.root.walk():
                v = getattr(n, "value", None)
                if type(v) in (list, dict) and id(v) not in first:
                    first[id(v)] = n
            self._first = first
        return self._first.get(id(value))

    def _root_node(self, d):
        """The node whose value is the root container ``d``'s value lives in."""
        key = memory_key(d.value)
        for _ in range(10000):
            v = d.value
            if not (type(v) is np.ndarray and v.base is not None) or _whole(v):
                if type(d) is PrimitiveCall and d.mutates is not None:
                    d = _mutated_target(d)
                    continue
                return d
            d = self._producer(d, key)
        return d

    def _producer(self, d, key):
        """Step from a view's node to the node of the array it views (same memory)."""
        d = _unwrap(d)
        if type(d) is PrimitiveCall and d.mutates is not None:
            return _mutated_target(d)
        if type(d) is PrimitiveCall:
            for a in d.args:
                if isinstance(a.value, np.ndarray) and memory_key(a.value) == key:
                    return a
        raise StaleValueError(f"dcgraph.ad: cannot tell which array the view at {d.loc} views")

    def _alias(self, d, state, chain):
        """``d``'s value as a part (itself or a view) of the private root ``state``."""
        v = d.value
        if v is state or not isinstance(v, np.ndarray) or v.base is None or _whole(v):
            if isinstance(v, np.ndarray) and np.shape(state) != v.shape:
                return state.reshape(v.shape)
            if isinstance(v, np.ndarray) or type(v) is type(state):
                return state
            return v
        key = memory_key(v)
        d = _unwrap(d)
        while type(d) is PrimitiveCall and d.mutates is not None and d.mutates is v:
            d = _unwrap(_mutated_target(d))
        if type(d) is not PrimitiveCall:
            raise StaleValueError(f"dcgraph.ad: cannot rebuild the view at {d.loc}")
        args = [self._alias(a, state, chain) if isinstance(a.value, np.ndarray)
                and memory_key(a.value) == key else self.value_at(a) for a in d.args]
        kwargs = {name: self.value_at(a) for name, a in d.kwargs.items()}
        if effect_of(d):                 # never run user code (or effects) in the backward pass
            raise StaleValueError(f"dcgraph.ad: cannot rebuild the view at {d.loc}: "
                                  f"{effect_of(d)}")
        return d.fn(*args, **kwargs)

_MUTABLE = (np.ndarray, list, dict)


def _root_array(v):
    while isinstance(v, np.ndarray) and isinstance(v.base, np.ndarray):
        v = v.base
    return v


def _whole(v) -> bool:
    """Is the view ``v`` all of its root's memory in C order (a fresh ``linspace``)?"""
    return covers(v, _root_array(v))


def memory_key(v) -> int:
    """Containers that share memory (an array and its views) share a key."""
    if type(v) is np.ndarray:
        return id(_root_array(v))
    return id(v)


def _unwrap(d):
    """Skip nodes that only pass a value along (phis, nested calls, bound arguments)."""
    for _ in range(10000):
        t = type(d)
        if t is Phi:
            d = d.source
        elif t is NestedCall and d.child is not None and type(d.child.returned) is Return \
                and d.child.returned.inputs and d.child.returned.inputs[0].value is d.value:
            d = d.child.returned.inputs[0]
        elif t is Argument and d.source is not None and not isinstance(d.source, (tuple, dict)):
            d = d.source
        else:
            return d
    return d


def _is_random(fn) -> bool:
    module = getattr(fn, "__module__", None) or ""
    owner = getattr(fn, "__objclass__", None) or type(getattr(fn, "__self__", None))
    return (module.startswith(("random", "numpy.random"))
            or owner in (np.random.Generator, np.random.RandomState)
            or getattr(owner, "__module__", "").startswith("numpy.random"))


def _copy(value):
    t = type(value)
    if t is np.ndarray:
        return value.copy()
    if t is list:
        return list(value)
    if t is dict:
        return dict(value)
    return copy.copy(value)
