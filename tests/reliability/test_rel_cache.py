"""The instrumented-copy caches: keyed by identity and by the current code object, bounded,
and never remembering a failure that came from the caller's state."""
import gc
import sys
import weakref

import dcgraph
from dcgraph.tracer import recorder
from dcgraph.tracer.instrument import rewrite


def test_replaced_code_object_runs_the_new_code():
    def f():
        return "one"

    def g():
        return "two"

    assert dcgraph.track(f)[0] == "one"
    f.__code__ = g.__code__           # what IPython's autoreload does
    assert f() == "two"
    result, tape = dcgraph.track(f)
    assert result == "two"
    tape.lint()

    def caller():
        return f()

    def h():
        return "three"

    assert dcgraph.track(caller)[0] == "two"
    f.__code__ = h.__code__
    result, tape = dcgraph.track(caller)
    assert result == "three"
    assert tape.find(kind="NestedCall")[0].child.code is h.__code__


def test_code_replaced_during_a_run_is_seen_by_the_hook():
    def f():
        return 1

    def g():
        return 2

    def run():
        a = f()
        f.__code__ = g.__code__
        return a, f()

    assert dcgraph.track(run)[0] == (1, 2)


class Proxy:
    """Forwards equality and hashing to the function it wraps, and counts its calls."""

    def __init__(self, fn):
        self.fn, self.calls = fn, 0

    def __call__(self, *args):
        self.calls += 1
        return self.fn(*args)

    def __eq__(self, other):
        return self.fn == other

    def __hash__(self):
        return hash(self.fn)


def double(x):
    return 2 * x


def test_a_proxy_equal_to_the_function_it_wraps_is_not_bypassed():
    proxy = Proxy(double)

    def f(x):
        return double(x) + proxy(x)

    result, tape = dcgraph.track(f, 3)
    assert result == 12 and proxy.calls == 1
    tape.lint()


def test_the_hook_never_hashes_a_callable():
    class Unhashable:
        def __hash__(self):
            raise AssertionError("hashed")

        def __eq__(self, other):
            raise AssertionError("compared")

        def __call__(self, x):
            return x + 1

    u = Unhashable()

    def f(x):
        return u(x) + u(x)

    result, tape = dcgraph.track(f, 1)
    assert result == 4
    tape.lint()


def test_a_function_with_a_non_string_module_is_traced():
    def g(x):
        return x + 1

    g.__module__ = 5

    def f(x):
        return g(x)

    result, tape = dcgraph.track(f, 1)
    assert result == 2 and tape.find(kind="NestedCall")[0].child is not None


def test_large_integer_constants_are_traced():
    def h(x):
        return x & 0xFFFFFFFFFFFFFFFF

    result, tape = dcgraph.track(h, -1)
    assert result == 2**64 - 1
    assert dict(tape.untraced) == {}
    assert tape.find(kind="Return")[0].value == 2**64 - 1
    import random
    rng = random.Random()

    def seeded(r):
        r.seed(5)
        return r.random()

    result, tape = dcgraph.track(seeded, rng)
    assert result == random.Random(5).random()
    assert dict(tape.untraced) == {}


def test_a_recursion_error_while_instrumenting_is_not_cached():
    def fresh(x):
        return x * 3

    def at_the_limit(depth):
        try:
            return at_the_limit(depth + 1)
        except RecursionError:
            return dcgraph.track(fresh, 2)

    result, tape = at_the_limit(0)
    assert result == 6
    # wherever the RecursionError struck, the function is traced once there is room again
    result, tape = dcgraph.track(fresh, 2)
    assert result == 6 and dict(tape.untraced) == {}
    assert tape.find(kind="Return")


def test_a_traced_closure_is_released_when_the_program_drops_it():
    class Big:
        pass

    def make():
        big = Big()

        def closure(x):
            return x if big is None else x + 1
        return closure, weakref.ref(big)

    closure, alive = make()
    assert dcgraph.track(closure, 1)[0] == 2
    del closure
    gc.collect()
    assert alive() is None


def test_the_caches_are_bounded():
    for k in range(rewrite._CACHE_BOUND + 50):
        ns = {}
        exec(f"def fn_{k}(x):\n    return x + {k}", ns)
        assert dcgraph.track(ns[f"fn_{k}"], 1)[0] == 1 + k
    assert len(rewrite._cache) <= rewrite._CACHE_BOUND
    assert len(recorder._copies) <= recorder._COPIES_BOUND
