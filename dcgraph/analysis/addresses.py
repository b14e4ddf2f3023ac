"""Hierarchical addresses of random choices, computed the same way from a tape and from live
frames.

An address is the root function's name, then for every call site from the root down to the
choice ``L<line>/<callee>``, then ``L<line>/<random function>`` of the choice itself:
``geom/L7/geom/L4/random``. A loop draws several times at the same site, so the ``k``-th repeat
(``k >= 1``) of an address in execution order gets ``#k``: ``hmm/L9/choice#3``. Names are code
names (``co_name``) for frames and ``__name__`` for the random callable, which is what both a
tape (``NestedCall`` child code, ``PrimitiveCall.fn``) and the frames of a running traced function
show, so ``conditional`` can find a choice again while the function runs.

``Tape.address`` is the tracer's own, uncounted, variant (it names the root by qualified name).
"""
from __future__ import annotations

from ..tape import Node, Tape

__all__ = ["callable_name", "Addresser", "site_of_node", "site_of_frames"]


def callable_name(fn) -> str:
    name = getattr(fn, "__name__", None)
    return name if isinstance(name, str) else type(fn).__name__


def _root_name(tape: Tape) -> str:
    if tape.code is not None:
        return tape.code.co_name
    fn = tape.fn
    return getattr(fn, "__name__", None) or tape.name


def site_of_node(node: Node) -> str:
    """The uncounted address of the random call ``node`` (a PrimitiveCall or NestedCall)."""
    parts = [_root_name(node.tape.root)]
    for site in Tape.path(node):
        code = site.child.code if site.child is not None else None
        parts += [f"L{site.line}", code.co_name if code is not None else site.fn_name]
    parts += [f"L{node.line}", callable_name(node.fn)]
    return "/".join(parts)


def site_of_frames(frames: list, fn) -> str:
    """The uncounted address of a call of ``fn`` made by ``frames[-1]``; ``frames`` run from the
    traced root's frame down to the calling frame."""
    parts = [frames[0].f_code.co_name]
    for caller, callee in zip(frames, frames[1:]):
        parts += [f"L{caller.f_lineno}", callee.f_code.co_name]
    parts += [f"L{frames[-1].f_lineno}", callable_name(fn)]
    return "/".join(parts)


class Addresser:
    """Numbers repeats of an address in the order they are met: ``a``, ``a#1``, ``a#2``, ..."""

    def __init__(self):
        self.counts: dict[str, int] = {}

    def __call__(self, site: str) -> str:
        k = self.counts.get(site, 0)
        self.counts[site] = k + 1
        return site if k == 0 else f"{site}#{k}"
