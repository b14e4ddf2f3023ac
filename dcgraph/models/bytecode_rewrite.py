"""A ``@model`` read from its bytecode, for functions whose source text is nowhere to be found
(``exec`` of a string that nothing registered in ``linecache``).

``rewrite_bytecode(fn) -> Rewritten`` makes the same log density as ``rewrite`` does from the
syntax tree, by editing a copy of ``fn``'s code (the ``bytecode`` package, with the tracer's
per-version opcode tables from ``dcgraph.tracer.instrument``):

* ``_dcg_theta`` becomes the first positional argument; ``_dcg_lp = 0.0``, ``_dcg_at = 0`` open
  the body;
* ``NAME = param(...)`` (``param`` read from a global or a closure cell) calls
  ``declare("NAME", line, ...)`` instead, then ``NAME = constrain(theta, at, spec)``,
  ``lp = lp + log_jacobian(theta, at, spec)``, ``at = advance(at, spec)``;
* ``TARGET |= VALUE`` (``BINARY_OP`` with the in-place-or argument, then the store of a name,
  an item or an attribute) becomes ``lp = lp + observe(TARGET, VALUE, line)`` and the store is
  dropped: here ``|=`` always states a distribution (``observe`` names the line otherwise);
* every ``return`` returns ``lp``.

What it cannot read (generators, a ``|=`` followed by another store pattern) raises
``BytecodeUnreadable`` with the reason; the caller then asks for the source. Error messages
name the file and line (the source text of a line is unknown); the graph names an item or
attribute left side ``[...]`` / ``.attr``.
"""
from __future__ import annotations

import builtins
import operator
import types

from bytecode import Bytecode, Instr, Label, SetLineno

from ..tracer.instrument.versions import opcode_table
from .params import param as _param
from .runtime import HELPERS

__all__ = ["rewrite_bytecode", "BytecodeUnreadable"]

THETA, LP, AT, SPEC, X, DIST = ("_dcg_theta", "_dcg_lp", "_dcg_at", "_dcg_spec", "_dcg_x",
                                "_dcg_d")
_STORES = ("STORE_FAST", "STORE_DEREF")
_GENERATOR_FLAGS = 0x20 | 0x80 | 0x100 | 0x200      # generator, coroutine, async generator


class BytecodeUnreadable(ValueError):
    """The function's bytecode has a pattern ``rewrite_bytecode`` does not read."""


def rewrite_bytecode(fn: types.FunctionType):
    """The log density of the model function ``fn`` read from its bytecode (module docstring)."""
    from .rewrite import Rewritten
    ops = opcode_table()
    code = fn.__code__
    if code.co_flags & _GENERATOR_FLAGS:
        raise BytecodeUnreadable("a generator or coroutine is not a model")
    ior = ops.BINARY_OPS.index(operator.ior)
    add = ops.BINARY_OPS.index(operator.add)
    h = HELPERS
    bc = Bytecode.from_code(code)
    instrs = list(bc)
    is_param = _param_loads(fn, instrs)
    out, statements, params = [], {}, {}
    started = False
    i = 0
    while i < len(instrs):
        ins = instrs[i]
        if not isinstance(ins, Instr):
            out.append(ins)
            i += 1
            continue
        loc = ins.location
        if ins.name == "RESUME" and not started:
            started = True
            out += [ins, Instr("LOAD_CONST", 0.0, location=loc),
                    Instr("STORE_FAST", LP, location=loc), Instr("LOAD_CONST", 0, location=loc),
                    Instr("STORE_FAST", AT, location=loc)]
            i += 1
            continue
        if i in is_param:
            call, store = is_param[i]
            name, line = instrs[store].arg, instrs[store].lineno
            name = getattr(name, "name", name)               # a cell variable's name
            params[line] = name
            load, i = _declare_load(ops, instrs, i, name, line)
            out += load
            out += _bumped_call(instrs, i, call)
            sloc = instrs[store].location
            spec = [_lf(THETA, sloc), _lf(AT, sloc), _lf(SPEC, sloc)]
            out.append(Instr("STORE_FAST", SPEC, location=sloc))
            out += _call(ops, h["_dcg_constrain"], spec, sloc) + [instrs[store], _lf(LP, sloc)]
            out += _call(ops, h["_dcg_logjac"], spec, sloc)
            out += [Instr("BINARY_OP", add, location=sloc), Instr("STORE_FAST", LP, location=sloc)]
            out += _call(ops, h["_dcg_advance"], spec[1:], sloc)
            out.append(Instr("STORE_FAST", AT, location=sloc))
            i = store + 1
            continue
        if ins.name == "BINARY_OP" and int(ins.arg) == ior:
            line = ins.lineno
            pops, target = _statement_tail(instrs, i + 1, line, code)
            statements[line] = target
            out += [Instr("STORE_FAST", DIST, location=loc), Instr("STORE_FAST", X, location=loc),
                    _lf(LP, loc)]
            out += _call(ops, h["_dcg_observe"], [_lf(X, loc), _lf(DIST, loc),
                                                  Instr("LOAD_CONST", line, location=loc)], loc)
            out += [Instr("BINARY_OP", add, location=loc), Instr("STORE_FAST", LP, location=loc)]
            out += [Instr("POP_TOP", location=loc) for _ in range(pops[0])]
            i = pops[1]
            continue
        if ins.name == "RETURN_VALUE":
            out += [Instr("POP_TOP", location=loc), _lf(LP, loc), ins]
        elif ins.name == "RETURN_CONST":
            out += [_lf(LP, loc), Instr("RETURN_VALUE", location=loc)]
        else:
            out.append(ins)
        i += 1
    new = bc                                  # (from_code made it: edited in place)
    new.clear()
    new.extend(out)
    new.argnames.insert(0, THETA)
    new.argcount += 1
    if new.posonlyargcount:
        new.posonlyargcount += 1
    try:
        new_code = new.to_code()
    except Exception as exc:         # a pattern the editing got wrong: say so, never run it
        raise BytecodeUnreadable(f"the edited code does not assemble ({exc})") from None
    function = types.FunctionType(new_code, fn.__globals__, fn.__name__, fn.__defaults__,
                                  fn.__closure__)
    function.__kwdefaults__ = fn.__kwdefaults__
    function.__qualname__ = fn.__qualname__
    return Rewritten(function, statements, params, code.co_filename, {})


