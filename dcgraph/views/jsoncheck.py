"""Validation of a ``dcgraph-tape`` JSON document before it is read (``jsonio`` has the schema).

A document from elsewhere is untrusted input: ``check_document`` raises ``ValueError`` naming
the place (``tapes[3].nodes[17].args[0]``) of the first thing that is not as the schema says,
so that reading it cannot loop (a child tape must come after its caller, once), allocate
without bound (numeric dtypes only, shapes matching their data) or fail deep in the reader.
"""
from __future__ import annotations

import json
import math

import numpy as np

__all__ = ["check_document", "check_dtype", "is_json_text"]

KINDS = ("Argument", "Constant", "PrimitiveCall", "NestedCall", "Branch", "Phi", "Return",
         "Raise")
MAX_ELEMENTS = 50_000_000     # entries of one stored array


def is_json_text(text: str) -> bool:
    """Is ``text`` JSON (rather than a path)? Objects and arrays always are; any other JSON
    value is, when it parses."""
    if text.lstrip()[:1] in ("{", "["):
        return True
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _fail(where: str, what: str):
    raise ValueError(f"from_json: {where}: {what}")


def _is_int(x) -> bool:
    return type(x) is int


def check_dtype(where: str, name) -> np.dtype:
    """A numeric (bool, int, float, complex) dtype named by ``name``, else ValueError."""
    if not isinstance(name, str) or len(name) > 32:
        _fail(where, f"dtype must be a short string, got {name!r:.40}")
    try:
        dtype = np.dtype(name)
    except TypeError:
        _fail(where, f"unknown dtype {name!r}")
    if dtype.kind not in "biufc" or dtype.itemsize > 32:
        _fail(where, f"dtype {name!r} is not a numeric dtype")
    return dtype


def _value(where: str, v, n_tapes: int, n_literals: int) -> None:
    if v is None or type(v) in (bool, int, float, str):
        return
    if not isinstance(v, dict):
        _fail(where, "a value must be null, a number, a string or an object, got "
              f"{type(v).__name__}")
    if "same_as" in v:
        _ref(f"{where}.same_as", v["same_as"], n_tapes, n_literals)
    elif "scalar" in v:
        check_dtype(f"{where}.dtype", v.get("dtype"))
        if type(v["scalar"]) not in (bool, int, float):
            _fail(f"{where}.scalar", "not a number")
    elif "array" in v:
        check_dtype(f"{where}.dtype", v.get("dtype"))
        shape = v.get("shape")
        if not isinstance(shape, list) or len(shape) > 32 or not all(
                _is_int(k) and k >= 0 for k in shape):
            _fail(f"{where}.shape", "must be a list of at most 32 non-negative integers")
        size = math.prod(shape)
        if size > MAX_ELEMENTS:
            _fail(f"{where}.shape", f"{size:,} entries (at most {MAX_ELEMENTS:,})")
        try:
            ok = np.shape(v["array"]) == tuple(shape) if size else np.size(v["array"]) == 0
        except ValueError:       # ragged nesting
            ok = False
        if not ok:
            _fail(f"{where}.array", f"does not have the shape {shape}")
    elif "repr" in v:
        if not isinstance(v["repr"], str) or not isinstance(v.get("type", ""), str) \
                or not isinstance(v.get("abbrev", ""), (str, type(None))):
            _fail(where, "repr, type and abbrev must be strings")
    else:
        _fail(where, "not a stored value (no array, scalar, repr or same_as)")


def _ref(where: str, r, n_tapes: int, n_literals: int) -> None:
    if isinstance(r, dict):
        if set(r) != {"literal"} or not _is_int(r["literal"]) or not 0 <= r["literal"] < n_literals:
            _fail(where, f"not a literal reference below {n_literals}: {r!r:.60}")
    elif not (isinstance(r, list) and len(r) == 2 and all(map(_is_int, r))
              and 0 <= r[0] < n_tapes and r[1] >= 0):
        _fail(where, f"not a node reference [tape, index]: {r!r:.60}")


def _loc(where: str, d, n_files: int) -> None:
    if d is None:
        return
    if not (isinstance(d, list) and len(d) == 3 and _is_int(d[0]) and 0 <= d[0] < n_files
            and all(x is None or _is_int(x) for x in d[1:])):
        _fail(where, f"not a location [file number, line, offset]: {d!r:.60}")


def _strings(where: str, items, keys=None) -> None:
    if keys is None:
        if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
            _fail(where, "must be a list of strings")
        return
    if not isinstance(items, list):
        _fail(where, "must be a list")
    for k, f in enumerate(items):
        if not isinstance(f, dict) or not all(isinstance(f.get(key), (str, type(None)))
                                               for key in keys):
            _fail(f"{where}[{k}]", f"must be an object of strings {keys}")


