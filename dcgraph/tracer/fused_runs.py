"""Fused runs: a block's straight-line steps replayed by one generated function.

The replay (``Frame.replay_steps``) calls one opcode handler per instruction. Most of a loop's
instructions only move nodes between the stack and the locals (``LOAD_FAST``, ``LOAD_CONST``,
``STORE_FAST``, ``COPY``, a call's callable, ...) or make one node from the next logged value
(``BINARY_OP``, ``COMPARE_OP``, ``BINARY_SUBSCR``). ``fused_steps`` replaces each run of
such instructions in a block, together with the one instruction that ends the run (any other,
replayed by its own handler), by a single step: a function generated once per code object that
does what the handlers would do, in order, with their operands and literals bound in advance.

Contract: a fused step changes the frame, the log position and the tape exactly as its
instructions' handlers called one by one would (``tests/tracer/test_fused_runs.py`` compares
the two on a corpus). Templates are chosen by handler *function* (``TEMPLATES``), so each
Python version's own handlers decide what is fused; a site whose handler may run a user
class's operator method (a guarded site) is replayed by its handler. Only a run's last
instruction may hand the driver a callee, so the driver's checks after a step stay valid.
When an instruction of a run raises ``Missing`` (it raised in the run), the step records
its index in ``frame.raised_at`` for the frame's exception handling.

Generated code contains no text from the traced program: names, literals and locations are
bound through the function's namespace under generated names.
"""
from __future__ import annotations

import operator
import re

import numpy as np

from .events import MARK_TYPES, Missing
from .instrument import py311
from .instrument import semantics311 as s311
from .instrument import semantics311_flow as s311_flow
from .instrument.semantics311 import NULL, Folded, Placeholder
from .naming import added_name
from .operator_guards import python_inplace
from ..tape.nodes import EMPTY_NAMES, Node, NO_KEYWORDS, PrimitiveCall, append_call_source

__all__ = ["fused_steps", "CodeFacts", "TEMPLATES", "ENDS_RUN"]

MIN_RUN = 2      # steps a fused run replaces at least (one step gains nothing)


class _Source:
    """The generated function's lines and namespace (values bound under generated names)."""

    def __init__(self):
        self.lines: list[str] = []
        self.ns: dict = {"Missing": Missing, "MARK_TYPES": MARK_TYPES, "NULL": NULL,
                         "Placeholder": Placeholder, "Folded": Folded,
                         "new_node": object.__new__, "PrimitiveCall": PrimitiveCall,
                         "NO_KEYWORDS": NO_KEYWORDS, "EMPTY": EMPTY_NAMES,
                         "ndarray": np.ndarray, "is_mutable": s311._is_mutable,
                         "python_inplace": python_inplace, "pop_n": s311._pop_n,
                         "Node": Node}

    def bind(self, value) -> str:
        name = f"k{len(self.ns)}"
        self.ns[name] = value
        return name

    def emit(self, *lines: str) -> None:
        self.lines.extend(lines)


# -- templates: (source, frame's code facts, op, i) -> True when emitted ----------------------
def _pop2(g: _Source, first: str, second: str) -> None:
    """``second, first = f.use(), f.use()`` (``use`` without versions: a pop)."""
    g.emit("if versions:", f"    {second} = f.use(); {first} = f.use()",
           "else:", f"    {second} = pop(); {first} = pop()")


def _push_call(g: _Source, fn: str, args: str, loc: str, i: int) -> None:
    """``semantics311._push_call``: the next logged value, one PrimitiveCall, pushed."""
    g.emit(f"at = {i}",
           "pos = r.pos",
           "if pos < len(log) and type(value := log[pos]) not in MARK_TYPES:",
           "    r.pos = pos + 1",
           "else:",
           "    value = r.take()",
           f"args = {args}",
           *append_call_source("node", "nodes", fn, "args", "value", loc),
           "if type(value) is ndarray and writes:",
           "    r.aliasing.noted(node)",
           "push(node)")


def _load_fast(g, c, op, i) -> bool:
    if i in c.s.maybe_unbound:
        return False
    g.emit(f"x = L.get({g.bind(op.arg)})",
           "push(x if x is not None else r.literal('<unbound>'))")
    return True


def _load_const(g, c, op, i) -> bool:
    literal = c.info.literals.get(i)
    if literal is None:
        return False
    g.emit(f"push({g.bind(literal)})")
    return True


def _store_fast_311(g, c, op, i) -> bool:
    name, one = g.bind(op.arg), g.bind(added_name((), op.arg))
    g.emit(f"x = L[{name}] = pop()",
           "if getattr(x, 'tape', None) is tape:",
           "    names = x.names",
           "    if not names:",
           f"        x.names = {one}",
           f"    elif {name} not in names:",
           f"        x.names = names + ({name},)")
    return True


