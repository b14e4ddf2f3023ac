"""Guarded operator sites (``tracer.operator_guards``): where instrumented code tests the
switch, and the instruction sequence of one guarded site.

A code object is instrumented in two variants. The *guarded* one (taken by calls a run decides
while its guards are on) tests the operands' types at every operator site the version tables
(``guarded_operator``). The *plain* one leaves operator sites as they are, except those a call
may precede in the same frame (``switch_sites``): the switch can only turn on inside a call the
hook decides, so those sites first test ``GUARDING`` and take the guarded path when it is on.
A call cannot turn it on when its callable, looked up in the function's globals when the code
is instrumented, is C code (a builtin function or method, a builtin class, a numpy ufunc...):
the hook keeps those primitive and never sees what they call. A scalar loop calling ``math``
functions therefore runs exactly as without guards.
"""
from __future__ import annotations

import builtins
import types

from bytecode import Instr, Label

from ..operator_guards import GUARDING, PLAIN_ATTRIBUTE_TYPES, PLAIN_TYPES
from ..operators import dispatch_attribute, dispatch_binary, dispatch_unary
from .analysis import Structure
from .versions import opcode_table

ops = opcode_table()

__all__ = ["switch_sites", "guarded_site", "static_callees"]

_HEAPTYPE = 1 << 9
_PYTHON_CALLABLES = (types.FunctionType, types.MethodType)
_MISSING = object()
_SUSPENDING = {"YIELD_VALUE"}   # a generator resumes after any code ran, traced calls too


def _may_switch(value) -> bool:
    """Could the hook trace a call of ``value`` (and so switch guards on)?"""
    if value is _MISSING or isinstance(value, _PYTHON_CALLABLES):
        return True
    kind = value if isinstance(value, type) else type(value)
    return bool(kind.__flags__ & _HEAPTYPE)


def _resolve(s: Structure, d, uses: dict, scope: dict):
    """The value definition ``d`` (an instruction's push) has when the code is instrumented:
    a global, or an attribute of a module global; ``_MISSING`` when unknown."""
    i = d[0]
    if not isinstance(i, int):
        return _MISSING
    ins = s.instrs[i]
    if ins.name == "LOAD_GLOBAL":
        name = ins.arg[1] if isinstance(ins.arg, tuple) else ins.arg
        value = scope.get(name, _MISSING)
        if value is _MISSING:
            table = scope.get("__builtins__", builtins)
            table = table if isinstance(table, dict) else vars(table)
            value = table.get(name, _MISSING)
        return value
    if ins.name in ("LOAD_ATTR", "LOAD_METHOD"):
        owners = uses.get(i, ())
        if len(owners) != 1:
            return _MISSING
        owner = _resolve(s, next(iter(owners)), uses, scope)
        if not isinstance(owner, types.ModuleType):   # never run code (properties) here
            return _MISSING
        name = ins.arg[-1] if isinstance(ins.arg, tuple) else ins.arg
        return vars(owner).get(name, _MISSING)
    return _MISSING


def _callee_definitions(s: Structure) -> tuple[dict, dict]:
    """(instruction -> the definitions it consumed, call -> the definitions of its callable,
    NULLs left out)."""
    uses: dict = {}
    callees: dict = {}
    for d, roles in s.consumers.items():
        for role in roles:
            uses.setdefault(role[1] if isinstance(role, tuple) else role, set()).add(d)
            if isinstance(role, tuple) and role[0] == "callee" and not (
                    isinstance(d[0], int) and ops.null_pushed(s.instrs[d[0]], d[1])):
                callees.setdefault(role[1], []).append(d)
    return uses, callees


def static_callees(s: Structure, scope: dict | None, kind) -> dict:
    """call index -> the callable its callee load gives when the code is instrumented (a
    global, or an attribute of a module global), for the calls whose every definition of the
    callable resolves to one object for which ``kind(value)`` is true, owned by no instance (a
    function of a module or builtin, an unbound descriptor, a ufunc: the code may keep it).
    Only a guess: the call site still tests the callable's identity when it runs."""
    if scope is None:
        return {}
    uses, callees = _callee_definitions(s)
    found = {}
    for c, known in callees.items():
        values = {id(v): v for v in (_resolve(s, d, uses, scope) for d in known)}
        if len(values) != 1:
            continue
        value = next(iter(values.values()))
        if value is _MISSING or not kind(value):
            continue
        owner = getattr(value, "__self__", None) if type(value) is types.BuiltinFunctionType \
            else None
        if owner is None or isinstance(owner, types.ModuleType):
            found[c] = value
    return found


