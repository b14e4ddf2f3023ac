"""VJP rules for iteration and sequence conversion.

A ``for`` loop's items are ``next_item(iterator, step)`` calls: the step-th item's adjoint is
entry ``step`` of the iterator's Sparse adjoint, which ``iter`` hands to the iterable and
``zip``/``enumerate``/``reversed``/dict views map back to their own arguments. ``list``,
``tuple``, ``sorted`` and ``dict`` conversions map positions (or keys) likewise.
"""
from __future__ import annotations

import numpy as np

from ..tracer import ops
from .registry import defnode, defzero
from .values import Sparse


def _pass(sweep, target, g) -> None:
    if type(g) is Sparse and g and sweep.wants(target):
        sweep.add(target, g)


def generator_items(node) -> list | None:
    """The segments of a traced generator (``node`` made it) that yielded, in order: item s of
    the generator is segment s's yield. None when ``node`` did not make a traced generator."""
    meta = node._meta
    if not meta or "segments" not in meta:
        return None
    return [s for s in meta["segments"] if s.child is not None and s.child.returned is not None
            and s.child.returned.kind == "Yield" and not (s._meta and s._meta.get("taken"))]


def generator_rule(sweep, node, g):
    """A traced generator's call: item s's adjoint goes to the s-th yield not taken by a
    traced ``next``/``for`` (those pass adjoints directly), i.e. the s-th item a primitive
    consumer got. (Exact when one primitive consumes the rest of the generator, as in
    ``sum(g)``, ``list(g)``, ``zip(g, h)``.)"""
    items = generator_items(node)
    if type(g) is not Sparse or items is None:
        sweep.unsupported(node, g, "a generator used as a value")
        return
    for s, v in g.items():
        if type(s) is int and 0 <= s < len(items):
            sweep.add(items[s], v)


def item_count(sweep, node) -> int | None:
    """How many items iterating ``node``'s value gave at that time (None when unknown)."""
    v = node.value
    items = generator_items(node)
    if items is not None:
        return len(items)
    if isinstance(v, (list, tuple, dict)):
        return sweep.length(node)
    if isinstance(v, np.ndarray):
        return v.shape[0] if v.ndim else None
    name = type(v).__name__
    if name in ("dict_values", "dict_items", "reversed") and node.args:
        return item_count(sweep, node.args[0])
    if name == "zip" and node.args:
        counts = [item_count(sweep, a) for a in node.args]
        return None if None in counts else min(counts)
    if name == "enumerate" and node.args:
        return item_count(sweep, node.args[0])
    return None


def next_item_rule(sweep, node, g):
    """``next_item(iterator, step)``: entry ``step`` of the iterator's adjoint."""
    it, step = node.args
    sweep.add(it, Sparse({step.value: g}))


def iter_rule(sweep, node, g):
    """``iter(x)``: steps are x's positions (rows of an array, items of an iterator)."""
    x = node.args[0]
    v = x.value
    if isinstance(v, (dict, set, frozenset, str, range)):
        return        # keys, set members, characters and ints carry nothing
    if isinstance(v, (list, tuple, np.ndarray)) or type(v).__name__ in _ITERATOR_NODES:
        _pass(sweep, x, g)
        return
    sweep.unsupported(node, g, f"iteration over a {type(v).__name__}")


# iterator objects whose producing node has a rule mapping steps back (or that pass through)
_ITERATOR_NODES = frozenset({"zip", "enumerate", "reversed", "dict_values", "dict_items", "generator",
                             "list_iterator", "tuple_iterator", "list_reverseiterator"})


def zip_rule(sweep, node, g):
    """``zip(a, b, ...)``: item s is the tuple (a[s], b[s], ...)."""
    if type(g) is not Sparse:
        return
    for j, a in enumerate(node.args):
        part = Sparse({s: v[j] for s, v in g.items() if type(v) is Sparse and j in v})
        _pass(sweep, a, part)


