"""to_json / from_json: a saved tape reopens with its kinds, references, values, locations."""
import json
import operator

import numpy as np
import pytest

import dcgraph
from dcgraph.tape import Argument, NestedCall
from dcgraph.views import from_json, render_tree, to_dot, to_json
from dcgraph.views.saved import SavedFunction, SavedValue
from views_cases import caller_mutates, geom, logistic, loop_sum


def where(n):
    """A node's position: (call-site indices from the root, own index); literals by value."""
    if n.tape is None:
        return ("literal", repr(n.value))
    return (tuple(s.index for s in dcgraph.Tape.path(n)), n.index)


def same_value(a, b):
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(b, SavedValue):
        return b.text == repr(a) and b.type_name == type(a).__name__
    return type(a) is type(b) and a == b


def sources(n):
    return [where(s) for s in n.source_nodes()] if isinstance(n, Argument) else []


def check_round_trip(tape):
    text = to_json(tape)
    back = from_json(text)
    pairs = list(zip(tape.walk(), back.walk(), strict=True))
    for a, b in pairs:
        assert (a.kind, where(a)) == (b.kind, where(b))
        assert [where(i) for i in a.inputs] == [where(i) for i in b.inputs]
        assert sources(a) == sources(b)
        assert same_value(a.value, b.value), (a, a.value, b.value)
        assert (a.line, getattr(a.loc, "offset", None)) == (b.line, getattr(b.loc, "offset", None))
        if a.loc is not None:
            assert (a.loc.filename, a.loc.source) == (b.loc.filename, b.loc.source)
        for attr in ("name", "edge", "op", "taken", "method"):
            assert getattr(a, attr, None) == getattr(b, attr, None)
        if isinstance(a, dcgraph.PrimitiveCall):
            assert a.fn_name == b.fn_name
            assert (a.mutates is None) == (b.mutates is None)
    back.lint()
    assert str(back) == str(tape)
    return back


def test_round_trip_of_calls_loops_arrays_and_mutation():
    for f, args in [(geom, ([0.9, 0.8, 0.1], 0, 0.3)), (loop_sum, (7,)), (caller_mutates, (4,)),
                    (logistic, (np.arange(12.0).reshape(4, 3), np.array([0.5, -1.0, 2.0])))]:
        check_round_trip(dcgraph.track(f, *args)[1])


def test_round_trip_of_a_raising_run():
    with pytest.raises(IndexError) as info:
        dcgraph.track(geom, [0.9], 0, 0.3)
    back = check_round_trip(info.value.tape)
    assert back.raised and back.returned.kind == "Raise"
    assert repr(back.result) == "IndexError('list index out of range')"


def test_star_arguments_kwargs_exceptions_and_meta():
    def callee(a, *rest, scale=1, **extra):
        return (a + sum(rest)) * scale

    def outer(n):
        try:
            {}["missing"]
        except KeyError:
            pass
        return callee(n, 1, 2, scale=3, tag="t")

    _, tape = dcgraph.track(outer, 2)
    tape.nodes[0].meta.update(rv=True, weight=0.5)
    back = check_round_trip(tape)
    assert back.nodes[0].meta == {"rv": True, "weight": 0.5}
    child = next(n for n in back.nodes if isinstance(n, NestedCall)).child
    args = {a.name: a for a in child.arguments}
    assert isinstance(args["rest"].source, tuple) and isinstance(args["extra"].source, dict)
    assert args["scale"].source.value == 3 and args["scale"].source.tape is None


def test_reopened_tape_shows_renders_and_has_no_live_user_functions(tmp_path):
    _, tape = dcgraph.track(geom, [0.9, 0.1], 0, 0.3)
    path = tmp_path / "geom.json"
    doc = json.loads(to_json(tape))
    for fn in doc["functions"]:       # as if reopened where views_cases is not imported
        fn["module"] = fn["module"].replace("views_cases", "views_cases_not_imported")
    path.write_text(json.dumps(doc))
    back = from_json(path)
    assert render_tree(back, width=80) == render_tree(tape, width=80)
    assert to_dot(back) == to_dot(tape)
    call = next(n for n in back.nodes if isinstance(n, NestedCall))
    assert isinstance(call.fn, SavedFunction) and call.fn.__qualname__ == "geom"
    with pytest.raises(TypeError, match="reopened from JSON"):
        call.fn()
    assert back.name == "geom" and back.result == 2
    assert back.nodes[3].fn is operator.getitem     # found among imported modules


def test_schema_is_documented_and_versioned():
    _, tape = dcgraph.track(loop_sum, 2)
    doc = json.loads(to_json(tape))
    assert (doc["format"], doc["version"]) == ("dcgraph-tape", 1)
    assert {"files", "sources", "functions", "literals", "tapes"} <= set(doc)
    assert doc["tapes"][0]["nodes"][0] == {"kind": "Argument", "loc": None, "inputs": [],
                                           "value": 2, "name": "n", "source": None}
    big = np.arange(20_000.0)
    assert "repr" in json.loads(to_json(dcgraph.track(np.sum, big)[1]))["tapes"][0]["nodes"][0]["value"]


@pytest.mark.parametrize("doc, message", [
    ("[]", "not a dcgraph-tape document"),
    ('{"format": "dcgraph-tape", "version": 99}', "version 99 is not supported"),
    ("{not json", "not JSON"),
    ('{"format": "dcgraph-tape", "version": 1, "files": [], "sources": {}, "functions": [],'
     ' "literals": [], "tapes": [{"name": "f", "result": 1, "raised": false, "nodes": '
     '[{"kind": "Return", "loc": null, "inputs": [[0, 5]]}]}]}', "not to an earlier node"),
])
def test_bad_documents_are_refused_with_a_clear_error(doc, message):
    with pytest.raises(ValueError, match=message):
        from_json(doc)
