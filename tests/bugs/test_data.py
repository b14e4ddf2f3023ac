"""dcgraph.bugs.rdata.read_data: every published data/inits file, row-major .Dim, NA, JSON, dicts, errors."""
import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dcgraph.bugs.errors import BUGSDataError
from dcgraph.bugs.rdata import read_data

from examples_dir import EXAMPLES

FILES = sorted(p for p in EXAMPLES.glob("*/*.txt") if p.name != "model.txt")


def test_all_data_and_inits_files_are_there():
    names = {p.name for p in FILES}
    assert names == {"data.txt", "inits.txt", "inits1.txt", "missdata.txt"}
    assert len(FILES) == 19 * 3 + 1


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_every_file_reads(path):
    data = read_data(path)
    assert data and all(isinstance(k, str) for k in data)
    for v in data.values():
        assert isinstance(v, (int, float, np.ndarray))
        if isinstance(v, np.ndarray):
            assert v.dtype in (np.int64, np.float64)
    assert read_data(str(path)).keys() == data.keys()
    assert read_data(path.read_text()).keys() == data.keys()


def test_rats_values_and_row_major_structure():
    d = read_data(EXAMPLES / "rats" / "data.txt")
    assert d["N"] == 30 and d["T"] == 5 and d["xbar"] == 22 and isinstance(d["N"], int)
    np.testing.assert_array_equal(d["x"], [8.0, 15.0, 22.0, 29.0, 36.0])
    assert d["Y"].shape == (30, 5) and d["Y"].dtype == np.int64
    np.testing.assert_array_equal(d["Y"][0], [151, 199, 246, 283, 320])   # the first row is the first 5 values
    np.testing.assert_array_equal(d["Y"][1], [145, 199, 249, 293, 354])
    assert d["Y"][:, 0].tolist()[:3] == [151, 145, 147]


def test_mice_row_major_with_missing_values():
    d = read_data(EXAMPLES / "mice" / "data.txt")
    t = d["t"]
    assert t.shape == (4, 20) and t.dtype == np.float64
    np.testing.assert_array_equal(t[0, :4], [12, 1, 21, 25])
    assert np.isnan(t[0, 17]) and t[0, 18] == 31 and t[1, 0] == 32
    assert d["t.cen"].dtype == np.int64 and d["t.cen"][0, 17] == 40


def test_rats_missing_data_and_partially_missing_inits():
    y = read_data(EXAMPLES / "rats" / "missdata.txt")["Y"]
    assert y.shape == (30, 5) and y.dtype == np.float64
    assert np.isnan(y[5, 4]) and y[5, 3] == 298 and not np.isnan(y[4, 4])
    assert np.isnan(y).sum(axis=0).tolist() == [0, 5, 9, 19, 25]   # 58 NA, later weeks missing more
    k = read_data(EXAMPLES / "kidney" / "inits.txt")
    assert np.isnan(k["beta.dis"][0]) and k["beta.dis"][1:].tolist() == [0.0, 0.0, 0.0]
    m = read_data(EXAMPLES / "magnesium" / "inits.txt")
    np.testing.assert_array_equal(np.isnan(m["tau"]), [True, True, False, True, True, True])


def test_r_literal_subset():
    d = read_data("list(a = -1.5E-3, b = c(1, -2, +3), c = 1:4, d = c(5:3, NA), e = 7L, f = c(1L, 2L),"
                  " g = structure(.Data = c(1, 2, 3, 4, 5, 6), .Dim = c(2, 3)), h = NA, i = c(c(1, 2), 3),"
                  " j = structure(c(1.5, 2), .Dim = 2), `k` = 1)".replace("`k`", '"k"'))
    assert d["a"] == -0.0015 and isinstance(d["a"], float)
    assert d["b"].tolist() == [1, -2, 3] and d["b"].dtype == np.int64
    assert d["c"].tolist() == [1, 2, 3, 4]
    np.testing.assert_array_equal(d["d"], [5.0, 4.0, 3.0, np.nan])
    assert d["e"] == 7 and isinstance(d["e"], int) and d["f"].tolist() == [1, 2]
    np.testing.assert_array_equal(d["g"], [[1, 2, 3], [4, 5, 6]])
    assert np.isnan(d["h"]) and d["i"].tolist() == [1, 2, 3] and d["j"].tolist() == [1.5, 2.0] and d["k"] == 1


def test_comments_whitespace_and_line_breaks():
    d = read_data("\n\n   list(N = 3, # the count\n  x = c(1,\n 2,\n3)\n)\n")
    assert d["N"] == 3 and d["x"].tolist() == [1, 2, 3]


