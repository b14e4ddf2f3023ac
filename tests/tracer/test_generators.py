"""Traced generators: every generator corner equals the plain run, warm (120 runs), tape lints;
segments carry exact data flow (grad through them equals the closed form) and random draws
inside generator expressions are random variables with stable addresses."""
import sys

import numpy as np
import pytest

import dcgraph
from dcgraph import LintError, Yield
from dcgraph.ad import grad
from dcgraph.analysis import RandomContext, random_variables

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import generator_corners as corners  # noqa: E402
from generator_checks import segments as _segments, warm_runs_match  # noqa: E402

WARM_RUNS = 120
TRACES_GENERATORS = sys.version_info[:2] in ((3, 11), (3, 12), (3, 13))
DELEGATES = TRACES_GENERATORS                     # ``yield from`` traced with them
only_traced = pytest.mark.skipif(not TRACES_GENERATORS,
                                 reason="generators are traced on CPython 3.11 to 3.13")


@pytest.mark.parametrize("fn,args", corners.ALL, ids=[f.__name__ for f, _ in corners.ALL])
def test_generator_corner_matches_plain_call(fn, args):
    warm_runs_match(fn, args, WARM_RUNS)


@only_traced
def test_generator_corners_are_traced():
    for fn, args in corners.ALL:            # (asyncio.run is a primitive: its coroutines
        _, tape = dcgraph.track(fn, *args)  # never reach the hook)
        names = {code.co_name for code in tape.untraced if code.co_flags & 0x20}
        expected = {"delegating"} if fn.__name__ == "yield_from_untraced" and not DELEGATES \
            else set()
        assert names == expected, fn.__name__
        if fn.__name__ != "async_run" and not expected:
            assert _segments(tape), f"{fn.__name__}: no generator segment recorded"


@only_traced
def test_zip_interleaves_segments_of_two_frames():
    _, tape = dcgraph.track(corners.zip_two_generators, 3)
    tape.lint()
    names = [s.child.name.rsplit(".", 1)[-1] for s in _segments(tape)]
    assert names == ["squares", "counted"] * 3 + ["squares"]     # zip stops at squares' end
    last = [s.child[-1].kind for s in _segments(tape)]
    assert last == ["Yield"] * 6 + ["Return"]


@only_traced
def test_segment_locals_flow_between_resumptions():
    _, tape = dcgraph.track(corners.next_then_list, 3)
    tape.lint()
    segs = _segments(tape)
    first, second = segs[0], segs[1]
    assert [n.name for n in first.child.arguments] == ["n"]
    assert first.child.arguments[0].source is tape.find(kind="Argument")[0]
    assert second.child[0].name == "(sent)"
    # the running total of the second segment adds to the first segment's total
    add = [n for n in second.child if getattr(n, "fn_name", "") == "iadd"][0]
    assert any(i.tape is first.child for i in add.inputs) or \
        any(getattr(i, "source", None) is not None and i.source.tape is first.child
            for i in add.inputs)
    assert isinstance(first.child[-1], Yield) and first.value == 0


@only_traced
def test_send_value_is_an_input_of_its_segment():
    def f(w):
        g = corners.echo()
        next(g)
        return g.send(w)
    _, tape = dcgraph.track(f, 2.5)
    tape.lint()
    seg = _segments(tape)[1]
    assert seg.fn_name == "send" and seg.child[0].source is tape[0]
    assert grad(f)(2.5) == 2.0


@only_traced
@pytest.mark.parametrize("f,dfdw", [
    (lambda w: sum(x * w for x in [1.0, 2.0, 3.0]), 6.0),
    (lambda w: sum(list(x * w * w for x in [1.0, 2.0])), 2 * 2.0 * 3.0),
    (lambda w: max(x + w for x in [1.0, 5.0, 2.0]), 1.0),
    (lambda w: sum(a * b for a, b in zip((x * w for x in [1.0, 2.0]), (x + w for x in [3.0, 4.0]))),
     (2 * 2.0 * 1 + 3.0) + (2 * 2.0 * 2 + 2 * 4.0)),
])
def test_grad_through_generator_expressions(f, dfdw):
    assert grad(f)(2.0) == pytest.approx(dfdw, rel=1e-12)


def _accumulate(w, n):
    for i in range(n):
        w = w * 2.0
        yield w


def _loop_next_sum(w):
    g = _accumulate(w, 4)
    first = next(g)                  # taken by a traced next: its own node
    total = 0.0
    for v in g:                      # taken by a traced for
        total += v
        break
    return first + total + sum(g)    # the rest by a primitive


