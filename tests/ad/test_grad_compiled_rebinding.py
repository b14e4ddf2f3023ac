"""A compiled gradient path notices a function name rebound between calls (a notebook
redefining a helper): it re-traces instead of running the old code."""
import math

from dcgraph import ad


def helper(x):
    return x * x


def f(x):
    return helper(x) + math.sin(x)


def square_again(x):
    return 3.0 * x


def test_rebinding_a_called_global_retraces():
    g = ad.grad(f)
    for _ in range(4):                       # compiled after the second trace
        assert g(2.0) == 4.0 + math.cos(2.0)
    assert g.compiled.paths, "the path should have compiled"
    global helper
    saved = helper
    try:
        helper = square_again
        assert g(2.0) == 3.0 + math.cos(2.0)
        helper = saved
        assert g(2.0) == 4.0 + math.cos(2.0)
    finally:
        helper = saved


def test_rebinding_a_builtin_by_a_global_retraces():
    def uses_abs(x):
        return abs(x) * 2.0

    g = ad.grad(uses_abs)
    for _ in range(3):
        assert g(-1.5) == -2.0
    globs = uses_abs.__globals__
    globs["abs"] = lambda v: v            # shadow the builtin with a global
    try:
        assert g(-1.5) == 2.0
    finally:
        del globs["abs"]
    assert g(-1.5) == -2.0
