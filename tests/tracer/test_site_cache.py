"""A call site taking its memoised traced callee itself (``inline_calls.SiteCache``): same
tapes as the hook gives, replaced code and defaults seen, nothing kept after the run."""
import gc
import weakref

import dcgraph
from dcgraph.tracer import inline_calls
from dcgraph.tracer.copies import instrumented_copy
from tracer_watch import at_close, hook_calls, run_of


def double(x):
    return 2 * x


def triple(x):
    return 3 * x


def scale(x, k=2):
    return k * x


def loop(n):
    total = 0
    for i in range(n):
        total += double(i)       # one site, called n times
    return total


def swaps_code(n):
    total = 0
    for i in range(n):
        if i == 2:
            double.__code__ = triple.__code__
        total += double(i)
    return total


def swaps_defaults(n):
    total = 0
    for i in range(n):
        if i == 2:
            scale.__defaults__ = (5,)
        total += scale(i)
    return total


def _site_caches(f):
    return [c for c in instrumented_copy(f).__code__.co_consts if type(c) is inline_calls.SiteCache]


def _calls(tape):
    return [(n.value, [a.value for a in n.child.nodes if a.kind == "Argument"])
            for n in tape.nodes if n.kind == "NestedCall"]


def test_a_site_takes_its_callee_and_the_tape_is_the_hooks():
    for _ in range(3):
        with hook_calls() as seen:
            result, tape = dcgraph.track(loop, 6)
        assert result == 30
        tape.lint()
        assert _calls(tape) == [(2 * i, [i]) for i in range(6)]
    # the first call decides (or finds the decision) and fills; the other five are the site's
    assert len(seen) <= 2 and set(seen) == {double}
    assert all(c.entry is inline_calls.NO_SITE_ENTRY for c in _site_caches(loop))


def test_code_replaced_during_a_run_is_seen_at_a_filled_site():
    original = double.__code__
    try:
        result, tape = dcgraph.track(swaps_code, 5)
        assert result == 2 * (0 + 1) + 3 * (2 + 3 + 4)
        tape.lint()
        assert [v for v, _ in _calls(tape)] == [0, 2, 6, 9, 12]
        calls = [n for n in tape.nodes if n.kind == "NestedCall"]
        assert ["2 * @0" in str(n.child) for n in calls] == [True, True, False, False, False]
    finally:
        double.__code__ = original


def test_defaults_replaced_during_a_run_are_seen_at_a_filled_site():
    try:
        result, tape = dcgraph.track(swaps_defaults, 5)
        assert result == 2 * (0 + 1) + 5 * (2 + 3 + 4)
        tape.lint()
        assert [v for v, _ in _calls(tape)] == [0, 2, 10, 15, 20]
    finally:
        scale.__defaults__ = (2,)


def test_a_filled_site_keeps_nothing_of_the_run_after_it():
    refs = []

    class Value:
        def __init__(self):
            refs.append(weakref.ref(self))

    def makes(n):
        return [double(Value()) is not None for _ in range(n)]

    def double(x):
        return x

    result, tape = dcgraph.track(makes, 4)
    assert result == [True] * 4
    tape.lint()
    caches = _site_caches(makes)
    assert caches and all(c.entry is inline_calls.NO_SITE_ENTRY for c in caches)
    assert len(refs) == 4 and all(r() is not None for r in refs)   # the tape holds them
    del tape
    gc.collect()
    assert all(r() is None for r in refs)


def test_a_site_filled_by_one_run_is_not_taken_by_another():
    # the entry names the filling run's hook: a nested run's frames call their own hook
    def outer(n):
        inner_result, inner_tape = dcgraph.track(loop, n)
        inner_tape.lint()
        return inner_result + loop(n)

    result, tape = dcgraph.track(outer, 4)
    assert result == 24
    tape.lint()
    assert len([n for n in tape.nodes if n.kind == "NestedCall"]) >= 1


def test_summary_runs_and_listed_runs_give_the_same_values():
    result, kept = dcgraph.track(loop, 5)
    result2, summary = dcgraph.track(loop, 5, values="summary")
    assert result == result2 == 20
    kept.lint()
    summary.lint()
    assert str(kept).count("double(") == str(summary).count("double(") == 5


