"""``track(f, ..., values="summary")``: a log that never keeps the program's objects alive.

With ``values="keep"`` (the default) the log and the tape hold every recorded value by
reference, so an object the program dropped lives until the tape goes. A ``SummaryLog``
replaces each value as it is logged by what the views need of it, a ``Summary`` (type, shape,
dtype, a short repr), and holds no reference to it:

- atoms (None, bool, int, float, complex, str up to 200 characters) are kept as they are:
  they have no finalizers and no weak references, so keeping them changes no lifetime; so are
  ranges (three ints; the replay counts a ``for`` loop's items from them, ``counted_loops``);
- long-lived callables (builtins, module-level functions without a closure, ufuncs, method
  descriptors, builtin types, modules) are kept: the replay needs what they are;
- tuples are rebuilt of their items' summaries (the probes log tuples of several values);
- a bound method keeps its function (when long-lived) and is rebound to its ``self``'s summary;
- every other object becomes a ``Summary``. An object that takes weak references gets one
  ``Summary`` while it lives (looked up by a weak reference, never by a strong one), so the
  replay still sees which recorded values were the same object; one that takes none (lists,
  dicts, bytes, cells) gets a new ``Summary`` each time it is logged.

Consequences, documented in the README: a summary tape has no values to compute with (``grad``,
compiled replay and the random-variable analysis refuse it, ``require_values``), and the data
flow through mutated lists/dicts and closure cells is not linked across their uses.
"""
from __future__ import annotations

import types
import weakref

import numpy as np

from ..tape.printing import short_repr
from .operators import Attempt
from .recorder import MARK_TYPES

__all__ = ["Summary", "SummaryLog", "SummaryTapeError", "require_values", "VALUE_MODES"]

VALUE_MODES = ("keep", "summary")
_ATOMS = frozenset({type(None), bool, int, float, complex, type(Ellipsis), type(NotImplemented)})
# logged as they are (a set: ``in`` a tuple compares, a call 3.11 counts; ``Attempt``: how an
# operator method gets its operands)
_MARKS = frozenset(MARK_TYPES)
_AS_LOGGED = _ATOMS | _MARKS | {Attempt, range}   # a range: its ints (``counted_loops``)
_NUMPY_SCALARS = (np.number, np.bool_)
# types whose repr is short and calls no user code
_OWN_REPR = frozenset({range, slice, np.dtype, type, types.CodeType, types.CellType})
_LONG_STR = 200
_HEAPTYPE = 1 << 9
_DESCRIPTORS = frozenset({types.MethodDescriptorType, types.WrapperDescriptorType,
                          types.ClassMethodDescriptorType, types.GetSetDescriptorType,
                          types.MemberDescriptorType, types.ModuleType, np.ufunc,
                          type(np.sum)})
_NAMED = (type, types.FunctionType, types.BuiltinFunctionType, types.MethodType,
          types.MethodWrapperType)


class SummaryTapeError(TypeError):
    """A consumer that computes with values was given a tape recorded with
    ``values="summary"``."""


class Summary:
    """What a summary tape keeps of a value. ``repr`` is its short repr taken when it was
    logged; views show ``__dcgraph_abbrev__``. A summary of a callable carries its
    ``__name__``/``__qualname__`` (and a bound method's ``__self__``, as a summary)."""

    __slots__ = ("_type", "type_name", "shape", "dtype", "text", "head", "length", "__name__",
                 "__qualname__", "__self__", "__weakref__")

    def __init__(self, value):
        t = type(value)
        self._type = weakref.ref(t) if t.__flags__ & _HEAPTYPE else t   # a class may go too
        self.type_name, self.shape, self.dtype, self.head, self.length = \
            t.__name__, None, None, None, None
        if t is np.ndarray:
            self.shape, self.dtype = value.shape, value.dtype
            self.head = value.flat[:3].tolist() if value.dtype.kind in "biuf" else None
            self.text = short_repr(value)
        elif t in (list, dict, set, frozenset, bytes, bytearray, str, tuple, range):
            self.length = len(value)
            self.text = (short_repr(value) if t in (bytes, str) and len(value) <= _LONG_STR
                         else f"<{t.__name__} of length {len(value)}>")
        elif t.__flags__ & _HEAPTYPE or isinstance(value, BaseException):
            if isinstance(value, BaseException):   # its name; arguments but atoms as "…"
                args = [short_repr(a, 30) if type(a) in _ATOMS or type(a) is str else "…"
                        for a in BaseException.args.__get__(value)]
                self.text = f"{t.__name__}({', '.join(args)})"
            else:                                # never a user's ``__repr__`` while it runs
                self.text = f"<{t.__qualname__} object>"
        elif t in _OWN_REPR or t in _DESCRIPTORS or t in _NAMED:
            self.text = short_repr(value)
        else:                                    # a C type's repr may call the items' reprs
            self.text = f"<{t.__name__} object>"
        name = getattr(value, "__name__", None) if isinstance(value, _NAMED) else None
        if isinstance(name, str):
            self.__name__ = name
            qualname = getattr(value, "__qualname__", None)
            self.__qualname__ = qualname if isinstance(qualname, str) else name
            self.text = f"<{t.__name__} {self.__qualname__}>"

    @property
    def type(self):
        """The value's type (None once a class made by the program was collected)."""
        t = self._type
        return t if type(t) is not weakref.ReferenceType else t()

    def __repr__(self):
        return self.text

    def __dcgraph_abbrev__(self) -> str:
        """As ``views.values.abbrev`` writes the value: arrays with shape, dtype, head."""
        if self.shape is not None:
            shape = ", ".join(map(str, self.shape))
            head = "" if self.head is None else " [" + ", ".join(
                _number(x) for x in self.head) + (
                ", …]" if int(np.prod(self.shape)) > 3 else "]")
            return f"ndarray({shape}) {self.dtype}{head}"
        return self.text

    def __dcgraph_type_name__(self) -> str:
        return self.type_name


