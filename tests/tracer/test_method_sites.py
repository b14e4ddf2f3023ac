"""Method calls on C objects taken at the call site by the object's class (3.11's method
sites, ``tracer.method_sites``): the site logs nothing once filled, the tape is the one the
deciding path records, and objects of other classes (Python methods of the same name, list
subclasses), substituting contexts, raising lookups and unfit classes still decide."""
import sys

import numpy as np
import pytest

import dcgraph
from dcgraph.tracer import method_sites
from dcgraph.tracer.copies import instrumented_copy
from dcgraph.tracer.events import CALL_MARK
from dcgraph.tracer.instrument.rewrite import instrument
from dcgraph.tracer.method_sites import MethodSite, filled
from tracer_watch import hook_calls, run_of

pytestmark = pytest.mark.skipif(sys.version_info[:2] != (3, 11),
                                reason="method sites are 3.11's (LOAD_METHOD)")


def draws(rng, n):
    total = 0.0
    for _ in range(n):
        total += rng.random()
    return total


def draws_normal(rng, mu, n):
    xs = []
    for _ in range(n):
        xs.append(rng.normal(mu, 2.0))
    return xs


def geom(n, beta, rng):
    return n if rng.random() < beta else geom(n + 1, beta, rng)


class Counter:
    """A Python class with a ``random`` method: traced, whatever the site saw before."""

    def __init__(self):
        self.k = 0

    def random(self):
        self.k += 1
        return 0.25 * self.k


class Tracked(list):
    def append(self, x):
        list.append(self, 2 * x)


def _sites(f) -> list:
    return [c for c in instrumented_copy(f).__code__.co_consts if type(c) is MethodSite]


def _log(f, *args) -> list:
    """The raw event log of ``track(f, *args)``."""
    _, tape = dcgraph.track(f, *args)
    return run_of(tape).log


def test_a_filled_site_logs_nothing_and_the_tape_is_the_deciding_paths():
    first = dcgraph.track(draws, np.random.default_rng(5), 4)
    sites = _sites(draws)
    assert [s.name for s in sites] == ["random"] and sites[0].owner is np.random.Generator
    result, tape = dcgraph.track(draws, np.random.default_rng(5), 4)
    assert result == first[0] == draws(np.random.default_rng(5), 4)
    tape.lint()
    assert str(tape) == str(first[1])
    calls = [n for n in tape.nodes if n.kind == "PrimitiveCall" and n.method]
    assert len(calls) == 4
    for node in calls:
        assert node.fn is np.random.Generator.random and node.args[0].kind == "Argument"
    log = _log(draws, np.random.default_rng(5), 4)
    assert CALL_MARK not in log
    assert not any(getattr(e, "__name__", None) == "random" for e in log)


def test_arguments_are_copied_on_both_paths():
    expected = draws_normal(np.random.default_rng(1), 3.0, 3)
    for _ in range(2):               # deciding (and filling), then the filled site
        result, tape = dcgraph.track(draws_normal, np.random.default_rng(1), 3.0, 3)
        assert result == expected
        tape.lint()
        normal = [n for n in tape.nodes if getattr(n, "fn", None) is np.random.Generator.normal]
        assert len(normal) == 3
        assert all([a.value for a in n.args][1:] == [3.0, 2.0] for n in normal)
        assert all(n.args[0].kind == "Argument" and n.args[1].kind == "Argument"
                   for n in normal)
    # (``xs.append(rng.normal(...))``: an argument that is a call, so a deciding site)
    assert {s.name: s.owner for s in _sites(draws_normal)} == {"normal": np.random.Generator}


def test_an_object_of_another_class_is_decided_at_a_filled_site():
    dcgraph.track(draws, np.random.default_rng(0), 2)
    assert _sites(draws)[0].owner is np.random.Generator
    result, tape = dcgraph.track(draws, Counter(), 3)
    assert result == 0.25 + 0.5 + 0.75
    tape.lint()
    nested = [n for n in tape.nodes if n.kind == "NestedCall"]
    assert [n.value for n in nested] == [0.25, 0.5, 0.75]
    assert _sites(draws)[0].owner is np.random.Generator      # kept


def fills(xs, n):
    for i in range(n):
        xs.append(i)
    return xs


def test_a_list_subclass_with_a_python_method_is_traced_at_a_filled_list_site():
    assert dcgraph.track(fills, [], 3)[0] == [0, 1, 2]
    assert [(s.name, s.owner) for s in _sites(fills)] == [("append", list)]
    result, tape = dcgraph.track(fills, Tracked(), 3)
    assert result == [0, 2, 4]
    tape.lint()
    assert sum(n.kind == "NestedCall" for n in tape.nodes) == 3


def test_geom_records_every_level():
    for _ in range(3):
        result, tape = dcgraph.track(geom, 0, 0.3, np.random.default_rng(7))
        tape.lint()
    assert result == geom(0, 0.3, np.random.default_rng(7))
    depth, node = 0, tape
    while True:
        calls = [n for n in node.nodes if n.kind == "NestedCall"]
        draws_ = [n for n in node.nodes if getattr(n, "fn", None) is np.random.Generator.random]
        assert len(draws_) == 1
        if not calls:
            break
        depth, node = depth + 1, calls[0].child
    assert depth == result


