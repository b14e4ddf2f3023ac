"""``yield from`` in traced generators (CPython 3.11): every corner equals the plain run, warm;
the sub-generator's body runs as its own segments nested in the delegator's; values, sent
values and return values flow exactly (grad equals finite differences, slices reach the
inputs); throw and close pass through; plain iterators are relayed item by item."""
import sys
import textwrap

import pytest

import dcgraph
from dcgraph import Argument, Phi, Yield
from dcgraph.ad import grad

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import yield_from_corners as corners  # noqa: E402
from generator_checks import segments as _segments, warm_runs_match  # noqa: E402

WARM_RUNS = 120
TRACED_VERSIONS = ((3, 11), (3, 12), (3, 13))
traced_here = pytest.mark.skipif(sys.version_info[:2] not in TRACED_VERSIONS,
                                 reason="generators are traced on CPython 3.11 to 3.13")


@pytest.mark.parametrize("fn,args", corners.ALL, ids=[f.__name__ for f, _ in corners.ALL])
def test_yield_from_corner_matches_plain_call(fn, args):
    tape = warm_runs_match(fn, args, WARM_RUNS)
    if sys.version_info[:2] in TRACED_VERSIONS:
        assert not [c for c in tape.untraced if c.co_flags & 0x20], fn.__name__
        assert _segments(tape), f"{fn.__name__}: no generator segment recorded"


# the delegator's segments hold the sub-generator's; a value sent in flows to it (send)
SENDER_PRINTOUT = """
        @0: Argument w = 2.0
        @1: [L221] g = delegate() = <generator object delegate>
        @2: [L221] next(@1) = 1.0
            @0: [L217] echo() = <generator object echo>
            @1: φ stack[1] = None (from §0)
            @2: [L217] next(@0) = 1.0
                @0: yield 1.0 = 1.0
            @3: yield @2 = 1.0
        @3: [L221] a = send(@1, @0) = 4.0
            @0: Argument (sent) = 2.0
            @1: φ stack[1] = @0 (from §2)
            @2: [L217] send(@[2.0], @1) = 4.0
                @0: x = Argument (sent) = 2.0
                @1: φ x = @0 (from §0)
                @2: [L213] @1 * 2.0 = 4.0
                @3: yield @2 = 4.0
            @3: yield @2 = 4.0
        @4: [L224] @3 + 1.0 = 5.0
        @5: [L221] send(@1, @4) = 10.0
            @0: Argument (sent) = 5.0
            @1: φ stack[1] = @0 (from §2)
            @2: [L217] send(@[2.0], @1) = 10.0
                @0: x = Argument (sent) = 5.0
                @1: φ x = @0 (from §1)
                @2: [L213] @1 * 2.0 = 10.0
                @3: yield @2 = 10.0
            @3: yield @2 = 10.0
        @6: [L224] @3 + @5 = 14.0
        @7: return @6 = 14.0
"""


@traced_here
def test_printout_of_send_through_yield_from():
    _, tape = dcgraph.track(corners.sender, 2.0)
    tape.lint()
    assert str(tape) == textwrap.dedent(SENDER_PRINTOUT).strip("\n")


@traced_here
def test_sub_generator_yields_are_the_delegators_items():
    _, tape = dcgraph.track(corners.delegate_to_generator, 3)
    tape.lint()
    outer = _segments(tape, "outer")
    inner = _segments(tape, "inner")
    assert [s.value for s in outer] == [0, 2, 4, 3, 0, 1, 10, 20, None]
    assert len(inner) == 4 and all(s.tape in {o.child for o in outer} for s in inner)
    for s in outer[:3]:        # the delegator yields the sub-generator's segment itself
        yielded = s.child[-1]
        assert isinstance(yielded, Yield) and yielded.inputs[0] in inner
    # r = yield from inner(3): r is the sub-generator's last segment, which returned 3
    r = _origin(outer[3].child[-1].inputs[0])
    assert r is inner[-1] and r.child[-1].kind == "Return" and r.value == 3
    # yield from range(2) / [10, 20]: relayed items, one next_item per item
    relayed = [s.child[-1].inputs[0] for s in outer[4:8]]
    assert [n.fn_name for n in relayed] == ["next_item"] * 4