def test_dim_given_as_whole_floats():
    assert read_data("list(a = structure(.Data = c(1, 2, 3, 4), .Dim = c(2.0, 2)))")["a"].tolist() == [[1, 2], [3, 4]]


def test_three_dimensional_structure_fills_last_index_fastest():
    d = read_data("list(a = structure(.Data = c(1, 2, 3, 4, 5, 6, 7, 8), .Dim = c(2, 2, 2)))")
    assert d["a"][0, 1, 0] == 3 and d["a"][1, 0, 1] == 6


def test_json_text_and_dicts():
    text = json.dumps({"N": 3, "x": [1.5, None, 2], "Y": [[1, 2], [3, 4]], "s": 2.5})
    d = read_data(text)
    assert d["N"] == 3 and d["s"] == 2.5
    np.testing.assert_array_equal(d["x"], [1.5, np.nan, 2.0])
    assert d["Y"].dtype == np.int64 and d["Y"].tolist() == [[1, 2], [3, 4]]
    e = read_data({"N": 3, "x": np.array([1.0, 2.0]), "k": np.array([1, 2], dtype=np.int32), "m": [[1, None]],
                   "z": None, "w": np.float32(2.5)})
    assert e["x"].dtype == np.float64 and e["k"].dtype == np.int64
    assert np.isnan(e["m"][0, 1]) and np.isnan(e["z"]) and e["w"] == 2.5


def test_json_file(tmp_path):
    p = tmp_path / "data.json"
    p.write_text('{"a": [1, 2, 3]}')
    assert read_data(p)["a"].tolist() == [1, 2, 3]


BAD = [
    ("list(N = 3, x = c(1, 2)", "2:1: unexpected end of data (a ')' is missing?)" if False else
     "1:24: unexpected end of data (a ')' is missing?)"),
    ("list(N = 3 x = 2)", "1:12: unexpected 'x' in R data"),
    ("list(N = 3, N = 4)", "1:13: 'N' is given twice"),
    ("list(N = foo(3))", "1:10: 'foo(...)' is not part of the BUGS data format (use list, c or structure)"),
    ("list(Y = structure(.Data = c(1, 2, 3), .Dim = c(2, 2)))",
     "1:10: .Dim = c(2, 2) needs 4 values, .Data has 3"),
    ("list(Y = structure(.Data = c(1, 2), .Dim = c(2.5)))", "1:10: .Dim must be non-negative integers, got c(2.5)"),
    ("list(Y = structure(.Data = c(1, 2), .Dimnames = c(2)))",
     "1:37: structure(...) takes .Data and .Dim, got .Dimnames"),
    ("list(3)", "1:1: every element of list(...) needs a name (name = value)"),
    ("list(a = list(b = 1))", "1:6: 'a': nested lists are not BUGS data"),
    ("list(a = c(1, list(b = 2)))", "1:10: c(...) may hold only numbers, NA, ranges and c(...)"),
    ("list(a = 1.5:3)", "1:13: range 1.5:3 needs integer bounds"),
    ("list(a = 1e999)", "1:10: number 1e999 is too large for a 64-bit float"),
    ("list(a = $)", "1:10: unexpected character '$' in R data"),
    ("list(a = system(1))", "1:10: 'system(...)' is not part of the BUGS data format"),
    ("c(1, 2)", "1:1: data must be a list(name = value, ...)"),
    ('{"a": [1, 2}', "1:12: invalid JSON: Expecting ',' delimiter"),
    ('[1, 2]', "1:1: JSON data must be an object"),
    ('{"a": "text"}', "'a': values must be numbers or missing (None/NA), got 'text'"),
    ('{"a": [[1, 2], [3]]}', "'a': nested lists are ragged (not a rectangular array)"),
    ('{"a": true}', "'a': values must be numbers or missing (None/NA), got True"),
    ("   ", "data text is empty"),
]