def _store_fast_312(g, c, op, i) -> bool:
    name = g.bind(op.arg)
    g.emit("x = pop()",
           "if x is NULL:",
           f"    L.pop({name}, None)",
           "else:",
           f"    L[{name}] = x",
           f"    if getattr(x, 'tape', None) is tape and {name} not in x.names:",
           f"        x.names += ({name},)")
    return True


def _pop_top(g, c, op, i) -> bool:
    g.emit("pop()")
    return True


def _push_null(g, c, op, i) -> bool:
    g.emit("push(NULL)")
    return True


def _copy(g, c, op, i) -> bool:
    g.emit(f"push(stack[-{int(op.arg)}])")
    return True


def _swap(g, c, op, i) -> bool:
    n = int(op.arg)
    g.emit(f"stack[-1], stack[-{n}] = stack[-{n}], stack[-1]")
    return True


def _nothing(g, c, op, i) -> bool:
    return True


def _site_placeholder(c, i, obj, name) -> Placeholder:
    """The placeholder a site always pushes (the handlers' per-site cache, filled now)."""
    held = c.placeholders.get(i)
    if held is None or held.obj is not obj:
        held = c.placeholders[i] = Placeholder(obj, name)
    return held


def _global_placeholder(c, i, name) -> Placeholder | None:
    info = c.info
    if i not in info.callee_producer and i not in info.owner_producer:
        return None
    return _site_placeholder(c, i, None if i in info.callee_producer
                             else Placeholder.GLOBAL, name)


def _load_global_311(g, c, op, i) -> bool:
    push_null, name = op.arg
    held = _global_placeholder(c, i, name)
    if held is None:
        return False
    if push_null:
        g.emit("push(NULL)")
    g.emit(f"push({g.bind(held)})")
    return True


def _load_global_313(g, c, op, i) -> bool:
    push_null, name = op.arg
    held = _global_placeholder(c, i, name)
    if held is None:
        return False
    g.emit(f"push({g.bind(held)})")
    if push_null:
        g.emit("push(NULL)")
    return True


def _load_attr_311(g, c, op, i) -> bool:
    if i not in c.info.callee_producer:
        return False
    name, site = g.bind(op.arg), g.bind(i)
    g.emit("obj = f.use() if versions else pop()")
    if op.name == "LOAD_METHOD":
        g.emit("push(NULL)")
    g.emit("if type(obj) is Placeholder:",
           f"    held = placeholders.get({site})",
           "    if held is None or held.obj is not obj:",
           f"        held = placeholders[{site}] = Placeholder(obj, {name})",
           "    push(held)",
           "else:",
           f"    push(Placeholder(obj, {name}))")
    return True


def _load_attr_312(g, c, op, i, null_after=False) -> bool:
    method, name = op.arg
    if i not in c.info.callee_producer:
        return False
    g.emit("obj = f.use()")
    if method and not null_after:
        g.emit("push(NULL)")
    g.emit(f"push(Placeholder(obj, {g.bind(name)}))")
    if method and null_after:
        g.emit("push(NULL)")
    return True


def _load_attr_313(g, c, op, i) -> bool:
    return _load_attr_312(g, c, op, i, null_after=True)


def _binary_op(g, c, op, i) -> bool:
    if i in c.guarded_sites:
        return False
    fn, loc = g.bind(py311.BINARY_OPS[op.arg]), g.bind(op.loc)
    _pop2(g, "a", "b")
    if op.arg >= py311.INPLACE_FIRST:
        g.emit(f"at = {i}",
               "pos = r.pos",
               "ev = log[pos] if pos < len(log) and type(log[pos]) not in MARK_TYPES "
               "else r.peek()",
               f"if ev is a.value and (is_mutable(ev) or python_inplace({fn}, ev)):",
               f"    push(f.call({fn}, (a, b), r.take(), {i}, 0))",
               "else:")
        start = len(g.lines)
        _push_call(g, fn, "(a, b)", loc, i)
        g.lines[start:] = ["    " + line for line in g.lines[start:]]
    else:
        _push_call(g, fn, "(a, b)", loc, i)
    return True


def _binary_subscr(g, c, op, i) -> bool:
    if i in c.guarded_sites:
        return False
    _pop2(g, "c", "k")
    _push_call(g, g.bind(operator.getitem), "(c, k)", g.bind(op.loc), i)
    return True


def _compare_op(g, c, op, i) -> bool:
    k = py311.compare_index(op.arg)
    fn, symbol = py311.COMPARE_OPS[k], py311.COMPARE_SYMBOLS[k]
    _pop2(g, "a", "b")
    if i in c.info.folded:
        g.emit(f"push(Folded({g.bind(symbol)}, (a, b)))")
    else:
        _push_call(g, g.bind(fn), "(a, b)" if fn is not operator.contains else "(b, a)",
                   g.bind(op.loc), i)
    return True


