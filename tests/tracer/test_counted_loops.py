"""Counted loops (``tracer.counted_loops``): ``for i in range(...)`` logs no items when the
iterable is a ``range``; the replay counts them. Anything else under the same code is logged
item by item (``logged_items``), and the tapes are those of the plain replay."""
import math

import pytest

import dcgraph
from dcgraph.tracer.events import CALL_MARK


def _built(f, *args, **kwargs):
    result, tape = dcgraph.track(f, *args, **kwargs)
    tape.lint()
    assert result == f(*args)
    return tape


def _items(tape):
    return [n.value for n in tape.walk() if n.kind == "PrimitiveCall"
            and getattr(n.fn, "__name__", "") == "next_item"]


def squares(a, b, step):
    total = 0
    for i in range(a, b, step):
        total += i * i
    return total


def test_the_items_are_counted_not_logged(logs):
    for args, items in (((0, 5, 1), [0, 1, 2, 3, 4]), ((7, -2, -3), [7, 4, 1]),
                        ((3, 3, 1), []), ((2**64, 2**64 + 3, 1), [2**64, 2**64 + 1, 2**64 + 2])):
        tape = _built(squares, *args)
        assert _items(tape) == items
        # entry, the three arguments (each apart), the range, the iterator; a product and a
        # sum per item; the exit
        assert len(logs[-1]) == 6 + 2 * len(items) + 1


def first_over(xs, limit):
    for i in range(len(xs)):
        if xs[i] > limit:
            break
    else:
        return -1
    return i


def breaks_at_once(n):
    for i in range(n):
        break
    return n


def nested(n):
    cells = []
    for i in range(n):
        for j in range(i):
            cells.append((i, j))
    return cells


def test_break_else_and_nested_loops():
    tape = _built(first_over, [1.0, 5.0, 2.0], 3.0)
    assert _items(tape) == [0, 1] and tape.returned.value == 1
    tape = _built(first_over, [1.0, 2.0], 3.0)
    assert _items(tape) == [0, 1] and tape.returned.value == -1
    tape = _built(breaks_at_once, 4)            # the body logs nothing before its break
    assert _items(tape) == [0]
    tape = _built(nested, 4)
    assert _items(tape) == [0, 1, 0, 2, 0, 1, 3, 0, 1, 2]


def halts_at(n, bad):
    out = []
    for i in range(n):
        out.append(1.0 / (i - bad))
    return out


def test_an_exception_in_the_body_ends_the_count():
    with pytest.raises(ZeroDivisionError) as info:
        dcgraph.track(halts_at, 5, 2)
    tape = info.value.tape
    tape.lint()
    assert _items(tape) == [0, 1, 2]


def countdown(n):
    for i in range(n, 0, -1):
        yield i * 0.5


def drains(n):
    return [v for v in countdown(n)] + [math.fsum(range(n))]


def test_a_loop_in_a_traced_generator_is_logged(logs):
    tape = _built(drains, 3)
    assert logs[-1][1] == 3                                   # the root's argument
    assert [e for e in logs[-1][2:] if type(e) is int] == [3, 2, 1]    # the generator's items
    assert tape.returned.value == [1.5, 1.0, 0.5, 3.0]
    assert [n.value for n in tape.walk() if n.kind == "Yield"] == [1.5, 1.0, 0.5]


def as_list(a, b, step):
    return [a, b, step, 99]


def test_a_rebound_range_is_logged_item_by_item(monkeypatch, logs):
    for _ in range(5):
        _built(squares, 0, 3, 1)                    # instrumented expecting ``range``
    monkeypatch.setitem(squares.__globals__, "range", as_list)
    tape = _built(squares, 0, 3, 1)
    assert _items(tape) == [0, 3, 1, 99]
    log = logs[-1]
    k = log.index(CALL_MARK)
    assert log[k + 1] is as_list
    # its entry, three arguments, list, value; the list's iterator; per item the item,
    # product, sum
    assert log[k + 2].info.code is as_list.__code__ and log[k + 3:k + 6] == [0, 3, 1]
    assert type(log[k + 8]).__name__ == "list_iterator"
    assert log[k + 9::3][:4] == [0, 3, 1, 99]
    assert [n.kind for n in tape.nodes if getattr(n, "fn", None) is as_list] == ["NestedCall"]


def test_summary_runs_count_too(logs):
    tape = _built(squares, 0, 4, 1, values="summary")
    assert _items(tape) == [0, 1, 2, 3]
    assert len(logs[-1]) == 4 + 2 * 4 + 1
    tape = _built(nested, 3, values="summary")
    assert _items(tape) == [0, 1, 0, 2, 0, 1]
