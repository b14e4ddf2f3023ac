"""Tracing leaves a program the recursion depth it has untraced (``tracer.headroom``).

While ``track`` runs, the recursion limit is raised by exactly the frames tracing adds
(``track``'s and ``traced_call``'s, and the call hook's at the deepest point), and a traced
frame fails exactly where the plain one would (3.11: its prologue reads the run and logs, calls 3.11
counts; 3.12+: ``recorder.entry_pair``'s frame). Measured here: the deepest ``n`` for which
``f(n)`` called directly works, against ``track(f, n)`` called from the same depth, found by
bisection under a known limit, and where the ``RecursionError`` of a runaway recursion is
raised. Exact for traced frames, generators started or resumed at the limit included (their
probes' frames, one level above the generator's, make no call 3.11 counts: they read the run
as ``_state.__dict__``, since ``_state.run`` counts there), and recorded in full there.

One difference is left, by design and always one frame, lenient: a call that runs untraced
from the very deepest frame runs under the limit raised for the hook's frame, so it gets that
frame: a C function whose call 3.11 counts (``math.sin``; 3.11 only), a method bound to a new
object there (binding the copy is such a call; 3.11 only), a Python function the context keeps
primitive, a generator a summary run leaves untraced, and a first call the hook had no frame
left to decide (every version). The hook cannot tell such a call from one that needs no frame
(``len``, which the deepest frame may call untraced) without a check on every call. A first
call is decided with the limit raised for the decision (``headroom.with_room``) everywhere
except the last frame (3.12+) or two (3.11) where the call would still fit untraced.
"""
import functools
import gc
import math
import sys
import threading
import traceback

import pytest

import dcgraph
from dcgraph.tape import NestedCall, Yield
from dcgraph.tracer import recorder

HEADROOM = 3        # track's and traced_call's frames, and the hook's


def countdown(n):
    return 0 if n == 0 else 1 + countdown(n - 1)


def countdown_calling_len(n):                   # a C call no version counts
    return len(()) if n == 0 else 1 + countdown_calling_len(n - 1)


def countdown_calling_sin(n):                   # a C call 3.11 counts
    return math.sin(0.0) if n == 0 else 1 + countdown_calling_sin(n - 1)


def is_even(n):
    return True if n == 0 else is_odd(n - 1)


def is_odd(n):
    return False if n == 0 else is_even(n - 1)


class Walker:
    def down(self, n):
        return 0 if n == 0 else 1 + self.down(n - 1)


def walk(n):
    return Walker().down(n)


class Link:
    def __init__(self, rest):
        self.rest = rest

    def length(self):
        return 1 if self.rest is None else 1 + self.rest.length()


def chain_of(n):
    link = None
    for _ in range(n + 1):
        link = Link(link)
    return link


def walk_a_chain(n):                     # a method bound to a new object at every level
    return _CHAINS[n].length()


_CHAINS = {}


def counter():
    k = 0
    while True:
        yield k
        k += 1


def draw_at(n, it):
    return next(it) if n == 0 else draw_at(n - 1, it)


def resumes_a_generator_deep(n):          # made and started shallow, resumed n frames down
    it = counter()
    next(it)
    return draw_at(n, it)


def delegating(it):
    yield from it


def starts_a_generator_deep(n):          # made shallow, started (and delegating) n frames down
    return draw_at(n, delegating(counter()))


def calls_countdown(n):
    return countdown(n)


def tracks_countdown(n):                  # the same program with its callee traced, nested
    return dcgraph.track(countdown, n)[0]


def scaled_sum(x, n):                    # d/dx = n + 1
    return x if n == 0 else x + scaled_sum(x, n - 1)


_GRADIENT = dcgraph.grad(scaled_sum)
_VALUE_AND_GRADIENT = dcgraph.value_and_grad(scaled_sum)
_HESSIAN = dcgraph.hessian(scaled_sum)
_HVP = dcgraph.hvp(scaled_sum)
_GRADIENT_OF_GRADIENT = dcgraph.grad(dcgraph.grad(scaled_sum))


def value_of(x, n):                      # value_and_grad's value used: its rule's first part
    return _VALUE_AND_GRADIENT(x, n)[0]


