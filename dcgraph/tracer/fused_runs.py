"""Fused runs: a block's straight-line steps replayed by one generated function.

The replay (``Frame.replay_steps``) calls one opcode handler per instruction. Most of a loop's
instructions only move nodes between the stack and the locals (``LOAD_FAST``, ``LOAD_CONST``,
``STORE_FAST``, ``COPY``, a call's callable, ...) or make one node from the next logged value
(``BINARY_OP``, ``COMPARE_OP``, ``BINARY_SUBSCR``, ``FOR_ITER``). ``fused_steps`` replaces
each run of such instructions in a block, with the one instruction that ends the run (any
other, replayed by its own handler, or a ``CALL``), by one step: a function generated once per
code object that does what the handlers would do, in order. Stack entries pushed and popped
within the run live in the function's variables (the stack is written only before a handler
runs, at the run's end, and when an instruction raises), and what is known when the code is
generated (literals, names, placeholders, locations) is bound in advance.

Contract: a fused step changes the frame, the log position and the tape exactly as its
instructions' handlers called one by one would (``tests/tracer/test_fused_runs.py`` compares
the two on the corner corpora). Templates are chosen by handler *function* (``TEMPLATES``), so
each Python version's own handlers decide what is fused; a site whose handler may run a user
class's operator method (a guarded site) is replayed by its handler. Only a run's last
instruction may hand the driver a callee. When an instruction of a run raises ``Missing``, the
step leaves the stack as that instruction's handler would and records the instruction's index
in ``frame.raised_at``.

The log is read as the handlers read it: a counted loop's ``FOR_ITER`` (``counted_loops``)
counts a ``range``'s items instead of reading them, and a ``CALL`` is replayed by ``do_call``,
which reads the callable, or nothing where the site expects it (``CodeInfo.expected``;
``tests/tracer/test_fused_log_format.py``).

Generated code contains no text from the traced program: names, literals and locations are
bound through the function's namespace under generated names.
"""
from __future__ import annotations

import operator
import re

import numpy as np

from .events import MARK_TYPES, Missing
from .generators import resumed_item
from .instrument import py311
from .instrument import semantics311 as s311
from .instrument import semantics311_flow as s311_flow
from .instrument.semantics311 import NULL, Folded, Placeholder
from .naming import added_name
from . import ops
from .operator_guards import python_inplace
from ..tape.nodes import EMPTY_NAMES, NO_KEYWORDS, Constant, Node, Phi, PrimitiveCall, \
    append_call_source, append_phi_source

__all__ = ["warm_up", "fuse_block", "fused_steps", "entry_function", "CodeFacts", "TEMPLATES", "ENDS_RUN", "ALONE"]

MIN_RUN = 2      # steps a fused run replaces at least (one gains nothing, but ``ALONE``'s)
ENABLED = True   # False: every step replayed by its handler (tests compare the two)
HOT = 50         # entries into a block (over every replay of its code) before it is fused:
                 # generating a run costs about 150 us, as much as replaying it 100 times saves


class CodeFacts:
    """What the templates read of one code object: its ``CodeInfo``, structure, the operator
    sites that are guarded, and the per-site placeholders the handlers share."""

    __slots__ = ("info", "s", "guarded_sites", "placeholders")

    def __init__(self, info, guarded_sites, placeholders: dict):
        self.info, self.s = info, info.structure
        self.guarded_sites, self.placeholders = guarded_sites, placeholders


