"""numpy arrays that share memory: writes through one object seen by reads of another.

Versions (``replay.Replay.versions``) are per object, but a view and its base share memory: a
write through ``v = a[1:]`` changes ``a``, and a write to ``a`` changes ``v``. This keeps, per
owning array (the base), the writes made to its memory, and when a node holding that memory is
used after writes it has not seen, it records a refreshed version:

- the base after writes through views: ``write_through_view(base, view_write, positions)``,
- a view after writes to its memory: ``view_of(base_version, positions)``,

so the read depends on the write (and the backward pass sees a functional update). Positions
come from strides (``ops.view_positions``); where they cannot (a base that is not
C-contiguous) they are recorded as None: the dependency is still there, and the backward
pass refuses to pull an adjoint through it instead of guessing.
The work is lazy: nothing is done for arrays whose memory was never written.

Two more ways memory is written unseen: ``a.flat[k] = v`` (recorded as
``flat_setitem(a, k, v)``, a write of ``a``: ``flat_write_target``), and a primitive of
unknown effect that was handed an array (``Context.may_write``): each array argument gets a
``possibly_written(array, call)`` version (``possible_writes``), so later reads depend on the
call, and a gradient through it is checked or refused.
"""
from __future__ import annotations

import operator

import numpy as np

from . import ops
from ..tape import Constant, PrimitiveCall

__all__ = ["ArrayAliasing", "flat_write_target", "possible_writes", "covers"]

ndarray = np.ndarray


def _owner(a):
    base = a.base
    return base if type(base) is ndarray else a


def covers(v, owner) -> bool:
    """Is ``v`` (a view of ``owner``) all of owner's memory, C-ordered from its start? (A
    fresh ``linspace`` or ``reshape`` result is such a view of a buffer no node holds.)"""
    return (v.size == owner.size and v.itemsize == owner.itemsize and v.flags.c_contiguous
            and owner.flags.c_contiguous and v.__array_interface__["data"][0]
            == owner.__array_interface__["data"][0])


class ArrayAliasing:
    def __init__(self):
        self.serial = 0
        self.writes: dict = {}      # id(owner) -> [(serial, write node, container written)]
        self.asof: dict = {}        # id(array) -> serial of its memory its latest node has seen
        self.owner_nodes: dict = {}  # id(owner) -> a node holding the owner (or its whole)
        self.whole: dict = {}       # id(owner) -> the array covering it that nodes hold

    def active(self) -> bool:
        return bool(self.writes)

    def _holds_whole(self, v, owner) -> bool:
        """Does ``v`` stand for ``owner`` (is it, or the first array seen covering it)?"""
        if v is owner:
            return True
        w = self.whole.get(id(owner))
        if w is None and covers(v, owner):
            self.whole[id(owner)] = w = v
        return w is v

    def noted(self, node) -> None:
        """A node holding an array was recorded (only needed once memory has been written)."""
        v = node.value
        owner = _owner(v)
        log = self.writes.get(id(owner))
        self.asof[id(v)] = log[-1][0] if log else 0
        if self._holds_whole(v, owner):
            self.owner_nodes[id(owner)] = node

    def written(self, node, container) -> None:
        """``node`` mutated array ``container`` in place."""
        owner = _owner(container)
        self.serial += 1
        self.writes.setdefault(id(owner), []).append((self.serial, node, container))
        self.asof[id(container)] = self.serial
        if self._holds_whole(container, owner):
            self.owner_nodes[id(owner)] = node

    def refresh(self, node, frame):
        """``node`` (holding an array) as of the latest write to its memory, recording the
        refreshed version through ``frame`` when writes happened since it was current."""
        v = node.value
        owner = _owner(v)
        log = self.writes.get(id(owner))
        if not log or self.asof.get(id(v), 0) >= log[-1][0]:
            return node
        whole = self._holds_whole(v, owner)
        base = self._owner_version(owner, frame, log, node if whole else None)
        if base is None:
            return node       # no node holds the base: nothing recorded to depend on
        if whole:
            return base
        positions = ops.view_positions(v, self.whole.get(id(owner), owner))
        fresh = frame.derived(ops.view_of, (base, frame.r.literal_array(positions)), v)
        self.asof[id(v)] = log[-1][0]
        frame.r.versions[id(v)] = fresh
        return fresh

    def _owner_version(self, owner, frame, log, holder):
        """A node for ``owner`` (or the array covering it) after every write in ``log``
        (``holder``: a node known to hold it, used when none was noted before its memory was
        first written)."""
        node = self.owner_nodes.get(id(owner), holder)
        if node is None:
            return None
        ref = self.whole.get(id(owner), owner)
        seen = self.asof.get(id(ref), 0)
        for serial, write, container in log:
            if serial <= seen or container is ref:
                continue
            positions = ops.view_positions(container, ref)
            node = frame.derived(ops.write_through_view,
                                 (node, write, frame.r.literal_array(positions)), ref)
        self.owner_nodes[id(owner)] = node
        self.asof[id(ref)] = log[-1][0]
        frame.r.versions[id(ref)] = node
        return node


def flat_write_target(frame, node, flat):
    """Record ``setitem(array.flat, k, v)`` as ``flat_setitem(array, k, v)``: the node holding
    the array it writes (None when no node holds it)."""
    base = flat.value.base
    holder = frame.r.versions.get(id(base))
    if holder is None or holder.value is not base:
        holder = flat.args[0] if type(flat) is PrimitiveCall and flat.args \
            and flat.args[0].value is base else None
    if holder is None or node.fn is not operator.setitem:
        return None
    node.fn, node.args = ops.flat_setitem, (holder,) + tuple(node.args[1:])
    node.inputs = node.args
    return holder


def possible_writes(frame, node, i: int) -> None:
    """``node`` called a primitive of unknown effect: each array argument gets a
    ``possibly_written`` version after it (the latest version of that array)."""
    for a in node.args + tuple(node.kwargs.values()):
        if type(a.value) is ndarray and not (type(a) is Constant and a.tape is None):
            written = PrimitiveCall(ops.possibly_written, (a, node), None, a.value, node.loc)
            frame.add(written)
            frame.mutation(written, a)
