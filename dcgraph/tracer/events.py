"""The event log's marks (what a traced run logs besides values) and ``Missing``.

Instrumented code appends raw events to one flat list per run (module ``recorder``): an
``EntryMark`` and the argument values when a traced frame starts (each apart in listed code, else
one tuple: ``CodeInfo.args_apart``), a ``BlockMark`` when a marked block is entered (a handler's
mark is followed by the exception), the callable of each call (logged by the hook or by the site
itself, ``inline_calls``; nothing where it is the one the site expects, else a ``CallMark`` first),
and the values of probed instructions (see ``instrument.py311``). Traced generators add a
``MadeMark`` and the frame object when made, and a ``ResumeMark``, the frame object and the
arguments or the value sent in when started or resumed (module ``generators``). The replay (module
``replay``) reads the log back, and raises ``Missing`` where an expected event is absent.
"""
from __future__ import annotations

__all__ = ["BlockMark", "CALL_MARK", "CallMark", "EntryMark", "MadeMark", "ResumeMark",
           "MARK_TYPES", "Missing"]


class BlockMark:
    """Logged on entry to a marked block of an instrumented code object."""

    __slots__ = ("info", "block", "handler")

    def __init__(self, info, block: int, handler: bool):
        self.info, self.block, self.handler = info, block, handler

    def __repr__(self):
        return f"<mark {self.info.code.co_name} §{self.block}>"


class EntryMark:
    """Logged first by a traced frame; the next event is the tuple of its arguments."""

    __slots__ = ("info",)

    def __init__(self, info):
        self.info = info

    def __repr__(self):
        return f"<entry {self.info.code.co_qualname}>"


class ResumeMark:
    """Logged when a traced generator frame starts or resumes; the next event is the frame
    object (which generator), then the argument tuple (start) or the value sent in (resume)."""

    __slots__ = ("info",)

    def __init__(self, info):
        self.info = info

    def __repr__(self):
        return f"<resume {self.info.code.co_qualname}>"


class MadeMark:
    """Logged by a traced generator function's call (``starter``) after it made the
    generator; the next event is the generator's frame object, then the call's value."""

    __slots__ = ("info",)

    def __init__(self, info):
        self.info = info

    def __repr__(self):
        return f"<made {self.info.code.co_qualname}>"


class CallMark:
    """Logged by a call site that logs nothing when its callable is the one its code expects
    (``CodeInfo.expected``: the C callable its callee load gave when instrumented, while no
    substituting run is active): the callable is another one, or goes to the hook, and is
    logged next as at any site. One instance, ``CALL_MARK``."""

    __slots__ = ()

    def __repr__(self):
        return "<call mark>"


CALL_MARK = CallMark()

from .delegation import LandMark, RelayMark  # noqa: E402  (``yield from``'s marks)

MARK_TYPES = (BlockMark, EntryMark, ResumeMark, MadeMark, LandMark, RelayMark, CallMark)


class Missing(Exception):
    """Raised while reading a log: the event an instruction should have logged is absent, so
    the instruction raised."""
