"""Where a node was recorded (``Location``), and attribute reads that run no user code
(``plain_getattr``), for names shown by views and printouts."""
from __future__ import annotations

import linecache

__all__ = ["Location", "plain_getattr"]


class Location:
    """Where a node was recorded: code object, bytecode offset, source line."""

    __slots__ = ("code", "offset", "line")

    def __init__(self, code, offset: int | None, line: int | None):
        self.code, self.offset, self.line = code, offset, line

    @property
    def filename(self) -> str:
        return self.code.co_filename if self.code is not None else "?"

    @property
    def source(self) -> str:
        """The source line's text, stripped ('' when unavailable)."""
        if self.code is None or self.line is None:
            return ""
        return linecache.getline(self.code.co_filename, self.line).strip()

    def __repr__(self):
        return f"{self.filename}:{self.line}"


def plain_getattr(obj, name: str, default=None):
    """``getattr(obj, name, default)`` when looking it up runs none of the object's own code
    (no ``__getattr__``, no Python ``__getattribute__``: a proxy may send a request), else
    ``default``. For names shown by views and printouts."""
    t = type(obj)
    if hasattr(t, "__getattr__") or not isinstance(t.__getattribute__, _SLOT_WRAPPER):
        return default
    try:
        return getattr(obj, name, default)
    except Exception:
        return default


_SLOT_WRAPPER = type(object.__getattribute__)
