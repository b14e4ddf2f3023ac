"""CPython 3.11 semantics for the replay, part 2: control flow, calls, ``with``, ``match`` and
exceptions. Registers into the same table as ``semantics311`` (which imports this module)."""
from __future__ import annotations

from numpy import ndarray

from ..recorder import MARK_TYPES, Missing
from ...tape.nodes import Node, PrimitiveCall, append_call
from . import py311
from .semantics311 import _pop_n, handles
from .. import ops
from ..generators import resumed_item, send, yield_from_iter, yield_value
from .. import async_iteration
from ..counted_loops import EXHAUSTED, counted_item

__all__ = ["jump"]


# -- with, match, exceptions -------------------------------------------------------------------
@handles("BEFORE_WITH")
def _before_with(f, ins, i):
    manager = f.use()
    result, exit_method = f.r.take()
    f.stack.append(f.call(getattr, (manager, f.r.literal("__exit__")), exit_method, i))
    f.stack.append(f.call(ops.enter_context, (manager,), result, i))


@handles("WITH_EXCEPT_START")
def _with_except_start(f, ins, i):
    exit_node, exc = f.r.resolve(f.stack[-4]), f.r.resolve(f.stack[-1])
    f.stack.append(f.call(ops.exit_context, (exit_node, exc), f.r.take(), i))


@handles("MATCH_MAPPING", "MATCH_SEQUENCE")
def _match_kind(f, ins, i):
    fn = ops.match_mapping if ins.name == "MATCH_MAPPING" else ops.match_sequence
    f.stack.append(f.call(fn, (f.r.resolve(f.stack[-1]),), f.r.take(), i))


@handles("MATCH_KEYS")
def _match_keys(f, ins, i):
    subject, keys = f.r.resolve(f.stack[-2]), f.r.resolve(f.stack[-1])
    f.stack.append(f.call(ops.match_keys, (subject, keys), f.r.take(), i))


@handles("MATCH_CLASS")
def _match_class(f, ins, i):
    names, cls, subject = f.use(), f.use(), f.use()
    f.stack.append(f.call(ops.match_class, (subject, cls, f.r.literal(ins.arg), names), f.r.take(), i))


@handles("CHECK_EG_MATCH")
def _check_eg_match(f, ins, i):
    typ, exc = f.use(), f.use()
    match, rest = f.r.take()
    f.stack.append(f.constant("unmatched exceptions", rest, i))
    f.stack.append(f.constant("matched exceptions", match, i))


@handles("PREP_RERAISE_STAR")
def _prep_reraise_star(f, ins, i):
    f.use(), f.use()
    f.stack.append(f.constant("exception", f.r.take(), i))


# -- control flow ------------------------------------------------------------------------------
@handles("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT")
def _jump(f, ins, i):
    f.next_block = f.s.blocks[f.s.block_of[i]].jump


jump = _jump    # the handler of unconditional jumps (the replay goes to the block's ``jump``)


def conditional_jump(table: dict):
    """The handler of the conditional jumps in ``table`` (name -> (sense, pops always))."""
    def handler(f, ins, i):
        _branch_on(f, ins, i, *table[ins.name])
    return handler


handles(*py311.CONDITIONAL_JUMPS)(conditional_jump(py311.CONDITIONAL_JUMPS))


def _branch_on(f, ins, i, sense: str, pops_always: bool):
    block = f.s.blocks[f.s.block_of[i]]
    tested = f.stack[-1]
    jumped = f.direction(block.index)
    if pops_always or not jumped:
        f.stack.pop()
    if sense in ("none", "not none"):
        is_none = jumped if sense == "none" else not jumped
        f.branch(i, tested, block.jump, block.fall, jumped, is_none, "is None")
    else:
        truth = jumped if sense == "true" else not jumped
        f.branch(i, tested, block.jump, block.fall, jumped, truth)


