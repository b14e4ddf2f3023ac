"""The trace shared by ``Map`` and ``Unfold``: sub-traces at addresses ``1..n`` and the list of
their return values, plus the helpers both combinators use (argument diffs, gradients).

``VectorDiff(new_length, prev_length, updated)`` is Gen's diff of a sequence: ``updated`` maps
1-based positions to the diff of the element there (positions not listed are unchanged).
"""
from __future__ import annotations

import numpy as np

from ..choicemap import ChoiceMap
from ..execution import NO_CHANGE, UNKNOWN
from ..trace import Trace

__all__ = ["VectorTrace", "VectorDiff", "element_changed", "collect_arg_grads"]


class VectorDiff:
    """Gen's ``VectorDiff``: a sequence of ``new_length`` (was ``prev_length``) whose elements
    at the 1-based positions in ``updated`` may have changed."""

    __slots__ = ("new_length", "prev_length", "updated")

    def __init__(self, new_length: int, prev_length: int, updated: dict):
        self.new_length, self.prev_length, self.updated = new_length, prev_length, dict(updated)

    def __repr__(self):
        return f"VectorDiff({self.new_length}, {self.prev_length}, {self.updated!r})"


def element_changed(diff, i: int, new, old) -> bool:
    """May element ``i`` (1-based) of a sequence argument have changed? ``new``/``old`` are the
    elements (compared by identity or scalar equality when the diff does not say)."""
    if diff is NO_CHANGE:
        return False
    if isinstance(diff, VectorDiff):
        return i in diff.updated and diff.updated[i] is not NO_CHANGE
    if new is old:
        return False
    if type(new) in (float, int, bool, str) and type(new) is type(old):
        return new != old
    return True


def value_changed(new, old) -> bool:
    """Did a return value change (identity, scalar or array equality)?"""
    if new is old:
        return False
    if type(new) in (float, int, bool, str) and type(new) is type(old):
        return new != old
    if isinstance(new, np.ndarray) and isinstance(old, np.ndarray):
        return new.shape != old.shape or not np.array_equal(new, old)
    return True


class VectorTrace(Trace):
    """Trace of a ``Map``/``Unfold``: ``subtraces[i-1]`` is at address ``i``; ``retval`` the
    list of the sub-traces' return values (Unfold: the states)."""

    __slots__ = ("gen_fn", "args", "subtraces", "retval", "score", "store", "_choices")

    def __init__(self, gen_fn, args, subtraces, retval, score, store=None):
        self.gen_fn, self.args, self.subtraces = gen_fn, args, subtraces
        self.retval, self.score, self.store, self._choices = retval, score, store, None

    def __len__(self):
        return len(self.subtraces)

    def get_choices(self) -> ChoiceMap:
        if self._choices is None:
            cm = ChoiceMap()
            for i, sub in enumerate(self.subtraces, 1):
                c = sub.get_choices()
                if not c.is_empty():
                    cm.set_submap(i, c)
            self._choices = cm
        return self._choices

    def __getitem__(self, addr):
        from ..address import as_address
        a = as_address(addr)
        if len(a) == 1 and isinstance(a[0], int) and 1 <= a[0] <= len(self.subtraces):
            return self.subtraces[a[0] - 1].get_retval()
        if len(a) > 1 and isinstance(a[0], int) and 1 <= a[0] <= len(self.subtraces):
            return self.subtraces[a[0] - 1][a.rest()]
        return self.get_choices().get_value(a)

    def project(self, selection) -> float:
        return sum(sub.project(selection[i]) for i, sub in enumerate(self.subtraces, 1))

    def __repr__(self):
        return (f"<VectorTrace of {self.gen_fn!r}: {len(self.subtraces)} steps, "
                f"score={self.score:.6g}>")


def check_keys(choices, n: int, gen_fn, op: str) -> None:
    """Constraints may only sit at addresses ``1..n`` (``GenError`` otherwise)."""
    from ..runtime import GenError
    for key, _ in choices.get_values_shallow():
        raise GenError(f"{op}({gen_fn!r}): a value at address {key!r}, but its choices live "
                       f"under the integer addresses 1..{n}")
    for key, _ in choices.get_submaps_shallow():
        if not (isinstance(key, int) and not isinstance(key, bool) and 1 <= key <= n):
            raise GenError(f"{op}({gen_fn!r}): constraint at address {key!r}, outside the "
                           f"addresses 1..{n} of this run")


def collect_arg_grads(per_element: list, args: tuple) -> tuple:
    """Per-element argument gradients -> per-argument sequences shaped like the arguments
    (a list for a list, an array for an array; None where no element has a gradient)."""
    out = []
    for j, arg in enumerate(args):
        gs = [g[j] if g is not None else None for g in per_element]
        if all(g is None for g in gs):
            out.append(None)
            continue
        gs = [0.0 if g is None else g for g in gs]
        if isinstance(arg, np.ndarray):
            out.append(np.asarray(gs, dtype=float).reshape(arg.shape))
        else:
            out.append(type(arg)(gs) if isinstance(arg, (list, tuple)) else gs)
    return tuple(out)


def retdiff_of(changed: dict, new_len: int, prev_len: int):
    if not changed and new_len == prev_len:
        return NO_CHANGE
    return VectorDiff(new_len, prev_len, {i: UNKNOWN for i in changed})
