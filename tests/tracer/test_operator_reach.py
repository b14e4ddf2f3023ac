"""Objects of a class with Python operators reached before any call (``tracer.operator_reach``):
through an attribute of an argument, deeper attributes and items, a module's or a class's
attribute, a closure cell holding a container, a default, a primitive call's result
(``copy.copy(box).v``, ``getattr(box, "v")``). Each operator is a nested call whose method
body is in the tape, and gradients match finite differences. The walk runs no user code;
what lies past its bound stays a primitive node with an exact gradient."""
from __future__ import annotations

import copy
import math
import types

import pytest

import dcgraph
from dcgraph import NestedCall, PrimitiveCall
from dcgraph.tracer import operator_guards, operator_reach

from test_operator_guards import V, _central, _function, _methods, _printout


class Box:
    def __init__(self, v):
        self.v = v


class Slotted:
    __slots__ = ("inner",)

    def __init__(self, inner):
        self.inner = inner


class Config:
    SCALE = V(2.0, 3.0)           # a class attribute


_module = types.ModuleType("shapes")
_module.ORIGIN = V(2.0, 3.0)
_package = types.ModuleType("geometry")
_package.shapes = _module


def _closure():
    table = {"origin": [V(2.0, 3.0)]}

    def f(a):
        return (table["origin"][0] * a)[0]
    return f


_DEFAULT = Box(V(2.0, 3.0))

# name -> (source or function, scope, arguments after ``a``, closed form of a, methods)
CASES = {
    "attribute": ("def f(a, box):\n    return (box.v * a)[0]\n", {}, (Box(V(2.0, 3.0)),),
                  lambda a: 2.0 * a, ["__mul__", "__getitem__"]),
    "nested attribute": ("def f(a, outer):\n    return (outer.v.v * a + outer.v.v)[1]\n", {},
                         (Box(Box(V(2.0, 3.0))),), lambda a: 3.0 * a + 3.0,
                         ["__mul__", "__add__", "__getitem__"]),
    "item of an attribute": ("def f(a, box):\n    return (-box.v[1]['w'] * a)[0]\n", {},
                             (Box([0, {"w": V(2.0, 3.0)}]),), lambda a: -2.0 * a,
                             ["__neg__", "__mul__", "__getitem__"]),
    "slot": ("def f(a, s):\n    return (s.inner.v * a)[1]\n", {},
             (Slotted(Box(V(2.0, 3.0))),), lambda a: 3.0 * a, ["__mul__", "__getitem__"]),
    "nested item": ("def f(a, rows):\n    return (rows[1][0] * a)[0]\n", {},
                    ([[1.0], (V(2.0, 3.0),)],), lambda a: 2.0 * a, ["__mul__", "__getitem__"]),
    "module attribute": ("def f(a):\n    return (shapes.ORIGIN * a)[1]\n", {"shapes": _module},
                         (), lambda a: 3.0 * a, ["__mul__", "__getitem__"]),
    "package attribute": ("def f(a):\n    return (geometry.shapes.ORIGIN * a)[0]\n",
                          {"geometry": _package}, (), lambda a: 2.0 * a,
                          ["__mul__", "__getitem__"]),
    "class attribute": ("def f(a):\n    return (Config.SCALE * a)[1]\n", {"Config": Config},
                        (), lambda a: 3.0 * a, ["__mul__", "__getitem__"]),
    "closure cell": (_closure(), None, (), lambda a: 2.0 * a, ["__mul__", "__getitem__"]),
    "default": ("def f(a, box=DEFAULT):\n    return (box.v * a)[0]\n", {"DEFAULT": _DEFAULT},
                (), lambda a: 2.0 * a, ["__mul__", "__getitem__"]),
    "copy of the holder": ("def f(a, box):\n    return (copy.copy(box).v * a)[0]\n",
                           {"copy": copy}, (Box(V(2.0, 3.0)),), lambda a: 2.0 * a,
                           ["__mul__", "__getitem__"]),
    "in place": ("def f(a, box):\n    w = box.v\n    w *= a\n    return w[0]\n", {},
                 (Box(V(2.0, 3.0)),), lambda a: 2.0 * a, ["__mul__", "__getitem__"]),
    "getattr": ("def f(a, box):\n    return (getattr(box, 'v') * a)[1]\n", {},
                (Box(V(2.0, 3.0)),), lambda a: 3.0 * a, ["__mul__", "__getitem__"]),
}


