"""Fused runs (``tracer/fused_runs.py``) read the event log as the handlers do: counted loops
(``counted_loops``: a ``range``'s items not logged) and call sites that expect their callable
(``CodeInfo.expected``: nothing logged for it, else ``CALL_MARK`` then the callable).

Each case is built fused and step by step and the tapes compared slot by slot (the comparison
of ``test_fused_runs``), on the corpora of ``test_counted_loops`` and ``test_expected_callees``
and in the runs that change what those sites log (summary values, every site through the hook,
a substituting context, a rebound ``range`` or callee)."""
from __future__ import annotations

import math
import sys

import numpy as np
import pytest

import dcgraph
from dcgraph.tracer import fused_runs, ops
from dcgraph.tracer.events import CALL_MARK
from dcgraph.tracer.frame_replay import ReplayError
from dcgraph.tracer.inline_calls import substitution_ended, substitution_started
from dcgraph.tracer.instrument import rewrite
from dcgraph.tracer.instrument.versions import semantics

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import test_counted_loops as counted  # noqa: E402
import test_expected_callees as expecting  # noqa: E402
import test_fused_runs as fused_cases  # noqa: E402


sin_loop = fused_cases.sin_loop          # t += math.sin(i * 0.1) for i in range(n)


def past_maxsize(n):
    """A counted loop over a range longer than ``sys.maxsize`` (``len`` of it raises)."""
    t = 0
    for i in range(2**70):
        if i >= n:
            break
        t += i
    return t


CASES = [(sin_loop, (30,)), (sin_loop, (0,)), (past_maxsize, (3,)),
         (counted.squares, (0, 5, 1)), (counted.squares, (7, -2, -3)),
         (counted.squares, (3, 3, 1)), (counted.squares, (2**64, 2**64 + 3, 1)),
         (counted.first_over, ([1.0, 5.0, 2.0], 3.0)), (counted.first_over, ([1.0, 2.0], 3.0)),
         (counted.breaks_at_once, (4,)), (counted.nested, (4,)), (counted.halts_at, (5, 2)),
         (counted.drains, (3,)),
         (expecting.sin_loop, (0.3, 5)), (expecting.calls_math_sin, (0.5,)),
         (expecting.two_floats, (1, "2.5")), (expecting.guarded_sqrt, (-1.0,)),
         (expecting.outer_sqrt, (-4.0,)), (expecting.calls_sqrt, (-1.0,)),
         (expecting.pulls, (5,)), (expecting.numpy_steps, (np.array([1.0, 4.0, 9.0]),))]
IDS = [f"{f.__name__}{a!r}"[:50] for f, a in CASES]


@pytest.fixture(autouse=True, params=[0, 3], ids=["fused at once", "fused after 3 entries"])
def hot(request, monkeypatch):
    """Blocks fused before their first entry, or after a few (a replay then mixes both)."""
    monkeypatch.setattr(fused_runs, "HOT", request.param)
    fused_cases._forget_steps()
    yield request.param
    monkeypatch.undo()
    fused_cases._forget_steps()


def _equal_builds(fn, args, **options):
    tape, again, _ = fused_cases._two_builds(fn, args, **options)
    tape.lint()
    again.lint()
    fused_cases._Compare().tapes(tape, again)
    return tape


class _Hooked:
    """Every call site through the hook (as while a substituting run is active): expecting
    sites log ``CALL_MARK`` and their callable."""

    def __enter__(self):
        self.token = object()
        substitution_started(self.token)

    def __exit__(self, *exc):
        substitution_ended(self.token)


@pytest.mark.parametrize("fn,args", CASES, ids=IDS)
def test_fused_equals_step_by_step(fn, args):
    _equal_builds(fn, args)


@pytest.mark.parametrize("fn,args", CASES, ids=IDS)
def test_fused_equals_step_by_step_in_summary_and_hooked_runs(fn, args):
    _equal_builds(fn, args, values="summary")
    with _Hooked():
        _equal_builds(fn, args)


def _replayed(code):
    """The ``CodeInfo`` of ``code`` whose replay steps were made."""
    return next(info for info in list(rewrite._cache.values())
                if getattr(info, "code", None) is code and info.replay_blocks is not None)


def _fused_indices(info) -> set:
    """Instruction indices of the generated steps replaying ``info``'s code."""
    return {i for block in info.replay_blocks for fn, _, i in block
            if getattr(getattr(fn, "__code__", None), "co_filename", "") == "<dcgraph fused run>"}


@pytest.mark.parametrize("fn,args", [(sin_loop, (3,)), (counted.nested, (3,)),
                                     (expecting.sin_loop, (0.3, 2))])
def test_counted_loops_and_expected_calls_are_fused(fn, args, hot):
    """The comparisons above go through the templates: each counted ``FOR_ITER`` and each
    expecting ``CALL`` is (the last step of) a generated step."""
    for _ in range(hot + 1):
        dcgraph.track(fn, *args)[1].nodes
    info = _replayed(fn.__code__)
    assert info.counted_loops and info.expected
    fused = _fused_indices(info)
    assert info.counted_loops <= fused
    assert set(info.expected) <= fused


