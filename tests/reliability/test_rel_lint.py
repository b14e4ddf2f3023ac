"""``Tape.lint``: reports real violations (each one named), never crashes on legal tapes."""
import functools

import pytest

import dcgraph
from dcgraph.tape import Argument, Constant, LintError, Phi, PrimitiveCall, Return


def memo(f):
    cache = {}

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        if args not in cache:
            cache[args] = f(*args, **kwargs)
        return cache[args]
    return wrapper


class Memoised:
    @classmethod
    @memo
    def c(cls, x):
        return x + 1

    @staticmethod
    @memo
    def s(x):
        return x * 3

    @memo
    def m(self, x):
        return x * 2


BOUND = [Memoised().m, Memoised.c, Memoised.s]


def uses_bound_methods(x):
    return BOUND[0](x) + BOUND[1](x) + BOUND[2](x) + [Memoised().m][0](x)


def test_an_absent_source_of_an_implicit_argument_is_legal():
    result, tape = dcgraph.track(uses_bound_methods, 3)
    assert result == 6 + 4 + 9 + 6
    tape.lint()
    star = [n for n in tape.walk() if n.kind == "Argument" and isinstance(n.source, tuple)]
    assert any(None in n.source for n in star)       # the bound method's self: no node holds it


def inner(a, b):
    c = a * b
    return c + 1


def outer(x):
    y = x + 1
    return inner(y, x) * 2


@pytest.fixture
def tape():
    _, t = dcgraph.track(outer, 2.0)
    t.lint()
    return t


def _corrupt(tape, how):
    how(tape)
    with pytest.raises(LintError) as info:
        tape.lint()
    return str(info.value)


def test_a_tape_must_end_in_return_or_raise(tape):
    assert "does not end in Return or Raise" in _corrupt(tape, lambda t: t._nodes.pop())


def test_indices_must_match_positions(tape):
    def swap(t):
        t._nodes[0], t._nodes[1] = t._nodes[1], t._nodes[0]
    assert "index/tape mismatch (position 0)" in _corrupt(tape, swap)


def test_inputs_must_be_earlier_nodes(tape):
    add = tape.find(fn="add")[0]
    ret = tape.returned

    def later(t):
        add.inputs = (ret,) + add.inputs[1:]
    assert f"outer @{add.index} (PrimitiveCall): input 0 @{ret.index} is not an earlier" \
        in _corrupt(tape, later)


def test_inputs_must_be_nodes(tape):
    add = tape.find(fn="add")[0]
    assert "input 1 is not a node: 3" in _corrupt(
        tape, lambda t: setattr(add, "inputs", (add.inputs[0], 3)))


def test_inputs_must_belong_to_the_run(tape):
    _, other = dcgraph.track(outer, 5.0)
    add = tape.find(fn="add")[0]
    stranger = other.find(fn="add")[0]
    assert "belongs to another run" in _corrupt(
        tape, lambda t: setattr(add, "inputs", (stranger, add.inputs[1])))


def test_a_reference_into_a_callee_after_the_use_is_refused(tape):
    call = tape.find(kind="NestedCall")[0]
    first = tape.find(fn="add")[0]
    callee_node = call.child.find(fn="mul")[0]
    assert "is not earlier in execution" in _corrupt(
        tape, lambda t: setattr(first, "inputs", (callee_node, first.inputs[1])))


def test_return_and_phi_values_match_their_inputs(tape):
    ret = tape.returned
    assert "return value differs" in _corrupt(tape, lambda t: setattr(ret, "value", -1.0))
    _, t2 = dcgraph.track(outer, 2.0)
    phi = Phi("z", t2[0], (0, 1))
    phi.value = "other"

    def insert(t):
        t._nodes.insert(1, phi)
        for k, n in enumerate(t._nodes):
            n.index, n.tape = k, t
    assert "phi value differs" in _corrupt(t2, insert)


def test_a_nested_call_has_its_childs_return_value(tape):
    call = tape.find(kind="NestedCall")[0]
    assert "nested call's value differs from its child's return" in _corrupt(
        tape, lambda t: setattr(call, "result", 99.0))


def test_root_arguments_have_no_source(tape):
    assert "root argument has a source" in _corrupt(
        tape, lambda t: setattr(t[0], "source", Constant(None, 1)))


def test_argument_sources_are_earlier_in_the_caller(tape):
    call = tape.find(kind="NestedCall")[0]
    arg = call.child.arguments[0]
    assert "source of argument a" in _corrupt(tape, lambda t: setattr(arg, "source", tape.returned))


def countdown(n):
    return 0 if n == 0 else 1 + countdown(n - 1)


def test_lint_is_linear_in_depth():
    _, deep = dcgraph.track(countdown, 900)
    deep.lint()
    calls = [0]
    original = PrimitiveCall.order_key

    def counted(self):
        calls[0] += 1
        return original(self)

    PrimitiveCall.order_key = counted
    try:
        deep.lint()
    finally:
        PrimitiveCall.order_key = original
    assert calls[0] <= 5            # keys are derived per tape, not walked up per reference
