"""VJP rules for the mutating methods of ``list`` and ``dict`` (and ``ndarray.fill``).

Each rule receives the adjoint of the container's new version (a Sparse over positions or
keys; ``RESULT`` holds the adjoint of what the call returned, e.g. the item ``pop`` removed)
and splits it between the previous version and the values the call stored.
"""
from __future__ import annotations

import numpy as np

from .registry import definplace
from .rules_containers import _shifted, _without, seq_adjoint_to
from .values import RESULT, Sparse, dense_array


def _norm(i: int, n: int) -> int:
    return i + n if i < 0 else i


def append_inplace(sweep, node, g):
    """``c.append(v)``: v is at position len(previous)."""
    c, v = node.args
    if type(g) is not Sparse:
        return
    p = sweep.length(c)
    sweep.add(c, _without(g, p, RESULT))
    if p in g:
        sweep.add(v, g[p])


def extend_inplace(sweep, node, g):
    """``c.extend(it)``: it's items follow the previous items."""
    c, it = node.args
    if type(g) is not Sparse:
        return
    n = sweep.length(c)
    sweep.add(c, Sparse({k: a for k, a in g.items() if type(k) is int and k < n}))
    seq_adjoint_to(sweep, it, Sparse({k - n: a for k, a in g.items() if type(k) is int and k >= n}))


def insert_inplace(sweep, node, g):
    """``c.insert(i, v)``."""
    c, i, v = node.args
    if type(g) is not Sparse:
        return
    n = sweep.length(c)
    p = min(max(_norm(i.value, n), 0), n)
    sweep.add(c, _shifted(g, p + 1, -1, drop=(p,)))
    if p in g:
        sweep.add(v, g[p])


def pop_inplace(sweep, node, g):
    """``c.pop(i=-1)``: the popped item's adjoint (RESULT) goes back to position i."""
    c = node.args[0]
    if type(g) is not Sparse:
        return
    n = sweep.length(c)
    p = _norm(node.args[1].value if len(node.args) > 1 else -1, n)
    prev = _shifted(g, p, 1)
    if RESULT in g:
        prev[p] = g[RESULT]
    sweep.add(c, prev)


def remove_inplace(sweep, node, g):
    """``c.remove(x)``: removes the first item equal to x."""
    c, x = node.args
    if type(g) is not Sparse:
        return
    p = list(sweep.value(c)).index(x.value)
    sweep.add(c, _shifted(g, p, 1))


def clear_inplace(sweep, node, g):
    """``c.clear()``: nothing of the previous version survives."""


def reverse_inplace(sweep, node, g):
    """``c.reverse()``."""
    c = node.args[0]
    if type(g) is not Sparse:
        return
    n = sweep.length(c)
    sweep.add(c, Sparse({n - 1 - k: a for k, a in g.items() if type(k) is int}))


def sort_inplace(sweep, node, g):
    """``c.sort(key=None, reverse=False)``: position j holds previous item perm[j]."""
    c = node.args[0]
    if type(g) is not Sparse:
        return
    values = list(sweep.value(c))
    keyfn = node.kwargs["key"].value if "key" in node.kwargs else None
    keys = values if keyfn is None else [keyfn(v) for v in values]
    rev = bool(node.kwargs["reverse"].value) if "reverse" in node.kwargs else False
    perm = sorted(range(len(keys)), key=keys.__getitem__, reverse=rev)
    sweep.add(c, Sparse({perm[k]: a for k, a in g.items() if type(k) is int}))


def dict_pop_inplace(sweep, node, g):
    """``d.pop(k[, default])``."""
    d, k = node.args[0], node.args[1].value
    if type(g) is not Sparse:
        return
    prev = _without(g, RESULT, k)
    r = g.get(RESULT)
    if r is not None:
        if len(node.args) < 3 or node.result is not node.args[2].value or k in sweep.value(d):
            prev[k] = r                      # popped from d (a default is checked last)
        elif len(node.args) > 2:
            sweep.add(node.args[2], r)
    sweep.add(d, prev)


def dict_setdefault_inplace(sweep, node, g):
    """``d.setdefault(k, default=None)``: d[k] if present, else default is stored."""
    d, k = node.args[0], node.args[1].value
    if type(g) is not Sparse:
        return
    both = [a for a in (g.get(k), g.get(RESULT)) if a is not None]
    total = sum(both[1:], both[0]) if both else None
    prev = _without(g, RESULT, k)
    if k in sweep.value(d):
        if total is not None:
            prev[k] = total
    elif len(node.args) > 2 and total is not None:
        sweep.add(node.args[2], total)
    sweep.add(d, prev)


def dict_update_inplace(sweep, node, g):
    """``d.update(other, **kwargs)``: updated keys to their sources, the rest to d."""
    d = node.args[0]
    if type(g) is not Sparse:
        return
    other = node.args[1] if len(node.args) > 1 else None
    okeys = sweep.value(other) if other is not None else {}
    if not isinstance(okeys, dict):
        sweep.unsupported(node, g, "dict.update from a sequence of pairs")
        return
    prev, part = Sparse(), Sparse()
    for key, a in g.items():
        if key is RESULT:
            continue
        if key in node.kwargs:
            sweep.add(node.kwargs[key], a)
        elif key in okeys:
            part[key] = a
        else:
            prev[key] = a
    sweep.add(d, prev)
    if other is not None and part:
        seq_adjoint_to(sweep, other, part)


def dict_popitem_inplace(sweep, node, g):
    """``d.popitem()``: RESULT is the (key, value) pair of the last key."""
    d = node.args[0]
    if type(g) is not Sparse:
        return
    prev = _without(g, RESULT)
    r = g.get(RESULT)
    if type(r) is Sparse and 1 in r:
        prev[list(sweep.value(d))[-1]] = r[1]
    sweep.add(d, prev)


def fill_inplace(sweep, node, g):
    """``a.fill(v)``: every element is v."""
    v = node.args[1]
    sweep.add(v, dense_array(node.value.shape, g).sum()[()])


definplace(list.append, append_inplace)
definplace(list.extend, extend_inplace)
definplace(list.__iadd__, extend_inplace)
definplace(list.insert, insert_inplace)
definplace(list.pop, pop_inplace)
definplace(list.remove, remove_inplace)
definplace(list.clear, clear_inplace)
definplace(list.reverse, reverse_inplace)
definplace(list.sort, sort_inplace)
definplace(dict.pop, dict_pop_inplace)
definplace(dict.setdefault, dict_setdefault_inplace)
definplace(dict.update, dict_update_inplace)
definplace(dict.popitem, dict_popitem_inplace)
definplace(dict.clear, clear_inplace)
definplace(np.ndarray.fill, fill_inplace)
