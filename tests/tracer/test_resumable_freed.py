"""A run whose traced code ran generators, coroutines or async generators, or caught an
exception (its traceback keeps the frames it went through), is freed by reference counting
when its tape goes, and its tape still builds and lints. The log keeps such frames: a
finished one must hold neither the hook nor the log (returns outside generators drop the
hidden slots, ``Run.close`` clears finished generator frames), nor lead through ``f_back``
to ``traced_call``'s frame holding the run. A generator still suspended when the run ends
keeps its frame: it may resume."""
import asyncio
import weakref

import pytest

import dcgraph
from tracer_watch import collector_off, run_of


class Tick:
    """An awaitable that suspends once, then gives 1."""

    def __await__(self):
        yield "tick"
        return 1


def squares(n):
    for i in range(n):
        yield i * i


def inner():
    yield 1
    return 10


def outer():
    got = yield from inner()
    yield got


async def plus_tick(x):
    return x + await Tick()


async def counting(n):
    for i in range(n):
        yield i


async def collected(n):
    out = []
    async for i in counting(n):
        out.append(i)
    await Tick()
    return out


def generator_expression(x):
    return sum(i * x for i in range(3))


def generator_function(x):
    return sum(squares(x))


def delegating(x):
    return list(outer()) + [x]


def coroutine(x):
    steps = plus_tick(x).__await__()            # driven by hand: ``next``'s default takes
    return next(steps), next(steps, "done")     # the StopIteration in C


def async_generator(x):
    steps = collected(x).__await__()
    return next(steps), next(steps, "done")


def made_never_started(x):
    squares(x)
    return x


async def sleeping(x):
    await asyncio.sleep(0)
    return [i async for i in counting(x)]


def run_by_asyncio(x):                  # (asyncio's own code traced too, exceptions caught
    return asyncio.run(sleeping(x))     # in it among them)


def caught(x):
    try:
        int("x")
    except ValueError as exc:
        return x, str(exc)


KINDS = [(generator_expression, 2, 6), (generator_function, 3, 5),
         (delegating, 2, [1, 10, 2]), (coroutine, 2, ("tick", "done")),
         (async_generator, 3, ("tick", "done")), (made_never_started, 2, 2),
         (run_by_asyncio, 2, [0, 1]),
         (caught, 1, (1, "invalid literal for int() with base 10: 'x'"))]
KIND_IDS = [kind[0].__name__ for kind in KINDS]


@pytest.fixture
def no_collector():
    with collector_off():
        yield


@pytest.mark.parametrize("f, arg, expected", KINDS, ids=KIND_IDS)
def test_the_run_is_freed_without_the_cycle_collector(no_collector, f, arg, expected):
    result, tape = dcgraph.track(f, arg)
    assert result == expected
    run = weakref.ref(run_of(tape))
    assert run().generators is None and run().live_generators is None  # dropped at close
    del tape                            # (not built: built nodes and tapes refer to each
    assert run() is None                # other, for the collector to free)


@pytest.mark.parametrize("f, arg, expected", KINDS, ids=KIND_IDS)
def test_the_tape_still_builds_and_lints(no_collector, f, arg, expected):
    result, tape = dcgraph.track(f, arg)
    run = weakref.ref(run_of(tape))
    tape.lint()
    assert run() is None                # the build took what it needed of the run
    assert tape.result == expected and tape.returned.value == expected


def test_a_generators_segments_are_recorded():
    _, tape = dcgraph.track(generator_function, 3)
    tape.lint()
    segments = [n for n in tape.nodes if getattr(n, "fn", None) is next]
    assert [n.value for n in segments] == [0, 1, 4, None]


def test_a_generator_suspended_at_the_end_keeps_its_frame_and_resumes():
    def started(n):
        g = squares(n)
        next(g)
        return g

    g, tape = dcgraph.track(started, 4)
    assert g.gi_frame is not None and g.gi_frame.f_locals["i"] == 0    # not cleared
    assert list(g) == [1, 4, 9]         # resumed after the run ended
    tape.lint()
    assert [n.value for n in tape.nodes if getattr(n, "fn", None) is next] == [0]
