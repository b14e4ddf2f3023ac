"""Stand-ins for the live objects of a tape reopened from JSON (``jsonio.from_json``).

A reopened node holds a ``SavedFunction`` for a callable that cannot be found among the
modules already imported, a ``SavedValue`` for a value stored as its ``repr``, and a
``SavedLocation`` carrying its file name and source line as text.
"""
from __future__ import annotations

import sys

from ..tape import Location

__all__ = ["SavedFunction", "SavedValue", "SavedLocation", "describe_function", "resolve_function"]


class SavedFunction:
    """A callable known by name only; calling it raises TypeError."""

    def __init__(self, name: str, qualname: str | None = None, module: str | None = None):
        self.__name__, self.__qualname__, self.__module__ = name, qualname or name, module

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.__qualname__} was reopened from JSON and cannot be called")

    def __repr__(self):
        where = f"{self.__module__}." if self.__module__ else ""
        return f"<saved function {where}{self.__qualname__}>"


class SavedValue:
    """A value kept as text: ``repr`` gives its repr, views show ``abbrev``."""

    def __init__(self, text: str, type_name: str, abbrev: str | None = None):
        self.text, self.type_name, self.abbrev = text, type_name, abbrev or text

    def __repr__(self):
        return self.text

    def __dcgraph_abbrev__(self) -> str:
        return self.abbrev

    def __eq__(self, other):
        return (isinstance(other, SavedValue) and other.text == self.text
                and other.type_name == self.type_name)

    def __hash__(self):
        return hash((self.text, self.type_name))


class SavedLocation(Location):
    """A location whose file name and source line are stored, not looked up."""

    __slots__ = ("_filename", "_source")

    def __init__(self, filename: str, line: int | None, offset: int | None, source: str):
        super().__init__(None, offset, line)
        self._filename, self._source = filename, source

    @property
    def filename(self) -> str:
        return self._filename

    @property
    def source(self) -> str:
        return self._source


def describe_function(fn) -> dict:
    """``{"name", "qualname", "module"}`` of a callable (module None when unknown)."""
    name = getattr(fn, "__name__", None)
    name = name if isinstance(name, str) else type(fn).__name__
    qualname = getattr(fn, "__qualname__", None)
    module = getattr(fn, "__module__", None)
    if not isinstance(module, str):
        owner = getattr(fn, "__objclass__", None) or type(getattr(fn, "__self__", None))
        module = getattr(owner, "__module__", None)
    return {"name": name, "qualname": qualname if isinstance(qualname, str) else name,
            "module": module if isinstance(module, str) else None}


def resolve_function(info: dict):
    """The live callable ``info`` names if its module is already imported (nothing is
    imported), else a ``SavedFunction``."""
    name, qualname, module = info.get("name", "?"), info.get("qualname"), info.get("module")
    obj = sys.modules.get(module) if module else None
    for part in (qualname or name).split(".") if obj is not None else ():
        if part == "<locals>":
            obj = None
            break
        obj = getattr(obj, part, None)
    if obj is not None and callable(obj) and getattr(obj, "__name__", None) == name:
        return obj
    return SavedFunction(name, qualname, module)
