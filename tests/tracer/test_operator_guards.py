"""When operator sites take their guarded path (``tracer.operator_guards``), on 3.11, 3.12 and
3.13: a vector class's operators (unary ``+``, slices, properties included: 3.12's
``CALL_INTRINSIC_1``/``BINARY_SLICE``) print as the same nested calls on every version, and a
run switches the guards on when it first meets such a class, also for the frame already
running (a factory's result, a constructor reached through a computed module attribute, a
bound method of an object out of reach of ``operator_reach``). Operators that run before
anything showed such a class (on an object made by ``pickle.loads``) stay primitive nodes,
differentiated through ``ad.dunders``."""
from __future__ import annotations

import math
import pickle
import re
import types

import pytest

import dcgraph
from dcgraph import NestedCall, PrimitiveCall
from dcgraph.tracer import operator_guards


class V:
    """A two-vector whose operators return new vectors; ``norm2`` is a property."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __add__(self, other):
        return V(self.x + other.x, self.y + other.y)

    def __mul__(self, s):
        return V(self.x * s, self.y * s)

    __rmul__ = __mul__

    def __neg__(self):
        return V(-self.x, -self.y)

    def __pos__(self):
        return V(self.x, self.y)

    def __getitem__(self, k):
        return (self.x, self.y)[k]

    def scaled(self, s):
        return V(self.x * s, self.y * s)

    @property
    def norm2(self):
        return self.x * self.x + self.y * self.y


def vector(a):
    v = V(a, 2.0)
    w = +v + 3.0 * -v
    head = w[0:1]
    return w.norm2 + head[0] * v[1]


def vector_closed_form(a):
    w = (a - 3.0 * a, 2.0 - 6.0)
    return w[0] ** 2 + w[1] ** 2 + w[0] * 2.0


EXPECTED_VECTOR = """\
@0: Argument a = 1.5
@1: v = V(@0, 2.0) = <V> (final state, after @[1.15.4])
@2: __pos__(@[1.15.4]) = <V> (final state, after @[2.3.13.4])
    @0: Argument self = <V>
    @1: @[1.15.4].x = 1.5
    @2: @[1.15.4].y = 2.0
    @3: V(@1, @2) = <V> (final state, after @[2.3.13.4])
    @4: return @[2.3.13.4] = <V>
@3: __neg__(@[1.15.4]) = <V> (final state, after @[3.5.13.4])
    @0: Argument self = <V>
    @1: @[1.15.4].x = 1.5
    @2: -@1 = -1.5
    @3: @[1.15.4].y = 2.0
    @4: -@3 = -2.0
    @5: V(@2, @4) = <V> (final state, after @[3.5.13.4])
    @6: return @[3.5.13.4] = <V>
@4: __mul__(@[3.5.13.4], 3.0) = <V> (final state, after @[4.6.13.4])
    @0: Argument self = <V>
    @1: Argument s = 3.0
    @2: @[3.5.13.4].x = -1.5
    @3: @2 * @1 = -4.5
    @4: @[3.5.13.4].y = -2.0
    @5: @4 * @1 = -6.0
    @6: V(@3, @5) = <V> (final state, after @[4.6.13.4])
    @7: return @[4.6.13.4] = <V>
@5: w = __add__(@[2.3.13.4], @[4.6.13.4]) = <V> (final state, after @[5.8.13.4])
    @0: Argument self = <V>
    @1: Argument other = <V>
    @2: @[2.3.13.4].x = 1.5
    @3: @[4.6.13.4].x = -4.5
    @4: @2 + @3 = -3.0
    @5: @[2.3.13.4].y = 2.0
    @6: @[4.6.13.4].y = -6.0
    @7: @5 + @6 = -4.0
    @8: V(@4, @7) = <V> (final state, after @[5.8.13.4])
    @9: return @[5.8.13.4] = <V>
@6: slice(0, 1) = slice(0, 1, None)
@7: head = __getitem__(@[5.8.13.4], @6) = (-3.0,)
    @0: Argument self = <V>
    @1: Argument k = slice(0, 1, None)
    @2: @[5.8.13.4].x = -3.0
    @3: @[5.8.13.4].y = -4.0
    @4: build_tuple(@2, @3) = (-3.0, -4.0)
    @5: @4[@1] = (-3.0,)
    @6: return @5 = (-3.0,)
@8: norm2(@[5.8.13.4]) = 25.0
    @0: Argument self = <V>
    @1: @[5.8.13.4].x = -3.0
    @2: @[5.8.13.4].x = -3.0
    @3: @1 * @2 = 9.0
    @4: @[5.8.13.4].y = -4.0
    @5: @[5.8.13.4].y = -4.0
    @6: @4 * @5 = 16.0
    @7: @3 + @6 = 25.0
    @8: return @7 = 25.0
@9: @7[0] = -3.0
@10: __getitem__(@[1.15.4], 1) = 2.0
    @0: Argument self = <V>
    @1: Argument k = 1
    @2: @[1.15.4].x = 1.5
    @3: @[1.15.4].y = 2.0
    @4: build_tuple(@2, @3) = (1.5, 2.0)
    @5: @4[@1] = 2.0
    @6: return @5 = 2.0