@handles("FOR_ITER")
def _for_iter(f, ins, i):
    block = f.s.blocks[f.s.block_of[i]]
    it = f.stack[-1]
    r = f.r
    if i in f.info.counted_loops and (value := counted_item(f, it)) is not None:
        if value is EXHAUSTED:           # a range's items, not logged (``counted_loops``)
            f.stack.pop()
            f.branch(i, it, block.jump, block.fall, True, False, "exhausted")
            return
        f.next_block = block.fall
        _drawn(f, r, it, value, i)
        return
    pos, log = r.pos, r.log
    ev = log[pos] if pos < len(log) else None
    if ev is None or type(ev) in MARK_TYPES:
        ev = r.peek()                    # (settles generator resumptions first)
    if ev is f.info.marks[block.jump]:
        f.stack.pop()
        f.branch(i, it, block.jump, block.fall, True, False, "exhausted")
        return
    if ev is None or type(ev) in MARK_TYPES:
        value = r.take()                 # (raises Missing: ``next`` raised)
    else:
        value = ev                       # ``take`` after ``peek``: the same event
        r.pos += 1
    f.next_block = block.fall
    if r.resumed is not None:
        segment = resumed_item(f, value, it.value)
        if segment is not None:          # a traced generator's item: the segment yielding it
            f.stack.append(segment)
            return
    _drawn(f, r, it, value, i)


def _drawn(f, r, it, value, i) -> None:
    """The item ``value`` drawn from iterator node ``it``: a ``next_item`` node on the stack."""
    steps = f.steps
    step = steps.get(id(it), 0)
    steps[id(it)] = step + 1
    ints = r.ints
    node = append_call(f.tape, PrimitiveCall, ops.next_item,
                       (it, ints[step] if step < len(ints) else r.literal(step)), None, value,
                       f.ops[i].loc)             # ``f.call``, inlined
    if r.aliasing.writes and type(value) is ndarray:
        r.aliasing.noted(node)
    f.stack.append(node)


@handles("RETURN_GENERATOR")
def _return_generator(f, ins, i):
    f.stack.append(f.r.literal(None))    # what the first resumption sends (popped at once)


@handles("YIELD_VALUE")
def _yield_value(f, ins, i):
    yield_value(f, i, i > 0 and py311.wraps_async_item(f.ops[i - 1]))


@handles("ASYNC_GEN_WRAP")
def _async_gen_wrap(f, ins, i):
    pass                                 # the item itself (the asend object unwraps it)


@handles("GET_AITER")
def _get_aiter(f, ins, i):
    async_iteration.get_aiter(f, i)


@handles("GET_ANEXT")
def _get_anext(f, ins, i):
    async_iteration.get_anext(f, i)


@handles("END_ASYNC_FOR")
def _end_async_for(f, ins, i):
    async_iteration.end_async_for(f, i)


@handles("BEFORE_ASYNC_WITH")
def _before_async_with(f, ins, i):
    async_iteration.before_async_with(f, i)


@handles("GET_YIELD_FROM_ITER")
def _get_yield_from_iter(f, ins, i):
    yield_from_iter(f, i)


@handles("GET_AWAITABLE")
def _get_awaitable(f, ins, i):
    yield_from_iter(f, i, ops.awaitable)


@handles("SEND")
def _send(f, ins, i):
    send(f, i)


@handles("RETURN_VALUE")
def _return_value(f, ins, i):
    f.do_return(i)


@handles("RAISE_VARARGS")
def _raise_varargs(f, ins, i):
    f.raising = _pop_n(f, ins.arg)
    if f.raising and isinstance(f.raising[0], Node):
        f.r.raised_by[id(f.raising[0].value)] = f.raising[0]   # where a handler finds it
    raise Missing


@handles("RERAISE")
def _reraise(f, ins, i):
    f.raising = (f.use(),)
    raise Missing


# -- calls -------------------------------------------------------------------------------------
@handles("CALL")
def _call(f, ins, i):
    n = ins.arg
    stack = f.stack
    if f.versions:
        args = list(_pop_n(f, n))
    elif n:                             # ``_pop_n`` without versions to resolve
        args = stack[-n:]
        del stack[-n:]
    else:
        args = []
    callee = stack.pop()
    if i in f.s.self_layout:            # [function, self, args]: self is the first argument
        args.insert(0, f.r.resolve(callee) if isinstance(callee, Node) else callee)
        callee = stack.pop()
    else:
        stack.pop()                     # the NULL under the callable
    names = f.kwnames
    if not names:
        f.do_call(i, callee, args, {})
        return
    f.kwnames = ()
    split = len(args) - len(names)
    f.do_call(i, callee, args[:split], dict(zip(names, args[split:])))


@handles("CALL_FUNCTION_EX")
def _call_function_ex(f, ins, i):
    kw = f.use() if ins.arg & 1 else None
    star = f.use()
    callee = f.stack.pop()
    f.stack.pop()
    args = f.star_arguments(i, star)
    kwargs = f.star_keywords(i, kw) if kw is not None else {}
    f.do_call(i, callee, args, kwargs)

