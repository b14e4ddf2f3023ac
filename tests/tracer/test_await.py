"""Coroutines, ``await`` and async generators traced (CPython 3.11 to 3.13): every corner
equals the plain run, warm (``asyncio.run``, ``gather``, tasks, cancellation, exceptions thrown
in, ``async for`` over async generators that raise, ``aclose``, ``async with``); a coroutine's
body runs as segments per resumption; values and gradients flow through ``await``, through the
event loop (task and future results) and through async generator items (grad equals finite
differences, slices reach the inputs)."""
import asyncio
import inspect
import sys
import textwrap

import pytest

import dcgraph
from dcgraph import Phi, PrimitiveCall, Yield
from dcgraph.ad import grad

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import await_corners as corners  # noqa: E402
from generator_checks import outcome as _outcome, segments, warm_runs_match  # noqa: E402

WARM_RUNS = 120
LOOP_WARM_RUNS = 40     # asyncio.run: a full event loop per run (specialised after 8 or so)
_RESUMABLE = 0x20 | 0x80 | 0x200      # generator, coroutine, async generator


def _segments(tape, name=None, flag=_RESUMABLE):
    """Segments of generator, coroutine or async generator code (``segments``)."""
    return segments(tape, name, flag)


@pytest.mark.parametrize("fn,args", corners.ALL, ids=[f.__name__ for f, _ in corners.ALL])
def test_await_corner_matches_plain_call(fn, args):
    runs = LOOP_WARM_RUNS if "asyncio.run(" in inspect.getsource(fn) else WARM_RUNS
    tape = warm_runs_match(fn, args, runs)
    assert not tape.untraced, {c.co_name: why for c, why in tape.untraced.items()}
    assert _segments(tape, flag=0x80 | 0x200), f"{fn.__name__}: no coroutine segment recorded"




def test_segments_of_a_coroutine_driven_by_send():
    _, tape = dcgraph.track(corners.await_chain_by_send, 0.7)
    tape.lint()
    chain = _segments(tape, "chain")
    scaled = _segments(tape, "scaled")
    assert [s.value for s in chain[:2]] == [None, None] and chain[2].value == pytest.approx(10.08)
    assert len(scaled) == 4 and all(s.tape in {c.child for c in chain} for s in scaled)
    # a = await scaled(x, 2.0): a is scaled's returning segment, nested in chain's
    a = [n for n in chain[1].child if "a" in n.names]
    assert len(a) == 1 and _origin(a[0]) is scaled[1] and scaled[1].child[-1].kind == "Return"
    # the coroutine's first segment yields the suspension's item, which scaled yielded
    assert isinstance(chain[0].child[-1], Yield)
    assert _origin(chain[0].child[-1].inputs[0]) is scaled[0]
    text = str(tape)
    assert "[L42] scaled(@0, 2.0) = <coroutine object scaled>" in text
    # per suspension, three frames suspend: suspend, scaled, chain
    assert sum(isinstance(n, Yield) for n in tape.walk()) == 2 * 3


def _origin(node):
    """The node a phi or a segment's argument stands for."""
    while isinstance(node, Phi) or (type(node).__name__ == "Argument"
                                    and node.source is not None):
        node = node.source
    return node


def test_async_for_items_are_the_async_generators_segments():
    _, tape = dcgraph.track(corners.async_for_over_an_async_generator, 0.6)
    tape.lint()
    numbers = _segments(tape, "numbers")
    items = [s for s in numbers if s.meta.get("async_item")]
    assert [s.value for s in items] == pytest.approx([0.0, 0.6, 1.2, 0.36])
    assert all(s.meta.get("taken") for s in items)    # each is the consumer's item itself
    # the other segments end at the ``await asyncio.sleep(0)`` inside the async generator,
    # and the last one returns (StopAsyncIteration ends the ``async for``)
    assert numbers[-1].child[-1].kind == "Return"
    squares = [n for n in tape.walk() if isinstance(n, PrimitiveCall) and n.fn_name == "mul"
               and n.tape.code.co_name == "main"]
    assert [_origin(n.args[0]) for n in squares] == items