@11: @9 * @10 = -6.0
@12: @8 + @11 = 19.0
@13: return @12 = 19.0"""


def _printout(tape) -> str:
    """The printout without the constructor's bodies, line numbers and module names."""
    lines, skip_below = [], None
    for line in str(tape).splitlines():
        depth = len(line) - len(line.lstrip(" "))
        if skip_below is not None and depth > skip_below:
            continue
        skip_below = depth if re.search(r"(: |= )(\[L\d+\] )?V\(", line) else None
        lines.append(line)
    text = re.sub(r"\[L\d+\] ", "", "\n".join(lines))
    text = re.sub(r"<[\w.]+\.(\w+) object>", r"<\1>", text)
    return re.sub(r"<class '[\w.]+\.(\w+)'>", r"<class '\1'>", text)


def _central(f, a, h=1e-6):
    return (f(a + h) - f(a - h)) / (2 * h)


def test_vector_operators_print_as_nested_calls_on_every_version():
    value, tape = dcgraph.track(vector, 1.5)
    tape.lint()
    assert value == vector(1.5) == pytest.approx(vector_closed_form(1.5))
    assert _printout(tape) == EXPECTED_VECTOR
    assert not any(type(n) is PrimitiveCall and n.fn in operator_guards.DUNDERS
                   and any(isinstance(x.value, V) for x in n.args) for n in tape.walk())


def test_a_summary_run_reads_the_operator_marks():
    # the marks saying how an operator method gets its operands are log marks, kept as they
    # are by the summary log (they were summarised, and the replay lost its place)
    value, tape = dcgraph.track(vector, 1.5, values="summary")
    tape.lint()
    assert value == vector(1.5)
    _, kept = dcgraph.track(vector, 1.5)
    methods = [n.child.code.co_name for n in tape.walk()
               if type(n) is NestedCall and n.child.code.co_name.startswith("__")]
    assert methods == [n.child.code.co_name for n in kept.walk()
                       if type(n) is NestedCall and n.child.code.co_name.startswith("__")]
    assert "__add__" in methods


def test_vector_gradient_and_slice():
    assert dcgraph.grad(vector)(1.3) == pytest.approx(_central(vector_closed_form, 1.3),
                                                      rel=1e-7)
    assert dcgraph.grad(vector)(1.3) == pytest.approx(_central(vector, 1.3), rel=1e-6)

    def two(a, b):
        v, u = V(a, 1.0), V(b, 1.0)
        unused = (u * 2.0)[0]
        return (+v)[0:1][0] + v.norm2

    _, tape = dcgraph.track(two, 1.5, 4.0)
    tape.lint()
    sliced = {id(n) for n in tape.slice(tape.returned)}
    a, b = tape.arguments
    assert id(a) in sliced and id(b) not in sliced

    def reaches(method):         # per call of the method: does the slice hold its nodes?
        return [any(id(n) in sliced for n in call.child.walk()) for call in tape.nodes
                if type(call) is NestedCall and call.fn is method]

    assert reaches(V.__pos__) == [True] and reaches(V.__mul__) == [False]
    assert reaches(V.__getitem__) == [False, True]      # u's, then (+v)'s


def _function(source: str, scope: dict):
    """A function defined in its own globals ``scope`` (which never name ``V``)."""
    scope = dict(scope)
    exec(compile(source, "<corner>", "exec"), scope)
    fn = scope["f"]
    assert not operator_guards.guards_operators(fn, dcgraph.Context())
    return fn


def _methods(tape) -> list:
    return [n.fn.__name__ for n in tape.walk() if type(n) is NestedCall
            and not isinstance(n.fn, type) and n.fn.__name__ != "__init__"]


def make(a):
    return V(a, 1.0)


class Box:
    """No operators of its own: what it holds is not seen by the argument check."""

    def __init__(self, v):
        self.v = v


_module = types.ModuleType("vectors")
_module.V = V

CORNERS = {
    # a factory named by the root: its globals name V (the root's frame is already running)
    "factory": ("def f(a):\n    v = make(a)\n    return (v + v * a)[0]\n", {"make": make},
                lambda a: a + a * a, ["__mul__", "__add__", "__getitem__"]),
    # a constructor reached through a computed module attribute (out of reach of the walk)
    "module": ("def f(a):\n    v = getattr(vectors, 'V')(a, 1.0)\n    return (-v).norm2 * a\n",
               {"vectors": _module}, lambda a: (a * a + 1.0) * a, ["__neg__", "norm2"]),
    # a bound method of an object out of reach at the start (made by C code from bytes)
    "method": ("def f(a, blob):\n    w = pickle.loads(blob).v.scaled(a)\n    return (w + w)[1]\n",
               {"pickle": pickle},
               lambda a: 2.0 * 3.0 * a, ["scaled", "__add__", "__getitem__"]),
}


@pytest.mark.parametrize("case", sorted(CORNERS))
def test_guards_switch_on_inside_the_running_frame(case):
    source, scope, closed_form, methods = CORNERS[case]
    f = _function(source, scope)
    args = (1.5, pickle.dumps(Box(V(2.0, 3.0)))) if case == "method" else (1.5,)
    value, tape = dcgraph.track(f, *args)
    tape.lint()
    assert value == pytest.approx(closed_form(1.5))
    assert _methods(tape)[-len(methods):] == methods
    assert operator_guards.GUARDING == []          # the run gave its token back
    g = dcgraph.grad(f, argnums=0)
    assert g(*args) == pytest.approx(_central(lambda a: closed_form(a), 1.5), rel=1e-6)


def test_operators_before_any_sign_stay_primitive_and_differentiate_right():
    """Nothing showed the class before ``box.v * a`` ran: ``box`` was made by C code from
    bytes (out of reach of ``operator_reach``), with no call, name or argument a sign. The
    operator is a primitive node holding a ``V``, which the backward pass differentiates
    through the methods (``ad.dunders``)."""
    f = _function("def f(a, blob):\n    return (pickle.loads(blob).v * a)[0] + math.sin(a)\n",
                  {"math": math, "pickle": pickle})
    blob = pickle.dumps(Box(V(2.0, 3.0)))
    value, tape = dcgraph.track(f, 1.5, blob)
    tape.lint()
    assert value == pytest.approx(2.0 * 1.5 + math.sin(1.5))
    primitive = [n for n in tape.nodes if type(n) is PrimitiveCall and n.fn.__name__ == "mul"]
    assert len(primitive) == 1 and isinstance(primitive[0].value, V)
    assert not any(type(n) is NestedCall and n.fn is V.__mul__ for n in tape.walk())
    grad = dcgraph.grad(f, argnums=0)(1.5, blob)
    assert grad == pytest.approx(2.0 + math.cos(1.5), rel=1e-12)
    assert grad == pytest.approx(_central(lambda a: f(a, blob), 1.5), rel=1e-6)


def test_a_global_instance_switches_guards_on_and_a_raising_run_switches_them_off():
    origin = V(1.0, 2.0)
    scope = {"origin": origin}
    exec(compile("def f(a):\n    return (origin * a)[1]\n", "<corner>", "exec"), scope)
    f = scope["f"]
    assert operator_guards.guards_operators(f, dcgraph.Context())
    value, tape = dcgraph.track(f, 1.5)
    tape.lint()
    assert value == 3.0 and _methods(tape) == ["__mul__", "__getitem__"]

    def fails(a):
        v = V(a, a)
        raise ValueError((v + v)[0])

    with pytest.raises(ValueError) as raised:
        dcgraph.track(fails, 1.5)
    assert _methods(raised.value.tape) == ["__add__", "__getitem__"]
    assert operator_guards.GUARDING == []


def test_plain_code_leaves_the_switch_off():
    seen = []

    def plain(x):
        seen.append(bool(operator_guards.GUARDING))
        return math.sin(x) * 2.0 + 1.0

    _, tape = dcgraph.track(plain, 1.5)
    tape.lint()
    assert seen == [False] and operator_guards.GUARDING == []


def test_a_function_decided_before_the_switch_runs_guarded_after_it():
    helper = _function("def f(v):\n    return v + v\n", {})
    f = _function("def f(a, blob):\n    box = pickle.loads(blob)\n    first = helper(box.v)[0]\n"
                  "    w = box.v.scaled(a)\n    return first + helper(w)[0]\n",
                  {"helper": helper, "pickle": pickle})
    box = pickle.dumps(Box(V(2.0, 3.0)))         # out of reach: made by C code from bytes
    value, tape = dcgraph.track(f, 1.5, box)
    tape.lint()
    assert value == 4.0 + 6.0
    first, second = [n for n in tape.nodes if type(n) is NestedCall and n.fn is helper]
    assert [type(n).__name__ for n in first.child.nodes if getattr(n, "fn", None) is not None
            ] == ["PrimitiveCall"]                       # v + v before the switch: primitive
    assert _methods(second.child) == ["__add__"]        # after it: the method's body
    assert dcgraph.grad(f, argnums=0)(1.5, box) == pytest.approx(4.0)


def test_calls_of_c_code_leave_the_following_sites_plain():
    """Only a call that the hook might trace can switch guards on: after ``math.sin`` and
    ``range`` (C code, looked up in the globals) operator sites stay as they are."""
    from dcgraph.tracer.instrument import instrument
    from dcgraph.tracer.instrument.versions import opcode_table
    ops = opcode_table()

    def operator_sites(fn):
        info = instrument(fn.__code__, False, fn.__globals__)
        return [i in info.switched for i, ins in enumerate(info.structure.instrs)
                if ops.guarded_operator(ins) and info.probe[i] == "value"]

    loop = _function("def f(x, n):\n    s = 0.0\n    for i in range(n):\n"
                     "        s += math.sin(x * i)\n    return s\n", {"math": math})
    assert operator_sites(loop) == [False, False]
    calls = _function("def f(x):\n    y = x * 2.0\n    return g(y) + y\n", {"g": make})
    assert operator_sites(calls) == [False, True]