def switch_sites(s: Structure, scope: dict | None) -> set:
    """Instruction indices reached after a call that may switch guards on, in the same frame
    (within its block, then every block reachable from it, exception handlers included).
    ``scope``: the function's globals (None: every call may)."""
    uses, callees = _callee_definitions(s)
    starts, seen, sites = [], set(), set()
    for c, ins in enumerate(s.instrs):
        if ins.name not in ops.CALLS and ins.name not in _SUSPENDING:
            continue
        known = callees.get(c)
        if ins.name in ops.CALLS and scope is not None and known and not any(
                _may_switch(_resolve(s, d, uses, scope)) for d in known):
            continue
        starts.append((s.block_of[c], c + 1))
    stack = []
    for block, first in starts:
        b = s.blocks[block]
        sites.update(range(first, b.end))
        stack.extend(_successors(s, b))
    while stack:
        k = stack.pop()
        if k is None or k in seen:
            continue
        seen.add(k)
        b = s.blocks[k]
        sites.update(range(b.start, b.end))
        stack.extend(_successors(s, b))
    return sites


def _successors(s: Structure, b) -> list:
    return [b.jump, b.fall] + [s.handler_of[i] for i in range(b.start, b.end)]


def _callable(fn, loc) -> list:
    load, null = Instr("LOAD_CONST", fn, location=loc), Instr("PUSH_NULL", location=loc)
    return [null, load] if ops.NULL_FIRST else [load, null]


# [operands, callable pair] -> [callable pair, operands], by operand count (the pair keeps the
# version's order: NULL and dispatcher, or dispatcher and NULL)
_DISPATCH_ORDER = {1: (3, 2, 3, 2), 2: (4, 2, 4, 3)}


def guarded_site(s: Structure, i: int, guard: tuple, plain_path: list, switched: bool,
                 hidden: int) -> list:
    """Operator instruction ``i`` guarded: ``plain_path`` (the instruction and its value probe)
    when every tested operand's type is in ``PLAIN_TYPES`` (or, ``switched``, while
    ``GUARDING`` is empty); else a call of the ``operators`` dispatcher with the operands, the
    frame's hook (``hidden`` slots under the frame's values hold it, deepest) and the operator,
    which logs what it ran and the value. ``guard``: the version's ``guarded_operator``.
    Stack-neutral apart from the instruction's own effect."""
    stacked, tested, dispatcher, fn = guard
    plain = PLAIN_ATTRIBUTE_TYPES if dispatcher == "attribute" else PLAIN_TYPES
    loc = s.instrs[i].location
    fast, slow, done = Label(), Label(), Label()
    seq = []
    if switched:
        seq += [Instr("LOAD_CONST", GUARDING, location=loc),
                *[Instr(name, location=loc) for name in ops.GUARD_SWITCH_TEST],
                Instr(ops.GUARD_JUMPS["false"], fast, location=loc)]
    for j in range(tested):              # type(operand) in PLAIN_TYPES, else the slow path
        last = j == tested - 1
        seq += [*_callable(type, loc), Instr("COPY", stacked - j + 2, location=loc),
                *ops.call_instrs(1, loc), Instr("LOAD_CONST", plain, location=loc),
                Instr("CONTAINS_OP", 0, location=loc),
                Instr(ops.GUARD_JUMPS["true"], fast, location=loc) if last
                else Instr(ops.GUARD_JUMPS["false"], slow, location=loc)]
    seq.append(slow)
    if dispatcher == "binary":
        call, passed = dispatch_binary, 2
    elif dispatcher == "attribute":
        call, passed = dispatch_attribute, 1
    else:                                # the unary dispatcher takes (c, k) as one operand
        call, passed = dispatch_unary, 1
        if dispatcher == "slice":
            seq.append(Instr("BUILD_SLICE", 2, location=loc))
        if dispatcher != "unary":
            seq.append(Instr("BUILD_TUPLE", 2, location=loc))
    seq += _callable(call, loc)
    seq += [Instr("SWAP", k, location=loc) for k in _DISPATCH_ORDER[passed]]
    depth = s.depth_before[i] - stacked + passed + 2
    seq += [Instr("COPY", depth + hidden, location=loc), Instr("LOAD_CONST", fn, location=loc),
            *ops.call_instrs(passed + 2, loc), Instr("JUMP_FORWARD", done, location=loc), fast]
    return seq + plain_path + [done]
