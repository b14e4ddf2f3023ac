"""Call sites that decide C callables inline (``tracer.inline_calls``): the hook is not called
for them, the tape is the one the hook would have recorded, and a substituting context still
sees every call, also while other runs record in other threads."""
import math
import threading
import types

import numpy as np

import dcgraph
from dcgraph.tracer.inline_calls import (ALWAYS_PRIMITIVE, INLINE_KINDS, INLINE_OWNERS, INLINE_PRIMITIVES,
                                         PLAIN_METHODS, substitution_ended, substitution_started)
from tracer_watch import hook_calls


def sin_loop(x, n):
    s = 0.0
    for i in range(n):
        s += math.sin(x * i)
    return s


def cos_loop(x, n):
    """``sin_loop`` with ``cos``, accumulated the same way (``sum`` compensates from 3.12)."""
    s = 0.0
    for i in range(n):
        s += math.cos(x * i)
    return s


def mixed(xs, rng):
    total = 0.0
    for x in xs:
        total += helper(x) + rng.random() + float(np.add(x, 1.0)) + len(xs)
    return total


def helper(x):
    return math.cos(x) * 2.0


class SinToCos(dcgraph.Context):
    def substitute(self, fn, depth):
        return math.cos if fn is math.sin else None


def _hook_calls(f, *args, **kwargs):
    """The callables the call hook was asked about during ``track(f, *args)``."""
    with hook_calls() as seen:
        result, tape = dcgraph.track(f, *args, **kwargs)
    return result, tape, seen


def test_c_callables_skip_the_hook_and_are_recorded_as_primitive_calls():
    for _ in range(120):                 # warm: the adaptive interpreter specialises
        rng = np.random.default_rng(1)
        result, tape, seen = _hook_calls(mixed, [0.5, 1.5, 2.5], rng)
    # C functions, methods, ufuncs, C classes and a Cython method bound to its generator
    # (``types.MethodType`` of a pair ``plain_c_method`` accepted) never reach the hook; a
    # Python function still does, until its decision is memoised and its site has taken it
    # (``inline_calls.SiteCache``): decided, then filled, then taken at the site
    assert type(rng.random) is types.MethodType
    assert type(rng) in INLINE_OWNERS and type(rng.random.__func__) in INLINE_KINDS
    assert seen == [helper] * 2
    assert result == mixed([0.5, 1.5, 2.5], np.random.default_rng(1))
    tape.lint()
    calls = [n.fn for n in tape.nodes if n.kind == "PrimitiveCall"]
    assert [c for c in calls if c is np.add or c is float or c is len] == [np.add, float, len] * 3
    assert [getattr(c, "__name__", None) for c in calls].count("random") == 3
    # the same tape as with every site calling the hook (the sites' set emptied meanwhile)
    token = object()
    substitution_started(token)
    try:
        _, hooked, seen_all = _hook_calls(mixed, [0.5, 1.5, 2.5], np.random.default_rng(1))
    finally:
        substitution_ended(token)
    assert any(c is len for c in seen_all)
    hooked.lint()
    assert str(hooked) == str(tape)
    assert [n.fn for n in hooked.walk() if n.kind == "PrimitiveCall"] == \
        [n.fn for n in tape.walk() if n.kind == "PrimitiveCall"]
    assert [n.fn for n in tape.nodes if n.kind == "NestedCall"] == [helper] * 3
    assert [n.value for n in tape.find(fn=len)] == [3, 3, 3]


def test_a_substituting_context_sees_every_call_and_the_sites_are_inline_again_after():
    for _ in range(60):
        result, tape, seen = _hook_calls(sin_loop, 0.3, 20, ctx=SinToCos())
        assert result == cos_loop(0.3, 20)
        assert seen.count(math.sin) == 20
        assert len(INLINE_PRIMITIVES) == len(ALWAYS_PRIMITIVE)
    tape.lint()
    assert [n.value for n in tape.find(fn=math.sin)] == [math.cos(0.3 * i) for i in range(20)]
    _, _, seen = _hook_calls(sin_loop, 0.3, 20)
    assert seen.count(math.sin) == 0


def test_a_substituting_run_that_raises_refills_the_sites():
    def fails(x):
        math.sin(x)
        raise KeyError(x)

    try:
        dcgraph.track(fails, 1.0, ctx=SinToCos())
    except KeyError as exc:
        assert exc.tape.find(fn=math.sin)[0].value == math.cos(1.0)
    else:
        raise AssertionError("KeyError expected")
    assert INLINE_PRIMITIVES == ALWAYS_PRIMITIVE
    assert (INLINE_OWNERS, INLINE_KINDS) == sited(PLAIN_METHODS)