_GRADIENT_OF_VALUE = dcgraph.grad(value_of)


class Deep:
    """An operand whose product with a float recurses ``n`` levels (d/da of ``deep * a``:
    n + 1)."""

    def __init__(self, n):
        self.n = n

    def __mul__(self, a):
        return scaled_sum(a, self.n)


class Holder:
    """No operators of its own; made by a ``functools.partial`` (C code) inside the run, so
    the ``Deep`` it holds is not seen before the product runs."""

    def __init__(self, v):
        self.v = v


def _product_of_a_held_operand():
    """``make().v * a`` in globals that never name ``Deep``, the holder made by C code (out of
    the operator-reach walk's sight): the product is a primitive node, pulled back by tracing
    ``Deep.__mul__`` (``ad.dunders``)."""
    scope = {}
    exec(compile("def product(a, make):\n    return make().v * a\n", __file__, "exec"), scope)
    return scope["product"]


product = _product_of_a_held_operand()


def forever(n):
    return forever(n + 1)


def forever_calling_sin(n):
    return forever_calling_sin(n + math.sin(0.0))


def _plain(f, n):
    return f(n)


def _plain_at_half(f, n):
    return f(0.5, n)


def _gradient(f, n):
    return _GRADIENT(0.5, n)


def _value_and_gradient(f, n):
    return _VALUE_AND_GRADIENT(0.5, n)


def _hessian(f, n):
    return _HESSIAN(0.5, n)


def _hvp(f, n):
    return _HVP(0.5, n, 2.0)


def _gradient_of_gradient(f, n):
    return _GRADIENT_OF_GRADIENT(0.5, n)


def _gradient_of_value(f, n):
    return _GRADIENT_OF_VALUE(0.5, n)


def _plain_product(f, n):
    return f(0.5, functools.partial(Holder, Deep(n)))


def _gradient_of_product(f, n):
    return dcgraph.grad(f)(0.5, functools.partial(Holder, Deep(n)))


def _vjp(f, n):
    return dcgraph.vjp(f, 0.5, n)[1](1.0)


def _traced(f, n):
    return dcgraph.track(f, n)[0]


_TAPES = []


def _traced_kept(f, n):                   # as _traced, keeping the tape
    result, tape = dcgraph.track(f, n)
    _TAPES.append(tape)
    return result


def _summarised(f, n):
    return dcgraph.track(f, n, values="summary")[0]


def _stack_depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def _works(run, f, n, errors=None) -> bool:
    """Three times: the first calls of a call site and its specialised form may count depth
    differently. The RecursionErrors go into ``errors`` when given (all three runs are made)."""
    ok = True
    for _ in range(3):
        try:
            run(f, n)
        except RecursionError as exc:
            if errors is None:
                return False
            errors.append(exc)
            ok = False
    return ok


def _deepest(run, f) -> int:
    """The largest n for which ``run(f, n)`` works, by bisection (warmed first)."""
    for _ in range(5):
        run(f, 5)
    lo, hi = 5, sys.getrecursionlimit()
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if _works(run, f, mid) else (lo, mid - 1)
    return lo


def _works_where_deepest_does(run, f, n) -> bool:
    """``_works(run, f, n)`` called as deep as ``_deepest`` calls it (from a test)."""
    for _ in range(5):
        run(f, 5)
    return _works(run, f, n)


def _overflows(run, f, n) -> list:
    """The RecursionErrors of three runs of ``run(f, n)``, made as deep as ``_deepest`` makes
    them."""
    errors = []
    _works(run, f, n, errors)
    return errors


@pytest.fixture
def known_limit():
    """A limit 400 frames above this depth, and no collection: a collection near the limit
    runs callbacks that take frames of their own (traced runs allocate more, so they would meet
    one there more often). Both restored afterwards."""
    limit, enabled = sys.getrecursionlimit(), gc.isenabled()
    sys.setrecursionlimit(_stack_depth() + 400)
    gc.disable()
    yield
    sys.setrecursionlimit(limit)
    if enabled:
        gc.enable()


def _yields(tape) -> int:
    return sum(type(node) is Yield for node in tape.walk())


