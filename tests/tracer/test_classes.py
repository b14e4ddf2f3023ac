"""The user's own classes are traced (issue 16, part 2): constructors (``__init__``) and
``__call__`` become nested calls; operator methods and properties are differentiated through
their Python code; gradients checked against central differences."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import dcgraph
from dcgraph import NestedCall, PrimitiveCall


class Vec:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, other):
        return Vec(self.x + other.x, self.y + other.y)

    def __mul__(self, s):
        return Vec(self.x * s, self.y * s)

    __rmul__ = __mul__

    def __neg__(self):
        return Vec(-self.x, -self.y)

    def __getitem__(self, i):
        return self.x if i == 0 else self.y

    @property
    def norm2(self):
        return self.x * self.x + self.y * self.y


class Linear:
    """A module-like class: parameters set in ``__init__``, applied by ``__call__``."""

    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, x):
        return np.tanh(self.w @ x + self.b)


@dataclass
class Point:
    x: float
    y: float


def vector_code(a):
    v = Vec(a, 2.0) + 3.0 * Vec(1.0, a)
    u = -v * a
    return u.norm2 + u[0] * v[1]


def module_code(w):
    layer = Linear(w, 0.5)
    h = layer(np.array([1.0, -2.0]))
    return h * h


def dataclass_code(a):
    p = Point(a, a * a)
    q = Point(p.y, 3.0)
    return p.x * q.x + q.y


def test_constructor_is_a_nested_call_with_init_inside():
    _, tape = dcgraph.track(dataclass_code, 1.5)
    tape.lint()
    made = [n for n in tape.nodes if type(n) is NestedCall and n.fn is Point]
    assert len(made) == 2
    inits = [c for c in made[0].child.nodes if type(c) is NestedCall]
    assert [c.child.code.co_name for c in inits] == ["__init__"]
    assert [a.name for a in inits[0].child.arguments] == ["self", "x", "y"]


def test_call_of_an_object_binds_self_to_the_instance():
    _, tape = dcgraph.track(module_code, np.array([0.3, -0.2]))
    tape.lint()
    call = next(n for n in tape.nodes if type(n) is NestedCall and isinstance(n.fn, Linear))
    self_arg = call.child.arguments[0]
    assert self_arg.name == "self" and self_arg.value is call.fn
    assert call.child.name == "Linear.__call__"


@pytest.mark.parametrize("f, x", [(vector_code, 1.5), (module_code, np.array([0.3, -0.2])),
                                  (dataclass_code, 1.5)])
def test_gradients_through_user_classes(f, x):
    report = dcgraph.check_grads(f, x)
    assert report.ok
    _, tape = dcgraph.track(f, x)
    dcgraph.ad.backward(tape)
    tape.lint()


def test_vector_gradient_closed_form():
    # v = (a + 3, 3a + 2); u = -a v; f = a^2 P - Q with P = |v|^2 = 10a^2 + 18a + 13 and
    # Q = a (a + 3)(3a + 2) = 3a^3 + 11a^2 + 6a
    a = 1.5
    p = 10 * a ** 2 + 18 * a + 13
    exact = 2 * a * p + a ** 2 * (20 * a + 18) - (9 * a ** 2 + 22 * a + 6)
    assert dcgraph.grad(vector_code)(a) == pytest.approx(exact, rel=1e-12)


def test_slice_of_a_method_result_reaches_the_constructor_argument():
    _, tape = dcgraph.track(dataclass_code, 1.5)
    assert tape.arguments[0] in tape.slice(tape.returned)


class WithNew:
    def __new__(cls, x):
        obj = super().__new__(cls)
        obj.x = x
        return obj


class Failure(Exception):
    def __init__(self, x):
        super().__init__(x)
        self.x = x


def test_classes_with_own_new_and_exceptions_stay_primitive():
    def f(a):
        w = WithNew(a)
        e = Failure(a)
        return w.x + e.x
    value, tape = dcgraph.track(f, 1.5)
    assert value == 3.0
    calls = [n for n in tape.nodes if isinstance(n, PrimitiveCall) and n.fn in (WithNew, Failure)]
    assert [type(n) for n in calls] == [PrimitiveCall, PrimitiveCall]


def test_traced_results_equal_untraced():
    for f, x in [(vector_code, 1.5), (module_code, np.array([0.3, -0.2])),
                 (dataclass_code, 1.5)]:
        assert repr(dcgraph.track(f, x)[0]) == repr(f(x))