@pytest.mark.parametrize("text,message", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_data_messages(text, message):
    with pytest.raises(BUGSDataError) as info:
        read_data(text)
    assert str(info.value).startswith(message), str(info.value)


def test_bad_data_file_names_the_file_and_shows_a_caret(tmp_path):
    p = tmp_path / "data.txt"
    p.write_text("list(N = 3,\n     x = c(1, 2,, 3))\n")
    with pytest.raises(BUGSDataError) as info:
        read_data(p)
    assert str(info.value) == f"{p}:2:17: unexpected ',' in R data\n         x = c(1, 2,, 3))\n                    ^"
    with pytest.raises(BUGSDataError, match="no such data file"):
        read_data(tmp_path / "missing.txt")


def test_deeply_nested_c_does_not_recurse():
    text = "list(a = " + "c(" * 20_000 + "1" + ")" * 20_000 + ")"
    assert read_data(text)["a"].tolist() == [1]


def test_dict_input_rejects_strings_and_booleans():
    with pytest.raises(BUGSDataError, match="boolean arrays"):
        read_data({"a": np.array([True, False])})
    with pytest.raises(BUGSDataError, match="values must be numbers"):
        read_data({"a": "os.system('x')"})
    with pytest.raises(TypeError, match="expected a path, text or dict"):
        read_data(42)


def test_openbugs_rectangular_format():
    text = "age[]  sex[]  Y[,2]  Y[,1]\n26     0      1.5    NA\n52     1      2.0    -3.1e1\nEND\n"
    d = read_data(text)
    assert d["age"].tolist() == [26, 52] and d["age"].dtype == np.int64 and d["sex"].tolist() == [0, 1]
    np.testing.assert_array_equal(d["Y"], [[np.nan, 1.5], [-31.0, 2.0]])


@pytest.mark.parametrize("text,message", [
    ("a[] b[]\n1 2\n3\nEND\n", "3:1: row has 1 value, the header names 2 columns"),
    ("a[] a[]\n1 2\nEND", "1:5: column a[] is given twice"),
    ("a[] b[]\n1 2\n", "2:4: unexpected end of data (rectangular data ends with END)"),
    ("x[,2]\n1\nEND", "1:1: 'x' has no column 1"),
    ("a[]\n1 $\nEND", "2:3: unexpected character '$' in rectangular data"),
    ("a[] a[,1]\n1 2\nEND", "1:1: 'a' is given both as a vector and as matrix columns"),
])
def test_bad_rectangular_data(text, message):
    with pytest.raises(BUGSDataError) as info:
        read_data(text)
    assert str(info.value).startswith(message), str(info.value)


def test_hostile_data_sizes_and_nesting():
    with pytest.raises(BUGSDataError, match="1:11: range 1:100000000 has more than 5000000 values"):
        read_data("list(a = 1:100000000)")
    with pytest.raises(BUGSDataError, match=r"\.Dim = c\(4294967296, 4294967296\) needs 18446744073709551616 values"):
        read_data("list(a = structure(.Data = c(1, 2), .Dim = c(4294967296, 4294967296)))")
    with pytest.raises(BUGSDataError, match="JSON nested too deeply|nested deeper than 32 levels"):
        read_data('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    deep = 1.0
    for _ in range(40):
        deep = [deep]
    with pytest.raises(BUGSDataError, match="'a': nested deeper than 32 levels"):
        read_data({"a": deep})


def test_r_dump_format_fills_column_major():
    d = read_data('N <- 3L\n"Y" <-\nstructure(c(1, 2, 3, 4, 5, 6), .Dim = c(2L, 3L))\nx = c(1.5, NA)\n')
    assert d["N"] == 3
    np.testing.assert_array_equal(d["Y"], [[1, 3, 5], [2, 4, 6]])         # R order: first index fastest
    np.testing.assert_array_equal(d["x"], [1.5, np.nan])
    same = read_data("list(Y = structure(c(1, 2, 3, 4, 5, 6), .Dim = c(2L, 3L)))")
    np.testing.assert_array_equal(same["Y"], [[1, 2, 3], [4, 5, 6]])     # a BUGS list: row-major
    assert read_data("N <- 2")["N"] == 2
    with pytest.raises(BUGSDataError, match="2:1: 'N' is given twice"):
        read_data("N <- 2\nN <- 3")
    with pytest.raises(BUGSDataError, match=r"\.Data must be c\(...\), a range or a number"):
        read_data("list(a = structure(.Data = structure(1, .Dim = 1), .Dim = 1))")


_R_TOKENS = ["list", "c", "structure", "(", ")", ",", "=", "<-", ".Data", ".Dim", "x", "y.z", "NA", "-", "1",
             "2.5", "1e3", "3L", ":", "Inf", "\"q\"", "#c\n", "\n", "$", "{", "}", "[", "]", "9" * 30]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_R_TOKENS), min_size=1, max_size=40))
def test_random_r_token_soup_only_ever_raises_bugs_data_errors(tokens):
    text = " ".join(tokens) + "\n"
    try:
        data = read_data(text)
    except BUGSDataError as e:
        assert str(e)
    else:
        assert all(isinstance(v, (int, float, np.ndarray)) for v in data.values())