def sited(pairs):
    """The classes of the objects and of the functions of accepted pairs, as the sites test."""
    return {owner for owner, _ in pairs}, {kind for _, kind in pairs}


def draws(rng):
    return rng.random() + rng.random()


def test_bound_c_methods_reach_the_hook_while_a_substituting_run_is_active():
    draws(np.random.default_rng(0))
    dcgraph.track(draws, np.random.default_rng(0))          # the pair accepted
    pair = (np.random.Generator, type(np.random.default_rng(0).random.__func__))
    assert pair[0] in INLINE_OWNERS and pair[1] in INLINE_KINDS and pair in PLAIN_METHODS
    token = object()
    substitution_started(token)
    try:
        assert not INLINE_OWNERS and not INLINE_KINDS and pair in PLAIN_METHODS
        for _ in range(30):
            result, tape, seen = _hook_calls(draws, np.random.default_rng(2))
            assert [getattr(c, "__name__", None) for c in seen] == ["random", "random"]
    finally:
        substitution_ended(token)
    assert (INLINE_OWNERS, INLINE_KINDS) == sited(PLAIN_METHODS)
    _, inline, seen = _hook_calls(draws, np.random.default_rng(2))
    assert seen == [] and result == draws(np.random.default_rng(2))
    tape.lint()
    inline.lint()
    assert str(inline) == str(tape)


def test_substitution_in_one_thread_while_another_records_plain():
    errors, barrier = [], threading.Barrier(2)

    def plain():
        barrier.wait()
        for _ in range(200):
            result, tape = dcgraph.track(sin_loop, 0.3, 30)
            if result != sin_loop(0.3, 30) or len(tape.find(fn=math.sin)) != 30:
                errors.append("plain run wrong")

    def substituted():
        barrier.wait()
        for _ in range(200):
            result, tape = dcgraph.track(sin_loop, 0.3, 30, ctx=SinToCos())
            if result != cos_loop(0.3, 30):
                errors.append("substitution missed")

    threads = [threading.Thread(target=plain), threading.Thread(target=substituted)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert INLINE_PRIMITIVES == ALWAYS_PRIMITIVE


class ForwardingProxy:
    """Equal to (and hashed as) what it wraps: never taken for it."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, x):
        return self.fn(x) + 1.0

    def __eq__(self, other):
        return self.fn == other

    def __hash__(self):
        return hash(self.fn)


def test_a_proxy_of_a_c_function_goes_to_the_hook_and_is_traced():
    proxy = ForwardingProxy(math.sin)

    def f(x):
        return proxy(x) + math.sin(x)

    for _ in range(30):
        result, tape, seen = _hook_calls(f, 0.5)
    assert result == 2 * math.sin(0.5) + 1.0
    assert seen[0] is proxy and seen[1:] == []
    tape.lint()
    (call,) = [n for n in tape.nodes if n.kind == "NestedCall"]
    assert call.value == math.sin(0.5) + 1.0


def calls_math_sin(x):
    return math.sin(x)


def test_a_site_whose_callable_was_rebound_after_instrumenting_decides_afresh(monkeypatch):
    sin = math.sin
    for _ in range(30):                  # instrumented expecting math.sin at the site
        _, _, seen = _hook_calls(calls_math_sin, 0.5)
        assert seen == []

    def python_sin(x):
        return x * 2.0

    monkeypatch.setattr(math, "sin", python_sin)
    for _ in range(30):
        result, tape, seen = _hook_calls(calls_math_sin, 0.5)
        assert result == 1.0 and seen == [python_sin]
    tape.lint()
    assert [n.fn for n in tape.nodes if n.kind == "NestedCall"] == [python_sin]
    monkeypatch.setattr(math, "sin", math.cos)      # another C function: the type test
    for _ in range(30):
        result, tape, seen = _hook_calls(calls_math_sin, 0.5)
        assert result == math.cos(0.5) and seen == []
    assert [n.fn for n in tape.nodes if n.kind == "PrimitiveCall"] == [math.cos]
    monkeypatch.setattr(math, "sin", sin)
    result, tape = dcgraph.track(calls_math_sin, 0.5, ctx=SinToCos())   # substituted
    assert result == math.cos(0.5) and tape.find(fn=math.sin)[0].value == math.cos(0.5)