class _Source:
    """The generated function's lines, namespace, and the run's stack entries held in
    variables (``pending``: (variable, is a fresh unnamed node of this tape), bottom first)."""

    def __init__(self):
        self.lines: list[str] = []
        self.ns: dict = {"Missing": Missing, "MARK_TYPES": MARK_TYPES, "NULL": NULL,
                         "Placeholder": Placeholder, "Folded": Folded, "Node": Node,
                         "new_node": object.__new__, "PrimitiveCall": PrimitiveCall,
                         "Constant": Constant, "NO_KEYWORDS": NO_KEYWORDS, "EMPTY": EMPTY_NAMES,
                         "ndarray": np.ndarray, "is_mutable": s311._is_mutable,
                         "python_inplace": python_inplace, "resumed_item": resumed_item}
        self.known: dict = {}           # bound name -> its value (placeholders read statically)
        self.pending: list = []
        self.unwinds: dict = {}         # instruction -> the variables to push when it raises
        self.serial = 0

    def bind(self, value) -> str:
        name = f"k{len(self.ns)}"
        self.ns[name] = value
        self.known[name] = value
        return name

    def var(self) -> str:
        self.serial += 1
        return f"v{self.serial}"

    def emit(self, *lines: str) -> None:
        self.lines.extend(lines)

    # -- the stack ----------------------------------------------------------------------------
    def push(self, name: str, fresh: bool = False) -> None:
        self.pending.append((name, fresh))

    def pop(self) -> tuple:
        if self.pending:
            return self.pending.pop()
        v = self.var()
        self.emit(f"{v} = pop()")
        return v, False

    def flush(self) -> None:
        names = [name for name, _ in self.pending]
        if len(names) == 1:
            self.emit(f"push({names[0]})")
        elif names:
            self.emit(f"stack.extend(({', '.join(names)},))")
        self.pending = []

    def raising(self, i: int, indent: str = "") -> None:
        """Instruction ``i`` may raise from here: the stack it leaves is the pending entries."""
        self.emit(f"{indent}at = {i}")
        self.unwinds[i] = [name for name, _ in self.pending]

    def used(self, names: list) -> list:
        """``f.use()`` of entries popped in this order: resolved when containers have versions."""
        if not names:
            return []
        out = [self.var() for _ in names]
        self.emit("if versions:", *(f"    {o} = f.used({n})" for o, n in zip(out, names)),
                  "else:", *(f"    {o} = {n}" for o, n in zip(out, names)))
        return out


# -- templates: (source, code facts, op, i) -> True when emitted (else the handler replays it) --
def _load_fast(g, c, op, i) -> bool:
    if i in c.s.maybe_unbound:
        return False
    _load_local(g, op.arg)
    return True


def _load_local(g, name) -> None:
    v = g.var()
    g.emit(f"{v} = L.get({g.bind(name)})",
           f"if {v} is None:",
           f"    {v} = r.literal('<unbound>')")
    g.push(v)


def _load_const(g, c, op, i) -> bool:
    literal = c.info.literals.get(i)
    if literal is None:
        return False
    g.push(g.bind(literal))
    return True


def _store_fast_311(g, c, op, i) -> bool:
    _store_local(g, op.arg, shares_first_name=True)
    return True


def _store_fast_312(g, c, op, i) -> bool:
    _store_local(g, op.arg, shares_first_name=False)
    return True


def _store_local(g, arg, shares_first_name: bool) -> None:
    """``STORE_FAST``: 3.11 names a node by one shared tuple; 3.12 and later restore an
    unbound comprehension variable (NULL) and append names."""
    (v, fresh), name = g.pop(), g.bind(arg)
    if fresh:                    # a node this run made: of this tape, bound to no name yet
        g.emit(f"L[{name}] = {v}", f"{v}.names = {g.bind(added_name((), arg))}"
               if shares_first_name else f"{v}.names = ({name},)")
        return
    if shares_first_name:
        g.emit(f"L[{name}] = {v}",
               f"if getattr({v}, 'tape', None) is tape:",
               f"    if not {v}.names:",
               f"        {v}.names = {g.bind(added_name((), arg))}",
               f"    elif {name} not in {v}.names:",
               f"        {v}.names += ({name},)")
    else:
        g.emit(f"if {v} is NULL:",
               f"    L.pop({name}, None)",
               "else:",
               f"    L[{name}] = {v}",
               f"    if getattr({v}, 'tape', None) is tape and {name} not in {v}.names:",
               f"        {v}.names += ({name},)")


def _pop_top(g, c, op, i) -> bool:
    if g.pending:
        g.pending.pop()
    else:
        g.emit("pop()")
    return True


def _push_null(g, c, op, i) -> bool:
    g.push("NULL")
    return True


def _copy(g, c, op, i) -> bool:
    n = int(op.arg)
    if n <= len(g.pending):
        name, _ = g.pending[-n]
        g.pending = [(p, fresh and p != name) for p, fresh in g.pending]   # named once only
        g.push(name)
    else:
        g.flush()
        v = g.var()
        g.emit(f"{v} = stack[-{n}]")
        g.push(v)
    return True


def _swap(g, c, op, i) -> bool:
    n = int(op.arg)
    if n <= len(g.pending):
        p = g.pending
        p[-1], p[-n] = p[-n], p[-1]
    else:
        g.flush()
        g.emit(f"stack[-1], stack[-{n}] = stack[-{n}], stack[-1]")
    return True


def _nothing(g, c, op, i) -> bool:
    return True


def _kw_names(g, c, op, i) -> bool:
    g.emit(f"f.kwnames = {g.bind(tuple(op.arg))}")
    return True


def _site_placeholder(c, i, obj, name) -> Placeholder:
    """The placeholder a site pushes for ``obj`` (the handlers' per-site cache, filled now)."""
    held = c.placeholders.get(i)
    if held is None or held.obj is not obj:
        held = c.placeholders[i] = Placeholder(obj, name)
    return held


def _global_placeholder(c, i, name) -> Placeholder | None:
    info = c.info
    if i not in info.callee_producer and i not in info.owner_producer:
        return None
    return _site_placeholder(c, i, None if i in info.callee_producer else Placeholder.GLOBAL,
                             name)


def _load_global_311(g, c, op, i) -> bool:
    return _load_global(g, c, op, i, null_after=False)


def _load_global_313(g, c, op, i) -> bool:
    return _load_global(g, c, op, i, null_after=True)


def _load_global(g, c, op, i, null_after: bool) -> bool:
    push_null, name = op.arg
    held = _global_placeholder(c, i, name)
    if held is None:
        return False
    if push_null and not null_after:
        g.push("NULL")
    g.push(g.bind(held))
    if push_null and null_after:
        g.push("NULL")
    return True


def _load_attr_311(g, c, op, i) -> bool:
    if i not in c.info.callee_producer:
        return False
    obj, _ = g.pop()
    name = g.bind(op.arg)
    if op.name == "LOAD_METHOD":
        g.push("NULL")
    known = g.known.get(obj)
    if type(known) is Placeholder:      # ``module.name``: the site's own placeholder
        g.push(g.bind(_site_placeholder(c, i, known, op.arg)))
        return True
    (o,), v, site = g.used([obj]), g.var(), g.bind(i)
    g.emit(f"if type({o}) is Placeholder:",
           f"    {v} = placeholders.get({site})",
           f"    if {v} is None or {v}.obj is not {o}:",
           f"        {v} = placeholders[{site}] = Placeholder({o}, {name})",
           "else:",
           f"    {v} = Placeholder({o}, {name})")
    g.push(v)
    return True


def _load_attr_312(g, c, op, i, null_after=False) -> bool:
    method, name = op.arg
    if i not in c.info.callee_producer:
        return False
    (o,), v = g.used([g.pop()[0]]), g.var()
    if method and not null_after:
        g.push("NULL")
    g.emit(f"{v} = Placeholder({o}, {g.bind(name)})")
    g.push(v)
    if method and null_after:
        g.push("NULL")
    return True


def _load_attr_313(g, c, op, i) -> bool:
    return _load_attr_312(g, c, op, i, null_after=True)


def _operands(g, n: int) -> list:
    """``n`` operands popped as the handlers pop them (``f.use()``, top first), bottom first."""
    popped = [g.pop()[0] for _ in range(n)]
    return g.used(popped)[::-1]


def _new_call(g, c, fn: str, args: list, loc: str, i: int, indent: str = "") -> str:
    """The next logged value and one PrimitiveCall of it (``semantics311._push_call``);
    returns the node's variable."""
    g.raising(i, indent)
    v, a = g.var(), g.var()
    g.emit(*(indent + line for line in (
        "pos = r.pos",
        "if pos < len(log) and type(value := log[pos]) not in MARK_TYPES:",
        "    r.pos = pos + 1",
        "else:",
        "    value = r.take()",
        f"{a} = ({', '.join(args)},)",
        *append_call_source(v, "tape", "nodes", fn, a, "value", loc),
        "if type(value) is ndarray and writes:",
        f"    r.aliasing.noted({v})")))
    return v


def _binary_op(g, c, op, i) -> bool:
    if i in c.guarded_sites:
        return False
    fn, loc = g.bind(py311.BINARY_OPS[op.arg]), g.bind(op.loc)
    a, b = _operands(g, 2)
    if op.arg < py311.INPLACE_FIRST:
        g.push(_new_call(g, c, fn, [a, b], loc, i), fresh=True)
        return True
    g.raising(i)                      # in place on a mutable value: a's new version
    v = g.var()
    g.emit("pos = r.pos",
           "ev = log[pos] if pos < len(log) and type(log[pos]) not in MARK_TYPES else r.peek()",
           f"if ev is {a}.value and (is_mutable(ev) or python_inplace({fn}, ev)):",
           f"    {v} = f.call({fn}, ({a}, {b}), r.take(), {i}, 0)",
           "else:")
    made = _new_call(g, c, fn, [a, b], loc, i, indent="    ")
    g.emit(f"    {v} = {made}")
    g.push(v)
    return True