def check_document(doc: dict) -> None:
    """Raise ValueError at the first place where ``doc`` departs from the schema."""
    _strings("files", doc.get("files"))
    sources = doc.get("sources")
    if not isinstance(sources, dict) or not all(isinstance(v, str) for v in sources.values()):
        _fail("sources", "must be an object of strings")
    _strings("functions", doc.get("functions"), ("name", "qualname", "module"))
    literals, tapes = doc.get("literals"), doc.get("tapes")
    if not isinstance(literals, list):
        _fail("literals", "must be a list")
    if not isinstance(tapes, list) or not tapes:
        _fail("tapes", "must be a non-empty list")
    nf, nt, nl, nfn = len(doc["files"]), len(tapes), len(literals), len(doc["functions"])
    for k, lit in enumerate(literals):
        if not isinstance(lit, dict) or not isinstance(lit.get("name"), (str, type(None))):
            _fail(f"literals[{k}]", "must be an object with a name")
        _value(f"literals[{k}].value", lit.get("value"), nt, 0)
        _loc(f"literals[{k}].loc", lit.get("loc"), nf)
    called = {}
    for t, tape in enumerate(tapes):
        where = f"tapes[{t}]"
        if not isinstance(tape, dict) or not isinstance(tape.get("nodes"), list):
            _fail(where, "must be an object with a list of nodes")
        if not isinstance(tape.get("name"), str) or type(tape.get("raised")) is not bool:
            _fail(where, "needs a name (string) and raised (bool)")
        fn = tape.get("fn")
        if fn is not None and not (_is_int(fn) and 0 <= fn < nfn):
            _fail(f"{where}.fn", f"not a function number below {nfn}")
        _value(f"{where}.result", tape.get("result"), nt, nl)
        for i, node in enumerate(tape["nodes"]):
            child = _node(f"{where}.nodes[{i}]", node, nt, nl, nf, nfn)
            if child is not None:
                if child <= t or child in called:      # a child comes later, and once
                    _fail(f"{where}.nodes[{i}].child",
                          f"tape {child} is not a new tape after tape {t}")
                called[child] = t


def _node(where: str, d, nt: int, nl: int, nf: int, nfn: int):
    """Check one node; return its child tape number (NestedCall) or None."""
    if not isinstance(d, dict) or d.get("kind") not in KINDS:
        _fail(where, f"not a node of a known kind: {str(d)[:60]}")
    kind = d["kind"]
    _loc(f"{where}.loc", d.get("loc"), nf)
    if "value" in d:
        _value(f"{where}.value", d["value"], nt, nl)
    meta = d.get("meta", {})
    if not isinstance(meta, dict):
        _fail(f"{where}.meta", "must be an object")
    for k, v in meta.items():
        _value(f"{where}.meta.{k}", v, nt, nl)
    names = d.get("names", [])
    if not (isinstance(names, list) and all(isinstance(x, str) for x in names)
            and len(set(names)) == len(names)):
        _fail(f"{where}.names", "must be a list of distinct strings")
    if kind in ("PrimitiveCall", "NestedCall"):
        if not (_is_int(d.get("fn")) and 0 <= d["fn"] < nfn):
            _fail(f"{where}.fn", f"not a function number below {nfn}")
        if not isinstance(d.get("args"), list) or not isinstance(d.get("kwargs", {}), dict):
            _fail(where, "args must be a list and kwargs an object")
        for j, a in enumerate(d["args"]):
            _ref(f"{where}.args[{j}]", a, nt, nl)
        for k, a in d.get("kwargs", {}).items():
            _ref(f"{where}.kwargs.{k}", a, nt, nl)
        if "fn_node" in d:
            _ref(f"{where}.fn_node", d["fn_node"], nt, nl)
        if d.get("mutates"):
            _value(f"{where}.result", d.get("result"), nt, nl)
        if kind == "NestedCall" and d.get("child") is not None:
            if not (_is_int(d["child"]) and 0 <= d["child"] < nt):
                _fail(f"{where}.child", f"not a tape number below {nt}")
            return d["child"]
        return None
    if kind == "Phi":
        _ref(f"{where}.source", d.get("source"), nt, nl)
        _edge(where, d.get("edge"))
        if not isinstance(d.get("name"), str):
            _fail(f"{where}.name", "must be a string")
        return None
    inputs = d.get("inputs")
    if not isinstance(inputs, list):
        _fail(f"{where}.inputs", "must be a list")
    for j, r in enumerate(inputs):
        _ref(f"{where}.inputs[{j}]", r, nt, nl)
    if kind in ("Return", "Raise") and "value" not in d and not inputs:
        _fail(where, "a Return or Raise without a value needs an input")
    if kind in ("Argument", "Constant") and not isinstance(d.get("name"), (str, type(None))):
        _fail(f"{where}.name", "must be a string")
    if kind == "Argument":
        s = d.get("source")
        if isinstance(s, dict) and "args" in s:
            refs = s["args"] if isinstance(s["args"], list) else [None]
        elif isinstance(s, dict) and "kwargs" in s:
            refs = list(s["kwargs"].values()) if isinstance(s["kwargs"], dict) else [None]
        else:
            refs = [] if s is None else [s]
        for j, r in enumerate(refs):
            _ref(f"{where}.source", r, nt, nl)
    if kind == "Branch":
        _edge(where, d.get("edge"))
        if not isinstance(d.get("op"), (str, type(None))):
            _fail(f"{where}.op", "must be a string or null")
        _value(f"{where}.taken", d.get("taken"), nt, nl)
    return None


def _edge(where: str, e) -> None:
    if not (isinstance(e, list) and len(e) == 2 and all(map(_is_int, e))):
        _fail(f"{where}.edge", f"not an edge [from block, to block]: {e!r:.40}")
