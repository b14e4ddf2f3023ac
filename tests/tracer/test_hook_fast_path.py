"""The call hook's fast path and the call sites' constants: what they skip changes nothing."""
import dis
import types

import numpy as np

import dcgraph
from dcgraph.tracer import inline_calls
from dcgraph.tracer.copies import instrumented_copy


def with_keyword(x, *, k=1):
    return x * k


def replaces_keyword_defaults():
    first = with_keyword(2)
    with_keyword.__kwdefaults__ = {"k": 10}
    return first, with_keyword(2)


def test_replacing_keyword_defaults_during_a_run_is_seen():
    try:
        result, tape = dcgraph.track(replaces_keyword_defaults)
        assert result == (2, 20)
        tape.lint()
        assert [n.value for n in tape.nodes if n.kind == "NestedCall"] == [2, 20]
    finally:
        with_keyword.__kwdefaults__ = {"k": 1}


def positional(x, k):
    return x * k


def gains_defaults():
    first = positional(2, 3)
    positional.__defaults__ = (10,)
    return first, positional(2)


def test_defaults_given_during_a_run_to_a_function_without_them_are_seen():
    try:
        result, tape = dcgraph.track(gains_defaults)
        assert result == (6, 20)
        tape.lint()
    finally:
        positional.__defaults__ = None


def geom(n, beta, rng):
    return n if rng.random() < beta else geom(n + 1, beta, rng)


def test_call_sites_load_the_exact_sets_themselves():
    dcgraph.track(geom, 0, 0.5, np.random.default_rng(0))
    consts = instrumented_copy(geom).__code__.co_consts
    assert not any(type(c) is inline_calls.SiteConst for c in consts)
    sets = [c for c in consts if type(c) is set]
    # three distinct objects, never merged even when two are equal (two empty sets)
    for s in (inline_calls.INLINE_PRIMITIVES, inline_calls.INLINE_OWNERS, inline_calls.INLINE_KINDS):
        assert sum(c is s for c in sets) == 1
    assert len(sets) == 3


def empty_sites(rng, f):
    return rng.random() + f(1.0)


def test_empty_site_sets_stay_apart():
    owners, kinds = set(inline_calls.INLINE_OWNERS), set(inline_calls.INLINE_KINDS)
    inline_calls.INLINE_OWNERS.clear()
    inline_calls.INLINE_KINDS.clear()
    try:
        code = types.FunctionType(empty_sites.__code__.replace(co_name="fresh"), globals())
        rng = np.random.default_rng(0)
        result, tape = dcgraph.track(code, rng, float)
        consts = instrumented_copy(code).__code__.co_consts
        assert sum(c is inline_calls.INLINE_OWNERS for c in consts) == 1
        assert sum(c is inline_calls.INLINE_KINDS for c in consts) == 1
        assert result == empty_sites(np.random.default_rng(0), float)
        tape.lint()
    finally:
        inline_calls.INLINE_OWNERS.update(owners)
        inline_calls.INLINE_KINDS.update(kinds)


def sums(xs):
    total = 0.0
    for x in xs:
        total += x * 2.0
    return total


def test_keep_and_summary_runs_use_their_own_code_variant():
    xs = [1.0, 2.5, 4.0]
    kept, tape = dcgraph.track(sums, xs)
    summarised, summary = dcgraph.track(sums, xs, values="summary")
    assert kept == summarised == sums(xs)
    listed, called = instrumented_copy(sums), instrumented_copy(sums, listed=False)
    assert listed is not called
    names = {ins.opname for ins in dis.get_instructions(listed)}
    assert "LIST_APPEND" in names                      # the list in the hidden slot
    assert "LIST_APPEND" not in {ins.opname for ins in dis.get_instructions(called)}
    tape.lint()
    summary.lint()
    assert str(tape).count("*") == str(summary).count("*") == 3


def test_instrumented_code_run_outside_any_run_logs_nothing_and_returns_the_same():
    copy = instrumented_copy(sums)
    assert copy(list(range(50))) == sums(list(range(50)))
    rng = np.random.default_rng(5)
    dcgraph.track(geom, 0, 0.5, np.random.default_rng(5))
    assert instrumented_copy(geom)(0, 0.3, rng) == geom(0, 0.3, np.random.default_rng(5))
