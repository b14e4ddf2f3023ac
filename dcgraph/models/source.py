"""Finding the source of a ``@model`` function, wherever it was defined.

``function_source(fn, source=None) -> (lines, first_line)`` tries, in order:

1. ``source``: text given by the caller (``model(fn, source=...)``, for ``exec``-defined models);
2. ``inspect.getsourcelines`` (files, and ``linecache`` entries with a module, as IPython cells);
3. ``linecache.getlines(co_filename)`` (sources registered in ``linecache`` under the code's file
   name, as IPython, Jupyter and the 3.13 REPL do);
4. the ``readline`` history of the interactive interpreter (``<stdin>``).

A text found by 1, 3 or 4 is compiled (whole, as it was) and the ``def`` is taken where a code
object reproduces ``fn``'s bytecode, names and constants, so a stale or different text is never
used silently. When nothing works the error names the function, its file and line, and the
ways out.
"""
from __future__ import annotations

import __future__
import functools
import inspect
import linecache
import operator
import sys
import types

from .params import ModelError

__all__ = ["function_source"]

#: the compiler flags of every ``from __future__`` feature (kept when recompiling a text)
_FUTURE_FLAGS = functools.reduce(operator.or_, (getattr(__future__, name).compiler_flag
                                                for name in __future__.all_feature_names), 0)


def function_source(fn: types.FunctionType, source: str | None = None):
    """``(lines, first_line)`` of ``fn``'s ``def`` (decorators included); see the module docstring."""
    code = fn.__code__
    if source is not None:
        found = _from_text(fn, source.splitlines(True))
        if found is None:
            raise ModelError(f"@model: the source given for {fn.__qualname__} has no def "
                             f"{fn.__name__!r} that compiles to that function's code")
        return found
    try:
        return inspect.getsourcelines(fn)
    except (OSError, TypeError):
        pass
    found = _from_text(fn, linecache.getlines(code.co_filename, fn.__globals__)) or \
        _from_history(fn)
    if found is not None:
        return found
    raise ModelError(
        f"@model: the source of {fn.__qualname__} (defined at {code.co_filename}:"
        f"{code.co_firstlineno}) is not available: define the model in a file, register its "
        f"text with linecache under the name passed to compile(), or give it as "
        f"model({fn.__name__}, source=text)")


def _from_text(fn, lines: list):
    """The ``def`` of ``fn`` in the text ``lines`` compiled whole (as ``exec`` or a notebook
    cell did: the compiler's choices depend on the whole module), or None."""
    code = fn.__code__
    if not lines:
        return None
    try:
        module = compile("".join(lines), code.co_filename, "exec",
                         flags=code.co_flags & _FUTURE_FLAGS, dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    for c in _code_objects(module):
        if _same(c, code):
            block = inspect.getblock(lines[c.co_firstlineno - 1:])
            return list(block), code.co_firstlineno     # the code's own line numbers
    return None


def _from_history(fn):
    """The ``def`` of ``fn`` typed at the interactive prompt (``<stdin>``): the latest block of
    the readline history, compiled alone as the prompt compiled it, that reproduces ``fn``."""
    code = fn.__code__
    if code.co_filename != "<stdin>" or "readline" not in sys.modules:
        return None
    readline = sys.modules["readline"]
    lines = [(readline.get_history_item(i) or "") + "\n"
             for i in range(1, readline.get_current_history_length() + 1)]
    for start in reversed(range(len(lines))):
        text = lines[start].lstrip()
        if not (text.startswith("@") or text.startswith(f"def {fn.__name__}(")):
            continue
        try:
            block = inspect.getblock(lines[start:])
        except (SyntaxError, IndentationError):
            continue
        found = _from_text(fn, list(block))
        if found is not None:
            return found[0], code.co_firstlineno
    return None


def _same(c, code) -> bool:
    """Same bytecode, names and constants (line numbers aside)."""
    return c.co_name == code.co_name and _signature(c) == _signature(code)


def _signature(c):
    consts = tuple(_signature(k) if isinstance(k, types.CodeType) else (type(k), k)
                   for k in c.co_consts)
    return c.co_code, c.co_names, c.co_varnames, c.co_freevars, consts


def _code_objects(code):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield const
            yield from _code_objects(const)
