"""Names of values (``node.names``): the variables each recorded value was bound to, in the
dump, the views and JSON, and ``tape.find(name=...)``. Same answers on 3.11, 3.12 and 3.13."""
import io
import sys

import numpy as np
import pytest

import dcgraph
from dcgraph.tape import Argument, Phi, PrimitiveCall
from dcgraph.views.explorer import explorer_data
from dcgraph.views.dot import graph_items
from dcgraph.views.graph import DisplayGraph

TOTAL = 0.0


def chained(x):
    a = b = x * 2
    c = 3.0                       # a literal: shared by every run, never named
    mu = c * a
    return mu + b


def augmented(n):
    x = n + 1
    x += 1
    x *= 3
    return x


def unpacking(p):
    a, b = divmod(p, 4)
    (c, d), e = (a + 1, b + 1), a * b
    return a + b + c + d + e


def loop_targets(xs):
    s = 0.0
    for i, x in enumerate(xs):
        s = s + i * x
    return s


def comprehension(xs):
    ys = [y * 2 for y in xs]
    return sum(ys)


class Box:
    def __init__(self, mu):
        self.mu = mu * 2
        self.inner = Inner()
        self.inner.sd = mu + 1

    def total(self):
        return self.mu + self.inner.sd


class Inner:
    pass


def attributes(m):
    box = Box(m)
    box.mu = box.mu + 1
    return box.total()


def subscripts(v):
    xs = [0.0, 0.0]
    xs[0] = v * 2
    return xs[0]


def stores_global(x):
    global TOTAL
    TOTAL = x + 1
    return TOTAL * 2


def closure(x):
    count = x * 2

    def bump():
        nonlocal count
        count = count + 1
        return count

    bump()
    return bump()


def cell_parameter(x):
    def read():
        return x * 3
    x = x + 1
    return read()


class Resource:
    def __init__(self, v):
        self.v = v

    def __enter__(self):
        return self.v * 2

    def __exit__(self, *exc):
        return False


def with_as(v):
    with Resource(v) as r:
        t = r + 1
    return t


def track(fn, *args):
    result, tape = dcgraph.track(fn, *args)
    tape.lint()
    return result, tape


def named(tape, name):
    """(values, kinds) of the nodes bound to ``name``, in execution order."""
    nodes = tape.find(name=name)
    return [n.value for n in nodes]


def test_chained_assignment_binds_every_target_and_literals_stay_unnamed():
    result, tape = track(chained, 1.5)
    assert result == 3.0 * 3.0 + 3.0
    (double,) = tape.find(name="a")
    assert double.names == ("a", "b") and double.value == 3.0
    assert tape.find(name="b") == [double]
    assert named(tape, "mu") == [9.0]
    assert tape.find(name="c") == []           # ``c = 3.0``: the literal is not a tape node
    assert tape.find(name="x") == [tape[0]] and tape[0].names == ("x",)


def test_augmented_assignment_binds_the_target():
    _, tape = track(augmented, 1)
    assert named(tape, "x") == [2, 3, 9]
    assert [n.fn.__name__ for n in tape.find(name="x")] == ["add", "iadd", "imul"]


def test_unpacking_binds_each_target_to_its_item():
    result, tape = track(unpacking, 11)
    assert result == 2 + 3 + 3 + 4 + 6
    assert [named(tape, v) for v in "abcde"] == [[2], [3], [3], [4], [6]]


def test_for_loop_targets_are_bound_each_iteration():
    _, tape = track(loop_targets, [1.0, 2.0, 4.0])
    assert named(tape, "i") == [0, 1, 2]
    assert named(tape, "x") == [1.0, 2.0, 4.0]
    # s: the stores, then the phis merging s at the loop head, in execution order
    stores = [n for n in tape.find(name="s") if not isinstance(n, Phi)]
    assert [n.value for n in stores] == [1.0 * 0, 2.0, 10.0]
    assert all(isinstance(n, (Phi, PrimitiveCall)) for n in tape.find(name="s"))


def test_comprehension_variables_are_named_wherever_the_version_records_them():
    result, tape = track(comprehension, [1.0, 2.5])
    assert result == 7.0
    ys = tape.find(name="y")
    assert [n.value for n in ys] == [1.0, 2.5]
    # 3.11 runs the comprehension as its own function (a child tape), 3.12 inlines it
    inlined = sys.version_info >= (3, 12)
    assert all((n.tape is tape) == inlined for n in ys)
    assert [n.value for n in tape.find(name="ys")] == [[2.0, 5.0]]


def test_attribute_stores_are_named_by_the_object_name():
    result, tape = track(attributes, 2.0)
    assert result == (2.0 * 2 + 1) + 3.0
    assert named(tape, "self.mu") == [4.0]               # in Box.__init__'s tape
    assert named(tape, "self.inner.sd") == [3.0]
    assert named(tape, "box.mu") == [5.0]                # in the caller
    (inner,) = tape.find(name="self.inner")
    assert isinstance(inner.value, Inner)
    assert tape.find(name="self.mu")[0].tape is not tape


def test_subscript_stores_bind_no_name():
    _, tape = track(subscripts, 1.5)
    (double,) = [n for n in tape if isinstance(n, PrimitiveCall) and n.value == 3.0
                 and n.fn.__name__ == "mul"]
    assert double.names == ()
    assert [n.fn.__name__ for n in tape.find(name="xs")] == ["build_list"]


def test_global_store_is_named():
    global TOTAL
    saved = TOTAL
    try:
        _, tape = track(stores_global, 2.0)
    finally:
        TOTAL = saved
    assert named(tape, "TOTAL")[0] == 3.0
    assert tape.find(name="TOTAL")[0].fn.__name__ == "add"


