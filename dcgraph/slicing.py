"""One step of a backward data-flow slice (``Tape.slice`` is the closure of ``dependencies``).

Inputs are followed as recorded, with three refinements: an ``Argument`` depends on the caller's
nodes bound to it; a ``NestedCall`` on its child's returned node (arguments are reached through
the child's ``Argument`` sources); and a read ``c[k]`` / ``c.k`` of a container version written
with constant keys depends on the value written to key ``k`` only, skipping writes to other keys.
"""
from __future__ import annotations

import operator

from .tape import Argument, NestedCall, Node, PrimitiveCall, Raise

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
    if isinstance(n, PrimitiveCall) and _is_read_of_other_key(n):
        container, key = n.args
        while _is_read_of_other_key(n, container):
            container = container.args[0]   # the version before the unrelated write
        yield container
        yield from n.inputs[1:]
        return
    yield from n.inputs


_READ_WRITE_PAIRS = {operator.getitem: operator.setitem, getattr: setattr}


def _exact_write(n: Node) -> Node | None:
    """For a read ``c[k]``/``c.k``: the write of constant key ``k`` it reads, found through
    writes of other constant keys; None when there is no such write."""
    if not isinstance(n, PrimitiveCall) or isinstance(n, NestedCall):
        return None
    write = _READ_WRITE_PAIRS.get(n.fn) if len(n.args) == 2 else None
    if write is None or type(n.args[1].value) not in (int, str):
        return None
    c = n.args[0]
    while isinstance(c, PrimitiveCall) and c.fn is write and len(c.args) == 3 \
            and type(c.args[1].value) in (int, str):
        if c.args[1].value == n.args[1].value:
            return c
        c = c.args[0]
    return None


def _is_read_of_other_key(n: PrimitiveCall, container: Node | None = None) -> bool:
    """Is ``n`` a read ``c[k]`` (or ``c.k``) of a version written by ``c[k2] = v`` (``c.k2 = v``)
    with constant k != k2? Such a write is not a dependency of the read."""
    write = _READ_WRITE_PAIRS.get(n.fn) if len(n.args) == 2 else None
    if write is None:
        return False
    c = n.args[0] if container is None else container
    k = n.args[1]
    if not (isinstance(c, PrimitiveCall) and c.fn is write and len(c.args) == 3):
        return False
    k1, k2 = c.args[1].value, k.value
    return type(k1) in (int, str) and type(k2) in (int, str) and k1 != k2
