"""How views write values: one short line for lists and labels, a longer text for hovering.

Arrays show their shape, dtype and first entries; long text is cut with an ellipsis. Neither
function raises, whatever the value's ``__repr__`` does.
"""
from __future__ import annotations

import re

import numpy as np

from ..tape.printing import int_text, printable

__all__ = ["abbrev", "full_text", "array_head"]

ELLIPSIS = "…"
_ADDRESS = re.compile(r" (object )?at 0x[0-9a-fA-F]+")   # "<X object at 0x7f..>" -> "<X object>"


def _number(x) -> str:
    if isinstance(x, (bool, np.bool_)):
        return str(bool(x))
    if isinstance(x, (float, np.floating)):
        text = format(float(x), ".4g")      # 2.0 stays "2.0", not "2": a float, recognisably
        return text if any(c in text for c in ".einn") else text + ".0"
    if isinstance(x, (complex, np.complexfloating)):
        return format(complex(x), ".4g")
    return int_text(x) if isinstance(x, int) else str(x)


def array_head(a: np.ndarray, k: int = 3) -> str:
    """The first ``k`` entries of ``a`` (flattened) as ``[1, 2.5, 3, …]``."""
    flat = a.reshape(-1)[:k]
    items = [_number(x) if a.dtype.kind in "biufc" else abbrev(x, 12) for x in flat]
    more = [ELLIPSIS] if a.size > k else []
    return "[" + ", ".join(items + more) + "]"


def _repr(value) -> str:
    if type(value) is int:
        return int_text(value)
    try:
        text = repr(value)
    except Exception as exc:  # a user's __repr__ may fail; a view must not
        return f"<{type(value).__name__}: repr failed: {type(exc).__name__}>"
    return text if isinstance(text, str) else f"<{type(value).__name__}>"


def _cut(text: str, width: int) -> str:
    text = printable(text.replace("\n", " "))
    return text if len(text) <= width else text[: max(width - 1, 1)] + ELLIPSIS


def _summary(value) -> str | None:
    """``__dcgraph_abbrev__()`` (values reopened from JSON), looked up on the type: never
    through an instance's ``__getattr__``, which may do anything (a proxy sends requests)."""
    hook = getattr(type(value), "__dcgraph_abbrev__", None)
    if not callable(hook):
        return None
    try:
        text = hook(value)
    except Exception as exc:
        return f"<{type(value).__name__}: __dcgraph_abbrev__ failed: {type(exc).__name__}>"
    return text if isinstance(text, str) else None


def abbrev(value, width: int = 40) -> str:
    """One line of at most ``width`` characters: ``ndarray(5, 3) float64 [1, 1, 1, …]``,
    ``0.2381``, ``'some long te…'``, ``ValueError('bad')``, ``<random.Random object>``
    (memory addresses left out, so the same run prints the same; control characters
    escaped). Never raises."""
    try:
        return _abbrev(value, width)
    except Exception as exc:   # a hostile value (an exception's ``args`` property, ...)
        return _cut(f"<{type(value).__name__}: {type(exc).__name__}>", width)


def _abbrev(value, width: int) -> str:
    if isinstance(value, (bool, int, float, complex, np.number, np.bool_)):
        return _cut(_number(value), width)
    if isinstance(value, np.ndarray):
        shape = ", ".join(map(str, value.shape))
        return _cut(f"ndarray({shape}) {value.dtype} {array_head(value)}", width)
    summary = _summary(value)
    if summary is not None:
        return _cut(summary, width)
    if isinstance(value, BaseException):
        args = ", ".join(abbrev(a, 20) for a in value.args)
        return _cut(f"{type(value).__name__}({args})", width)
    if type(value).__name__ == "module":
        return _cut(f"<module {value.__name__}>", width)
    return _cut(_ADDRESS.sub(lambda m: " object" if m.group(1) else "", _repr(value)), width)


def full_text(value, limit: int = 4000) -> str:
    """The whole value as text for hovering (arrays in full up to 1000 entries), cut at
    ``limit`` characters."""
    if isinstance(value, np.ndarray):
        body = np.array2string(value, threshold=1000, precision=6)
        text = f"ndarray shape={value.shape} dtype={value.dtype}\n{body}"
    else:
        text = _repr(value)
    text = "\n".join(printable(line) for line in text.split("\n"))
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS
