"""Saving a tape as JSON and reopening it: ``to_json(tape)``, ``from_json(text_or_path)``.

Schema ``dcgraph-tape`` version 1 (flat, so deep recursion stays shallow JSON)::

    {"format": "dcgraph-tape", "version": 1,
     "files":     [filename, ...],
     "sources":   {"FILE:LINE": source line text, ...},
     "functions": [{"name": str, "qualname": str, "module": str|null}, ...],
     "literals":  [{"name": str|null, "value": VALUE, "loc": LOC}, ...],
     "tapes":     [TAPE, ...]}          # in execution (walk) order; tapes[0] is the root
    TAPE = {"name": str, "fn": FUNCTION|null, "parent": REF|null, "result": VALUE,
            "raised": bool, "nodes": [NODE, ...]}
    NODE = {"kind": str, "loc": LOC, "value": VALUE, "meta": {str: VALUE}, "names": [str],
            ...by kind}
      Argument       "inputs": [], "name", "source": REF | {"args": [REF]} | {"kwargs": {str: REF}} | null
      Constant       "inputs": [], "name"
      PrimitiveCall  "fn": FUNCTION, "args": [REF], "kwargs": {str: REF}, "fn_node": REF,
                     "method": true, "mutates": true, "result": VALUE
                     (inputs are fn_node, args, kwargs; a mutating call's value is the
                     container, its result what the call returned)
      NestedCall     as PrimitiveCall, plus "child": tape number
      Branch         "inputs", "edge": [from block, to block], "op": str|null, "taken": VALUE
      Phi            "name", "source": REF, "edge": [from block, to block]
      Return, Raise  "inputs"
    LOC      = [file number, line, bytecode offset] | null
    REF      = [tape number, node index] | {"literal": literal number}
    FUNCTION = index into "functions"
    VALUE    = null | bool | int | float | str         (as is; floats may be NaN/Infinity)
             | {"array": nested lists, "dtype": str, "shape": [int]}    (numeric arrays)
             | {"scalar": number, "dtype": str}                        (NumPy scalars)
             | {"repr": str, "type": str, "abbrev": str}                 (anything else)
             | {"same_as": REF}   (the very object an earlier node holds as its value)

Optional keys: "meta", "names" (``Node.names``; left out when it is just an Argument's or a
Phi's own name, or empty), "kwargs", "fn_node", "method", "mutates"/"result" appear only when
set. "value" is left out where it is another node's: a Phi's (its source's), a Return's or
Raise's equal to its input's, a NestedCall's equal to its child's return value.

Reopened nodes hold no live objects they cannot get back: functions not found among the
modules already imported become ``SavedFunction``, ``repr`` values ``SavedValue``.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from ..tape import (Argument, Branch, Constant, NestedCall, Node, Phi, PrimitiveCall, Raise,
                    Return, Tape)
from ..tracer.collector import collector_paused
from .saved import SavedLocation, SavedValue, describe_function, resolve_function
from .jsoncheck import check_document, check_dtype, is_json_text
from .values import abbrev, full_text

__all__ = ["to_json", "from_json", "encode_value", "decode_value", "FORMAT", "VERSION"]

FORMAT, VERSION = "dcgraph-tape", 1
MAX_STRING = 10_000
_NATIVE = (bool, int, float, str)
MAX_INT_BITS = 14_000     # larger ints (over ~4,200 digits) are stored by their repr


def encode_value(value, max_array: int = 10_000):
    """A JSON-ready form of ``value`` (see VALUE in the module docstring)."""
    if value is None or type(value) in _NATIVE and not (
            type(value) is str and len(value) > MAX_STRING
            or type(value) is int and value.bit_length() > MAX_INT_BITS):
        return value
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return {"scalar": value.item(), "dtype": str(value.dtype)}
    if (isinstance(value, np.ndarray) and value.dtype.kind in "biuf"
            and value.size <= max_array):
        return {"array": value.tolist(), "dtype": str(value.dtype), "shape": list(value.shape)}
    if isinstance(value, SavedValue):
        return {"repr": value.text, "type": value.type_name, "abbrev": value.abbrev}
    named = getattr(type(value), "__dcgraph_type_name__", None)   # a tracer ``Summary``
    name = named(value) if callable(named) else type(value).__name__
    return {"repr": full_text(value), "type": name, "abbrev": abbrev(value, 60)}


def decode_value(data):
    """The value ``encode_value`` wrote (arrays as arrays, reprs as ``SavedValue``)."""
    if not isinstance(data, dict):
        return data
    if "scalar" in data:
        return check_dtype("scalar", data["dtype"]).type(data["scalar"])
    if "array" in data:
        dtype = check_dtype("array", data["dtype"])
        return np.array(data["array"], dtype=dtype).reshape(data["shape"])
    if "repr" in data:
        return SavedValue(data["repr"], data.get("type", "?"), data.get("abbrev"))
    raise ValueError(f"from_json: not a stored value: {data!r:.80}")


def _walk_tapes(tape: Tape):
    """Tapes in execution order (a child right where its call is), without recursion."""
    order, stack = [], [tape]
    while stack:
        t = stack.pop()
        order.append(t)
        stack.extend(reversed([n.child for n in t.nodes
                               if isinstance(n, NestedCall) and n.child is not None]))
    return order


class _Writer:
    def __init__(self, tape: Tape, max_array: int):
        self.max_array = max_array
        self.tapes = _walk_tapes(tape)
        self.number = {id(t): k for k, t in enumerate(self.tapes)}
        self.files: dict[str, int] = {}
        self.sources: dict[str, str] = {}
        self.locs: dict[int, list] = {}
        self.functions: dict[tuple, int] = {}
        self.literals: dict[int, int] = {}
        self.literal_list: list = []
        self.holders: dict[int, list] = {}

    def value(self, v):
        return encode_value(v, self.max_array)

    def loc(self, loc):
        if loc is None:
            return None
        out = self.locs.get(id(loc))
        if out is None:
            f = self.files.setdefault(loc.filename, len(self.files))
            key = f"{f}:{loc.line}"
            if loc.line is not None and key not in self.sources:
                self.sources[key] = loc.source
            out = self.locs[id(loc)] = [f, loc.line, loc.offset]
        return out

    def function(self, fn) -> int:
        d = describe_function(fn)
        return self.functions.setdefault((d["name"], d["qualname"], d["module"]),
                                         len(self.functions))

    def ref(self, n: Node):
        t = n.tape
        if t is None:      # a shared literal
            k = self.literals.get(id(n))
            if k is None:
                k = self.literals[id(n)] = len(self.literal_list)
                self.literal_list.append({"name": n.name, "value": self.value(n.value),
                                          "loc": self.loc(n.loc)})
            return {"literal": k}
        number = self.number.get(id(t))
        if number is None:
            raise ValueError(f"to_json: {n!r} belongs to a tape outside the one saved")
        return [number, n.index]

    def node_value(self, n: Node):
        """The value, or a reference to the earlier node holding the same (non-JSON) object."""
        v = n.value
        if v is None or type(v) in _NATIVE and not (type(v) is int
                                                    and v.bit_length() > MAX_INT_BITS):
            return v
        holder = self.holders.get(id(v))
        if holder is not None:
            return {"same_as": holder}
        self.holders[id(v)] = self.ref(n)
        return self.value(v)

    def node(self, n: Node) -> dict:
        ref = self.ref
        d = {"kind": n.kind, "loc": self.loc(n.loc)}
        if isinstance(n, PrimitiveCall):
            d["fn"] = self.function(n.fn)
            d["args"] = [ref(a) for a in n.args]
            if n.kwargs:
                d["kwargs"] = {k: ref(v) for k, v in n.kwargs.items()}
            if n.fn_node is not None:
                d["fn_node"] = ref(n.fn_node)
            if n.method:
                d["method"] = True
            if n.mutates is not None:
                d.update(mutates=True, result=self.value(n.result))
            if isinstance(n, NestedCall):
                child = n.child
                d["child"] = self.number[id(child)] if child is not None else None
                ret = child.returned if child is not None else None
                if not (isinstance(ret, Return) and ret.value is n.value):
                    d["value"] = self.node_value(n)
            else:
                d["value"] = self.node_value(n)
        elif isinstance(n, Phi):
            d.update(name=n.name, source=ref(n.source), edge=list(n.edge))
        else:
            d["inputs"] = [ref(i) for i in n.inputs]
            if not (isinstance(n, (Return, Raise)) and n.inputs and n.value is n.inputs[0].value):
                d["value"] = self.node_value(n)
            if isinstance(n, Argument):
                s = n.source
                d["name"] = n.name
                d["source"] = (None if s is None else ref(s) if isinstance(s, Node)
                               else {"kwargs": {k: ref(v) for k, v in s.items()}}
                               if isinstance(s, dict) else {"args": [ref(v) for v in s]})
            elif isinstance(n, Constant):
                d["name"] = n.name
            elif isinstance(n, Branch):
                d.update(edge=list(n.edge), op=n.op, taken=self.value(n.taken))
        if n.has_meta:
            d["meta"] = {str(k): self.value(v) for k, v in n.meta.items()}
        if n.names and n.names != _own_names(n):
            d["names"] = list(n.names)
        return d

    def document(self) -> dict:
        nodes: list[list] = [[] for _ in self.tapes]
        stack = [[0, 0]]        # execution order, as the reader goes ("same_as" looks back)
        while stack:
            top = stack[-1]
            t = self.tapes[top[0]]
            if top[1] == len(t.nodes):
                stack.pop()
                continue
            n = t.nodes[top[1]]
            top[1] += 1
            nodes[top[0]].append(self.node(n))
            if isinstance(n, NestedCall) and n.child is not None:
                stack.append([self.number[id(n.child)], 0])
        tapes = [{"name": t.name, "fn": self.function(t.fn) if t.fn is not None else None,
                  "parent": self.ref(t.parent) if t.parent is not None else None,
                  "result": self.value(t.result), "raised": bool(t.raised), "nodes": ns}
                 for t, ns in zip(self.tapes, nodes)]
        functions = [{"name": k[0], "qualname": k[1], "module": k[2]} for k in self.functions]
        return {"format": FORMAT, "version": VERSION, "files": list(self.files),
                "sources": self.sources, "functions": functions, "literals": self.literal_list,
                "tapes": tapes}


def _no_gc():
    """Pause the cyclic garbage collector: building or parsing ~10^6 small objects otherwise
    triggers collections that scan every live node (several times slower on large tapes)."""
    return collector_paused()


def to_json(tape: Tape, path: str | os.PathLike | None = None, indent: int | None = None,
            max_array: int = 10_000) -> str:
    """The tape as JSON text (schema above); also written to ``path`` when given. Numeric
    arrays of at most ``max_array`` entries are stored whole, larger ones as their repr."""
    with _no_gc():
        text = json.dumps(_Writer(tape, max_array).document(), indent=indent)
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return text


def from_json(source) -> Tape:
    """Reopen a tape from JSON text, a parsed dict, or a path (``os.PathLike``, or a ``str``
    that is not JSON text). The document is validated first (``jsoncheck``): raises ValueError
    naming what is wrong with it and where."""
    if isinstance(source, dict):
        doc = source
    else:
        if isinstance(source, os.PathLike) or (isinstance(source, str) and not is_json_text(source)):
            source = Path(source).read_text(encoding="utf-8")
        try:
            with _no_gc():
                doc = json.loads(source)
        except json.JSONDecodeError as exc:
            raise ValueError(f"from_json: not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"from_json: not a {FORMAT} document (a JSON {type(doc).__name__}, "
                         "not an object)")
    if doc.get("format") != FORMAT:
        raise ValueError(f"from_json: not a {FORMAT} document (no \"format\": \"{FORMAT}\")")
    if doc.get("version") != VERSION:
        raise ValueError(f"from_json: {FORMAT} version {doc.get('version')!r} is not supported "
                         f"(this dcgraph reads version {VERSION})")
    check_document(doc)
    try:
        with _no_gc():
            return _Reader(doc).read()
    except (KeyError, IndexError, TypeError) as exc:
        raise ValueError(f"from_json: malformed {FORMAT} document: "
                         f"{type(exc).__name__}: {exc}") from None


class _Reader:
    KINDS = {"PrimitiveCall": PrimitiveCall, "NestedCall": NestedCall}

    def __init__(self, doc: dict):
        self.doc, self.files, self.sources = doc, doc["files"], doc["sources"]
        self.tapes: dict[int, Tape] = {}
        self.locs: dict[tuple, SavedLocation] = {}
        self.functions = [resolve_function(f) for f in doc["functions"]]
        self.literals = [Constant(lit["name"], decode_value(lit["value"]), self.loc(lit["loc"]))
                         for lit in doc["literals"]]

    def loc(self, d):
        if d is None:
            return None
        key = tuple(d)
        loc = self.locs.get(key)
        if loc is None:
            f, line, offset = d
            loc = self.locs[key] = SavedLocation(self.files[f], line, offset,
                                                 self.sources.get(f"{f}:{line}", ""))
        return loc

    def value(self, data):
        if isinstance(data, dict) and "same_as" in data:
            return self.ref(data["same_as"]).value
        return decode_value(data)

    def ref(self, r) -> Node:
        if isinstance(r, dict):
            return self.literals[r["literal"]]
        t, i = r
        tape = self.tapes.get(t)
        if tape is None or not 0 <= i < len(tape._nodes):
            raise ValueError(f"from_json: reference {r} is not to an earlier node "
                             "(inputs must be recorded before their users)")
        return tape._nodes[i]

    def source(self, s):
        if s is None:
            return None
        if isinstance(s, list) or "literal" in s:
            return self.ref(s)
        if "kwargs" in s:
            return {k: self.ref(v) for k, v in s["kwargs"].items()}
        return tuple(self.ref(v) for v in s["args"])

    def new_tape(self, k: int, parent: NestedCall | None) -> Tape:
        d = self.doc["tapes"][k]
        fn = self.functions[d["fn"]] if d.get("fn") is not None else resolve_function(
            {"name": d["name"]})
        tape = self.tapes[k] = Tape(None, fn, parent)
        tape.result, tape.raised = decode_value(d["result"]), d["raised"]
        return tape

    def read(self) -> Tape:
        docs = self.doc["tapes"]
        if not docs:
            raise ValueError("from_json: the document holds no tape")
        root = self.new_tape(0, None)
        stack = [[0, 0]]                 # (tape number, next node): execution order
        while stack:
            top = stack[-1]
            nodes = docs[top[0]]["nodes"]
            if top[1] == len(nodes):
                stack.pop()
                tape = self.tapes[top[0]]
                call = tape.parent
                if call is not None and call.value is _CHILD and tape.returned is not None:
                    call.value = call.result = tape.returned.value
                continue
            d = nodes[top[1]]
            top[1] += 1
            node = self.tapes[top[0]].append(self.node(d))
            if isinstance(node, NestedCall) and d.get("child") is not None:
                node.child = self.new_tape(d["child"], node)
                stack.append([d["child"], 0])
        return root

    def node(self, d: dict) -> Node:
        kind, loc = d["kind"], self.loc(d["loc"])
        value = self.value(d["value"]) if "value" in d else _CHILD
        if kind in self.KINDS:
            kwargs = {k: self.ref(v) for k, v in d.get("kwargs", {}).items()}
            fn_node = self.ref(d["fn_node"]) if "fn_node" in d else None
            n = self.KINDS[kind](self.functions[d["fn"]], [self.ref(a) for a in d["args"]],
                                 kwargs, value, loc, fn_node=fn_node, method=d.get("method", False))
            if d.get("mutates"):
                n.mutates, n.result = value, decode_value(d["result"])
        elif kind == "Phi":
            n = Phi(d["name"], self.ref(d["source"]), tuple(d["edge"]), loc)
        else:
            inputs = tuple(self.ref(r) for r in d["inputs"])
            if value is _CHILD:      # a Return or Raise of its input's value
                value = inputs[0].value
            if kind == "Argument":
                n = Argument(d["name"], value, self.source(d["source"]), loc)
            elif kind == "Constant":
                n = Constant(d["name"], value, loc)
            elif kind == "Branch":
                n = Branch(tuple(d["edge"]), inputs, decode_value(d["taken"]), d["op"], loc)
            elif kind in ("Return", "Raise"):
                n = (Return if kind == "Return" else Raise)(inputs, value, loc)
            else:
                raise ValueError(f"from_json: unknown node kind {kind!r}")
            n.inputs, n.value = inputs, value
        for k, v in d.get("meta", {}).items():
            n.meta[k] = decode_value(v)
        if "names" in d:
            n.names = tuple(d["names"])
        return n


def _own_names(n: Node) -> tuple:
    """The names a node of this kind starts with (left out of the document)."""
    return n.names[:1] if isinstance(n, (Argument, Phi)) and n.names[:1] == (n.name,) else ()


_CHILD = object()   # placeholder value of a nested call until its child's return is read