def test_a_substituting_context_sees_calls_at_a_filled_site():
    class Fixed(dcgraph.Context):
        def substitute(self, fn, depth):
            return (lambda: 0.125) if getattr(fn, "__name__", None) == "random" else None

    dcgraph.track(draws, np.random.default_rng(0), 2)
    assert _sites(draws)[0].owner is np.random.Generator
    result, tape = dcgraph.track(draws, np.random.default_rng(0), 3, ctx=Fixed())
    assert result == 3 * 0.125
    tape.lint()
    result, tape = dcgraph.track(draws, np.random.default_rng(0), 3)    # inline again
    assert result == draws(np.random.default_rng(0), 3)


def test_a_missing_method_raises_in_the_program_and_the_tape_says_so():
    def calls_nope(x):
        try:
            return x.nope()
        except AttributeError:
            return -1

    for x in (1, 2.0, np.random.default_rng(0)):
        result, tape = dcgraph.track(calls_nope, x)
        assert result == -1
        tape.lint()


def test_hook_calls_stop_once_a_site_is_filled():
    dcgraph.track(draws, np.random.default_rng(0), 2)
    with hook_calls() as seen:
        dcgraph.track(draws, np.random.default_rng(0), 5)
    assert seen == []


def test_summary_runs_have_no_method_sites():
    result, tape = dcgraph.track(draws, np.random.default_rng(3), 3, values="summary")
    assert result == draws(np.random.default_rng(3), 3)
    tape.lint()
    assert sum(getattr(n, "fn", None) is getattr for n in tape.nodes) == 3   # `@0.random`
    summary_code = instrumented_copy(draws, None, False, False).__code__
    assert not any(type(c) is MethodSite for c in summary_code.co_consts)


@pytest.mark.parametrize("obj, name, fits", [
    (np.random.default_rng(0), "random", True),
    ([], "append", True),
    ({}, "get", True),
    ("ab", "upper", True),
    (np.zeros(2), "sum", True),
    (np, "sum", False),                      # a module: an instance dict
    (super(Tracked, Tracked()), "append", False),   # its own attribute lookup
    (Tracked(), "__len__", False),           # a Python class
    (list, "mro", False),                    # a class
    (1, "bit_length", True),
])
def test_which_classes_a_site_keeps(obj, name, fits):
    site = MethodSite(name)
    filled(site, getattr(obj, name))
    if fits:
        assert site.owner is type(obj)
    else:
        assert site.owner is False


def test_a_callable_not_bound_to_its_object_is_not_kept():
    site = MethodSite("random")
    filled(site, np.random.default_rng(0).normal)      # another name's method
    assert site.owner is False
    site = MethodSite("append")
    filled(site, print)                                 # a function, bound to no object
    assert site.owner is False
    assert method_sites.GENERIC_GETATTRIBUTE >= {object.__getattribute__, list.__getattribute__}


def test_the_hook_fills_a_site_once_and_the_site_takes_the_rest():
    def draws_fresh(rng, n):     # a code object of its own: its site starts empty
        total = 0.0
        for _ in range(n):
            total += rng.random()
        return total

    dcgraph.track(draws, np.random.default_rng(0), 2)       # the pair accepted
    with hook_calls(lambda fn, site: (getattr(fn, "__name__", None), type(site).__name__)) \
            as seen:
        result, tape = dcgraph.track(draws_fresh, np.random.default_rng(4), 5)
        again, _ = dcgraph.track(draws_fresh, np.random.default_rng(4), 5)
    assert result == again == draws(np.random.default_rng(4), 5)
    tape.lint()
    assert seen == [("random", "MethodSite")]
    assert _sites(draws_fresh)[0].owner is np.random.Generator


def integers_or_none(rng, lo, hi):
    try:
        return rng.integers(lo, hi)
    except ValueError:
        return None


def integers(rng, lo, hi):
    return rng.integers(lo, hi)


def test_a_method_raising_at_a_filled_site_is_recorded_as_raising():
    for _ in range(2):           # deciding (and filling), then the filled site
        result, tape = dcgraph.track(integers_or_none, np.random.default_rng(0), 0, 5)
        assert 0 <= result < 5
        tape.lint()
        result, tape = dcgraph.track(integers_or_none, np.random.default_rng(0), 5, 0)
        assert result is None
        tape.lint()
        assert any(n.kind == "Return" and n.value is None for n in tape.nodes)
    assert _sites(integers_or_none)[0].owner is np.random.Generator
    dcgraph.track(integers, np.random.default_rng(0), 0, 5)
    with pytest.raises(ValueError) as info:
        dcgraph.track(integers, np.random.default_rng(0), 5, 0)
    info.value.tape.lint()
    assert info.value.tape.raised


def stream(rng, n):
    for _ in range(n):
        yield rng.random()


def consumes(rng, n):
    return sum(stream(rng, n))


def test_a_traced_generator_takes_its_method_site_too():
    expected = consumes(np.random.default_rng(2), 4)
    first = None
    for _ in range(3):
        result, tape = dcgraph.track(consumes, np.random.default_rng(2), 4)
        assert result == expected
        tape.lint()
        first = first or str(tape)
        assert str(tape) == first
    info = instrument(stream.__code__, scope=stream.__globals__)
    sites = [c for c in info.new_code.co_consts if type(c) is MethodSite]
    assert [(s.name, s.owner) for s in sites] == [("random", np.random.Generator)]
