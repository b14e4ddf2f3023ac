"""A traced frame's entry logs its argument values each apart in listed code (no tuple per
frame, ``CodeInfo.args_apart``) and as one tuple in a summary run; the replay reads either into
the same Argument nodes."""
import dcgraph
from dcgraph.tracer.events import EntryMark


def inner(a, b=2.0, *rest, scale, **named):
    def times(v):
        return v * a                 # ``a`` is a cell: its value and its cell are logged
    return times(b) + sum(rest) * scale + len(named)


def outer(x):
    return inner(x, 3.0, 1.0, 4.0, scale=0.5, tag=1) + inner(x, scale=2.0)


def none():
    return 7


def calls_none():
    return none() + 1


def _entry(log, fn):
    return next(k for k, e in enumerate(log) if type(e) is EntryMark and e.info.code is fn.__code__)


def _arguments(tape, name):
    return [[(n.name, n.value) for n in call.child.nodes if n.kind == "Argument"]
            for call in tape.walk() if call.kind == "NestedCall" and call.fn.__name__ == name]


def test_the_log_holds_each_argument_apart(logs):
    result, tape = dcgraph.track(outer, 1.5)
    tape.lint()
    assert result == outer(1.5) == 11.0
    log = logs[-1]
    k = _entry(log, inner)
    a, b, scale, rest, named, cell = log[k + 1:k + 7]
    assert (a, b, scale, rest, named) == (1.5, 3.0, 0.5, (1.0, 4.0), {"tag": 1})
    assert cell.cell_contents == 1.5
    assert log[_entry(log, outer) + 1] == 1.5          # the root's one argument, no tuple


def test_listed_and_summary_runs_give_the_same_arguments():
    _, listed = dcgraph.track(outer, 1.5)
    _, summary = dcgraph.track(outer, 1.5, values="summary")
    listed.lint()
    summary.lint()
    expected = [[("a", 1.5), ("b", 3.0), ("scale", 0.5), ("rest", (1.0, 4.0)),
                 ("named", {"tag": 1})],
                [("a", 1.5), ("b", 2.0), ("scale", 2.0), ("rest", ()), ("named", {})]]
    assert _arguments(listed, "inner") == expected
    def floats(calls):               # (a summary keeps atoms as they are, not containers)
        return [[(n, v) for n, v in call if type(v) is float] for call in calls]
    assert floats(_arguments(summary, "inner")) == floats(expected)
    assert _arguments(listed, "times") == _arguments(summary, "times") \
        == [[("v", 3.0)], [("v", 2.0)]]


def test_a_frame_without_arguments_logs_its_mark_alone(logs):
    result, tape = dcgraph.track(calls_none)
    tape.lint()
    assert result == 8
    log = logs[-1]
    assert log[_entry(log, none) + 1] == 7    # its return value follows its entry mark
    assert [n.kind for n in tape.nodes[0].child.nodes] == ["Return"]