def _raised_in(exc: BaseException) -> traceback.FrameSummary:
    return traceback.extract_tb(exc.__traceback__)[-1]


@pytest.mark.parametrize("f", [countdown, countdown_calling_len, is_even, walk,
                               resumes_a_generator_deep, starts_a_generator_deep],
                         ids=lambda f: f.__name__)
def test_a_traced_program_reaches_exactly_the_untraced_depth(known_limit, f):
    plain = _deepest(_plain, f)
    assert _deepest(_traced, f) == plain
    yields = _yields(dcgraph.track(f, 5)[1])     # a generator's frames, where it runs
    _TAPES.clear()
    assert _works_where_deepest_does(_traced_kept, f, plain)    # recorded in full there
    assert len(_TAPES) == 8
    for tape in _TAPES:
        assert not tape.untraced and _yields(tape) == yields
        tape.lint()
    _TAPES.clear()
    errors = _overflows(_traced, f, plain + 1)   # one deeper overflows, in the user's frame
    assert errors
    for exc in errors:
        assert _raised_in(exc).filename == __file__
        exc.tape.lint()


@pytest.mark.parametrize("f", [countdown, countdown_calling_len, is_even, walk],
                         ids=lambda f: f.__name__)
def test_a_summary_run_reaches_exactly_the_untraced_depth(known_limit, f):
    """The summary log's frames (``SummaryLog.logged``) stand where the plain log's counted
    ``append`` does, and the hook appends raw (summarised by the next ``logged``)."""
    plain = _deepest(_plain, f)
    assert _deepest(_summarised, f) == plain
    _, tape = dcgraph.track(f, plain, values="summary")
    assert not tape.untraced and tape.values == "summary"
    tape.lint()
    errors = _overflows(_summarised, f, plain + 1)
    assert errors
    for exc in errors:
        assert _raised_in(exc).filename == __file__
        exc.tape.lint()


@pytest.mark.parametrize("f", [resumes_a_generator_deep, starts_a_generator_deep],
                         ids=lambda f: f.__name__)
def test_a_summary_run_resuming_a_generator_deep_has_one_frame_more(known_limit, f):
    """A summary run calls generators untraced (``Run.instrumented_function``): the generator's
    frame, resumed through the hook by ``next``, has the hook's frame of headroom."""
    plain = _deepest(_plain, f)
    assert _deepest(_summarised, f) == plain + 1


@pytest.mark.parametrize("run", [_traced, _summarised], ids=lambda r: r.__name__)
@pytest.mark.parametrize("f", [countdown_calling_sin, walk_a_chain], ids=lambda f: f.__name__)
def test_a_counted_c_call_in_the_deepest_frame_has_one_frame_more_on_3_11(known_limit, f, run):
    _CHAINS.update((n, chain_of(n)) for n in range(sys.getrecursionlimit()))
    plain = _deepest(_plain, f)
    assert _deepest(run, f) == plain + (1 if sys.version_info < (3, 12) else 0)
    _CHAINS.clear()


def leaf(n):
    return n


def countdown_calling_leaf(n):          # (decided at the first level: traced at the last)
    return leaf(0) if n == 0 else leaf(1) + countdown_calling_leaf(n - 1)


_LEAF_KEPT_PRIMITIVE = dcgraph.Context(primitive=[leaf])


def _traced_with_the_leaf_primitive(f, n):
    return dcgraph.track(f, n, ctx=_LEAF_KEPT_PRIMITIVE)[0]


def test_a_function_run_untraced_from_the_deepest_frame_has_one_frame_more(known_limit):
    """A Python function the context keeps primitive, called from the deepest frame, runs
    under the limit raised for the hook's frame (on every version). Traced, it fails where
    it would untraced."""
    plain = _deepest(_plain, countdown_calling_leaf)
    assert _deepest(_traced, countdown_calling_leaf) == plain
    assert _deepest(_traced_with_the_leaf_primitive, countdown_calling_leaf) == plain + 1


