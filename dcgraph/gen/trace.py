"""Traces: the record of one run of a generative function (Gen's trace interface).

``Trace`` is the abstract interface every generative function's traces implement (the
combinators' too): ``get_args``, ``get_retval``, ``get_choices``, ``get_score``,
``get_gen_fn``, ``trace[addr]``, ``project``. ``DynamicTrace`` is the trace of a ``@gen``
function: its choices and sub-traces by local address (in program order), its score, and the
dcgraph tape of the run (``tape``) from which gradients and incremental updates are computed.
Traces are immutable: ``update``/``regenerate`` return new traces.
"""
from __future__ import annotations

from .address import Address, as_address
from .choicemap import ChoiceMap
from .selection import Selection

__all__ = ["Trace", "DynamicTrace", "ChoiceRecord"]


class Trace:
    """Abstract trace; see the module docstring. The accessors read the attributes ``args``,
    ``retval``, ``score`` and ``gen_fn``; a subclass keeps those or overrides the accessor."""

    def get_args(self) -> tuple:
        return self.args

    def get_retval(self):
        return self.retval

    def get_choices(self) -> ChoiceMap:
        raise NotImplementedError

    def get_score(self) -> float:
        return self.score

    def get_gen_fn(self):
        return self.gen_fn

    def project(self, selection: Selection) -> float:
        raise NotImplementedError

    def __getitem__(self, addr):
        """The value of the choice at ``addr`` (the return value of a sub-call at a call's
        address)."""
        return self.get_choices().get_value(addr)


class ChoiceRecord:
    """A choice of a ``DynamicTrace``: its value, distribution and (scaled) log density."""

    __slots__ = ("value", "dist", "score", "scale")

    def __init__(self, value, dist, score: float, scale: float = 1.0):
        self.value, self.dist, self.score, self.scale = value, dist, score, scale

    def __repr__(self):
        return f"ChoiceRecord({self.value!r}, {self.dist!r}, score={self.score})"


class DynamicTrace(Trace):
    """The trace of a ``@gen`` function.

    ``entries``: local address -> ``ChoiceRecord`` or sub-trace, in program order. ``tape``: the
    run's tape (for a trace made by an incremental update, a re-run of the function with the same
    choices builds it on first access). ``values``: node -> value overrides left by incremental
    updates (empty for a trace from a full run). ``store``: the ``ParameterStore`` read.
    """

    __slots__ = ("gen_fn", "args", "retval", "entries", "score", "store", "_tape", "values",
                 "index", "_choices")

    def __init__(self, gen_fn, args, retval, entries, score, store, tape=None, values=None,
                 index=None):
        self.gen_fn, self.args, self.retval = gen_fn, args, retval
        self.entries, self.score, self.store = entries, score, store
        self._tape, self.values, self.index = tape, values or {}, index
        self._choices = None

    def get_choices(self) -> ChoiceMap:
        """The choices as a ``ChoiceMap`` (built once; values shared with the trace)."""
        if self._choices is None:
            cm = ChoiceMap()
            for addr, e in self.entries.items():
                if type(e) is ChoiceRecord:
                    cm.set_value(addr, e.value)
                else:
                    sub = e.get_choices()
                    if not sub.is_empty():
                        cm.set_submap(addr, sub)
            self._choices = cm
        return self._choices

    def __getitem__(self, addr):
        a = as_address(addr)
        e = self.entries.get(a)
        if type(e) is ChoiceRecord:
            return e.value
        if e is not None:
            return e.get_retval()
        for k in range(len(a) - 1, 0, -1):
            e = self.entries.get(tuple.__new__(Address, a[:k]))
            if e is not None and type(e) is not ChoiceRecord:
                return e[tuple.__new__(Address, a[k:])]
        return self.get_choices().get_value(a)

    def project(self, selection: Selection) -> float:
        total = 0.0
        for addr, e in self.entries.items():
            if type(e) is ChoiceRecord:
                if addr in selection:
                    total += e.score
            else:
                total += e.project(selection[addr])
        return total

    def __getstate__(self):
        """Pickled without the tape (it holds code objects); ``tape`` re-records it."""
        return (self.gen_fn, self.args, self.retval, self.entries, self.score, self.store)

    def __setstate__(self, state):
        self.gen_fn, self.args, self.retval, self.entries, self.score, self.store = state
        self._tape, self.values, self.index, self._choices = None, {}, None, None

    @property
    def tape(self):
        """The dcgraph tape of the run, its ``@`` nodes labelled ``choice_site``/``call_site``
        (re-recorded with the trace's own choices after incremental updates)."""
        if self._tape is None or self.values:
            from .replaying import retrace
            self._tape = retrace(self)
            self.values, self.index = {}, None
        if self.index is None:
            from .tapeindex import TapeIndex
            self.index = TapeIndex(self._tape, self.entries)
        return self._tape

    def __repr__(self):
        return (f"<DynamicTrace of {self.gen_fn!r}: {len(self.entries)} entries, "
                f"score={self.score:.6g}>")
