"""One step of a backward data-flow slice (``Tape.slice`` is the closure of ``dependencies``).

Inputs are followed as recorded, with three refinements: an ``Argument`` depends on the caller's
nodes bound to it; a ``NestedCall`` on its child's returned node (arguments are reached through
the child's ``Argument`` sources); and a read ``c[k]`` / ``c.k`` of a container version written
with constant keys depends on the value written to key ``k`` only, skipping writes to other keys.
"""
from __future__ import annotations

import operator

from .nodes import Argument, NestedCall, Node, PrimitiveCall, Raise

__all__ = ["dependencies"]

_READ_WRITE_PAIRS = {operator.getitem: operator.setitem, getattr: setattr}


def dependencies(n: Node):
    """The nodes ``n`` directly depends on for slicing."""
    if isinstance(n, Argument):
        yield from n.source_nodes()
        return
    if isinstance(n, NestedCall) and n.child is not None and n.child.returned is not None:
        yield n.child.returned
        # arguments are reached through the child's Argument sources; the callable too:
        if n.fn_node is not None:
            yield n.fn_node
        if isinstance(n.child.returned, Raise):
            yield from n.inputs
        return
    hit = _exact_write(n)
    if hit is not None:
        yield hit.args[2]                 # the value written to the key read
        yield from n.inputs[1:]
        return
    if isinstance(n, PrimitiveCall) and not isinstance(n, NestedCall) and _reads_key(n):
        container = n.args[0]
        while _skips(n, container):
            container = container.args[0]   # the version before the unrelated write
        yield container
        yield from n.inputs[1:]
        return
    yield from n.inputs


def _reads_key(n: PrimitiveCall) -> bool:
    fn = n.fn      # compared by identity: a user's callable is never hashed
    return (fn is operator.getitem or fn is getattr) and len(n.args) == 2 and not n.kwargs


def _skips(read: PrimitiveCall, c) -> bool:
    """Is ``c`` a write of a key that provably names another element than ``read``'s?"""
    write = _READ_WRITE_PAIRS[read.fn]
    if not (isinstance(c, PrimitiveCall) and c.fn is write and len(c.args) == 3):
        return False
    return _distinct(read, c.args[1].value, read.args[1].value, c.value)


def _distinct(read, k1, k2, container) -> bool:
    """Do constant keys ``k1`` (written) and ``k2`` (read) name different elements?

    Item keys: different strings, or different integers on the same side of zero (``-1`` and
    ``2`` may be the same list element; any two different keys of a dict are distinct).
    Attribute names: different names, and the read is a plain instance attribute (not a
    property, descriptor or anything the type defines, which may read any attribute).
    """
    if type(k1) not in (int, str) or type(k2) not in (int, str) or k1 == k2:
        return False
    if read.fn is getattr:
        owner = type(container)
        return (type(k2) is str and not hasattr(owner, k2)
                and owner.__getattribute__ is object.__getattribute__)
    if isinstance(container, dict):
        return True
    if type(k1) is int and type(k2) is int:
        return (k1 < 0) == (k2 < 0)
    return type(k1) is str and type(k2) is str


def _exact_write(n: Node) -> Node | None:
    """For a read ``c[k]``/``c.k``: the write of constant key ``k`` it reads, found through
    writes of provably other keys; None when there is no such write."""
    if not isinstance(n, PrimitiveCall) or isinstance(n, NestedCall) or not _reads_key(n):
        return None
    k = n.args[1].value
    if type(k) not in (int, str):
        return None
    write = _READ_WRITE_PAIRS[n.fn]
    c = n.args[0]
    while isinstance(c, PrimitiveCall) and c.fn is write and len(c.args) == 3:
        if type(c.args[1].value) is type(k) and c.args[1].value == k:
            if n.fn is getattr and (hasattr(type(c.value), k)
                                    or type(c.value).__getattribute__ is not object.__getattribute__):
                return None           # a descriptor may return something else than was set
            return c
        if not _skips(n, c):
            return None
        c = c.args[0]
    return None
