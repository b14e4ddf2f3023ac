"""Operator methods of the user's classes are traced into (issue 16, part 2; ``tracer.operators``):
``a + b``, ``-a``, ``a[k]`` and property reads on objects whose class defines them in Python
become nested calls of the methods Python's dispatch ran, in its order (in-place first, a subclass's reflected method
first, reflected after ``NotImplemented``), on 3.11, 3.12 and 3.13 alike (the printouts are
the same text on every version)."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import pytest

import dcgraph
from dcgraph import NestedCall, PrimitiveCall



class Num:
    """A scalar box: every operator method returns a float, so printouts stay short."""

    def __init__(self, x):
        self.x = x

    def __add__(self, other):
        if not isinstance(other, Num):
            return NotImplemented
        return self.x + other.x

    def __radd__(self, other):
        return other + self.x

    def __mul__(self, s):
        return self.x * s

    def __neg__(self):
        return -self.x

    def __getitem__(self, k):
        return self.x * k


class Vec:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __add__(self, other):
        if not isinstance(other, Vec):
            return NotImplemented
        return Vec(self.x + other.x, self.y + other.y)

    def __radd__(self, s):
        return Vec(self.x + s, self.y + s)

    def __mul__(self, s):
        return Vec(self.x * s, self.y * s)

    __rmul__ = __mul__

    def __neg__(self):
        return Vec(-self.x, -self.y)

    def __getitem__(self, k):
        return self.x if k == 0 else self.y

    @property
    def norm2(self):
        return self.x * self.x + self.y * self.y


class Acc(Vec):
    """In place: ``+=`` runs ``__iadd__``, which updates the object."""

    def __iadd__(self, other):
        self.x = self.x + other.x
        self.y = self.y + other.y
        return self


class Sub(Vec):
    """A subclass overriding the reflected method: ``vec + sub`` runs ``Sub.__radd__`` first."""

    def __radd__(self, other):
        return Vec(2.0 * self.x + other.x, 2.0 * self.y + other.y)


class Declines:
    """Declines every addition: ``num + declines`` raises TypeError after both methods ran."""

    def __add__(self, other):
        return NotImplemented

    def __radd__(self, other):
        return NotImplemented


def boxed(a):
    n = Num(a)
    return n + Num(2.0) + (-n) * 3.0 + n[2] + (1.0 + n)


EXPECTED_BOXED = """\
@0: Argument a = 1.5
@1: n = Num(@0) = <Num> (final state, after @[1.14.2])
@2: Num(2.0) = <Num> (final state, after @[2.12.2])
@3: __add__(@[1.14.2], @[2.12.2]) = 3.5
    @0: Argument self = <Num>
    @1: Argument other = <Num>
    @2: Constant Num = <class 'Num'>
    @3: isinstance(@[2.12.2], @2) = True
    @4: goto §2 since @3 == True
    @5: @[1.14.2].x = 1.5
    @6: @[2.12.2].x = 2.0
    @7: @5 + @6 = 3.5
    @8: return @7 = 3.5
@4: __neg__(@[1.14.2]) = -1.5
    @0: Argument self = <Num>
    @1: @[1.14.2].x = 1.5
    @2: -@1 = -1.5
    @3: return @2 = -1.5
@5: @4 * 3.0 = -4.5
@6: @3 + @5 = -1.0
@7: __getitem__(@[1.14.2], 2) = 3.0
    @0: Argument self = <Num>
    @1: Argument k = 2
    @2: @[1.14.2].x = 1.5
    @3: @2 * @1 = 3.0
    @4: return @3 = 3.0
@8: @6 + @7 = 2.0
@9: __radd__(@[1.14.2], 1.0) = 2.5
    @0: Argument self = <Num>
    @1: Argument other = 1.0
    @2: @[1.14.2].x = 1.5
    @3: @1 + @2 = 2.5
    @4: return @3 = 2.5
