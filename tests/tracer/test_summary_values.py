"""``track(f, ..., values="summary")``: objects live exactly as in the untraced run (issue 17
part 2); the views still show the values; consumers that compute with values refuse the tape."""
import gc
import io
import sys
import json
import tracemalloc
import weakref

import numpy as np
import pytest

import dcgraph
from dcgraph.tracer.summary import Summary, SummaryTapeError


# -- lifetimes -------------------------------------------------------------------------------
class Noted:
    """Writes ``("del", name)`` into ``events`` when finalised."""

    def __init__(self, name, events):
        self.name, self.events = name, events

    def __del__(self):
        self.events.append(("del", self.name))


def make(name, events):
    return Noted(name, events)


def weakref_program(events, n):
    total = 0
    for i in range(n):
        obj = Noted(i, events)
        watch = weakref.ref(obj, lambda _, i=i: events.append(("callback", i)))
        events.append(("made", i))
        total += obj.name
        del obj
        events.append(("dropped", i, watch() is None))
    return total


def del_order_program(events):
    held = [make(k, events) for k in "abcd"]
    events.append("built")
    held.pop(2)                          # c goes now
    x = make("e", events)
    x = make("f", events)                # e goes on rebinding
    events.append("rebound")
    held.reverse()
    del held[:2]                         # d, b
    try:
        raise ValueError(make("g", events))
    except ValueError:
        events.append("caught")          # the exception (holding g) goes at the end of except
    events.append("after except")
    del x
    held.clear()                         # a
    events.append("end")
    return len(held)


def test_weakref_callbacks_fire_where_untraced():
    plain = []
    weakref_program(plain, 3)
    assert plain[:4] == [("made", 0), ("del", 0), ("callback", 0), ("dropped", 0, True)]
    events = []
    result, tape = dcgraph.track(weakref_program, events, 3, values="summary")
    assert result == 3 and events == plain
    tape.lint()
    kept = []
    _, tape = dcgraph.track(weakref_program, kept, 3)   # the default: alive while the tape is
    assert kept == [("made", 0), ("dropped", 0, False), ("made", 1), ("dropped", 1, False),
                    ("made", 2), ("dropped", 2, False)]


def test_del_order_equals_untraced():
    plain = []
    del_order_program(plain)
    assert plain == ["built", ("del", "c"), ("del", "e"), "rebound", ("del", "b"), ("del", "d"),
                     "caught", ("del", "g"), "after except", ("del", "f"), ("del", "a"), "end"]
    events = []
    result, tape = dcgraph.track(del_order_program, events, values="summary")
    assert result == 0 and events == plain
    tape.lint()


def test_the_tape_keeps_no_object_of_the_run_alive():
    refs = []

    def program():
        for k in range(3):
            obj = Noted(k, [])
            refs.append(weakref.ref(obj))
        return obj.name

    _, tape = dcgraph.track(program, values="summary")
    tape.lint()                          # built: the replay keeps nothing either
    assert [r() for r in refs] == [None, None, None]
    refs.clear()
    _, kept = dcgraph.track(program)
    assert all(r() is not None for r in refs)
    del kept


class Base:
    pass


def rebuild(cls):
    body = {k: v for k, v in vars(cls).items() if k not in ("__dict__", "__weakref__")}
    return type(cls.__name__, cls.__bases__, body)


def rebuilding_program():
    class Made(Base):
        def __init__(self, v):
            self.v = v
    Made(1)                              # constructed through the traced constructor
    Rebuilt = rebuild(Made)
    original = weakref.ref(Made)
    del Made
    gc.collect()
    return original() is None, original() in Base.__subclasses__(), Rebuilt(2).v


def test_a_rebuilt_class_vanishes_from_subclasses():
    plain = rebuilding_program()
    gc.collect()
    result, tape = dcgraph.track(rebuilding_program, values="summary")
    assert plain == (True, False, 2)
    assert result == plain                     # the original is gone, as untraced
    tape.lint()
    gc.collect()
    kept_result, kept = dcgraph.track(rebuilding_program)
    assert kept_result == (False, True, 2)     # the default keeps the original alive