@pytest.mark.parametrize("run", [_gradient, _value_and_gradient, _vjp], ids=lambda r: r.__name__)
def test_gradients_keep_the_untraced_depth(known_limit, run):
    plain = _deepest(_plain_at_half, scaled_sum)
    assert _deepest(run, scaled_sum) == plain
    assert _GRADIENT(0.5, plain) == plain + 1


@pytest.mark.parametrize("run", [_hessian, _hvp, _gradient_of_gradient], ids=lambda r: r.__name__)
def test_second_derivatives_keep_the_untraced_depth(known_limit, run):
    """As deep as ``f`` called in their place, and no deeper (checked at the plain depth and
    one below it: a bisection of these is slow)."""
    plain = _deepest(_plain_at_half, scaled_sum)
    assert _works_where_deepest_does(run, scaled_sum, plain)
    assert not _works_where_deepest_does(run, scaled_sum, plain + 1)
    assert run(scaled_sum, plain) == 0


def test_the_rule_of_value_and_grad_keeps_the_untraced_depth(known_limit):
    """grad of a function using ``value_and_grad``'s value: the rule traces ``f`` again,
    giving back the sweep's frames (``Sweep.callers``)."""
    plain = _deepest(_plain_at_half, value_of)
    assert _deepest(_gradient_of_value, value_of) == plain
    assert _GRADIENT_OF_VALUE(0.5, plain) == plain + 1


def test_a_pull_back_through_an_operator_method_keeps_the_untraced_depth(known_limit):
    """The backward pass traces ``Deep.__mul__`` (``ad.dunders``) as deep as the product ran
    in the user's call."""
    plain = _deepest(_plain_product, product)
    _, tape = dcgraph.track(product, 0.5, functools.partial(Holder, Deep(3)))
    assert [type(n).__name__ for n in tape.nodes].count("NestedCall") == 0    # a primitive
    assert _deepest(_gradient_of_product, product) == plain
    assert _gradient_of_product(product, plain) == plain + 1


_FRESH = "def fresh(x):\n" + "".join(
    f"    x = x * 1.5 + {k}.0\n    if x > 1e300:\n        x = 0.0\n" for k in range(40)) + \
    "    return x\n"


def _fresh():
    """A function no run has decided yet (40 statements to instrument)."""
    scope = {}
    exec(compile(_FRESH, __file__, "exec"), scope)
    return scope["fresh"]


def calls_at(n, fn):
    return fn(1.0) if n == 0 else calls_at(n - 1, fn)


_LEAF = _fresh()          # one function: decided anew in each run (its copy is cached)


def _calling_the_leaf(f, n):
    return f(n, _LEAF)


def _traced_calling_the_leaf(f, n):
    return dcgraph.track(f, n, _LEAF)[0]


_FIRST_CALLS = []


def _traced_calling_a_fresh_function(f, n):     # keeps (n, the function, the tape)
    fn = _fresh()
    result, tape = dcgraph.track(f, n, fn)
    _FIRST_CALLS.append((n, fn, tape))
    return result


def _nested_calls_of(tape, fn) -> int:
    return sum(type(node) is NestedCall and node.fn is fn for node in tape.walk())


# frames below the deepest one from which a first call is still decided (``with_room``'s frame
# must stand below the run's limit to lower it back; on 3.11 its C calls count too)
_UNDECIDED = 2 if sys.version_info < (3, 12) else 1


def test_a_function_first_called_near_the_limit_is_traced(known_limit):
    """Deciding a first call needs frames (17 for this function, instrumenting it included);
    the hook takes them with the limit raised for the decision (``headroom.with_room``). From
    the last ``_UNDECIDED`` frames where the program could make the call untraced, it runs
    untraced (``tape.untraced`` says why; the limit could not be lowered back from there), and
    one frame deeper too (it gets the hook's frame of headroom, as any call running untraced
    from the deepest frame). A later run far from the limit traces it."""
    plain = _deepest(_calling_the_leaf, calls_at)
    expected = _calling_the_leaf(calls_at, plain)
    assert _deepest(_traced_calling_the_leaf, calls_at) == plain + 1
    for n in range(plain - _UNDECIDED - 1, plain + 1):  # (3.11: calling a function new to
        # the call site takes one more frame there, traced or not: measured)
        traced = n <= plain - _UNDECIDED
        _FIRST_CALLS.clear()
        assert _works_where_deepest_does(_traced_calling_a_fresh_function, calls_at, n)
        runs = [(fn, tape) for depth, fn, tape in _FIRST_CALLS if depth == n]
        assert len(runs) == 3
        for fn, tape in runs:               # a new function each time: instrumented there
            assert tape.result == expected
            assert _nested_calls_of(tape, fn) == (1 if traced else 0)
            assert dict(tape.untraced) == ({} if traced else {fn.__code__: recorder._TOO_DEEP})
            tape.lint()
    value, tape = dcgraph.track(calls_at, 3, fn)    # the last one, far from the limit: traced
    assert value == expected and not tape.untraced and _nested_calls_of(tape, fn) == 1
    _FIRST_CALLS.clear()