def _binary_subscr(g, c, op, i) -> bool:
    if i in c.guarded_sites:
        return False
    k = _operands(g, 2)
    g.push(_new_call(g, c, g.bind(operator.getitem), k, g.bind(op.loc), i), fresh=True)
    return True


def _compare_op(g, c, op, i) -> bool:
    k = py311.compare_index(op.arg)
    fn, symbol = py311.COMPARE_OPS[k], py311.COMPARE_SYMBOLS[k]
    a, b = _operands(g, 2)
    if i in c.info.folded:
        v = g.var()
        g.emit(f"{v} = Folded({g.bind(symbol)}, ({a}, {b}))")
        g.push(v)
    else:
        args = [a, b] if fn is not operator.contains else [b, a]
        g.push(_new_call(g, c, g.bind(fn), args, g.bind(op.loc), i), fresh=True)
    return True


def _call_311(g, c, op, i) -> bool:
    """``CALL``: operands popped here, the call replayed by ``do_call`` (which may hand the
    driver a callee: this step ends its run)."""
    args = _operands(g, int(op.arg))
    callee, _ = g.pop()
    if i in c.s.self_layout:            # [function, self, args]: self is the first argument
        first, callee = callee, g.pop()[0]
        v = g.var()
        g.emit(f"{v} = r.resolve({first}) if isinstance({first}, Node) else {first}")
        args = [v] + args
    else:
        g.pop()                         # the NULL under the callable
    _do_call(g, i, callee, args)
    return True


def _do_call(g, i, callee: str, args: list) -> None:
    g.flush()
    g.raising(i)
    g.emit(f"args = [{', '.join(args)}]",
           "names = f.kwnames",
           "if not names:",
           f"    f.do_call({i}, {callee}, args, {{}})",
           "else:",
           "    f.kwnames = ()",
           "    split = len(args) - len(names)",
           f"    f.do_call({i}, {callee}, args[:split], dict(zip(names, args[split:])))")


def _for_iter_311(g, c, op, i) -> bool:
    return _for_iter(g, c, op, i, ["pop()", "f.branch({i}, it, {jump}, {fall}, True, False, "
                                             "'exhausted')"])


def _for_iter_312(g, c, op, i) -> bool:
    """3.12: on exhaustion a None is pushed (``END_FOR`` pops it and the iterator)."""
    return _for_iter(g, c, op, i, ["push(r.literal(None))", "f.branch({i}, stack[-2], {jump}, "
                                   "{fall}, True, False, 'exhausted')"])


def _for_iter(g, c, op, i, exhausted: list) -> bool:
    """``FOR_ITER``: the next item (a ``next_item`` node, or a traced generator's segment), or
    the loop's exit; the block's targets and exit mark bound in advance. At a counted loop
    (``counted_loops``) whose iterator is a ``range``'s, the item is counted, not read."""
    block = c.s.blocks[c.s.block_of[i]]
    exit_mark, fall, jump = g.bind(c.info.marks[block.jump]), block.fall, block.jump
    g.flush()
    g.raising(i)
    node = g.var()
    exit_lines = ["    " + line.format(i=i, jump=jump, fall=fall) for line in exhausted]
    drawn = ["steps[id(it)] = step + 1",
             "ints = r.ints",
             "if step < len(ints):",
             "    args = (it, ints[step])",
             "elif step == len(ints) and not r.other_ints:   # ``r.literal(step)``, inlined",
             "    literal = Constant(None, step)",
             "    ints.append(literal)",
             "    args = (it, literal)",
             "else:",
             "    args = (it, r.literal(step))",
             *append_call_source(node, "tape", "nodes", g.bind(ops.next_item), "args", "value",
                                 g.bind(op.loc)),
             "if writes and type(value) is ndarray:",
             f"    r.aliasing.noted({node})",
             f"push({node})"]
    g.emit("it = stack[-1]")
    indent = ""
    if i in c.info.counted_loops:        # ``counted_loops.counted_item``, inlined
        g.emit("if type(it) is PrimitiveCall and it.fn is iter \\",
               "        and type(source := it.args[0].value) is range:",
               "    steps = f.steps",
               "    step = steps.get(id(it), 0)",
               "    try:",
               "        value = source[step]",
               "    except IndexError:         # (not ``len``: it may exceed sys.maxsize)",
               *("    " + line for line in exit_lines),
               "    else:",
               f"        f.next_block = {fall}",
               *("        " + line for line in drawn),
               "else:")
        indent = "    "
    g.emit(*(indent + line for line in (
           "pos = r.pos",
           "ev = log[pos] if pos < len(log) else None",
           "if ev is None or type(ev) in MARK_TYPES:",
           "    ev = r.peek()",
           f"if ev is {exit_mark}:",
           *exit_lines,
           "else:",
           "    if ev is None or type(ev) in MARK_TYPES:",
           "        value = r.take()",
           "    else:",
           "        value = ev",
           "        r.pos += 1",
           f"    f.next_block = {fall}",
           "    segment = None if r.resumed is None else resumed_item(f, value, it.value)",
           "    if segment is not None:",
           "        push(segment)",
           "    else:",
           "        steps = f.steps",
           "        step = steps.get(id(it), 0)",
           *("        " + line for line in drawn))))
    return True