def _case(name):
    source, scope, rest, closed_form, methods = CASES[name]
    if scope is None:
        return source, rest, closed_form, methods
    namespace = dict(scope)
    exec(compile(source, "<reach>", "exec"), namespace)
    return namespace["f"], rest, closed_form, methods


@pytest.mark.parametrize("name", sorted(CASES))
def test_operators_reached_before_any_call_are_nested_calls(name):
    f, rest, closed_form, methods = _case(name)
    value, tape = dcgraph.track(f, 1.5, *rest)
    tape.lint()
    assert value == pytest.approx(closed_form(1.5))
    assert _methods(tape)[-len(methods):] == methods
    assert not any(type(n) is PrimitiveCall and n.fn in operator_guards.DUNDERS
                   and any(isinstance(x.value, V) for x in n.args) for n in tape.walk())
    assert operator_guards.GUARDING == []
    grad = dcgraph.grad(f, argnums=0)(1.5, *rest)
    assert grad == pytest.approx(_central(lambda a: closed_form(a), 1.5), rel=1e-6)
    assert grad == pytest.approx(_central(lambda a: f(a, *rest), 1.5), rel=1e-6)


EXPECTED_ATTRIBUTE = """\
@0: Argument a = 1.5
@1: Argument box = <Box>
@2: @1.v = <V>
@3: __mul__(@2, @0) = <V> (final state, after @[3.6.15.4])
    @0: Argument self = <V>
    @1: Argument s = 1.5
    @2: @0.x = 2.0
    @3: @2 * @1 = 3.0
    @4: @0.y = 3.0
    @5: @4 * @1 = 4.5
    @6: V(@3, @5) = <V> (final state, after @[3.6.15.4])
    @7: return @[3.6.15.4] = <V>
@4: __getitem__(@[3.6.15.4], 0) = 3.0
    @0: Argument self = <V>
    @1: Argument k = 0
    @2: @[3.6.15.4].x = 3.0
    @3: @[3.6.15.4].y = 4.5
    @4: build_tuple(@2, @3) = (3.0, 4.5)
    @5: @4[@1] = 3.0
    @6: return @5 = 3.0
@5: return @4 = 3.0"""

EXPECTED_MODULE = """\
@0: Argument a = 1.5
@1: Constant shapes = <module 'shapes'>
@2: @1.ORIGIN = <V>
@3: __mul__(@2, @0) = <V> (final state, after @[3.6.15.4])
    @0: Argument self = <V>
    @1: Argument s = 1.5
    @2: @0.x = 2.0
    @3: @2 * @1 = 3.0
    @4: @0.y = 3.0
    @5: @4 * @1 = 4.5
    @6: V(@3, @5) = <V> (final state, after @[3.6.15.4])
    @7: return @[3.6.15.4] = <V>
@4: __getitem__(@[3.6.15.4], 1) = 4.5
    @0: Argument self = <V>
    @1: Argument k = 1
    @2: @[3.6.15.4].x = 3.0
    @3: @[3.6.15.4].y = 4.5
    @4: build_tuple(@2, @3) = (3.0, 4.5)
    @5: @4[@1] = 4.5
    @6: return @5 = 4.5
@5: return @4 = 4.5"""


@pytest.mark.parametrize("name, expected", [("attribute", EXPECTED_ATTRIBUTE),
                                            ("module attribute", EXPECTED_MODULE)])
def test_printouts_show_the_method_bodies(name, expected):
    f, rest, _, _ = _case(name)
    _, tape = dcgraph.track(f, 1.5, *rest)
    tape.lint()
    assert _printout(tape) == expected


class Watched:
    """Reading anything through the instance runs code: the walk must not."""

    reads: list = []

    def __init__(self, v):
        self.v = v

    def __getattribute__(self, name):
        Watched.reads.append(name)
        return object.__getattribute__(self, name)

    @property
    def hidden(self):
        Watched.reads.append("hidden")
        return V(0.0, 0.0)


def test_the_walk_runs_no_user_code():
    Watched.reads.clear()
    watched = Watched(V(2.0, 3.0))
    Watched.reads.clear()
    assert operator_guards.operator_arguments((watched,), {}, dcgraph.Context())
    assert operator_guards.operator_arguments(([Watched(1.0)],), {}, dcgraph.Context()) is False
    assert Watched.reads == []


def test_plain_data_leaves_the_guards_off():
    seen = []

    def plain(x, rows, box):
        seen.append(bool(operator_guards.GUARDING))
        return math.sin(x) * rows[1][0] + box.v

    rows = [[float(i), float(i + 1)] for i in range(50)]
    _, tape = dcgraph.track(plain, 1.5, rows, Box(2.0))
    tape.lint()
    assert seen == [False] and operator_guards.GUARDING == []