def test_gather_result_is_built_from_the_tasks_segments():
    _, tape = dcgraph.track(corners.gather_of_traced_coroutines, 0.7)
    tape.lint()
    gathered = [n for n in tape.walk() if isinstance(n, PrimitiveCall)
                and n.fn_name == "build_list" and n.tape.code.co_name == "main"]
    assert len(gathered) == 1
    sources = [_origin(a) for a in gathered[0].args]
    returning = [s for s in _segments(tape) if s.child[-1].kind == "Return"
                 and s.child.code.co_name in ("scaled", "chain")]
    assert all(s in returning for s in sources)
    assert [s.child.code.co_name for s in sources] == ["scaled", "chain", "scaled"]


GRADIENT_CASES = {
    "asyncio_run_chain": corners.asyncio_run_chain,
    "gather": corners.gather_of_traced_coroutines,
    "create_task": corners.create_task_and_await_it,
    "cancelled_task_returns": corners.cancellation_caught_inside_the_task,
    "future_result": corners.future_result_set_by_traced_code,
    "async_for": corners.async_for_over_an_async_generator,
    "nested_async_generators": lambda x: sum(corners.async_generator_delegating_to_another(x)),
    "asend_athrow": lambda x: sum(corners.asend_athrow_aclose(x)),
    "async_with": lambda x: corners.async_with_normal_exit(x)[0],
    "event_and_wait_for": corners.wait_for_and_event,
    "throw_answered_by_inner": corners.throw_answered_by_the_awaited_coroutine,
    "task_group": lambda x: corners.task_group_with_a_failing_task(x)[0],
}


@pytest.mark.parametrize("name", list(GRADIENT_CASES))
def test_grad_through_await_equals_finite_differences(name):
    f = GRADIENT_CASES[name]
    for x in (0.7, 1.3):
        eps = 1e-6
        fd = (f(x + eps) - f(x - eps)) / (2 * eps)
        assert fd != 0.0
        assert grad(f)(x) == pytest.approx(fd, rel=1e-6, abs=1e-9)


def _pick(a, b):
    async def double(v):
        await asyncio.sleep(0)
        return v * 2.0

    async def main(a, b):
        await double(a)                  # its value is dropped
        used = await double(b)
        return used + 1.0
    return asyncio.run(main(a, b))


def test_slice_of_the_result_reaches_through_the_event_loop():
    _, tape = dcgraph.track(_pick, 3.0, 4.0)
    tape.lint()
    reached = tape.slice(tape.returned)
    returning = {s.value: s for s in _segments(tape, "double") if s.child[-1].kind == "Return"}
    assert sorted(returning) == [6.0, 8.0]
    assert returning[8.0].child[-1] in reached and returning[6.0].child[-1] not in reached
    assert tape.arguments[1] in reached and tape.arguments[0] not in reached


def _run_scaled(x):
    return corners.drive(corners.scaled(x, 3.0))