def test_operators_guarded_mid_run_empty_the_sites():
    class Num:
        def __init__(self, v):
            self.v = v

        def __rmul__(self, other):
            return Num(other * self.v)

    def mixed(n):
        total = [double(i) for i in range(n)]
        return total + [double(Num(n)).v]

    result, tape = dcgraph.track(mixed, 3)
    assert [getattr(v, "v", v) for v in result] == [0, 2, 4, 6]
    tape.lint()
    assert str(tape).count("double(") == 4


op = double                      # rebound by the test below


def calls_op(x):
    return op(x)


def test_a_site_that_saw_a_python_function_still_records_whatever_its_global_holds():
    """``op`` was a Python function when ``calls_op`` was instrumented: its site tests the
    ``SiteCache`` first and else asks the hook (``CodeInfo.python_callees``), so a C function
    or another Python function bound later is recorded as before."""
    import math

    from dcgraph.tracer.instrument.rewrite import instrument

    global op
    try:
        for fn, x, kind, value in ((double, 3, "NestedCall", 6), (math.sqrt, 4.0, "PrimitiveCall", 2.0),
                                   (triple, 3, "NestedCall", 9), (double, 4, "NestedCall", 8)):
            op = fn
            for _ in range(2):
                result, tape = dcgraph.track(calls_op, x)
                assert result == value
                tape.lint()
                calls = [n for n in tape.nodes if n.kind in ("NestedCall", "PrimitiveCall")]
                assert [(n.kind, n.fn) for n in calls] == [(kind, fn)]
        info = instrument(calls_op.__code__, scope=calls_op.__globals__)
        assert info.python_callees
    finally:
        op = double


def alternates(n):
    total = 0
    for i in range(n):
        f = double if i % 2 else triple
        total += f(i)            # one site, its callee changing every call
    return total


def test_a_site_refilled_by_its_own_level_is_listed_once(monkeypatch):
    # the sites each level listed, as the run closes
    listed = at_close(monkeypatch, lambda run: [list(level.sites or ()) for level in run.levels])
    result, tape = dcgraph.track(alternates, 40)
    assert result == sum(2 * i if i % 2 else 3 * i for i in range(40))
    tape.lint()
    assert [len(sites) for sites in listed[0] if sites] == [1]
    assert all(c.entry is inline_calls.NO_SITE_ENTRY for c in _site_caches(alternates))


def countdown(n, step):
    return n if n <= 0 else countdown(n - step, step)


def countdown_kw(n, *, step):
    return n if n <= 0 else countdown_kw(n - step, step=step)


def _self_site_run(f, *args, **kwargs):
    """``track(f, ...)`` with the hook counting the calls of ``f`` it decides."""
    with hook_calls() as seen:
        result, tape = dcgraph.track(f, *args, **kwargs)
    tape.lint()
    return result, tape, sum(fn is f for fn in seen)


def _depths(tape):
    depth = 0
    while True:
        calls = [n for n in tape.nodes if n.kind == "NestedCall"]
        if not calls:
            return depth
        tape, depth = calls[0].child, depth + 1


def test_a_remembered_roots_recursion_skips_the_hook_from_its_first_call():
    from dcgraph.tracer import roots
    roots._ROOTS.pop(id(countdown), None)
    first, first_tape, decided = _self_site_run(countdown, 5, 1)   # decided, and remembered
    assert first == 0 and decided == 1                    # the first recursive call's hook
    sites = roots._ROOTS[id(countdown)][6][4]
    assert len(sites) == 1 and sites[0] in _site_caches(countdown)
    for _ in range(2):
        again, tape, decided = _self_site_run(countdown, 5, 1)
        assert again == 0 and decided == 0               # every call taken at the site
        assert str(tape) == str(first_tape) and _depths(tape) == 5
        assert sites[0].entry is inline_calls.NO_SITE_ENTRY   # emptied at close


def test_self_sites_keep_nothing_of_the_run():
    dcgraph.track(countdown, 2, 1)
    result, tape = dcgraph.track(countdown, 3, 1)       # a remembered root: sites filled
    run = weakref.ref(run_of(tape))
    assert result == 0 and _depths(tape) == 3
    del tape
    gc.collect()
    assert run() is None                                 # the emptied sites hold no run
    assert all(c.entry is inline_calls.NO_SITE_ENTRY for c in _site_caches(countdown))


def test_keyword_only_roots_have_no_self_sites_and_still_trace():
    from dcgraph.tracer import roots
    for _ in range(2):
        result, tape, _ = _self_site_run(countdown_kw, 4, step=2)
        assert result == 0 and _depths(tape) == 2
    assert roots._ROOTS[id(countdown_kw)][6][4] == ()