def _call_311(g, c, op, i) -> bool:
    """``CALL``: the arguments popped here, the call replayed by ``do_call`` (which may hand
    the driver a callee: this step ends its run)."""
    n = int(op.arg)
    g.emit(f"at = {i}",
           "if versions:",
           f"    args = list(pop_n(f, {n}))")
    g.emit("else:", f"    args = stack[-{n}:]", f"    del stack[-{n}:]") if n else \
        g.emit("else:", "    args = []")
    g.emit("callee = pop()")
    if i in c.s.self_layout:
        g.emit("args.insert(0, r.resolve(callee) if isinstance(callee, Node) else callee)",
               "callee = pop()")
    else:
        g.emit("pop()")
    g.emit("names = f.kwnames",
           "if not names:",
           f"    f.do_call({i}, callee, args, {{}})",
           "else:",
           "    f.kwnames = ()",
           "    split = len(args) - len(names)",
           f"    f.do_call({i}, callee, args[:split], dict(zip(names, args[split:])))")
    return True


def _templates() -> dict:
    """Handler function -> template, for the handlers of every supported version."""
    table = {s311._load_fast: _load_fast, s311._load_const: _load_const,
             s311._store_fast: _store_fast_311, s311._pop_top: _pop_top,
             s311._push_null: _push_null, s311._copy: _copy, s311._swap: _swap,
             s311._load_global: _load_global_311, s311._load_attr: _load_attr_311,
             s311._binary_op: _binary_op, s311._binary_subscr: _binary_subscr,
             s311._compare_op: _compare_op, s311_flow._call: _call_311}
    try:
        from .instrument import semantics312 as s312
        table.update({s312._store_fast: _store_fast_312, s312._load_attr: _load_attr_312})
        from .instrument import semantics313 as s313
        table.update({s313._to_bool: _nothing, s313._load_global: _load_global_313,
                      s313._load_attr: _load_attr_313})
    except ImportError:            # (a version module this interpreter cannot load)
        pass
    return table


TEMPLATES = _templates()
ENDS_RUN = frozenset({_call_311})     # templates of steps that may hand the driver a callee


class CodeFacts:
    """What the templates read of one code object: its ``CodeInfo``, structure, the operator
    sites that are guarded, and the per-site placeholders the handlers share."""

    __slots__ = ("info", "s", "guarded_sites", "placeholders")

    def __init__(self, info, guarded_sites, placeholders: dict):
        self.info, self.s = info, info.structure
        self.guarded_sites, self.placeholders = guarded_sites, placeholders


_PRELUDE = (("L", "f.locals"), ("tape", "f.tape"), ("r", "f.r"), ("versions", "f.versions"),
            ("log", "r.log"), ("writes", "r.aliasing.writes"), ("nodes", "f.tape._nodes"),
            ("nodes_tape", "f.tape"))


def _generate(c: CodeFacts, steps: list):
    """One function replaying ``steps`` (templated steps, then possibly one handler)."""
    g = _Source()
    body: list[str] = []
    for handler, op, i in steps:
        template = TEMPLATES.get(handler)
        if template is not None:
            g.lines = []
            if template(g, c, op, i):
                body += g.lines
                continue
        h, o = g.bind(handler), g.bind(op)
        body += [f"at = {i}", f"{h}(f, {o}, {i})"]
    g.ns["placeholders"] = c.placeholders
    used = set(re.findall(r"\b[A-Za-z_]\w*\b", "\n".join(body)))
    if "log" in used or "writes" in used:
        used.add("r")
    prelude = ["stack = f.stack", "push = stack.append", "pop = stack.pop"]
    prelude += [f"{name} = {value}" for name, value in _PRELUDE if name in used]
    lines = ["def run(f, op, i):", *("    " + p for p in prelude), "    at = -1", "    try:",
             *("        " + line for line in body),
             "    except Missing:", "        f.raised_at = at", "        raise"]
    exec(compile("\n".join(lines), "<dcgraph fused run>", "exec"), g.ns)
    return g.ns["run"]


def fused_steps(c: CodeFacts, block: list) -> list:
    """``block``'s steps ``(handler, op, i)`` with each run of templated steps, and the step
    after it, replaced by one generated step whose ``i`` is the run's last instruction."""
    out, run = [], []
    for step in block:
        run.append(step)
        template = TEMPLATES.get(step[0])
        if template is None or template in ENDS_RUN \
                or not template(_Source(), c, step[1], step[2]):
            out += _closed(c, run)
            run = []
    out += _closed(c, run)
    return out


def _closed(c: CodeFacts, run: list) -> list:
    if len(run) < MIN_RUN:
        return run
    last = run[-1]
    return [(_generate(c, run), last[1], last[2])]