# each resumption of the coroutine is a segment in its consumer's tape, with the segment of
# the generator it awaits nested in it; the value it returns reaches ``drive`` as the
# StopIteration's (a constant, as for a generator's return value)
SCALED_PRINTOUT = """
    @0: Argument x = 2.0
    @1: [L146] scaled(@0, 3.0) = <coroutine object scaled>
    @2: [L146] drive(@1) = ([None], 6.0)
        @0: Argument coro = <coroutine object scaled>
        @1: Argument sends = ()
        @2: [L27] yielded = build_list() = [None] (final state, after @7)
        @3: [L28] sends = list(@1) = []
        @4: goto §3 since @3 == False
        @5: φ stack[4] = None (from §3)
        @6: [L146] next(@[1]) = None
            @0: Argument x = 2.0
            @1: Argument k = 3.0
            @2: [L37] suspend() = <generator object suspend>
            @3: φ stack[1] = None (from §0)
            @4: [L37] next(@2) = None
                @0: Argument tag = None
                @1: yield @0 = None
            @5: yield @4 = None
        @7: [L31] @2.append(@6) ⇒ [None]
        @8: goto §3 since @3 == False
        @9: φ stack[4] = None (from §3)
        @10: [L146] next(@[1]) = 6.0
            @0: Argument (sent) = None
            @1: φ stack[1] = @0 (from §2)
            @2: [L37] next(@[2.6.2]) = None
                @0: got = Argument (sent) = None
                @1: return @0 = None
            @3: [L38] @[2.6.0] * @[2.6.1] = 6.0
            @4: return @3 = 6.0
        @11: [L31] stop = Constant exception = StopIteration(6.0)
        @12: [L32] Constant StopIteration = <class 'StopIteration'>
        @13: goto §6 since @11 matches @12 == True
        @14: [L33] @11.value = 6.0
        @15: [L33] build_tuple(@7, @14) = ([None], 6.0)
        @16: return @15 = ([None], 6.0)
    @3: return @2 = ([None], 6.0)
"""
# 3.12 and 3.13 end the await at END_SEND, which keeps [iterator, value]: two phis more
SCALED_PRINTOUT_312 = """
    @0: Argument x = 2.0
    @1: [L146] scaled(@0, 3.0) = <coroutine object scaled>
    @2: [L146] drive(@1) = ([None], 6.0)
        @0: Argument coro = <coroutine object scaled>
        @1: Argument sends = ()
        @2: [L27] yielded = build_list() = [None] (final state, after @7)
        @3: [L28] sends = list(@1) = []
        @4: goto §3 since @3 == False
        @5: φ stack[4] = None (from §3)
        @6: [L146] next(@[1]) = None
            @0: Argument x = 2.0
            @1: Argument k = 3.0
            @2: [L37] suspend() = <generator object suspend>
            @3: φ stack[1] = None (from §0)
            @4: [L37] next(@2) = None
                @0: Argument tag = None
                @1: yield @0 = None
            @5: yield @4 = None
        @7: [L31] @2.append(@6) ⇒ [None]
        @8: goto §3 since @3 == False
        @9: φ stack[4] = None (from §3)
        @10: [L146] next(@[1]) = 6.0
            @0: Argument (sent) = None
            @1: φ stack[1] = @0 (from §2)
            @2: [L37] next(@[2.6.2]) = None
                @0: got = Argument (sent) = None
                @1: return @0 = None
            @3: φ stack[0] = @[2.6.2] (from §1)
            @4: φ stack[1] = @2 (from §1)
            @5: [L38] @[2.6.0] * @[2.6.1] = 6.0
            @6: return @5 = 6.0
        @11: [L31] stop = Constant exception = StopIteration(6.0)
        @12: [L32] Constant StopIteration = <class 'StopIteration'>
        @13: goto §6 since @11 matches @12 == True
        @14: [L33] @11.value = 6.0
        @15: [L33] build_tuple(@7, @14) = ([None], 6.0)
        @16: return @15 = ([None], 6.0)
    @3: return @2 = ([None], 6.0)
"""


def test_printout_of_a_hand_driven_coroutine():
    _, tape = dcgraph.track(_run_scaled, 2.0)
    tape.lint()
    expected = SCALED_PRINTOUT if sys.version_info[:2] == (3, 11) else SCALED_PRINTOUT_312
    assert str(tape) == textwrap.dedent(expected).strip("\n")


@pytest.mark.parametrize("fn,args", corners.ALL[:8], ids=[f.__name__ for f, _ in corners.ALL[:8]])
def test_summary_and_depth_limited_runs_keep_coroutines_primitive(fn, args):
    # a resumable frame's identity in the log is its frame object (kept alive: not in a
    # summary run), and it runs at the depth of whoever resumes it (not under a depth limit)
    expected = _outcome(fn, args)
    for kwargs in ({"values": "summary"}, {"ctx": dcgraph.DepthLimitContext(3)}):
        result, tape = dcgraph.track(fn, *args, **kwargs)
        assert ("ok", result) == expected
        tape.lint()
        assert not _segments(tape, flag=0x80 | 0x200)
