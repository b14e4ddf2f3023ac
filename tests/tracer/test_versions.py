"""The tracer refuses interpreters whose bytecode it does not know, and names the versions; on
each supported one, the instructions the ports had to learn record the same tapes."""
import operator
import sys

import numpy as np
import pytest

import dcgraph
from dcgraph import Branch, Constant, NestedCall, Phi, PrimitiveCall, Return
from dcgraph.tracer import ops as tracer_ops
from dcgraph.tracer.instrument import versions
from dcgraph.tracer.instrument.versions import UnsupportedPython


def loop(x):
    total = 0.0
    for k in range(3):
        total = total + x * k
    return total


def test_running_interpreter_is_supported():
    assert versions.check_supported() == tuple(sys.version_info[:2])
    assert tuple(sys.version_info[:2]) in versions.SUPPORTED


def test_unsupported_version_raises_naming_running_and_supported(monkeypatch):
    monkeypatch.setattr(sys, "version_info", (3, 14, 2, "final", 0))
    with pytest.raises(UnsupportedPython) as err:
        dcgraph.track(loop, 0.5)
    message = str(err.value)
    assert "CPython 3.14.2" in message
    for major, minor in versions.SUPPORTED:
        assert f"{major}.{minor}" in message


def test_unsupported_implementation_raises(monkeypatch):
    class FakeImplementation:
        name = "pypy"
    monkeypatch.setattr(sys, "implementation", FakeImplementation)
    with pytest.raises(UnsupportedPython, match=r"this is pypy \d+\.\d+"):
        dcgraph.track(loop, 0.5)


def test_refusal_happens_before_the_function_runs(monkeypatch):
    calls = []

    def f(x):
        calls.append(x)
        return x

    monkeypatch.setattr(sys, "version_info", (3, 10, 13, "final", 0))
    with pytest.raises(UnsupportedPython, match="3.10.13"):
        dcgraph.track(f, 1.0)
    assert calls == []


def test_gradients_refuse_too(monkeypatch):
    monkeypatch.setattr(sys, "version_info", (3, 14, 0, "final", 0))
    with pytest.raises(UnsupportedPython):
        dcgraph.grad(loop)(0.5)


def test_supported_interpreter_traces_the_loop():
    result, tape = dcgraph.track(loop, 0.5)
    assert result == 1.5
    tape.lint()
    assert len(tape.nodes) > 3          # not the three-node "traced nothing" tape of issue 9
    assert not tape.untraced


# -- the instructions each port had to learn: the tapes say the same on every version ----------


def _calls(tape, fn):
    return [n for n in tape.nodes if isinstance(n, PrimitiveCall) and n.fn is fn]


def shadowing_comprehension(xs):
    x = 5.0
    ys = [x * 2.0 for x in xs]          # 3.12+: inlined; the outer x is saved and restored
    zs = {k: k + x for k in xs}         # reads the restored outer x
    return x, ys, zs


def test_inlined_comprehension_restores_the_shadowed_variable():
    result, tape = dcgraph.track(shadowing_comprehension, [1.0, 2.0])
    assert result == shadowing_comprehension([1.0, 2.0])
    tape.lint()
    adds = [n for n in tape.walk() if isinstance(n, PrimitiveCall) and n.fn is operator.add]
    assert [n.value for n in adds] == [6.0, 7.0]
    for n in adds:                      # k + x: x is the outer 5.0, a literal of the root frame
        assert isinstance(n.args[1], Constant) and n.args[1].value == 5.0
    assert tape.returned.inputs[0].value == result


def slices(xs, a, b):
    head = xs[a:b]
    xs[0:1] = [9.0]
    return head, +a


def test_slices_and_unary_plus_record_3_11_nodes():
    xs = [1.0, 2.0, 3.0]
    result, tape = dcgraph.track(slices, xs, 0, 2)
    assert result == ([1.0, 2.0], 0) and xs == [9.0, 2.0, 3.0]
    tape.lint()
    made = _calls(tape, slice)
    assert [n.value for n in made] == [slice(0, 2), slice(0, 1)]
    assert made[0].args == (tape.arguments[1], tape.arguments[2])
    (read,) = _calls(tape, operator.getitem)
    assert read.args == (tape.arguments[0], made[0]) and read.value == [1.0, 2.0]
    (write,) = _calls(tape, operator.setitem)
    assert write.args[1] is made[1] and write.mutates is xs
    (plus,) = _calls(tape, operator.pos)
    assert plus.args == (tape.arguments[1],)