def enumerate_rule(sweep, node, g):
    """``enumerate(x, start=0)``: item s is (start + s, x[s])."""
    if type(g) is not Sparse:
        return
    part = Sparse({s: v[1] for s, v in g.items() if type(v) is Sparse and 1 in v})
    _pass(sweep, node.args[0], part)


def reversed_rule(sweep, node, g):
    """``reversed(x)``: item s is x[n - 1 - s]."""
    if type(g) is not Sparse:
        return
    x = node.args[0]
    n = sweep.length(x)
    _pass(sweep, x, Sparse({n - 1 - s: v for s, v in g.items() if type(s) is int}))


def sequence_rule(sweep, node, g):
    """``list(x)`` / ``tuple(x)``: position s is x's s-th item."""
    if node.args:
        _pass(sweep, node.args[0], g)


def sorted_rule(sweep, node, g):
    """``sorted(x, key=None, reverse=False)``: position j is x[perm[j]]."""
    if type(g) is not Sparse:
        return
    x = node.args[0]
    values = list(sweep.value(x))
    keyfn = node.kwargs["key"].value if "key" in node.kwargs else None
    keys = values if keyfn is None else [keyfn(v) for v in values]
    rev = bool(node.kwargs["reverse"].value) if "reverse" in node.kwargs else False
    perm = sorted(range(len(keys)), key=keys.__getitem__, reverse=rev)
    _pass(sweep, x, Sparse({perm[j]: v for j, v in g.items() if type(j) is int}))


def dict_rule(sweep, node, g):
    """``dict(mapping, **kwargs)``: keyword entries to their nodes, the rest to ``mapping``."""
    if type(g) is not Sparse:
        return
    rest = Sparse()
    for key, v in g.items():
        if key in node.kwargs:
            sweep.add(node.kwargs[key], v)
        else:
            rest[key] = v
    if node.args and rest:
        if isinstance(node.args[0].value, dict):
            _pass(sweep, node.args[0], rest)
        else:
            sweep.unsupported(node, g, "dict() from a sequence of pairs")


def dict_values_rule(sweep, node, g):
    """``d.values()``: item s is the value under the s-th key."""
    if type(g) is not Sparse:
        return
    d = node.args[0]
    keys = list(sweep.value(d))
    _pass(sweep, d, Sparse({keys[s]: v for s, v in g.items() if type(s) is int}))


def dict_items_rule(sweep, node, g):
    """``d.items()``: item s is (key_s, d[key_s])."""
    if type(g) is not Sparse:
        return
    d = node.args[0]
    keys = list(sweep.value(d))
    _pass(sweep, d, Sparse({keys[s]: v[1] for s, v in g.items()
                            if type(s) is int and type(v) is Sparse and 1 in v}))


def dict_get_rule(sweep, node, g):
    """``d.get(k, default=None)``: d[k] when k is present, else the default."""
    d, k = node.args[0], node.args[1]
    if len(node.args) < 3 or node.value is not node.args[2].value or k.value in sweep.value(d):
        sweep.add(d, Sparse({k.value: g}))   # read from d (a default is checked last)
    elif len(node.args) > 2:
        sweep.add(node.args[2], g)


def copy_rule(sweep, node, g):
    """``x.copy()``: the copy's adjoint is x's."""
    sweep.add(node.args[0], g)


defnode(ops.next_item, next_item_rule)
defnode(iter, iter_rule)
defnode(zip, zip_rule)
defnode(enumerate, enumerate_rule)
defnode(reversed, reversed_rule)
defnode(list, sequence_rule)
defnode(tuple, sequence_rule)
defnode(sorted, sorted_rule)
defnode(dict, dict_rule)
defnode(Sparse, dict_rule)           # an adjoint built in a traced gradient program
defnode(dict.values, dict_values_rule)
defnode(dict.items, dict_items_rule)
defnode(dict.get, dict_get_rule)
defnode(dict.__getitem__, dict_get_rule)
defnode(dict.copy, copy_rule)
defnode(list.copy, copy_rule)
defzero(dict.keys)
defzero(list.index)
defzero(list.count)
defzero(tuple.index)
defzero(tuple.count)