def test_nonlocal_and_cell_stores_are_named():
    result, tape = track(closure, 1.0)
    assert result == 4.0
    assert named(tape, "count") == [2.0, 3.0, 4.0]     # the outer store, then bump()'s two
    assert [n.tape is tape for n in tape.find(name="count")] == [True, False, False]
    result, tape = track(cell_parameter, 1.0)
    assert result == 6.0
    xs = tape.find(name="x")
    assert isinstance(xs[0], Argument) and [n.value for n in xs] == [1.0, 2.0]


def test_with_as_binds_the_entered_value():
    result, tape = track(with_as, 1.5)
    assert result == 4.0
    assert named(tape, "r") == [3.0]
    (t,) = [n for n in tape.find(name="t") if not isinstance(n, Phi)]   # 3.11 merges t after
    assert t.value == 4.0 and t.inputs[0].names == ("r",)                # the with block


def test_find_searches_child_tapes_in_execution_order_and_combines_criteria():
    _, tape = track(attributes, 2.0)
    everything = tape.find(name="self")
    assert [n.tape.name for n in everything] == ["Box.__init__", "Box.total"]
    assert all(isinstance(n, Argument) for n in everything)
    assert tape.find(name="box.mu", kind="PrimitiveCall", line=tape.find(name="box.mu")[0].line)
    assert tape.find(name="box.mu", kind="Argument") == []
    assert tape.find(name="no_such_name") == []


CHAINED_DUMP = """
@0: Argument x = 1.5
@1: [L{a}] a = b = @0 * 2 = 3.0
@2: [L{mu}] mu = 3.0 * @1 = 9.0
@3: [L{ret}] @2 + @1 = 12.0
@4: return @3 = 12.0
"""


def lines_of(fn, *offsets):
    """Source lines ``offsets`` below ``fn``'s ``def`` (the expected texts name lines)."""
    return [fn.__code__.co_firstlineno + k for k in offsets]

def test_printouts_show_names_before_the_operation():
    a, mu, ret = lines_of(chained, 1, 3, 4)
    assert str(track(chained, 1.5)[1]) == CHAINED_DUMP.format(a=a, mu=mu, ret=ret).strip("\n")
    _, tape = track(augmented, 1)
    one, two, three = lines_of(augmented, 1, 2, 3)
    assert str(tape).splitlines()[1:4] == [
        f"@1: [L{one}] x = @0 + 1 = 2", f"@2: [L{two}] x = @1 += 1 = 3",
        f"@3: [L{three}] x = @2 *= 3 = 9"]
    _, tape = track(attributes, 2.0)
    lines = str(tape).splitlines()
    mu, inner, sd = lines_of(Box.__init__, 1, 2, 3)
    box, box_mu = lines_of(attributes, 1, 2)
    for line in (f"        @2: [L{mu}] self.mu = @1 * 2 = 4.0",          # in Box.__init__
                 f"        @4: [L{inner}] self.inner = Inner() = <test_names.Inner object> "
                 "(final state, after @8)",
                 f"        @6: [L{sd}] self.inner.sd = @1 + 1 = 3.0",
                 f"@1: [L{box}] box = Box(@0) = <test_names.Box object> (final state, after @4)",
                 f"@3: [L{box_mu}] box.mu = @2 + 1 = 5.0"):
        assert line in lines


def test_an_argument_bound_again_prints_the_new_name_only():
    def alias(x):
        y = x
        return y + 1
    _, tape = track(alias, 2)
    assert tape[0].names == ("x", "y")
    assert str(tape).splitlines()[0] == "@0: y = Argument x = 2"


def test_views_show_the_names():
    _, tape = track(chained, 1.5)
    out = io.StringIO()
    tape.show(file=out, width=120)
    assert "@1 a = b = @0 * 2 = 3.0" in out.getvalue()
    assert "a = b = @0 * 2" in tape.to_dot()
    page = tape.to_html()
    assert 'data-names="a b"' in page
    data = explorer_data(DisplayGraph(tape, graph_items(tape, None, 1000)))
    assert [d["names"] for d in data["items"]][:3] == [["x"], ["a", "b"], ["mu"]]


def test_json_round_trip_keeps_names():
    _, tape = track(attributes, 2.0)
    again = dcgraph.Tape.from_json(tape.to_json())
    again.lint()
    assert str(again) == str(tape)
    before = [(n.order_key(), n.names) for n in tape.walk()]
    after = [(n.order_key(), n.names) for n in again.walk()]
    assert after == before
    assert {names for _, names in after} >= {("self", ), ("self.mu",), ("box",), ("box.mu",)}
    assert [n.value for n in again.find(name="box.mu")] == [5.0]


def test_json_names_are_validated():
    import json
    _, tape = track(chained, 1.5)
    doc = json.loads(tape.to_json())
    doc["tapes"][0]["nodes"][1]["names"] = ["a", 3]
    with pytest.raises(ValueError, match=r"tapes\[0\]\.nodes\[1\]\.names"):
        dcgraph.Tape.from_json(doc)


def test_names_on_arrays_and_json_of_a_multi_name_node():
    def scale(w):
        z = out = np.asarray(w) * 2.0
        return out.sum() + z[0]
    _, tape = track(scale, [1.0, 2.0])
    (arr,) = tape.find(name="out")
    assert arr.names == ("z", "out")
    again = dcgraph.Tape.from_json(tape.to_json())
    assert [n.names for n in again.find(name="z")] == [("z", "out")]


def test_lint_refuses_malformed_names():
    _, tape = track(chained, 1.5)
    tape[1].names = ("a", "a")
    with pytest.raises(dcgraph.tape.LintError, match=r"chained @1 .*names must be a tuple"):
        tape.lint()
    tape[1].names = ["a"]
    with pytest.raises(dcgraph.tape.LintError, match="names must be"):
        tape.lint()