def _end_for_312(g, c, op, i) -> bool:
    g.pop(), g.pop()
    return True


def _end_for_313(g, c, op, i) -> bool:
    g.pop()
    return True


def _load_fast_313(g, c, op, i) -> bool:
    from .instrument import py313
    if py313.is_cell_load(op, c.s.cells):
        return False
    return _load_fast(g, c, op, i)


def _two_locals(kinds):
    """3.13's superinstructions of two local loads/stores (``semantics313._two_locals``)."""
    def template(g, c, op, i) -> bool:
        if i in c.s.maybe_unbound:
            return False
        for kind, arg in zip(kinds, op.arg):
            if kind == "load":
                _load_local(g, arg)
            else:
                _store_local(g, arg, shares_first_name=False)
        return True
    return template


def _templates() -> dict:
    """Handler function -> template, for the handlers of every supported version."""
    table = {s311._load_fast: _load_fast, s311._load_const: _load_const,
             s311._store_fast: _store_fast_311, s311._pop_top: _pop_top,
             s311._push_null: _push_null, s311._copy: _copy, s311._swap: _swap,
             s311._kw_names: _kw_names,
             s311._load_global: _load_global_311, s311._load_attr: _load_attr_311,
             s311._binary_op: _binary_op, s311._binary_subscr: _binary_subscr,
             s311._compare_op: _compare_op, s311_flow._call: _call_311,
             s311_flow._for_iter: _for_iter_311}
    try:
        from .instrument import semantics312 as s312, semantics313 as s313
    except ImportError:            # (a version module this interpreter cannot load)
        return table
    table.update({s312._store_fast: _store_fast_312, s312._load_attr: _load_attr_312,
                  s312._for_iter: _for_iter_312, s312._end_for: _end_for_312,
                  s313._to_bool: _nothing, s313._load_global: _load_global_313,
                  s313._load_attr: _load_attr_313, s313._end_for: _end_for_313,
                  s313._load_fast: _load_fast_313,
                  s313._load_fast_load_fast: _two_locals(("load", "load")),
                  s313._store_fast_load_fast: _two_locals(("store", "load")),
                  s313._store_fast_store_fast: _two_locals(("store", "store"))})
    return table


TEMPLATES = _templates()
ENDS_RUN = frozenset({_call_311})     # templates of steps that may hand the driver a callee
ALONE = frozenset({_for_iter_311, _for_iter_312})   # templates that beat their handler alone

_PRELUDE = (("stack", "f.stack"), ("push", "stack.append"), ("pop", "stack.pop"),
            ("L", "f.locals"), ("tape", "f.tape"), ("r", "f.r"), ("versions", "f.versions"),
            ("log", "r.log"), ("writes", "r.aliasing.writes"), ("nodes", "tape._nodes"))
_NEEDS = {"log": ("r",), "writes": ("r",), "nodes": ("tape",), "push": ("stack",),
          "pop": ("stack",)}