class Base:
    def scale(self, v):
        return 2.0 * v


class Derived(Base):
    def scale(self, v):
        return super().scale(v) + 1.0


def test_zero_argument_super_is_traced_into():
    result, tape = dcgraph.track(Derived().scale, 3.0)
    assert result == 7.0
    tape.lint()
    (inner,) = [n for n in tape.nodes if isinstance(n, NestedCall)]
    assert inner.fn_name == "scale" and inner.child.returned.inputs[0].value == 6.0
    assert inner.args[-1] is tape.arguments[1]


def closure_with_defaults(p, q=2.0):
    def inner(r, s=q):
        return p * r + s
    return inner(3.0), inner


def test_made_function_has_one_node_with_3_11_inputs():
    (value, made), tape = dcgraph.track(closure_with_defaults, 5.0)
    assert value == 17.0
    tape.lint()
    (node,) = _calls(tape, tracer_ops.make_function)
    assert node.value is made
    defaults, closure, code = node.args      # 3.11's order: defaults, closure, code
    assert defaults.value == (2.0,) and code.value is made.__code__
    assert [c.cell_contents for c in closure.value] == [5.0]
    (call,) = [n for n in tape.nodes if isinstance(n, NestedCall)]
    assert call.fn_node is node and call.child.returned.inputs[0].value == 17.0


def fstring(v, w):
    return f"{v!r:>8}|{w}|{w:.2f}"


def test_fstring_fields_are_one_format_value_node_each():
    result, tape = dcgraph.track(fstring, "ab", 1.5)
    assert result == fstring("ab", 1.5)
    fields = _calls(tape, tracer_ops.format_value)
    assert [n.value for n in fields] == ["    'ab'", "1.5", "1.50"]
    assert [n.args[1].value for n in fields] == [2, 0, 0]       # conversions: repr, none, none
    assert [n.args[2].value for n in fields] == [">8", "", ".2f"]


def branches(x, xs):
    if x:                                # 3.13: TO_BOOL, then the jump
        x = -x
    a, b = xs[0], xs[1]
    a, b = b, a                          # 3.13: LOAD_FAST_LOAD_FAST, STORE_FAST_STORE_FAST
    total = 0.0
    for v in xs:
        total = total + v
    return x, a, b, not total


def test_truth_tests_branch_on_the_value_itself():
    result, tape = dcgraph.track(branches, 2.0, [1.0, 4.0])
    assert result == (-2.0, 4.0, 1.0, False)
    tape.lint()
    tests = [n for n in tape.nodes if isinstance(n, Branch)]
    assert tests[0].inputs == (tape.arguments[0],) and tests[0].taken is True
    assert tests[-1].op == "exhausted"
    (neg,) = _calls(tape, operator.neg)
    assert neg.args == (tape.arguments[0],)
    (nots,) = _calls(tape, operator.not_)
    assert nots.args[0].value == 5.0
    returned = tape.returned.inputs[0]
    a_node, b_node = returned.args[1], returned.args[2]
    assert (a_node.value, b_node.value) == (4.0, 1.0)
    assert [p.name for p in tape.nodes if isinstance(p, Phi)].count("total") >= 2


def keywords_and_stars(f, xs):
    return f(1.0, y=2.0) + f(*xs) + f(**{"x": 3.0, "y": 4.0})


def add(x, y=0.0):
    return x + y


def test_keyword_and_star_calls_bind_arguments():
    result, tape = dcgraph.track(keywords_and_stars, add, [5.0, 6.0])
    assert result == 21.0
    tape.lint()
    calls = [n for n in tape.nodes if isinstance(n, NestedCall)]
    assert [sorted(n.kwargs) for n in calls] == [["y"], [], ["x", "y"]]
    assert [n.child.returned.inputs[0].value for n in calls] == [3.0, 11.0, 7.0]
    assert calls[0].child.arguments[1].source is calls[0].kwargs["y"]


def method_on_array(a):
    return a.sum() + np.add(a, 1.0).max()