def test_substituting_and_rebound_callees_fused_equal_step_by_step(monkeypatch):
    tape = _equal_builds(expecting.sin_loop, (0.3, 4), ctx=expecting.SinToCos())
    assert [n.value for n in tape.find(fn=math.sin)] == [math.cos(0.3 * i) for i in range(4)]
    for _ in range(3):
        _equal_builds(expecting.calls_math_sin, (0.5,))
    monkeypatch.setattr(math, "sin", lambda x: x * 2.0)     # traced: CALL_MARK, then it
    tape = _equal_builds(expecting.calls_math_sin, (0.5,))
    assert tape.returned.value == 1.0 and [n.kind for n in tape.nodes].count("NestedCall") == 1
    monkeypatch.setattr(math, "sin", math.cos)               # a C function after the mark
    tape = _equal_builds(expecting.calls_math_sin, (0.5,))
    assert tape.returned.value == math.cos(0.5)
    monkeypatch.setitem(expecting.two_floats.__globals__, "float", expecting.Half)
    assert _equal_builds(expecting.two_floats, (1, 5)).returned.value == 3.0


def test_a_rebound_range_fused_equals_step_by_step(monkeypatch):
    """``range`` rebound under code expecting it: the items are logged (``logged_items``)."""
    for _ in range(3):
        _equal_builds(counted.squares, (0, 3, 1))
    monkeypatch.setitem(counted.squares.__globals__, "range", counted.as_list)
    tape = _equal_builds(counted.squares, (0, 3, 1))
    assert counted._items(tape) == [0, 3, 1, 99]
    monkeypatch.setitem(counted.squares.__globals__, "range", lambda *a: range(*a))
    assert counted._items(_equal_builds(counted.squares, (0, 3, 1))) == [0, 1, 2]


def test_sin_loop_tape_values_and_node_count():
    """Per item: the item, the product, sin, the sum and the sum's phi; before the loop the
    argument, range, iter and the first phi; after it the exit and the return."""
    for n in (0, 1, 30):
        result, tape = dcgraph.track(sin_loop, n)
        tape.lint()
        assert len(tape.nodes) == 6 + 5 * n
        items = [node.value for node in tape.nodes if getattr(node, "fn", None) is
                 ops.next_item]
        assert items == list(range(n)) and all(type(i) is int for i in items)
        assert [node.value for node in tape.find(fn=math.sin)] == \
            [math.sin(i * 0.1) for i in range(n)]
        assert tape.returned.value == result == sin_loop(n)


SIN_LOOP_3 = """\
@0: Argument n = 3
@1: [L{loop}] range(@0) = range(0, 3)
@2: [L{loop}] iter(@1) = <range_iterator object>
@3: φ t = 0.0 (from §0)
@4: [L{loop}] i = next_item(@2, 0) = 0
@5: [L{body}] @4 * 0.1 = 0.0
@6: [L{body}] sin(@5) = 0.0
@7: [L{body}] t = @3 += @6 = 0.0
@8: φ t = @7 (from §2)
@9: [L{loop}] i = next_item(@2, 1) = 1
@10: [L{body}] @9 * 0.1 = 0.1
@11: [L{body}] sin(@10) = 0.09983
@12: [L{body}] t = @8 += @11 = 0.09983
@13: φ t = @12 (from §2)
@14: [L{loop}] i = next_item(@2, 2) = 2
@15: [L{body}] @14 * 0.1 = 0.2
@16: [L{body}] sin(@15) = 0.1987
@17: [L{body}] t = @13 += @16 = 0.2985
@18: φ t = @17 (from §2)
@19: goto §3 since @2 exhausted
@20: return @18 = 0.2985"""


def test_sin_loop_printout_fused_and_step_by_step():
    first = sin_loop.__code__.co_firstlineno
    expected = SIN_LOOP_3.format(loop=first + 2, body=first + 3)
    assert str(_equal_builds(sin_loop, (3,))) == expected
    with fused_cases.unfused():
        _, tape = dcgraph.track(sin_loop, 3)
        assert str(tape) == expected


class _NoCountedLoops:
    """A code's facts as a template blind to counted loops would see them."""

    def __init__(self, info):
        self.info = info
        self.counted_loops = frozenset()

    def __getattr__(self, name):
        return getattr(self.info, name)


def test_a_template_reading_items_of_a_counted_loop_is_caught(monkeypatch):
    """The merge's failure: a ``FOR_ITER`` template reading the items from the log."""
    for_iter = semantics().HANDLERS["FOR_ITER"]
    template = fused_runs.TEMPLATES[for_iter]

    def blind(g, c, op, i):
        return template(g, fused_runs.CodeFacts(_NoCountedLoops(c.info), c.guarded_sites,
                                                c.placeholders), op, i)

    monkeypatch.setitem(fused_runs.TEMPLATES, for_iter, blind)
    monkeypatch.setattr(fused_runs, "ALONE", fused_runs.ALONE | {blind})
    fused_cases._forget_all()
    try:
        with pytest.raises((ReplayError, AssertionError)):
            _equal_builds(sin_loop, (4,))
    finally:
        monkeypatch.setitem(fused_runs.TEMPLATES, for_iter, template)
        monkeypatch.setattr(fused_runs, "ALONE", fused_runs.ALONE - {blind})
        fused_cases._forget_all()
    _equal_builds(sin_loop, (4,))
