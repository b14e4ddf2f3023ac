"""``track``'s cheaper entry and call decisions give the tapes the slower paths gave: the root's
decision memoised for its recursive calls, C methods of C objects decided once per pair of
classes (``operator_guards.plain_c_method``), no reach walk for arguments of clear types
(``operator_reach.CLEAR_TYPES``), the tables a run makes on first use."""
import importlib
import sys
import types

import numpy as np
import pytest

import dcgraph
from dcgraph import DepthLimitContext
from dcgraph.tracer import operator_guards, recorder
from dcgraph.tracer import run as run_module
from dcgraph.tracer.inline_calls import PLAIN_METHODS, substitution_ended, substitution_started
from dcgraph.tracer.operator_reach import CLEAR_TYPES, LEAF_TYPES
from dcgraph.tracer.summary import SummaryLog
from tracer_watch import hook_calls

tracker = importlib.import_module("dcgraph.tracer.track")   # (``dcgraph.tracer.track``: the function)


def geom(n, beta, rng):
    return n if rng.random() < beta else geom(n + 1, beta, rng)


def countdown(n):
    return n if n == 0 else countdown(n - 1)


L = geom.__code__.co_firstlineno + 1
_GEOM_HEAD = f"""\
@0: Argument n = 0
@1: Argument beta = 0.5
@2: Argument rng = Generator(PCG64)
@3: [L{L}] @2.random() = 0.5118
@4: goto §2 since @3 < @1 == False
@5: [L{L}] @0 + 1 = 1
@6: [L{L}] geom(@5, @1, @2) = 2
    @0: Argument n = 1
    @1: Argument beta = 0.5
    @2: Argument rng = Generator(PCG64)
    @3: [L{L}] @2.random() = 0.9505
    @4: goto §2 since @3 < @1 == False
    @5: [L{L}] @0 + 1 = 2
    @6: [L{L}] geom(@5, @1, @2) = 2
        @0: Argument n = 2
        @1: Argument beta = 0.5
        @2: Argument rng = Generator(PCG64)
        @3: [L{L}] @2.random() = 0.1442
        @4: goto §1 since @3 < @1 == True
"""
# the conditional expression's value reaches ``RETURN_VALUE`` through a phi on 3.11; from 3.12
# each arm returns on its own
GEOM_SEED_1 = _GEOM_HEAD + ("""\
        @5: φ stack[0] = @0 (from §1)
        @6: return @5 = 2
    @7: φ stack[0] = @6 (from §2)
    @8: return @7 = 2
@7: φ stack[0] = @6 (from §2)
@8: return @7 = 2""" if sys.version_info < (3, 12) else """\
        @5: return @0 = 2
    @7: return @6 = 2
@7: return @6 = 2""")


def _geom_tape(**kwargs):
    result, tape = dcgraph.track(geom, 0, 0.5, np.random.default_rng(1), **kwargs)
    assert result == 2
    tape.lint()
    return tape


def test_geom_records_the_golden_tape_on_every_path(monkeypatch):
    assert str(_geom_tape()) == GEOM_SEED_1
    summary = str(_geom_tape(values="summary"))
    # the slow paths: per-depth decisions (no shared memo, so no memoised root), and every
    # bound C method decided by ``Run.decide`` in full
    assert str(_geom_tape(ctx=DepthLimitContext(50))) == GEOM_SEED_1
    # every site through the hook (as while a substituting run is active): the same tapes
    token = object()
    substitution_started(token)
    try:
        assert str(_geom_tape()) == GEOM_SEED_1
        assert str(_geom_tape(values="summary")) == summary
    finally:
        substitution_ended(token)
    monkeypatch.setattr(run_module, "plain_c_method", lambda f: False)
    monkeypatch.setattr(recorder, "PLAIN_METHODS", set())
    assert str(_geom_tape()) == GEOM_SEED_1
    assert str(_geom_tape(values="summary")) == summary


def test_geoms_bound_c_method_is_taken_inline():
    _geom_tape()                                 # its pair accepted
    for _ in range(30):                          # warm: the adaptive interpreter specialises
        with hook_calls() as seen:
            assert str(_geom_tape()) == GEOM_SEED_1
        # nothing: ``rng.random`` is taken at its method site, and the recursive calls at
        # theirs (``inline_calls.SiteCache``), filled at the run's start for a remembered root
        # (``roots``' self sites)
        assert seen == []