@only_traced
def test_grad_through_generator_consumed_three_ways():
    assert grad(_loop_next_sum)(1.5) == 2.0 + 4.0 + 8.0 + 16.0
    eps = 1e-6
    fd = (_loop_next_sum(1.5 + eps) - _loop_next_sum(1.5 - eps)) / (2 * eps)
    assert grad(_loop_next_sum)(1.5) == pytest.approx(fd)


def _model(rng, n):
    mu = rng.normal()
    return sum(rng.normal(mu, 1.0) for _ in range(n))


@only_traced
def test_random_draws_inside_a_generator_expression_are_random_variables():
    addresses = None
    for seed in (3, 4):
        _, tape = dcgraph.track(_model, np.random.default_rng(seed), 3, ctx=RandomContext())
        tape.lint()
        rv = random_variables(tape)
        found = [c.address for c in rv]
        assert len(found) == 4
        assert addresses in (None, found), "addresses must not depend on the values drawn"
        addresses = found
        mu = found[0]
        for c in list(rv)[1:]:
            assert rv.parents(c) == [mu]
    assert len(set(addresses)) == 4 and all("genexpr" in a for a in addresses[1:])


@only_traced
def test_lint_rejects_a_broken_segment():
    _, tape = dcgraph.track(corners.next_then_list, 3)
    seg = _segments(tape)[1]
    seg.child._nodes[0].name = "n"              # a later segment must start with (sent)
    with pytest.raises(LintError, match="sent"):
        tape.lint()
    _, tape = dcgraph.track(corners.next_then_list, 3)
    maker = _segments(tape)[0].args[0]
    maker.meta["segments"].reverse()
    with pytest.raises(LintError, match="segment"):
        tape.lint()
    _, tape = dcgraph.track(corners.genexpr_sum, [1, 2])
    yielded = _segments(tape)[0].child[-1]
    ret = dcgraph.Return(yielded.inputs, yielded.value)
    child = _segments(tape)[0].child
    child._nodes.insert(len(child._nodes) - 1, ret)
    for k, n in enumerate(child._nodes):
        n.tape, n.index = child, k
    with pytest.raises(LintError, match="before the end"):
        tape.lint()


@only_traced
def test_generator_resumed_after_track_logs_nothing_into_the_tape():
    def make(n):
        g = corners.counted(n)
        next(g)
        return g
    g, tape = dcgraph.track(make, 4)
    assert list(g) == [1, 3, 6]                 # resumed after the run ended
    tape.lint()
    assert len(_segments(tape)) == 1
    _, other = dcgraph.track(lambda: list(g) + [sum(corners.squares(3))])
    other.lint()


def test_generators_stay_primitive_elsewhere_with_their_reason():
    _, tape = dcgraph.track(corners.for_over_generator, 4)
    reasons = {code.co_name: why for code, why in tape.untraced.items()}
    if TRACES_GENERATORS:
        assert reasons == {}
    else:
        assert reasons == {"squares": "generators are recorded as primitive calls on this Python"}


def _consumers_model(rng, n):
    s = sum(rng.normal() for _ in range(n))
    t = 0.0
    for a, b in zip((rng.normal() for _ in range(2)), [1, 2]):
        t += a * b
    return rng.normal(s, 1.0), rng.normal(t, 1.0)


@only_traced
def test_consumers_of_generators_depend_on_the_draws_they_got():
    _, tape = dcgraph.track(_consumers_model, np.random.default_rng(0), 2, ctx=RandomContext())
    tape.lint()
    rv = random_variables(tape)
    addresses = rv.addresses
    assert len(addresses) == 6
    summed, zipped, last_s, last_t = addresses[0:2], addresses[2:4], addresses[4], addresses[5]
    assert sorted(rv.parents(last_s)) == sorted(summed)
    assert sorted(rv.parents(last_t)) == sorted(zipped)


@only_traced
def test_repeated_gradients_through_a_generator_expression():
    xs = [1.0, 2.0, 3.0]
    g = grad(lambda w: sum(x * w * w for x in xs))       # steady control path, called again
    assert [g(w) for w in (1.0, 2.0, 3.0, 0.5, 2.0)] == [12.0 * w for w in (1.0, 2.0, 3.0, 0.5, 2.0)]


@only_traced
def test_a_generator_resumed_in_another_thread_stops_logging():
    _, tape = dcgraph.track(corners.consumed_in_another_thread, 4)
    tape.lint()
    segments = _segments(tape)
    assert len(segments) == 1 and isinstance(segments[0].child[-1], Yield)
