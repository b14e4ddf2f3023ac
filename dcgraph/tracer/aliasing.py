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
"""
from __future__ import annotations

import numpy as np

from . import ops

__all__ = ["ArrayAliasing"]

ndarray = np.ndarray


def _owner(a):
    base = a.base
    return base if type(base) is ndarray else a


class ArrayAliasing:
    def __init__(self):
        self.serial = 0
        self.writes: dict = {}      # id(owner) -> [(serial, write node, container written)]
        self.asof: dict = {}        # id(array) -> serial of its memory its latest node has seen
        self.owner_nodes: dict = {}  # id(owner) -> a node holding the owner

    def active(self) -> bool:
        return bool(self.writes)

    def noted(self, node) -> None:
        """A node holding an array was recorded (only needed once memory has been written)."""
        v = node.value
        owner = _owner(v)
        log = self.writes.get(id(owner))
        self.asof[id(v)] = log[-1][0] if log else 0
        if owner is v:
            self.owner_nodes[id(v)] = node

    def written(self, node, container) -> None:
        """``node`` mutated array ``container`` in place."""
        owner = _owner(container)
        self.serial += 1
        self.writes.setdefault(id(owner), []).append((self.serial, node, container))
        self.asof[id(container)] = self.serial
        if owner is container:
            self.owner_nodes[id(owner)] = node

    def refresh(self, node, frame):
        """``node`` (holding an array) as of the latest write to its memory, recording the
        refreshed version through ``frame`` when writes happened since it was current."""
        v = node.value
        owner = _owner(v)
        log = self.writes.get(id(owner))
        if not log or self.asof.get(id(v), 0) >= log[-1][0]:
            return node
        base = self._owner_version(owner, frame, log, node if v is owner else None)
        if base is None:
            return node       # no node holds the base: nothing recorded to depend on
        if v is owner:
            return base
        positions = ops.view_positions(v, owner)
        fresh = frame.derived(ops.view_of, (base, frame.r.literal_array(positions)), v)
        self.asof[id(v)] = log[-1][0]
        frame.r.versions[id(v)] = fresh
        return fresh

    def _owner_version(self, owner, frame, log, holder):
        """A node for ``owner`` after every write in ``log`` (``holder``: a node known to hold
        the owner, used when none was noted before its memory was first written)."""
        node = self.owner_nodes.get(id(owner), holder)
        if node is None:
            return None
        seen = self.asof.get(id(owner), 0)
        for serial, write, container in log:
            if serial <= seen or container is owner:
                continue
            positions = ops.view_positions(container, owner)
            node = frame.derived(ops.write_through_view,
                                 (node, write, frame.r.literal_array(positions)), owner)
        self.owner_nodes[id(owner)] = node
        self.asof[id(owner)] = log[-1][0]
        frame.r.versions[id(owner)] = node
        return node