def test_nested_track_keeps_the_untraced_depth(known_limit):
    assert _deepest(_traced, tracks_countdown) == _deepest(_plain, calls_countdown)


@pytest.mark.parametrize("f", [forever, forever_calling_sin], ids=lambda f: f.__name__)
def test_a_runaway_recursion_raises_in_the_users_frame(f):
    limit = sys.getrecursionlimit()
    with pytest.raises(RecursionError) as info:
        dcgraph.track(f, 0)
    last = _raised_in(info.value)
    assert (last.filename, last.name) == (__file__, f.__name__)
    info.value.tape.lint()
    assert sys.getrecursionlimit() == limit


def test_threads_running_at_once_each_keep_the_untraced_depth():
    limit, enabled = sys.getrecursionlimit(), gc.isenabled()
    found, outcomes, barrier = [], [], threading.Barrier(4)

    def measure():                       # alone: its plain depth, from a thread's bottom
        found.append(_deepest(_plain, countdown))

    def run():
        barrier.wait()
        for _ in range(3):
            outcomes.append(_traced(countdown, found[0]))
        try:
            _traced(forever, 0)
        except RecursionError as exc:
            outcomes.append(_raised_in(exc).name)

    sys.setrecursionlimit(600)
    gc.disable()
    try:
        thread = threading.Thread(target=measure)
        thread.start()
        thread.join()
        threads = [threading.Thread(target=run) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setrecursionlimit(limit)
        if enabled:
            gc.enable()
    assert sorted(outcomes, key=str) == [found[0]] * 12 + ["forever"] * 4


# -- the limit itself -------------------------------------------------------------------------
def reads_the_limit():
    return sys.getrecursionlimit()


def raises(exc):
    raise exc


class Interrupt(BaseException):
    """Like KeyboardInterrupt: not an Exception."""


def test_the_limit_is_raised_during_a_run_and_restored_exactly_after_it():
    limit = sys.getrecursionlimit()
    assert dcgraph.track(reads_the_limit)[0] == limit + HEADROOM
    assert sys.getrecursionlimit() == limit
    nested = dcgraph.track(lambda: (reads_the_limit(), dcgraph.track(reads_the_limit)[0]))[0]
    assert nested == (limit + HEADROOM, limit + 2 * HEADROOM - 1)   # one hook, two pairs
    assert sys.getrecursionlimit() == limit
    for exc in (ValueError("v"), KeyboardInterrupt(), Interrupt(), RecursionError("r")):
        with pytest.raises(type(exc)):
            dcgraph.track(raises, exc)
        assert sys.getrecursionlimit() == limit


def test_a_limit_the_program_sets_during_a_run_stays_its_limit():
    limit = sys.getrecursionlimit()
    try:
        dcgraph.track(sys.setrecursionlimit, limit + 500)
        assert sys.getrecursionlimit() == limit + 500
        dcgraph.track(countdown, 10)
        assert sys.getrecursionlimit() == limit + 500
    finally:
        sys.setrecursionlimit(limit)


def test_a_generator_resumed_after_its_run_leaves_the_limit_alone():
    limit = sys.getrecursionlimit()
    it, _ = dcgraph.track(lambda: _started(counter()))
    assert [next(it) for _ in range(3)] == [1, 2, 3]
    assert sys.getrecursionlimit() == limit


def _started(it):
    next(it)
    return it