@10: @8 + @9 = 4.5
@11: return @10 = 4.5"""


def _printout(tape) -> str:
    """The printout without constructor bodies, line numbers and module names."""
    lines, in_constructor = [], False
    for line in str(tape).splitlines():
        if not line.startswith(" "):
            in_constructor = " Num(" in line
        elif in_constructor:
            continue
        lines.append(line)
    text = re.sub(r"\[L\d+\] ", "", "\n".join(lines))
    text = re.sub(r"<[\w.]+\.(\w+) object>", r"<\1>", text)
    return re.sub(r"<class '[\w.]+\.(\w+)'>", r"<class '\1'>", text)


def test_operator_methods_are_nested_calls_of_their_bodies():
    value, tape = dcgraph.track(boxed, 1.5)
    tape.lint()
    assert value == boxed(1.5) == 4.5
    calls = [n for n in tape.nodes if type(n) is NestedCall and n.fn is not Num]
    assert [n.fn for n in calls] == [Num.__add__, Num.__neg__, Num.__getitem__, Num.__radd__]
    assert _printout(tape) == EXPECTED_BOXED


def mixed(a):
    v = Vec(a, 1.0)
    w = 2.0 + v
    s = Sub(a, a)
    t = v + s
    acc = Acc(0.0, a)
    acc += w
    acc += t
    return (acc * a).norm2 + (-t)[1] * w[0]


def mixed_closed_form(a):
    w = (a + 2.0, 3.0)
    t = (2.0 * a + a, 2.0 * a + 1.0)
    acc = (0.0 + w[0] + t[0], a + w[1] + t[1])
    return (acc[0] * a) ** 2 + (acc[1] * a) ** 2 + (-t[1]) * w[0]


def test_dispatch_order_reflected_subclass_and_in_place():
    value, tape = dcgraph.track(mixed, 1.5)
    tape.lint()
    assert value == pytest.approx(mixed_closed_form(1.5), rel=1e-14)
    methods = [n.fn.__qualname__ for n in tape.nodes
               if type(n) is NestedCall and not isinstance(n.fn, type)]
    assert methods == ["Vec.__radd__", "Sub.__radd__", "Acc.__iadd__", "Acc.__iadd__",
                       "Vec.__mul__", "Vec.norm2", "Vec.__neg__", "Vec.__getitem__",
                       "Vec.__getitem__"]
    norm2 = next(n for n in tape.nodes if type(n) is NestedCall and n.fn is Vec.norm2.fget)
    assert [a.name for a in norm2.child.arguments] == ["self"]
    assert not any(type(n) is PrimitiveCall and n.fn is getattr and n.args[1].value == "norm2"
                   for n in tape.nodes)


def test_not_implemented_then_reflected_and_all_declining():
    def f(a):
        n = Num(a)
        r = n + 2.0                  # Num.__add__ declines, float.__radd__ declines: TypeError
        return r

    def g(a):
        n = Num(a)
        try:
            return n + Declines()
        except TypeError:
            return a * 2.0

    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \+: 'Num' and 'float'"):
        dcgraph.track(f, 1.5)
    value, tape = dcgraph.track(g, 1.5)
    tape.lint()
    assert value == 3.0
    attempts = [n for n in tape.nodes if type(n) is NestedCall and not isinstance(n.fn, type)]
    assert [(n.fn.__qualname__, n.value) for n in attempts] == [
        ("Num.__add__", NotImplemented), ("Declines.__radd__", NotImplemented)]
    assert dcgraph.grad(g)(1.5) == pytest.approx(2.0)


class Boom:
    def __radd__(self, other):
        raise ValueError("boom")


def _not_implemented(x):
    return NotImplemented if x > 0 else x


def test_a_method_that_raises_leaves_no_pending_attempt():
    def h(a):
        n = Num(a)
        try:
            n + Boom()               # Num.__add__ declines, Boom.__radd__ raises
        except ValueError:
            pass
        r = _not_implemented(a)      # a traced call returning NotImplemented: just a value
        return a * 2.0 if r is NotImplemented else a

    value, tape = dcgraph.track(h, 1.5)
    tape.lint()
    assert value == 3.0
    calls = [n for n in tape.nodes if type(n) is NestedCall and not isinstance(n.fn, type)]
    assert [n.fn.__qualname__ for n in calls] == ["Num.__add__", "Boom.__radd__", "_not_implemented"]
    assert calls[1].child.raised and calls[2].value is NotImplemented


def _central(f, a, h=1e-6):
    return (f(a + h) - f(a - h)) / (2 * h)


@dataclass
class Pair:
    u: float
    v: float

    def __mul__(self, s):
        return Pair(self.u * s, self.v * s)

    def __getitem__(self, k):
        return (self.u, self.v)[k]


def dataclass_operators(a):
    p = Pair(a, math.sin(a)) * a
    return p[0] * p[1] + (-Vec(a, a))[1]


def in_place(a):
    acc = Acc(0.0, a)
    acc += Vec(a, 2.0)
    return acc.norm2


@pytest.mark.parametrize("f", [mixed, dataclass_operators, boxed, in_place])
def test_gradients_match_finite_differences(f):
    a = 1.3
    assert dcgraph.grad(f)(a) == pytest.approx(_central(f, a), rel=1e-6)
    _, tape = dcgraph.track(f, a)
    dcgraph.ad.backward(tape)
    tape.lint()


def test_mixed_gradient_closed_form():
    assert dcgraph.grad(mixed)(1.5) == pytest.approx(_central(mixed_closed_form, 1.5), rel=1e-7)


def test_slice_sees_through_operator_methods():
    def f(a, b):
        n, m = Num(a), Num(b)
        unused = m[3]
        return n[2] + 1.0

    _, tape = dcgraph.track(f, 1.5, 4.0)
    tape.lint()
    sliced = tape.slice(tape.returned)
    a, b = tape.arguments
    assert a in sliced and b not in sliced
    getitem = next(n for n in tape.nodes if type(n) is NestedCall and n.fn is Num.__getitem__
                   and n.args[1].value == 2)
    assert getitem in sliced and getitem.child.returned in sliced


def test_numbers_and_arrays_keep_primitive_operator_nodes():
    def f(x, a):
        return -(x * 2.0 + 1.0) + (a @ a)[()] + a[0]
    _, tape = dcgraph.track(f, 1.5, np.array([1.0, 2.0]))
    tape.lint()
    assert not any(type(n) is NestedCall for n in tape.nodes)


def test_guards_only_where_a_class_with_operators_is_visible():
    from dcgraph.tracer.operator_guards import guards_operators

    def plain(x):
        return math.sin(x) * 2.0 + 1.0

    def sees_nothing(v):
        return v + v

    ctx = dcgraph.Context()
    assert not guards_operators(plain, ctx)       # numbers pay nothing
    assert guards_operators(boxed, ctx) and guards_operators(mixed, ctx)
    assert not guards_operators(boxed, dcgraph.Context(primitive_modules=[__name__.partition(".")[0]]))
    assert not guards_operators(sees_nothing, ctx)   # ... but an argument switches guards on:
    value, tape = dcgraph.track(sees_nothing, Num(1.5))
    tape.lint()
    assert value == 3.0
    assert [n.fn for n in tape.nodes if type(n) is NestedCall] == [Num.__add__]
    _, tape = dcgraph.track(sees_nothing, [1.0, 2.0])
    assert not any(type(n) is NestedCall for n in tape.nodes)