def _number(x) -> str:
    if isinstance(x, float):
        text = format(x, ".4g")
        return text if any(c in text for c in ".einn") else text + ".0"
    return str(x)


def long_lived(value) -> bool:
    """Is ``value`` a callable or module whose lifetime is the program's (kept by the log)?"""
    t = type(value)
    if t in _DESCRIPTORS:
        return True
    if t is types.BuiltinFunctionType:
        owner = value.__self__
        return owner is None or type(owner) is types.ModuleType or (
            isinstance(owner, type) and not owner.__flags__ & _HEAPTYPE)
    if t is types.FunctionType:
        return value.__closure__ is None and "<locals>" not in value.__qualname__
    return isinstance(value, type) and not value.__flags__ & _HEAPTYPE


class SummaryLog(list):
    """The event log of a ``values="summary"`` run. Frames log through ``logged`` (the
    ``append`` of their level's pair), which logs ``summarise(value)``. ``append`` is the
    list's own: what the call hook and the generator runtime log with it (callables, frames,
    values sent in) stays raw only until the next ``logged`` or ``settle`` summarises it in
    place, so the hook takes no frame for it (``headroom``) and holds nothing longer than the
    caller's stack does. Near the recursion limit, a value that needs frames to summarise is
    left raw until a call with room for it (``settle`` at the latest, when the run ends)."""

    __slots__ = ("_seen", "_kept", "_done")

    def __init__(self):
        super().__init__()
        self._seen: dict = {}      # id(object) -> (weak reference, its Summary)
        self._kept: dict = {}      # id(long-lived callable) -> it (kept by the log anyway)
        self._done = 0             # entries before this index are summaries

    def logged(self, value) -> None:
        """Summarise the raw entries and log ``value``'s summary. The common cases (atoms,
        marks, kept callables, tuples of them) call no Python code, so logging from a traced
        frame takes no depth beyond this frame's (``headroom``)."""
        done = self._done
        if done != len(self):
            try:
                done = self._done = self._settled(done)
            except RecursionError:       # no room to summarise them here: later
                pass
        t = type(value)
        if t in _AS_LOGGED:
            self += (value,)             # (not ``list.append``: a call 3.11 counts)
        else:
            try:
                self += (self._inline(value, t),)
            except RecursionError:       # no room to summarise it here: later
                self += (value,)
                return
        if done == len(self) - 1:
            self._done = done + 1

    def settle(self) -> None:
        """Summarise every raw entry (the run is over, or about to be replayed)."""
        self._done = self._settled(self._done)

    def _settled(self, done: int) -> int:
        end = len(self)
        while done < end:
            value = self[done]
            self[done] = self._inline(value, type(value))
            done += 1
        return done

    def _inline(self, value, t):
        """``summarise(value)`` with the common cases inline (no frame for them)."""
        if t in _AS_LOGGED or t is Summary:
            return value
        kept = self._kept
        if kept.get(id(value)) is value:     # (``id`` is a call 3.11 counts)
            return value
        if t is tuple:                       # one level inline: no frame for the plain items
            items = []
            for v in value:
                u = type(v)
                if u in _ATOMS or u in _MARKS or u is Summary or \
                        (u is str and len(v) <= _LONG_STR) or kept.get(id(v)) is v:
                    items.append(v)
                else:
                    items.append(self.summarise(v))
            return tuple(items)
        return self.summarise(value)

    def summarise(self, value):
        t = type(value)
        if t in _ATOMS or t in _MARKS or t is Summary:
            return value
        if t is str and len(value) <= _LONG_STR:
            return value
        if t is tuple:
            return tuple(self.summarise(v) for v in value)
        if isinstance(value, _NUMPY_SCALARS):
            return value                 # no finalizer, no weak references: as an int
        if long_lived(value):
            self._kept[id(value)] = value
            return value
        if t is types.MethodType:
            if long_lived(value.__func__):
                return types.MethodType(value.__func__, self.summarise(value.__self__))
        seen = self._seen.get(id(value))
        if seen is not None and seen[0]() is value:
            return seen[1]
        summary = Summary(value)
        if t in (types.BuiltinFunctionType, types.MethodType, types.MethodWrapperType):
            summary.__self__ = self.summarise(value.__self__)
            summary.__qualname__ = f"{type(value.__self__).__name__}.{summary.__name__}"
        try:
            ref = weakref.ref(value)
        except TypeError:
            return summary            # no weak references: a new summary each time
        self._seen[id(value)] = (ref, summary)
        return summary

    def forget(self) -> None:
        """The run is over: drop the table of live objects (the summaries stay in the log)."""
        self._seen, self._kept = {}, {}


def value_type(value) -> type:
    """The type of a recorded value (a summary's type for a summary)."""
    return value.type if type(value) is Summary else type(value)


def require_values(tape, consumer: str) -> None:
    """Raise ``SummaryTapeError`` when ``tape`` (or its root) was recorded with
    ``values="summary"``: ``consumer`` needs the values, which such a tape does not keep."""
    root = tape
    while getattr(root, "parent", None) is not None:
        root = root.parent.tape
    if getattr(root, "values", "keep") == "summary":
        raise SummaryTapeError(
            f"{consumer} needs the recorded values, but this tape was recorded with "
            f"track(..., values='summary'), which keeps only summaries (type, shape, dtype, "
            f"a short repr) of them; record it with values='keep' (the default)")