def _counting_is_primitive(monkeypatch):
    asked = []
    is_primitive = dcgraph.Context.is_primitive

    def counting(ctx, fn, depth):
        asked.append((fn, depth))
        return is_primitive(ctx, fn, depth)

    monkeypatch.setattr(dcgraph.Context, "is_primitive", counting)
    return asked


def test_the_roots_decision_serves_its_recursive_calls(monkeypatch):
    asked = _counting_is_primitive(monkeypatch)
    result, tape = dcgraph.track(countdown, 6)
    assert result == 0
    tape.lint()
    assert asked == [(countdown, 0)]            # decided once, at the root
    depth, t = 0, tape
    while True:
        calls = [n for n in t.nodes if n.kind == "NestedCall"]
        if not calls:
            break
        assert [c.fn for c in calls] == [countdown]
        t, depth = calls[0].child, depth + 1
    assert depth == 6
    # a depth-dependent context still decides each depth
    asked.clear()
    _, limited = dcgraph.track(countdown, 6, ctx=DepthLimitContext(3))
    limited.lint()
    assert [d for _, d in asked] == [0, 1, 2, 3]      # (depth 4: primitive by depth alone)


def replaced_midway(n):
    if n == 1:
        replaced_midway.__code__ = _minus_one.__code__
    return n if n == 0 else 10 * replaced_midway(n - 1)


def _minus_one(n):
    return -1


def test_a_root_whose_code_is_replaced_during_the_run_runs_the_new_code():
    original = replaced_midway.__code__
    try:
        plain = replaced_midway(2)
        replaced_midway.__code__ = original
        result, tape = dcgraph.track(replaced_midway, 2)
    finally:
        replaced_midway.__code__ = original
    assert result == plain == -100
    tape.lint()
    inner = tape.find(fn=replaced_midway)[0].child
    innermost = inner.find(fn=replaced_midway)[0]
    assert innermost.value == -1 and innermost.kind == "NestedCall"
    assert [n.kind for n in innermost.child.nodes][-1] == "Return"


class G(np.random.Generator):
    """A Python subclass of a C class: its bound C methods are not decided once for good."""

    def __add__(self, other):
        return self.random() + other


def test_plain_c_methods_are_those_of_immutable_classes_without_python_operators():
    rng = np.random.default_rng(0)
    assert operator_guards.plain_c_method(rng.random)
    assert operator_guards.plain_c_method(rng.normal)
    g = G(np.random.PCG64(0))
    assert type(g.random) is types.MethodType
    assert not operator_guards.plain_c_method(g.random)       # a mutable class with __add__

    class Plain:
        pass
    assert not operator_guards.plain_c_method(types.MethodType(len, Plain()))


def uses_g(g):
    return g.random() + 1.0


def test_a_c_method_bound_to_an_object_with_operators_still_switches_the_guards_on():
    g = G(np.random.PCG64(3))
    seen = []
    guard = recorder.Run.guard_operators

    def watched(run):
        seen.append(run)
        guard(run)

    recorder.Run.guard_operators = watched
    try:
        result, tape = tracker.traced_call(uses_g, (g,), {})
    finally:
        recorder.Run.guard_operators = guard
    assert result == G(np.random.PCG64(3)).random() + 1.0
    tape.lint()
    assert seen                                 # the argument's class defines __add__


def test_arguments_of_clear_types_are_not_walked(monkeypatch):
    walked = []
    arguments = tracker.operator_arguments

    def counting(*a, **k):
        walked.append(a[0])
        return arguments(*a, **k)

    monkeypatch.setattr(tracker, "operator_arguments", counting)
    rng = np.random.default_rng(0)
    dcgraph.track(geom, 0, 0.5, rng)             # walked once: Generator is learnt clear
    assert type(rng) in CLEAR_TYPES and type(rng) not in LEAF_TYPES
    walked.clear()
    dcgraph.track(geom, 0, 0.5, rng)
    dcgraph.track(countdown, 3)
    assert walked == []
    dcgraph.track(geom, 0, 0.5, rng=rng)         # keywords of clear types: not walked either
    assert walked == []
    dcgraph.track(sum, [1.0, 2.0])               # a list, a C function: walked as before
    assert len(walked) == 1
    result, tape = dcgraph.track(scale_first, xs=[Vec(2.0)], k=3.0)   # a keyword's list:
    assert len(walked) == 2 and result.x == 6.0          # walked, its item has operators
    tape.lint()
    assert [n.fn for n in tape.nodes if n.kind == "NestedCall"] == [Vec.__mul__]   # guarded


class Vec:
    def __init__(self, x):
        self.x = x

    def __mul__(self, other):
        return Vec(self.x * other)