def test_past_its_bound_the_walk_stops_and_what_lies_beyond_differentiates_exactly():
    """The walk visits at most ``WALK_BOUND`` objects one by one, breadth first: a vector
    deeper than that many plain objects stays unseen, its operator a primitive node whose
    gradient ``ad.dunders`` pulls back through the methods."""
    boxes = [Box(float(i)) for i in range(operator_reach.WALK_BOUND + 1)]
    ctx = dcgraph.Context()
    assert operator_guards.operator_arguments((boxes[:10] + [Box(V(2.0, 3.0))],), {}, ctx)
    items = boxes + [Box(V(2.0, 3.0))]      # the vector one level below the bound
    assert not operator_guards.operator_arguments((items,), {}, ctx)
    f = _function("def f(a, items):\n    return (items[-1].v * a)[1]\n", {})
    value, tape = dcgraph.track(f, 1.5, items)
    tape.lint()
    assert value == 4.5 and not any(type(n) is NestedCall for n in tape.walk())
    grad = dcgraph.grad(f, argnums=0)(1.5, items)
    assert grad == pytest.approx(3.0, rel=1e-12)
    assert grad == pytest.approx(_central(lambda a: f(a, items), 1.5), rel=1e-6)


def test_library_objects_and_standard_modules_are_not_entered():
    library = type("Holder", (), {"__module__": "numpy.holders"})
    held = library()
    held.v = V(1.0, 2.0)
    assert not operator_guards.operator_arguments((held,), {}, dcgraph.Context())
    assert operator_guards.operator_arguments((Box(V(1.0, 2.0)),), {}, dcgraph.Context())
    f, _, _, _ = _case("module attribute")
    assert operator_guards.guards_operators(f, dcgraph.Context())
    math.ORIGIN_FOR_TEST = V(1.0, 2.0)      # the standard library's attributes are not read
    try:
        g = _function("def f(a):\n    return (math.ORIGIN_FOR_TEST * a)[0]\n", {"math": math})
        _, tape = dcgraph.track(g, 1.5)
        tape.lint()
        assert not any(type(n) is NestedCall for n in tape.walk())
        assert dcgraph.grad(g)(1.5) == pytest.approx(1.0, rel=1e-12)
    finally:
        del math.ORIGIN_FOR_TEST


def test_a_long_list_of_objects_is_walked_within_the_bound():
    many = [Box(float(i)) for i in range(200_000)]
    seen: dict = {}
    assert not operator_guards.operator_arguments((many,), {}, dcgraph.Context(), None, seen)
    assert len(seen) <= operator_reach.WALK_BOUND + 1     # the list and the boxes visited


def test_data_in_containers_is_cleared_without_copying_array_buffers():
    """Nested builtin containers of numbers pass without a walk, and an array inside one is
    never copied (before, ``marshal.dumps`` copied its buffer: 40 MB here, per ``track``)."""
    import tracemalloc

    import numpy as np
    nested = [[float(i * j) for j in range(5)] for i in range(30)]
    assert operator_reach._plain_data(nested) and operator_reach._plain_data({"a": (1, 2.0, "s")})
    data = {"X": np.zeros(5_000_000), "names": ["a", "b"]}
    assert not operator_reach._plain_data(data)          # the array is for the walk
    assert not operator_reach._plain_data([[1.0], [Box(2.0)]])
    cyclic: list = [1.0]
    cyclic.append(cyclic)
    assert not operator_reach._plain_data(cyclic)
    tracemalloc.start()
    try:
        assert not operator_guards.operator_arguments(([data],), {}, dcgraph.Context())
        assert tracemalloc.get_traced_memory()[1] < 1_000_000
    finally:
        tracemalloc.stop()


class Payload:
    """A plain object the walk visits through its holder's attribute."""


def test_a_summary_run_keeps_no_walked_object_alive():
    """The walk remembers what it visited (kept alive, so ids stay theirs) only in a run that
    keeps values; in a summary run an object the program drops dies when it does."""
    import weakref

    def drops(h):
        h.item = None
        return died[0]

    for values, expected in (("summary", True), ("keep", False)):
        died = [False]
        holder = Box(1.0)
        holder.item = Payload()
        weakref.finalize(holder.item, died.__setitem__, 0, True)
        result, tape = dcgraph.track(drops, holder, values=values)
        assert result is expected
        tape.lint()
