"""Errors raised by the BUGS front end and compiler, each naming its place.

``str(BUGSError(...))`` reads ``file:line:col: message``; when the source text is known it adds the
offending line and a caret under the column::

    model.txt:3:12: unknown distribution 'dnrom'
        y[i] ~ dnrom(mu, tau)
               ^

Missing parts are left out (no file: ``line:col: message``; no line: just the message).
"""
from __future__ import annotations

from typing import Optional

__all__ = ["BUGSError", "BUGSSyntaxError", "BUGSDataError", "BUGSModelError"]


class BUGSError(Exception):
    """A problem in a BUGS model, data or inits text, located by file, line and column (1-based)."""

    def __init__(self, message: str, line: Optional[int] = None, col: Optional[int] = None,
                 source: Optional[str] = None, filename: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col
        self.source = source
        self.filename = filename

    def location(self) -> str:
        """``file:line:col`` with the unknown parts left out ('' when nothing is known)."""
        parts = [p for p in (self.filename, self.line, self.col if self.line else None) if p]
        return ":".join(str(p) for p in parts)

    def source_line(self) -> Optional[str]:
        """The text of the offending line, or None when the source or line is unknown."""
        if self.source is None or not self.line:
            return None
        lines = self.source.splitlines()
        if 1 <= self.line <= len(lines):
            return lines[self.line - 1]
        return None

    def __str__(self) -> str:
        where = self.location()
        text = f"{where}: {self.message}" if where else self.message
        shown = self.source_line()
        if shown is not None:
            shown = shown.expandtabs(1)
            if len(shown) > 200:  # keep hostile one-line inputs readable
                start = max(0, (self.col or 1) - 100)
                shown = shown[start:start + 200]
                caret_col = (self.col or 1) - start
            else:
                caret_col = self.col or 0
            text += "\n    " + shown
            if caret_col:
                text += "\n    " + " " * (caret_col - 1) + "^"
        return text

    def __reduce__(self):
        return (type(self), (self.message, self.line, self.col, self.source, self.filename))


class BUGSSyntaxError(BUGSError):
    """The model text does not follow the BUGS grammar."""


class BUGSDataError(BUGSError):
    """A data or inits text (R list, JSON or dict) cannot be read."""


class BUGSModelError(BUGSError):
    """The model is grammatical but wrong (unknown name, bad arity, inconsistent sizes...)."""
