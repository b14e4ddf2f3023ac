"""Fused-run templates for calls and loops (``CALL``, ``FOR_ITER``, ``END_FOR``): the part of
``fused_templates`` that ends runs or reads a loop's marks (or, at a counted loop, counts a
``range``'s items: ``counted_loops``). Same contract as there.
"""
from __future__ import annotations

from . import ops
from ..tape.nodes import append_call_source

__all__ = ["call_311", "call_313", "for_iter_311", "for_iter_312", "end_for_312", "end_for_313",
           "ENDS_RUN", "ALONE"]


def call_311(g, c, op, i) -> bool:
    """``CALL``: operands popped here, the call replayed by ``do_call`` (which may hand the
    driver a callee: this step ends its run)."""
    args = g.operands(int(op.arg))
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


def call_313(g, c, op, i) -> bool:
    """3.13's ``CALL`` (not ``CALL_KW``): [callable, self or NULL, args]."""
    if op.name != "CALL":
        return False
    args = g.operands(int(op.arg))
    (held, _), (callee, _) = g.pop(), g.pop()
    if held != "NULL":                  # (a NULL pushed in this run is known here)
        v = g.var()
        g.emit(f"if {held} is NULL:",
               f"    {v} = [{', '.join(args)}]",
               "else:",
               f"    {v} = [r.resolve({held}) if isinstance({held}, Node) else {held}, "
               f"{', '.join(args)}]")
        g.flush()
        g.raising(i)
        g.emit(f"f.do_call({i}, {callee}, {v}, {{}})")
        return True
    g.flush()
    g.raising(i)
    g.emit(f"f.do_call({i}, {callee}, [{', '.join(args)}], {{}})")
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


def for_iter_311(g, c, op, i) -> bool:
    return _for_iter(g, c, op, i, ["pop()", "f.branch({i}, it, {jump}, {fall}, True, False, "
                                             "'exhausted')"])


def for_iter_312(g, c, op, i) -> bool:
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
    drawn = ["steps[key] = step + 1",
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
               "    key = id(it)",
               "    step = steps.get(key, 0)",
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
           "        key = id(it)",
           "        step = steps.get(key, 0)",
           *("        " + line for line in drawn))))
    return True


def end_for_312(g, c, op, i) -> bool:
    g.pop(), g.pop()
    return True


def end_for_313(g, c, op, i) -> bool:
    g.pop()
    return True


ENDS_RUN = frozenset({call_311, call_313})   # templates of steps that may hand over a callee
ALONE = frozenset({for_iter_311, for_iter_312})   # templates that beat their handler alone
