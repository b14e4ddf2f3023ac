"""What CPython 3.12 instructions do to the replay's stack of nodes: 3.11's table
(``semantics311``) with the instructions 3.12 changed or added (see ``py312``).

The tapes are the same as on 3.11: ``a[b:c]`` still records ``slice(b, c)`` and ``getitem``,
unary ``+`` is ``operator.pos``, ``super().name`` records ``super(cls, self)`` and ``getattr``.
"""
from __future__ import annotations

import operator

from . import py312
from .. import generators
from ..counted_loops import EXHAUSTED, counted_item
from ..operators import replay_operator
from .semantics311 import H as _H311, NULL, Placeholder, registrar
from .semantics311_flow import conditional_jump
from ...tape.nodes import Node
from ..summary import Summary

__all__ = ["HANDLERS", "H", "handles"]

H: dict = dict(_H311)
for _name in ("PRECALL", "LOAD_METHOD", "UNARY_POSITIVE", "LIST_TO_TUPLE", "LOAD_CLASSDEREF",
              "PREP_RERAISE_STAR", "JUMP_IF_FALSE_OR_POP", "JUMP_IF_TRUE_OR_POP"):
    H.pop(_name, None)
for _name in [n for n in H if n.startswith(("POP_JUMP_FORWARD", "POP_JUMP_BACKWARD"))]:
    H.pop(_name)
del _name


handles = registrar(H)


handles(*py312.CONDITIONAL_JUMPS)(conditional_jump(py312.CONDITIONAL_JUMPS))


@handles("SEND")
def _send(f, ins, i):
    generators.send(f, i, keeps_iterator=True)


@handles("YIELD_VALUE")
def _yield_value(f, ins, i):
    generators.yield_value(f, i, i > 0 and py312.wraps_async_item(f.ops[i - 1]))


@handles("END_SEND")
def _end_send(f, ins, i):
    generators.end_send(f, i)


@handles("CLEANUP_THROW")
def _cleanup_throw(f, ins, i):
    generators.cleanup_throw(f, i)


@handles("LOAD_FAST_CHECK")
def _load_fast_check(f, ins, i):
    _H311["LOAD_FAST"](f, ins, i)


@handles("LOAD_FAST_AND_CLEAR")
def _load_fast_and_clear(f, ins, i):
    """An inlined comprehension saves its variable (NULL when unbound) and unbinds it."""
    node = f.locals.pop(ins.arg, None)
    f.stack.append(NULL if node is None else node)


@handles("STORE_FAST")
def _store_fast(f, ins, i):
    value = f.stack.pop()
    if value is NULL:                   # restoring a comprehension variable that was unbound
        f.locals.pop(ins.arg, None)
    else:
        f.locals[ins.arg] = value
        if getattr(value, "tape", None) is f.tape and ins.arg not in value.names:
            value.names += (ins.arg,)   # ``naming.bind``, inlined: the most frequent store


@handles("RETURN_CONST")
def _return_const(f, ins, i):
    f.stack.append(f.info.literals[i])
    f.do_return(i)


@handles("FOR_ITER")
def _for_iter(f, ins, i):
    block = f.s.blocks[f.s.block_of[i]]
    counted = counted_item(f, f.stack[-1]) if i in f.info.counted_loops else None
    if counted is EXHAUSTED or counted is None and f.r.peek() is f.info.marks[block.jump]:
        f.stack.append(f.r.literal(None))     # exhausted: END_FOR pops it and the iterator
        f.branch(i, f.stack[-2], block.jump, block.fall, True, False, "exhausted")
        return
    _H311["FOR_ITER"](f, ins, i)


@handles("END_FOR")
def _end_for(f, ins, i):
    del f.stack[-2:]


@handles("LOAD_ATTR")
def _load_attr(f, ins, i):
    method, name = ins.arg
    obj = f.use()
    if method:
        f.stack.append(NULL)
    if i in f.info.callee_producer:
        f.stack.append(Placeholder(obj, name))
        return
    if not method and replay_operator(f, i, getattr, (obj,)):
        return                      # a property's Python getter ran (``tracer.operators``)
    f.stack.append(f.call(getattr, (obj, f.r.literal(name)), f.r.take(), i))


def _super_object(sup, cls, obj):
    """The ``super`` object LOAD_SUPER_ATTR looks the name up on (not logged: rebuilt; None
    in a ``values="summary"`` tape, whose class and object are summaries)."""
    if type(cls.value) is Summary or type(obj.value) is Summary:
        return None
    make = sup.value if isinstance(sup, Node) else super
    return make(cls.value, obj.value)


@handles("LOAD_SUPER_ATTR")
def _load_super_attr(f, ins, i):
    method, _, name = ins.arg
    obj, cls, sup = f.use(), f.use(), f.use()
    if method:
        f.stack.append(NULL)
    value = f.r.take()
    made = f.call(sup.value if isinstance(sup, Node) else super, (cls, obj),
                  _super_object(sup, cls, obj), i)
    f.stack.append(f.call(getattr, (made, f.r.literal(name)), value, i))


def _slice(f, i, start, stop):
    return f.call(slice, (start, stop), slice(start.value, stop.value), i)


@handles("BINARY_SLICE")
def _binary_slice(f, ins, i):
    stop, start, container = f.use(), f.use(), f.use()
    key = _slice(f, i, start, stop)
    if not replay_operator(f, i, operator.getitem, (container, key)):
        f.stack.append(f.call(operator.getitem, (container, key), f.r.take(), i))


@handles("STORE_SLICE")
def _store_slice(f, ins, i):
    stop, start, container, value = f.use(), f.use(), f.use(), f.use()
    key = _slice(f, i, start, stop)
    f.r.take()
    f.call(operator.setitem, (container, key, value), None, i, 0)


_INTRINSIC_1 = {**py312.INTRINSIC_OPERATORS, 6: tuple}      # 6: INTRINSIC_LIST_TO_TUPLE


@handles("CALL_INTRINSIC_1")
def _call_intrinsic_1(f, ins, i):
    if py312.wraps_async_item(ins):
        return                           # an async generator's item itself: passed on
    a = f.use()
    fn = _INTRINSIC_1.get(int(ins.arg))
    if int(ins.arg) in py312.INTRINSIC_OPERATORS and replay_operator(f, i, fn, (a,)):
        return                      # a user class's ``__pos__`` ran (``tracer.operators``)
    value = f.r.take()
    if fn is None:                      # typing helpers (PEP 695): their value
        f.stack.append(f.constant(ins.arg.name.lower(), value, i))
    else:
        f.stack.append(f.call(fn, (a,), value, i))


@handles("CALL_INTRINSIC_2")
def _call_intrinsic_2(f, ins, i):
    f.use(), f.use()
    name = "exception" if int(ins.arg) == 1 else ins.arg.name.lower()   # PREP_RERAISE_STAR
    f.stack.append(f.constant(name, f.r.take(), i))


HANDLERS = H