def _lf(name, loc):
    return Instr("LOAD_FAST", name, location=loc)


def _call(ops, fn, args: list, loc) -> list:
    """Instructions calling the constant ``fn`` with the values ``args`` push, result on top."""
    seq = [Instr("LOAD_CONST", fn, location=loc)]
    seq.insert(0 if ops.NULL_FIRST else 1, Instr("PUSH_NULL", location=loc))
    return seq + args + ops.call_instrs(len(args), loc)


def _resolver(fn):
    closure = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            closure[name] = cell.cell_contents
        except ValueError:
            pass
    return closure


def _param_loads(fn, instrs) -> dict:
    """Index of each load of ``param`` that a call consumes and whose result a name stores ->
    (index of the call, index of the store)."""
    ops = opcode_table()
    closure = _resolver(fn)
    found = {}
    for i, ins in enumerate(instrs):
        if not isinstance(ins, Instr):
            continue
        if ins.name == "LOAD_GLOBAL":
            name = ins.arg[1] if isinstance(ins.arg, tuple) else ins.arg
            value = fn.__globals__.get(name, vars(builtins).get(name))
        elif ins.name == "LOAD_DEREF":
            value = closure.get(getattr(ins.arg, "name", ins.arg))
        else:
            continue
        if value is not _param:
            continue
        call = _consuming_call(ops, instrs, i)
        if call is None:
            continue
        store = call + 1
        while store < len(instrs) and isinstance(instrs[store], SetLineno):
            store += 1
        if store < len(instrs) and isinstance(instrs[store], Instr) and \
                instrs[store].name in _STORES:
            found[i] = (call, store)
    return found


def _consuming_call(ops, instrs, i):
    """The index of the call whose callable instruction ``i`` pushes, if it follows in the
    same straight-line stretch of code, else None."""
    pops, pushes = ops.stack_io(instrs[i])
    stack = [True] * pushes                 # the load's slots (the callable and its NULL)
    calls = set(ops.CALLS)
    for j in range(i + 1, len(instrs)):
        ins = instrs[j]
        if isinstance(ins, SetLineno):
            continue
        if not isinstance(ins, Instr) or isinstance(ins, Label):
            return None
        pops, pushes = ops.stack_io(ins)
        if pops > len(stack):                   # values from before the load (a NULL)
            stack[:0] = [False] * (pops - len(stack))
        popped = stack[len(stack) - pops:] if pops else []
        if any(popped):                         # the callable and its NULL come first
            ok = ins.name in calls and ins.name != "CALL_FUNCTION_EX" and not any(popped[2:])
            return j if ok else None
        del stack[len(stack) - pops:]
        stack += [False] * pushes
    return None


def _declare_load(ops, instrs, i, name, line):
    """The load of ``param`` at ``i`` replaced by ``declare`` with its first two arguments
    (``name``, ``line``) after the callable's NULL; and the index of the next instruction."""
    ins = instrs[i]
    loc = ins.location
    extra = [Instr("LOAD_CONST", name, location=loc), Instr("LOAD_CONST", line, location=loc)]
    if ins.name == "LOAD_GLOBAL" and isinstance(ins.arg, tuple) and ins.arg[0]:
        return _call(ops, HELPERS["_dcg_declare"], [], loc)[:2] + extra, i + 1
    seq = [Instr("LOAD_CONST", HELPERS["_dcg_declare"], location=loc)]
    nxt = instrs[i + 1] if i + 1 < len(instrs) else None
    if not ops.NULL_FIRST and isinstance(nxt, Instr) and nxt.name == "PUSH_NULL":
        return seq + [nxt] + extra, i + 2                    # the NULL follows the callable
    return seq + extra, i + 1


def _bumped_call(instrs, j, call) -> list:
    """The instructions from ``j`` to the call at ``call``, the call taking two more
    positional arguments (its ``PRECALL`` too, on 3.11)."""
    out = []
    for k in range(j, call + 1):
        ins = instrs[k]
        if (k == call or (k == call - 1 and ins.name == "PRECALL")) and isinstance(ins, Instr):
            ins = Instr(ins.name, ins.arg + 2, location=ins.location)
        out.append(ins)
    return out


def _statement_tail(instrs, j, line, code):
    """After a ``|=``: ((values left to pop once the statement consumed x and d, index after
    the store), the left side's description). Name, item and attribute stores."""
    ins = [x for x in instrs[j:j + 3]]
    names = [x.name if isinstance(x, Instr) else None for x in ins]
    if names and names[0] in _STORES + ("STORE_GLOBAL",):
        return (0, j + 1), getattr(ins[0].arg, "name", ins[0].arg)
    if names[:3] == ["SWAP", "SWAP", "STORE_SUBSCR"] and ins[0].arg == 3 and ins[1].arg == 2:
        return (2, j + 3), "[...]"
    if names[:2] == ["SWAP", "STORE_ATTR"] and ins[0].arg == 2:
        return (1, j + 2), f".{ins[1].arg}"
    raise BytecodeUnreadable(f"{code.co_filename}:{line}: the |= statement stores its result in "
                             f"a way the bytecode reader does not know ({names[:3]})")