def scale(v, k):
    return v * k


def scale_first(xs, k):
    return xs[0] * k


def test_an_argument_with_operators_still_switches_the_guards_on():
    result, tape = dcgraph.track(scale, Vec(2.0), 3.0)
    assert result.x == 6.0
    tape.lint()
    assert [n.fn for n in tape.nodes if n.kind == "NestedCall"] == [Vec.__mul__]


def gen_sum(n):
    return sum(k * k for k in range(n))


@pytest.mark.parametrize("values", ["keep", "summary"])
def test_the_tables_a_run_makes_on_first_use(values):
    run = recorder.new_run(dcgraph.Context(), None if values == "keep" else SummaryLog())
    assert run.generators is None and run.live_generators is None and run.dispatch is None
    table = run.constructor_table()
    assert (table == {} and run.constructor_table() is table) if values == "keep" else \
        table is None
    run.close()
    result, tape = dcgraph.track(gen_sum, 4, values=values)
    assert result == 14
    tape.lint()


def test_a_plain_pairs_decision_does_not_stand_for_its_function_bound_to_operators():
    """``rng.random`` decided (its pair accepted, nothing memoised), then the same Cython
    function bound to a ``G`` (``__add__``): still a sign of operators, in the hook as at a
    site that takes the first inline."""
    rng, g = np.random.default_rng(0), G(np.random.PCG64(0))
    assert rng.random.__func__ is g.random.__func__
    run = recorder.new_run(dcgraph.Context())
    try:
        level = run.levels[0]
        first = rng.random
        assert level.hook(first) is first and not run.operators
        assert level.hook(rng.random) == first and not run.operators
        assert (type(rng), type(first.__func__)) in PLAIN_METHODS
        other = g.random
        assert level.hook(other) is other and run.operators
        assert run.log[-1] is other
    finally:
        run.close()


def test_plain_c_methods_verdict_is_a_test_of_each_class():
    """The sites take a bound method inline when its object's class and its function's class
    were each in some accepted pair (``inline_calls``): the verdict must factorise."""
    owners = [np.random.Generator, np.random.RandomState, G, type, int, list]
    kinds = [type(np.random.default_rng(0).random.__func__), types.BuiltinFunctionType,
             types.FunctionType, type, types.MethodType]
    verdict = {(o, k): operator_guards._plain_c_method(o, k) for o in owners for k in kinds}
    good_owners = {o for (o, k), v in verdict.items() if v}
    good_kinds = {k for (o, k), v in verdict.items() if v}
    assert np.random.Generator in good_owners and G not in good_owners
    assert types.FunctionType not in good_kinds and type not in good_kinds
    assert verdict == {(o, k): o in good_owners and k in good_kinds for o in owners for k in kinds}


def identity(x):
    return x


def test_a_root_tape_made_without_init_has_the_fields_init_sets():
    # ``track`` makes a traced root's tape without ``Tape.__init__`` (``RootTape()``, its
    # fields set inline):
    # a field ``__init__`` gains must be set there too
    from dcgraph.tape import Tape
    from dcgraph.tracer.track import RootTape
    dcgraph.track(identity, 1)                      # decided, then remembered
    result, tape = dcgraph.track(identity, 2)
    made = Tape(identity.__code__, identity)
    assert result == 2 and type(tape) is RootTape and isinstance(tape, Tape)
    # (``_nodes``: made by the build; ``_outcome``: what it replays, dropped once built)
    assert vars(tape).keys() - {"result", "_outcome"} == vars(made).keys() - {"_nodes"}
    assert tape.code is identity.__code__ and tape.fn is identity and tape._outcome[0].closed
    assert str(tape) == str(dcgraph.track(identity, 2)[1])
    tape.lint()
    assert tape._outcome is None and type(tape._nodes) is list   # built: the run let go


def test_a_root_tape_whose_build_fails_drops_its_outcome(monkeypatch):
    # ``RootTape._outcome`` holds the run until the build: a failed build drops it too; the
    # failure is kept and raised again, the replay not run twice
    dcgraph.track(identity, 1)
    _, tape = dcgraph.track(identity, 2)
    assert tape._outcome[0].closed and tape._outcome[5] == 2
    calls = []

    def broken(*_):
        calls.append(1)
        raise ValueError("replay failed")
    monkeypatch.setattr(tracker, "_replay_into", broken)
    for _ in range(2):
        with pytest.raises(ValueError, match="replay failed"):
            tape.nodes
        assert tape._outcome is None
    assert calls == [1]