def stream(n, size):
    for k in range(n):
        yield np.full(size, float(k))


def process(n, size):
    total = 0.0
    for chunk in stream(n, size):
        scaled = chunk * 2.0
        total += float(scaled.sum())
    return total


def _peak(fn):
    gc.collect()
    tracemalloc.start()
    try:
        out = fn()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_200_mb_stream_peaks_as_untraced():
    n, size = 20, 10_000_000 // 8          # 20 chunks of 10 MB
    plain, plain_peak = _peak(lambda: process(n, size))
    traced, traced_peak = _peak(lambda: dcgraph.track(process, n, size, values="summary")[0])
    assert traced == plain == 2.0 * size * sum(range(n))
    assert plain_peak >= 20e6                                # a chunk and its double
    assert traced_peak <= 1.10 * plain_peak
    kept, kept_peak = _peak(lambda: dcgraph.track(process, 4, size)[0])
    assert kept_peak >= 8 * 10e6 * 0.95    # the default holds every chunk and its double


# -- views -----------------------------------------------------------------------------------
def numeric(a, k):
    b = a.sum(axis=0) * k
    return b.mean() + a.max()


DUMP = """\
@0: Argument a = array(shape=(2, 3), dtype=float64)
@1: Argument k = 2.0
@2: [L{l1}] @0.sum(axis=0) = array([3., 5., 7.])
@3: [L{l1}] b = @2 * @1 = array([ 6., 10., 14.])
@4: [L{l2}] @3.mean() = 10.0
@5: [L{l2}] @0.max() = 5.0
@6: [L{l2}] @4 + @5 = 15.0
@7: return @6 = 15.0"""


def _summary_tape():
    a = np.arange(6.0).reshape(2, 3)
    result, tape = dcgraph.track(numeric, a, 2.0, values="summary")
    assert result == 15.0
    tape.lint()
    return tape


def test_text_dump_of_a_summary_tape():
    tape = _summary_tape()
    l1 = numeric.__code__.co_firstlineno + 1
    assert str(tape) == DUMP.format(l1=l1, l2=l1 + 1)
    assert type(tape.nodes[0].value) is Summary and tape.nodes[0].value.shape == (2, 3)
    assert tape.values == "summary" and tape.result == 15.0


def test_rich_tree_of_a_summary_tape_matches_the_kept_one():
    buffers = []
    for values in ("summary", "keep"):
        _, tape = dcgraph.track(numeric, np.arange(6.0).reshape(2, 3), 2.0, values=values)
        out = io.StringIO()
        tape.show(file=out, width=120, color=False)
        buffers.append(out.getvalue())
    assert buffers[0] == buffers[1]
    assert "→ @0 arg a = ndarray(2, 3) float64 [0.0, 1.0, 2.0, …]" in buffers[0]


def test_json_dot_and_html_of_a_summary_tape():
    tape = _summary_tape()
    data = json.loads(tape.to_json())
    first = data["tapes"][0]["nodes"][0]["value"]
    assert first == {"repr": "array(shape=(2, 3), dtype=float64)", "type": "ndarray",
                     "abbrev": "ndarray(2, 3) float64 [0.0, 1.0, 2.0, …]"}
    reopened = dcgraph.Tape.from_json(tape.to_json())
    reopened.lint()
    assert str(reopened) == str(tape)
    _, kept = dcgraph.track(numeric, np.arange(6.0).reshape(2, 3), 2.0)
    assert tape.to_dot() == kept.to_dot()
    assert 'n2 [label="@2 @0.sum(axis=0)\\n= ndarray(3) float64 [3.0, 5.0,…\\nL' in tape.to_dot()
    html = tape.to_html()
    assert "ndarray(3) float64 [6.0, 10.0, 14.0]" in html


class Failure(Exception):
    pass


def test_a_raising_run_keeps_its_exception_only_as_a_summary():
    def failing(v):
        raise Failure(v)

    ref = None
    try:
        dcgraph.track(failing, "k", values="summary")
    except Failure as exc:
        ref, tape = weakref.ref(exc), exc.tape
    tape.lint()
    assert ref() is None                  # the tape holds no reference to it
    assert repr(tape.result) == "Failure('k')" and tape.raised
    assert str(tape).splitlines()[-1].endswith("raise Failure('k')")


