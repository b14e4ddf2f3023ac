"""Fused-run templates: per opcode handler, the code that does what the handler does, written
into a ``RunSource`` (module ``fused_source``) for ``fused_runs``.

A template ``(g, c, op, i) -> bool`` emits instruction ``i``'s code and returns True, or
returns False before emitting anything when this site must be replayed by its handler
(a possibly unbound local, a guarded operator site, a load that is not a call's callable,
...). It pops and pushes through ``g`` (entries held in variables) and calls ``g.raising(i)``
before anything that may raise ``Missing``. Templates are keyed by handler function
(``TEMPLATES``), so each Python version's handlers decide what is fused; every template is a
transcription of its handler, and ``tests/tracer/test_fused_runs.py`` compares the tapes.
"""
from __future__ import annotations

import operator

from .instrument import py311
from .instrument import semantics311 as s311
from .instrument import semantics311_flow as s311_flow
from .instrument.semantics311 import Placeholder
from .naming import added_name
from ..tape.nodes import append_call_source
from .fused_flow import (ALONE, ENDS_RUN, call_311, call_313, end_for_312, end_for_313,
                         for_iter_311, for_iter_312)

__all__ = ["TEMPLATES", "ENDS_RUN", "ALONE"]


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
               *_is_of_tape(v),
               "if named:",
               f"    if not {v}.names:",
               f"        {v}.names = {g.bind(added_name((), arg))}",
               f"    elif {name} not in {v}.names:",
               f"        {v}.names += ({name},)")
    else:
        g.emit(f"if {v} is NULL:",
               f"    L.pop({name}, None)",
               "else:",
               f"    L[{name}] = {v}",
               *("    " + line for line in _is_of_tape(v)),
               f"    if named and {name} not in {v}.names:",
               f"        {v}.names += ({name},)")


def _is_of_tape(v: str) -> list:
    """``named = getattr(v, "tape", None) is tape`` (cheaper for nodes: no call)."""
    return ["try:", f"    named = {v}.tape is tape", "except AttributeError:", "    named = False"]


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
    a, b = g.operands(2)
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
    k = g.operands(2)
    g.push(_new_call(g, c, g.bind(operator.getitem), k, g.bind(op.loc), i), fresh=True)
    return True


def _compare_op(g, c, op, i) -> bool:
    k = py311.compare_index(op.arg)
    fn, symbol = py311.COMPARE_OPS[k], py311.COMPARE_SYMBOLS[k]
    a, b = g.operands(2)
    if i in c.info.folded:
        v = g.var()
        g.emit(f"{v} = Folded({g.bind(symbol)}, ({a}, {b}))")
        g.push(v)
    else:
        args = [a, b] if fn is not operator.contains else [b, a]
        g.push(_new_call(g, c, g.bind(fn), args, g.bind(op.loc), i), fresh=True)
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
             s311._compare_op: _compare_op, s311_flow._call: call_311,
             s311_flow._for_iter: for_iter_311}
    try:
        from .instrument import semantics312 as s312, semantics313 as s313
    except ImportError:            # (a version module this interpreter cannot load)
        return table
    table.update({s312._store_fast: _store_fast_312, s312._load_attr: _load_attr_312,
                  s312._for_iter: for_iter_312, s312._end_for: end_for_312,
                  s313._to_bool: _nothing, s313._load_global: _load_global_313,
                  s313._load_attr: _load_attr_313, s313._end_for: end_for_313,
                  s313._load_fast: _load_fast_313, s313._call: call_313,
                  s313._load_fast_load_fast: _two_locals(("load", "load")),
                  s313._store_fast_load_fast: _two_locals(("store", "load")),
                  s313._store_fast_store_fast: _two_locals(("store", "store"))})
    return table


TEMPLATES = _templates()