def _generate(c: CodeFacts, steps: list):
    """One function replaying ``steps`` (templated steps, then possibly one handler)."""
    g = _Source()
    for handler, op, i in steps:
        template = TEMPLATES.get(handler)
        if template is not None:
            mark = (len(g.lines), list(g.pending), dict(g.unwinds), g.serial)
            if template(g, c, op, i):
                continue
            g.lines[mark[0]:], g.pending, g.unwinds, g.serial = [], mark[1], mark[2], mark[3]
        g.flush()
        g.raising(i)
        g.emit(f"{g.bind(handler)}(f, {g.bind(op)}, {i})")
    g.flush()
    g.ns["placeholders"] = c.placeholders
    used = set(re.findall(r"\b[A-Za-z_]\w*\b", "\n".join(g.lines)))
    if any(g.unwinds.values()):
        used.add("stack")
    for name, needs in _NEEDS.items():
        if name in used:
            used.update(needs)
    prelude = [f"{name} = {value}" for name, value in _PRELUDE if name in used]
    unwind = []
    for i, names in g.unwinds.items():
        if names:
            unwind += [f"    if at == {i}:", f"        stack.extend(({', '.join(names)},))"]
    lines = ["def run(f, op, i):", *("    " + p for p in prelude), "    at = -1", "    try:",
             *("        " + line for line in g.lines),
             "    except Missing:", "        f.raised_at = at",
             *("    " + line for line in unwind), "        raise"]
    exec(compile("\n".join(lines), "<dcgraph fused run>", "exec"), g.ns)
    return g.ns["run"]


def entry_function(phis: list, local_names):
    """A function ``enter(frame, edge)`` making the phis of a block entered along ``edge``, as
    ``Frame.phi`` makes them one by one (``local_names``: a local's ``names`` tuple)."""
    g = _Source()
    g.ns["Phi"] = Phi
    lines = ["def enter(f, edge):", "    L = f.locals", "    tape = f.tape",
             "    nodes = tape._nodes", "    versions = f.versions", "    r = f.r",
             "    writes = r.aliasing.writes"]
    for var in phis:
        if type(var) is not str:           # a stack slot's
            lines.append(f"    f.phi({g.bind(var)}, edge)")
            continue
        name, v = g.bind(var), g.var()
        lines += ["    src = L.get(" + name + ")",
                  "    if isinstance(src, Node):",
                  "        if versions:",
                  "            src = r.resolve(src)",
                  *("        " + line for line in append_phi_source(
                      v, "tape", "nodes", name, "src", "edge", g.bind(local_names(var)))),
                  f"        if writes and type({v}.value) is ndarray:",
                  f"            r.aliasing.noted({v})",
                  f"        L[{name}] = {v}"]
    exec(compile("\n".join(lines), "<dcgraph fused run>", "exec"), g.ns)
    return g.ns["enter"]


def warm_up(blocks, c: CodeFacts, local_names) -> None:
    """Make ``blocks`` (a code's ``ReplayBlocks``) fuse each block once it is entered ``HOT``
    times: until then a first step counts the entries (at once when ``HOT`` is 0)."""
    blocks.mode = (ENABLED, HOT)
    if not ENABLED:
        return
    blocks.facts, blocks.local_names, blocks.entered = c, local_names, [0] * len(blocks)
    for bi, steps in enumerate(blocks):
        if HOT <= 0:
            fuse_block(blocks, bi)
        elif steps or blocks.phis[bi]:
            blocks[bi] = [(_count_entry, bi, blocks.starts[bi])] + steps


def _count_entry(f, bi, i) -> None:
    """The first step of a block not fused yet (``op`` is the block's index)."""
    blocks = f.blocks
    n = blocks.entered[bi] = blocks.entered[bi] + 1
    if n >= HOT:
        fuse_block(blocks, bi)     # for the next entry (this one goes on with its old list)


def fuse_block(blocks, bi: int) -> None:
    """Block ``bi``'s steps fused, and its phis made by generated code (equal results if
    two threads race)."""
    steps = blocks[bi]
    if steps and steps[0][0] is _count_entry:
        steps = steps[1:]
    phis = blocks.phis[bi]
    if phis:
        blocks.entries[bi] = entry_function(phis, blocks.local_names)
    blocks[bi] = fused_steps(blocks.facts, steps)


def fused_steps(c: CodeFacts, block: list) -> list:
    """``block``'s steps ``(handler, op, index)`` with each run of templated steps, and the step
    after it, replaced by one generated step whose index is the run's last instruction."""
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
    if len(run) < MIN_RUN and not (run and TEMPLATES.get(run[0][0]) in ALONE):
        return run
    last = run[-1]
    return [(_generate(c, run), last[1], last[2])]