# -- consumers -------------------------------------------------------------------------------
def test_consumers_that_need_values_refuse_a_summary_tape():
    from dcgraph.ad import backward
    from dcgraph.ad.compiled import compile_gradient

    _, tape = dcgraph.track(lambda x: x * x, 3.0, values="summary")
    with pytest.raises(SummaryTapeError, match=r"backward pass .* values='summary'"):
        backward(tape)
    with pytest.raises(SummaryTapeError, match=r"compiled replay .* values='keep'"):
        compile_gradient(tape)
    from dcgraph.compiled import compile_path
    with pytest.raises(SummaryTapeError, match=r"compiled replay \(compile_path\) .* values='keep'"):
        compile_path(tape, (3.0,))
    with pytest.raises(SummaryTapeError, match="random_variables"):
        dcgraph.random_variables(tape)
    _, kept = dcgraph.track(lambda x: x * x, 3.0)
    assert backward(kept) == {"x": 6.0}


def test_values_must_be_keep_or_summary():
    with pytest.raises(ValueError, match=r"values must be one of \('keep', 'summary'\), got 'all'"):
        dcgraph.track(abs, -1, values="all")


# -- the summary log -------------------------------------------------------------------------
def test_the_summary_log_keeps_identity_while_an_object_lives_and_no_reference():
    from dcgraph.tracer.summary import SummaryLog

    log = SummaryLog()
    first = Noted("x", [])
    log.logged(first)
    log.logged((first, 2, "s"))
    log.logged(len)                               # a long-lived callable is kept as it is
    log.logged([1, 2, 3])
    assert log[1][0] is log[0] and log[1][1:] == (2, "s") and log[2] is len
    assert repr(log[0]) == "<Noted object>" and log[0].type is Noted
    assert repr(log[3]) == "<list of length 3>" and log[3].length == 3
    watch = weakref.ref(first)
    del first
    assert watch() is None                        # the log held no reference
    second = Noted("y", [])
    log.logged(second)
    assert log[-1] is not log[0]                  # a new object, even at a reused address
    log.logged(np.arange(5.0))
    assert log[-1].__dcgraph_abbrev__() == "ndarray(5) float64 [0.0, 1.0, 2.0, …]"


def test_raw_entries_are_summarised_by_the_next_logged_value_or_by_settle():
    """The call hook appends raw (the list's own ``append``: no frame); the next ``logged``
    summarises what it appended, in place."""
    from dcgraph.tracer.summary import Summary, SummaryLog

    log = SummaryLog()
    third = Noted("z", [])
    list.append(log, third)
    list.append(log, (third, len))
    log.logged(1)
    assert type(log[0]) is Summary and log[1] == (log[0], len) and log[2] == 1
    watch = weakref.ref(third)
    del third
    assert watch() is None
    list.append(log, [4, 5])
    log.settle()
    assert repr(log[3]) == "<list of length 2>"
    log.settle()                                  # a summary is its own summary
    assert repr(log[3]) == "<list of length 2>" and len(log) == 4


def test_generators_stay_primitive_in_a_summary_run():
    """A traced generator's frame is its identity in the log; a summary log keeps no frame
    alive, so generator calls are primitive there (and traced with values='keep')."""
    import math
    from dcgraph.tape import NestedCall, PrimitiveCall

    def f(xs, w):
        return sum(math.sin(x) * w for x in xs)

    traces = sys.version_info[:2] in ((3, 11), (3, 12), (3, 13))
    for mode, traced in (("keep", traces), ("summary", False)):
        result, tape = dcgraph.track(f, [0.1, 0.2], 2.0, values=mode)
        tape.lint()
        assert result == f([0.1, 0.2], 2.0)
        made = [n for n in tape.nodes if isinstance(n, PrimitiveCall) and "genexpr" in repr(n.fn)]
        segments = [n for n in tape.nodes if isinstance(n, NestedCall)]
        assert len(made) == 1
        assert bool(segments) is traced
