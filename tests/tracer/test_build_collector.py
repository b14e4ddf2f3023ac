"""Tape builds run with the cyclic collector paused, and restore it exactly (issue #15 part 2)."""
import contextlib
import gc
import math
import sys
import threading

import pytest

import dcgraph
from dcgraph.tracer.collector import collector_paused


def loop(n):
    t = 0.0
    for i in range(n):
        t += math.sin(i * 0.1)
    return t


@pytest.fixture
def collections():
    """Automatic collections started while the test runs (gc.callbacks 'start' events)."""
    seen = []

    def callback(phase, info):
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(callback)
    yield seen
    gc.callbacks.remove(callback)


def _collections_during_a_build(collections) -> int:
    _, tape = dcgraph.track(loop, 5000)
    before = len(collections)
    assert len(tape.nodes) > 20000              # the build: 25,000 nodes
    return len(collections) - before


def test_a_build_starts_no_collection_and_leaves_the_collector_on(collections, monkeypatch):
    assert gc.isenabled()
    # at most the one collection the allocation counts owe when the collector is back on
    assert _collections_during_a_build(collections) <= 1
    assert gc.isenabled()
    track_module = sys.modules["dcgraph.tracer.track"]     # the package's ``track`` is the function
    monkeypatch.setattr(track_module, "collector_paused", contextlib.nullcontext)
    assert _collections_during_a_build(collections) > 10   # unpaused: one per 700 allocations
    monkeypatch.undo()
    _, tape = dcgraph.track(loop, 100)
    before = len(collections)
    tape.lint()
    garbage = []
    for _ in range(2000):                       # the collector runs again afterwards
        cycle = []
        cycle.append(cycle)
        garbage.append(cycle)
    del garbage
    assert len(collections) > before


def test_a_collector_the_user_disabled_stays_disabled():
    gc.disable()
    try:
        _, tape = dcgraph.track(loop, 100)
        tape.lint()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_failing_build_restores_the_collector():
    with pytest.raises(ZeroDivisionError):
        with collector_paused():
            assert not gc.isenabled()
            1 / 0
    assert gc.isenabled()


def test_overlapping_pauses_restore_once_at_the_end():
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()               # the outer build is still running
    assert gc.isenabled()


def test_builds_in_eight_threads_leave_the_collector_as_it_was():
    errors = []

    def work():
        try:
            for _ in range(3):
                _, tape = dcgraph.track(loop, 3000)
                tape.lint()
        except Exception as exc:                # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert gc.isenabled()