@traced_here
def test_return_after_throw_resumes_the_delegator_with_the_value():
    _, tape = dcgraph.track(corners.throw_caught_by_sub_generator)
    tape.lint()
    landed = _segments(tape, "_delegating_catcher")[1]
    assert landed.fn_name == "throw"
    # 3.11 resumes the delegator after its yield from (C code: a "(sent)" return value),
    # 3.12 raises StopIteration at its yield ("(thrown)", then CLEANUP_THROW)
    assert landed.child[0].name == ("(sent)" if sys.version_info[:2] == (3, 11) else "(thrown)")
    returned = _segments(tape, "_catching")[-1]
    assert returned.child[-1].kind == "Return" and returned.value == ["'one'", "'two'"]
    # r of ``r = yield from _catching()`` stands for the sub-generator's returning segment
    # (3.12's phi: for the latest version of the list it returned, made in that segment)
    r = [n for n in landed.child if "r" in n.names]
    assert len(r) == 1 and _origin(r[0]) in (returned, returned.child[-1].inputs[0])


def _origin(node):
    """The node a phi or a segment's argument stands for."""
    while isinstance(node, (Phi, Argument)) and node.source is not None:
        node = node.source
    return node


def _pipeline(w):
    def scaled(xs):
        for x in xs:
            yield x * w

    def squared(xs):
        total = yield from scaled(xs)
        for x in xs:
            yield (x + w) ** 2
        return total

    def everything():
        yield from squared([1.0, 2.0])
        yield from (w * x for x in [3.0, 4.0])
        yield from [w * w, 5.0]
    s = 0.0
    for v in everything():
        s += v
    return s + sum(everything()) * w


def _answering(w):
    while True:
        try:
            yield w
        except KeyError:
            w = w * 3.0                  # the item answering the throw


def _thrown_through(w):
    def top():
        yield from _answering(w)
    g = top()
    a = next(g)
    b = g.throw(KeyError)                # C hands the sub-generator's item straight back
    return a + b * 2.0 + next(g)


@traced_here
def test_item_answering_a_throw_into_a_delegator_is_the_sub_generators_segment():
    _, tape = dcgraph.track(_thrown_through, 0.5)
    tape.lint()
    answered = [s for s in _segments(tape, "_answering") if s.fn_name == "throw"]
    assert len(answered) == 1 and answered[0].tape is tape and answered[0].value == 1.5
    doubled = [n for n in tape if getattr(n, "fn_name", "") == "mul"]
    assert len(doubled) == 1 and _origin(doubled[0].args[0]) is answered[0]


@traced_here
@pytest.mark.parametrize("f", [_pipeline, corners.sender, lambda w: sum(corners.outer(3)) * w,
                               _thrown_through])
def test_grad_through_yield_from_equals_finite_differences(f):
    for w in (0.7, 1.9):
        eps = 1e-6
        fd = (f(w + eps) - f(w - eps)) / (2 * eps)
        assert grad(f)(w) == pytest.approx(fd, rel=1e-6)


def _sub_ab(a, b):
    yield a * 2.0
    return b


def _top_ab(a, b):
    r = yield from _sub_ab(a, b)
    yield r + 1.0


def _second_item(a, b):
    g = _top_ab(a, b)
    next(g)
    return next(g)


@traced_here
def test_slice_of_the_result_reaches_through_the_delegation():
    _, tape = dcgraph.track(_second_item, 3.0, 4.0)
    tape.lint()
    reached = tape.slice(tape.returned)
    sub_return = [s for s in _segments(tape, "_sub_ab") if s.child[-1].kind == "Return"]
    assert len(sub_return) == 1 and sub_return[0].child[-1] in reached
    assert tape.arguments[1] in reached
    doubled = [n for n in tape.walk() if getattr(n, "fn_name", "") == "mul"]
    assert len(doubled) == 1 and doubled[0] not in reached    # the first item: not needed