def test_method_calls_are_normalised_with_self_first():
    a = np.arange(3.0)
    result, tape = dcgraph.track(method_on_array, a)
    assert result == 6.0
    tape.lint()
    summed = [n for n in tape.nodes if isinstance(n, PrimitiveCall) and n.method]
    assert summed and summed[0].args[0] is tape.arguments[0] and summed[0].value == 3.0
    assert isinstance(tape.nodes[-1], Return)


# -- corners of the 3.12/3.13 compilers: traced equals untraced, warm (120 runs), tape lints ----
PORT_CORNERS = '''
def comprehension_raises(xs):
    x = "outer"
    try:
        ys = [1 / x for x in xs]        # the inlined comprehension's handler restores x
    except ZeroDivisionError:
        return x
    return ys

def comprehension_cells(xs):
    fs = [lambda: x * 2 for x in xs]    # the loop variable is a cell inside the comprehension
    return [f() for f in fs]

def comprehension_walrus(xs):
    ys = [y for x in xs if (y := x * 2) > 2]
    return ys, y

def exception_groups(n):
    try:
        raise ExceptionGroup("g", [ValueError(n), TypeError(n), TypeError(n)])
    except* ValueError as e:
        a = len(e.exceptions)
    except* TypeError as e:
        b = len(e.exceptions)
    return a * 10 + b

def formats(x, w):
    return f"{x!r:>{w}} {x!s} {x!a:<5} {x=}"

def deleted(x):
    y = x
    del y
    try:
        return y
    except UnboundLocalError:
        return "unbound"

def slices(xs):
    xs[1:3] = [7, 8, 9]
    del xs[0:1]
    return xs[::2], xs[1:], xs[:-1]
'''
PEP_695 = '''
def generic_function(x):
    def ident[T](v: T) -> T:
        return v
    return ident(x)
'''


def _port_corners():
    namespace = {}
    source = PORT_CORNERS + (PEP_695 if sys.version_info >= (3, 12) else "")
    exec(compile(source, "<port corners>", "exec"), namespace)
    cases = [("comprehension_raises", ([1.0, 0.0],)), ("comprehension_raises", ([1.0, 2.0],)),
             ("comprehension_cells", ([1, 2],)), ("comprehension_walrus", ([1, 2],)),
             ("exception_groups", (1,)), ("formats", (3.5, 8)), ("deleted", (1,)),
             ("slices", ([1, 2, 3, 4, 5],))]
    if sys.version_info >= (3, 12):
        cases.append(("generic_function", (5,)))
    return [(namespace[name], args) for name, args in cases]


@pytest.mark.parametrize("fn,args", _port_corners(),
                         ids=lambda v: v.__name__ if callable(v) else repr(v)[:30])
def test_port_corner_matches_plain_call(fn, args):
    expected = repr(fn(*[list(a) if isinstance(a, list) else a for a in args]))
    for _ in range(120):
        fresh = [list(a) if isinstance(a, list) else a for a in args]
        result, tape = dcgraph.track(fn, *fresh)
        assert repr(result) == expected
    tape.lint()
    assert not tape.untraced


def test_tracing_under_a_debugger_or_coverage_tool():
    """``sys.settrace`` (debuggers) and, from 3.12, ``sys.monitoring`` (coverage) see the
    instrumented copies too; results and tapes are unchanged."""
    events = []

    def tracer(frame, event, arg):
        events.append(event)
        return tracer

    expected = shadowing_comprehension([1.0, 2.0])
    sys.settrace(tracer)
    try:
        result, tape = dcgraph.track(shadowing_comprehension, [1.0, 2.0])
    finally:
        sys.settrace(None)
    assert result == expected and "line" in events
    tape.lint()
    if sys.version_info < (3, 12):
        return
    mon = sys.monitoring
    tool = next(t for t in range(6) if mon.get_tool(t) is None)   # one a coverage run left free
    mon.use_tool_id(tool, "dcgraph-test")
    lines = []
    try:
        mon.register_callback(tool, mon.events.LINE, lambda code, line: lines.append(line))
        mon.set_events(tool, mon.events.LINE)
        result, tape = dcgraph.track(shadowing_comprehension, [1.0, 2.0])
    finally:
        mon.set_events(tool, 0)
        mon.register_callback(tool, mon.events.LINE, None)
        mon.free_tool_id(tool)
    assert result == expected and lines
    tape.lint()
