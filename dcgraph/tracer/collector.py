"""Keep Python's cyclic garbage collector out of tape builds.

A build allocates one node object per recorded value and none of them forms a cycle that
needs the collector, yet each allocation counts towards its thresholds: with the collector
running, it takes half or more of the build time (more in a process with a large heap).
``collector_paused()`` disables it for the duration of a build and restores it afterwards.
Builds may overlap (threads, a build inside a build): the first to start records whether the
collector was enabled, the last to finish restores exactly that, so nothing changes for good
and nothing compounds. A collector the user disabled stays disabled.
"""
from __future__ import annotations

import gc
import threading
from contextlib import contextmanager

__all__ = ["collector_paused"]


class _Pauses:
    """How many builds are running, and whether the collector was on before the first."""

    __slots__ = ("lock", "running", "restore")

    def __init__(self):
        self.lock = threading.Lock()
        self.running = 0
        self.restore = False


_pauses = _Pauses()


@contextmanager
def collector_paused(pauses: _Pauses = _pauses):
    """Run the block with the cyclic collector disabled (see the module docstring)."""
    with pauses.lock:
        if pauses.running == 0:
            pauses.restore = gc.isenabled()
            gc.disable()
        pauses.running += 1
    try:
        yield
    finally:
        with pauses.lock:
            pauses.running -= 1
            if pauses.running == 0 and pauses.restore:
                gc.enable()
