"""``compile_path``: one recorded path of a function as a guarded straight-line function.

``compile_path(tape, args, kwargs, f=None, backward=None)`` checks the tape
(``check_supported``), writes the code (``forward.PathCode``, or the class ``backward``: a
``PathCode`` subclass adding a backward pass, such as ``dcgraph.ad.codegen.GradientCode``) and
returns a ``CompiledPath``: ``cp(args, kwargs)`` returns what the code returns (the value of
``f(*args, **kwargs)`` for the forward-only code) or raises ``GuardFailed`` when these
arguments take another path; nothing observable ran twice by then (see ``effects``).
"""
from __future__ import annotations

import heapq
import re

from .forward import PathCode
from .plan import NO_VALUE, plan
from .support import GuardFailed, check_supported, where
from .vectorise import vectorise
from ..tracer.summary import require_values

__all__ = ["compile_path", "CompiledPath"]

_VAR = re.compile(r"\b[vg]\d+\b")
_VALUE = re.compile(r"\bv\d+\b")


class CompiledPath:
    """One compiled path: call it as ``cp(args, kwargs)``. ``source``: the generated code;
    ``nodes[k]``: the node guard ``k`` stands for (``describe``)."""

    def __init__(self, source: str, namespace: dict, nodes: list, name: str = "compiled path"):
        self.source, self.nodes = source, nodes
        exec(compile(source, f"<dcgraph {name} {id(self):#x}>", "exec"), namespace)
        self._fn = namespace["compiled"]

    def __call__(self, args, kwargs):
        return self._fn(args, kwargs)

    def describe(self, failure: GuardFailed) -> str:
        """The guard a ``GuardFailed`` of this path came from."""
        k = failure.args[0] if failure.args else -1
        return where(self.nodes[k]) if 0 <= k < len(self.nodes) else "an iterator ran out early"


def compile_path(tape, args=(), kwargs=None, f=None, backward=None, runtime=None,
                 cls=CompiledPath, vectorised=True, **options):
    """Compile the path ``tape`` (a root tape of ``track``) recorded.

    ``args``/``kwargs``: the traced call (only their number and names are used); ``f``: the
    traced callable (default ``tape.fn``; pass it when it is a bound method); ``backward``: a
    ``PathCode`` subclass writing a backward pass, built as ``backward(tape, plan, lengths,
    runtime, **options)`` (None: forward only); ``runtime``: extra names the code may call;
    ``cls``: the ``CompiledPath`` subclass returned (built from source, namespace, nodes);
    ``vectorised``: write runs of isomorphic loop iterations as array code (``vectorise``).
    Raises ``NotCompilable`` (its message is the reason) for tapes outside the supported subset,
    ``SummaryTapeError`` for a tape recorded with ``values="summary"``.
    """
    require_values(tape, "compiled replay (compile_path)")
    lengths = check_supported(tape)
    kwargs = kwargs or {}
    where_from = plan(tape, tape.fn if f is None else f, len(args), tuple(kwargs))
    names = {"_GF": GuardFailed, "_NO": NO_VALUE, **(runtime or {})}
    gen = (backward or PathCode)(tape, where_from, lengths, names, **options)
    lines, namespace, nodes, big = gen.run()
    if vectorised:
        lines = vectorise(lines, namespace, nodes)
    lines = _free_arrays(lines, big) if big else _reuse_names(lines)
    source = ("def compiled(_a, _kw):\n    try:\n"
              + "".join(f"        {line}\n" for line in lines)
              + "    except StopIteration:           # an iterator ran out early\n"
              + "        raise _GF(-1) from None\n")
    return cls(source, namespace, nodes)


def _reuse_names(lines: list) -> list:
    """Give a value variable whose last use is past to the next value defined (straight-line
    code: lifetimes are intervals of lines): dead floats are freed at once and their memory
    reused, as in the plain loop, instead of all living to the end of the call."""
    first, last = {}, {}
    for i, line in enumerate(lines):
        for name in _VALUE.findall(line):
            first.setdefault(name, i)
            last[name] = i
    free, busy, rename = [], [], {}
    for name in sorted(first, key=first.get):
        start = first[name]
        while busy and busy[0][0] < start:
            free.append(heapq.heappop(busy)[1])
        slot = rename[name] = free.pop() if free else name
        heapq.heappush(busy, (last[name], slot))
    return [_VALUE.sub(lambda m: rename[m.group()], line) for line in lines]


def _free_arrays(lines: list, big: set) -> list:
    """Delete the variables ``big`` after the statement that uses them last: arrays kept to
    the end of a call make malloc hand their pages back and fault them in on every call."""
    if not big:
        return lines
    tops = [i for i, line in enumerate(lines) if line[0] != " "] + [len(lines)]
    last: dict = {}
    for top, end in zip(tops, tops[1:]):
        for name in _VAR.findall("\n".join(lines[top:end])):
            if name in big:
                last[name] = top
    after: dict = {}
    for name, top in last.items():
        after.setdefault(top, []).append(name)
    out = []
    for top, end in zip(tops, tops[1:]):
        out += lines[top:end] + ([f"del {', '.join(after[top])}"] if top in after else [])
    return out
