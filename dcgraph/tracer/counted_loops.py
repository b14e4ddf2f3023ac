"""Loops over a ``range`` whose items the run does not log: the replay counts them.

A loop ``for i in range(...)`` whose iterable is the value of a call site expecting ``range``
(``CodeInfo.expected``), iterated at once (``GET_ITER`` right after the call, ``FOR_ITER`` right
after it), outside generator code (a generator may be resumed by another run than the one that
started the loop, and ``logged_items`` would keep logging to the first), is a *counted loop*
(``CodeInfo.counted_loops``: its ``FOR_ITER`` index). Its ``FOR_ITER`` has no probe. Before
``GET_ITER`` the instrumented code tests the iterable's exact type
(``instrument.probes.counted_iteration``):

- a ``range``: its iterator is a new object that only this ``FOR_ITER`` reads, so the k-th item
  is ``iterable[k]`` and the loop ends after ``len(iterable)`` items; nothing is logged for them
  (the iterable itself is logged, as the call's value);
- anything else (``range`` rebound, or a substituting context): the iterator is logged as
  usual and then wrapped in ``logged_items``, which logs each item as the probe would have.

The replay (``counted_item``) decides the same way from the logged iterable. A summary log
keeps ranges as they are (``summary``), so summary runs replay counted loops too.
"""
from __future__ import annotations

from ..tape import PrimitiveCall

__all__ = ["EXHAUSTED", "counted_item", "counted_loops", "listed_items", "logged_items"]


class _Exhausted:
    __slots__ = ()

    def __repr__(self):
        return "<exhausted>"


EXHAUSTED = _Exhausted()


def counted_loops(instrs: list, expected: dict, calls) -> frozenset:
    """``FOR_ITER`` indices of the counted loops of ``instrs`` (``expected``: call index ->
    the callable the site expects; ``calls``: the version's call instruction names)."""
    found = set()
    for i in range(1, len(instrs) - 1):
        if instrs[i].name == "GET_ITER" and instrs[i + 1].name == "FOR_ITER" \
                and instrs[i - 1].name in calls and expected.get(i - 1) is range:
            found.add(i + 1)
    return frozenset(found)


def listed_items(iterator, log: list):
    """``logged_items`` for code whose log slot holds the run's list (``probes.log``)."""
    return logged_items(iterator, log.append)


def logged_items(iterator, append):
    """The items of ``iterator``, each logged with ``append`` as it is drawn (a counted loop
    whose iterable was no ``range``)."""
    for item in iterator:
        append(item)
        yield item


def counted_item(f, it):
    """At a counted loop's ``FOR_ITER`` in frame ``f`` (``it``: the iterator's node, made by
    ``GET_ITER``): the item drawn (not logged), ``EXHAUSTED``, or None when the iterable was no
    ``range`` (the run logged the items)."""
    if type(it) is not PrimitiveCall or it.fn is not iter:
        return None
    source = it.args[0].value
    if type(source) is not range:
        return None
    try:
        return source[f.steps.get(id(it), 0)]
    except IndexError:                   # (not ``len``: a range may hold over sys.maxsize)
        return EXHAUSTED
