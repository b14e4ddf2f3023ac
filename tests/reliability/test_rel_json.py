"""``Tape.from_json`` on untrusted documents: validated first, ValueError naming the place."""
import copy
import json

import numpy as np
import pytest

import dcgraph


def two_levels(x):
    return inner(x) * 2


def inner(x):
    return np.arange(3.0) * x


@pytest.fixture(scope="module")
def doc():
    _, tape = dcgraph.track(two_levels, 1.5)
    return json.loads(tape.to_json())


def test_a_valid_document_reads_back(doc):
    tape = dcgraph.Tape.from_json(copy.deepcopy(doc))
    tape.lint()
    assert np.array_equal(tape.returned.value, np.arange(3.0) * 3.0)


def _child_site(doc):
    for t, tape in enumerate(doc["tapes"]):
        for i, node in enumerate(tape["nodes"]):
            if node.get("child") is not None:
                return t, i
    raise AssertionError("no nested call")


def _array_site(doc):
    for t, tape in enumerate(doc["tapes"]):
        for i, node in enumerate(tape["nodes"]):
            if isinstance(node.get("value"), dict) and "array" in node["value"]:
                return t, i
    raise AssertionError("no array value")


def test_a_child_tape_pointing_at_an_enclosing_tape_is_refused(doc):
    bad = copy.deepcopy(doc)
    t, i = _child_site(bad)
    bad["tapes"][t]["nodes"][i]["child"] = t          # a cycle: would loop until memory runs out
    where = rf"tapes\[{t}\]\.nodes\[{i}\]\.child: tape {t} is not a new"
    with pytest.raises(ValueError, match=where):
        dcgraph.Tape.from_json(bad)
    bad["tapes"].append(copy.deepcopy(bad["tapes"][1]))
    bad["tapes"][t]["nodes"][i]["child"] = 1
    bad["tapes"][0]["nodes"].insert(0, dict(bad["tapes"][t]["nodes"][i]))   # tape 1 called twice
    with pytest.raises(ValueError, match="is not a new tape"):
        dcgraph.Tape.from_json(bad)


@pytest.mark.parametrize("dtype", ["S2000000000", "U100", "O", "V8", "M8[s]", 7, "float1024"])
def test_only_numeric_dtypes_are_read(doc, dtype):
    bad = copy.deepcopy(doc)
    t, i = _array_site(bad)
    bad["tapes"][t]["nodes"][i]["value"]["dtype"] = dtype
    with pytest.raises(ValueError, match=rf"tapes\[{t}\]\.nodes\[{i}\]\.value\.dtype"):
        dcgraph.Tape.from_json(bad)


def test_an_array_must_match_its_shape(doc):
    bad = copy.deepcopy(doc)
    t, i = _array_site(bad)
    bad["tapes"][t]["nodes"][i]["value"]["shape"] = [10**6, 10**6]
    with pytest.raises(ValueError, match=r"value\.shape: 1,000,000,000,000 entries"):
        dcgraph.Tape.from_json(bad)
    bad["tapes"][t]["nodes"][i]["value"]["shape"] = [4]
    with pytest.raises(ValueError, match=r"value\.array: does not have the shape \[4\]"):
        dcgraph.Tape.from_json(bad)


@pytest.mark.parametrize("text, message", [
    ("[1, 2]", "a JSON list, not an object"), ("123", "a JSON int, not an object"),
    ("null", "a JSON NoneType, not an object"), ('"x"', "a JSON str, not an object"),
])
def test_non_object_json_is_not_read_as_a_path(text, message):
    with pytest.raises(ValueError, match=message):
        dcgraph.Tape.from_json(text)


@pytest.mark.parametrize("edit, where", [
    (lambda d: d["tapes"][0]["nodes"][0].update(kind="Evil"),
     r"tapes\[0\]\.nodes\[0\]: not a node"),
    (lambda d: d["tapes"][0]["nodes"][-1].update(inputs=[[0, "x"]]),
     r"tapes\[0\]\.nodes\[\d+\]\.inputs\[0\]"),
    (lambda d: d["tapes"][0]["nodes"][-1].update(inputs=[[99, 0]]),
     r"inputs\[0\]: not a node reference"),
    (lambda d: d["tapes"][0]["nodes"][0].update(loc=[5, 1, 0]), r"tapes\[0\]\.nodes\[0\]\.loc"),
    (lambda d: d.update(functions=[{"name": 3}]), r"functions\[0\]"),
    (lambda d: d.update(tapes=[]), "tapes: must be a non-empty list"),
    (lambda d: d["tapes"][0].update(nodes={}), r"tapes\[0\]: must be an object with a list"),
    (lambda d: d["literals"].append({"name": None, "value": {"bogus": 1}, "loc": None}),
     r"literals\[\d+\]\.value: not a stored value"),
])
def test_malformed_documents_name_the_place(doc, edit, where):
    bad = copy.deepcopy(doc)
    edit(bad)
    with pytest.raises(ValueError, match=where):
        dcgraph.Tape.from_json(bad)
