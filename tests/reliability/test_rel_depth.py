"""Tracing takes (almost) no recursion depth of its own.

A traced frame's prologue calls no Python function (it reads the pair the call hook left and
logs with ``list.append``), and the hook makes the next call level inline, so the only frame
tracing adds is the hook's, which stands where the callee's frame will. What remains: when the
deepest frame makes a call, the hook (a Python frame) and its ``append`` sit one level deeper
than an untraced call of a builtin would, so a recursion that ends within two frames of the
limit untraced may need those two frames traced (before: four, from frame entry's calls).
"""
import gc
import math
import sys

import pytest

import dcgraph


def countdown_calling_a_builtin(n):
    return math.sin(0.0) if n == 0 else 1 + countdown_calling_a_builtin(n - 1)


def countdown(n):
    return 0 if n == 0 else 1 + countdown(n - 1)


def _plain(f, n):            # one frame between the caller and f, as ``track`` has
    return f(n)


def _traced(f, n):
    return dcgraph.track(f, n)


def _stack_depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def _deepest(run, f) -> int:
    """The largest n for which ``run(f, n)`` works (three times: warm, specialised calls count
    depth differently), searched upwards from one that surely works."""
    n = sys.getrecursionlimit() - _stack_depth() - 60
    for _ in range(3):
        run(f, n)
    while True:
        try:
            for _ in range(3):
                run(f, n + 1)
        except RecursionError:
            return n
        n += 1


@pytest.fixture
def no_collection():
    """A collection near the limit runs callbacks that take frames of their own (traced runs
    allocate more, so they would meet one there more often): keep it out of the comparison."""
    enabled = gc.isenabled()
    gc.disable()
    yield
    if enabled:
        gc.enable()


def test_tracing_takes_at_most_two_frames_of_recursion_depth(no_collection):
    for f in (countdown_calling_a_builtin, countdown):
        _traced(f, 3)
        plain, traced = _deepest(_plain, f), _deepest(_traced, f)
        assert plain - 2 <= traced <= plain, (f.__name__, plain, traced)


def test_a_traced_recursion_near_the_limit_builds_a_whole_tape(no_collection):
    n = _deepest(_traced, countdown)
    result, tape = _traced(countdown, n)     # the same frames as the search's
    assert result == n and not tape.untraced
    tape.lint()
