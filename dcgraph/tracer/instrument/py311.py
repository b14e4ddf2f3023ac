"""CPython 3.11 opcode knowledge: what each instruction means to the tracer.

The rewriter reads these tables to decide where probes go; the replay (``semantics311``)
reads them to turn the event log back into nodes. ``py312``/``py313`` derive from these tables
and ``versions`` picks the running interpreter's module.

Probe kinds (what one execution of an instruction appends to the event log):

========  ==========================================================================
value     the instruction's result (top of stack after it)
multi     a tuple of the several values it pushed (unpacking, ``with`` entry)
cell      ``(cell, value)`` for a closure read, so reads of a cell find its writer
store     the cell written (closure store), or the cell a new closure captures
done      ``None``: a side effect (item/attribute store, ...) completed without raising; also
          after a load or delete of a local that may be unbound (it may raise)
call      the callable (logged by the hook before the call), then the result
========  ==========================================================================
"""
from __future__ import annotations

import dis
import operator

__all__ = ["BINARY_OPS", "COMPARE_OPS", "UNARY_OPS", "CONDITIONAL_JUMPS", "UNCONDITIONAL_JUMPS",
           "TERMINATORS", "ENDS_BLOCK", "FOLDABLE_TESTS", "PROBE_KIND", "UNSUPPORTED",
           "CALLABLE_PRODUCERS", "multi_count", "CALLS"]

# BINARY_OP's argument: NB_ADD=0 ... NB_XOR=12, then the in-place forms in the same order.
BINARY_OPS = (
    operator.add, operator.and_, operator.floordiv, operator.lshift, operator.matmul,
    operator.mul, operator.mod, operator.or_, operator.pow, operator.rshift, operator.sub,
    operator.truediv, operator.xor,
    operator.iadd, operator.iand, operator.ifloordiv, operator.ilshift, operator.imatmul,
    operator.imul, operator.imod, operator.ior, operator.ipow, operator.irshift, operator.isub,
    operator.itruediv, operator.ixor,
)
INPLACE_FIRST = 13

# COMPARE_OP's argument (bytecode.Compare): LT, LE, EQ, NE, GT, GE.
COMPARE_OPS = (operator.lt, operator.le, operator.eq, operator.ne, operator.gt, operator.ge)
COMPARE_SYMBOLS = ("<", "<=", "==", "!=", ">", ">=")

UNARY_OPS = {
    "UNARY_POSITIVE": operator.pos, "UNARY_NEGATIVE": operator.neg,
    "UNARY_NOT": operator.not_, "UNARY_INVERT": operator.invert,
}

# name -> (jumps when the tested value is ..., pops the value on the jump path)
CONDITIONAL_JUMPS = {
    "POP_JUMP_FORWARD_IF_FALSE": ("false", True), "POP_JUMP_BACKWARD_IF_FALSE": ("false", True),
    "POP_JUMP_FORWARD_IF_TRUE": ("true", True), "POP_JUMP_BACKWARD_IF_TRUE": ("true", True),
    "POP_JUMP_FORWARD_IF_NONE": ("none", True), "POP_JUMP_BACKWARD_IF_NONE": ("none", True),
    "POP_JUMP_FORWARD_IF_NOT_NONE": ("not none", True),
    "POP_JUMP_BACKWARD_IF_NOT_NONE": ("not none", True),
    "JUMP_IF_FALSE_OR_POP": ("false", False), "JUMP_IF_TRUE_OR_POP": ("true", False),
}
UNCONDITIONAL_JUMPS = {"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"}
TERMINATORS = {"RETURN_VALUE", "RAISE_VARARGS", "RERAISE"}
# returns -> how many values they take off the stack (the hidden slots are dropped first)
RETURNS = {"RETURN_VALUE": 1}
# ``yield from``'s SEND: falls through when the sub-iterator yielded, jumps when it returned
DELEGATING_JUMPS = {"SEND"}
ENDS_BLOCK = set(CONDITIONAL_JUMPS) | UNCONDITIONAL_JUMPS | TERMINATORS | {"FOR_ITER"} \
    | DELEGATING_JUMPS
CALLS = {"CALL", "CALL_FUNCTION_EX"}

# A test whose only use is the conditional jump right after it is folded into the Branch
# (no probe between a compare and its jump keeps 3.11's fused compare-and-jump).
FOLDABLE_TESTS = {"COMPARE_OP", "IS_OP", "CONTAINS_OP", "CHECK_EXC_MATCH"}
FOLDING_JUMPS = {name for name, (_, pops) in CONDITIONAL_JUMPS.items()
                 if pops and ("true" in name.lower() or "false" in name.lower())}

# Loads whose value, when it only serves as the callable of the next call, is not probed:
# the hook logs the callable anyway.
CALLABLE_PRODUCERS = {"LOAD_GLOBAL", "LOAD_ATTR", "LOAD_METHOD"}

PROBE_KIND = {}
for _name in ("BINARY_OP", "UNARY_POSITIVE", "UNARY_NEGATIVE", "UNARY_NOT", "UNARY_INVERT",
              "BINARY_SUBSCR", "COMPARE_OP", "IS_OP", "CONTAINS_OP", "LOAD_ATTR", "LOAD_GLOBAL",
              "LOAD_METHOD", "GET_ITER", "GET_LEN", "BUILD_TUPLE", "BUILD_LIST", "BUILD_SET",
              "BUILD_MAP", "BUILD_CONST_KEY_MAP", "BUILD_STRING", "BUILD_SLICE", "LIST_TO_TUPLE",
              "FORMAT_VALUE", "MAKE_FUNCTION", "IMPORT_NAME", "IMPORT_FROM", "LOAD_BUILD_CLASS",
              "MATCH_MAPPING", "MATCH_SEQUENCE", "MATCH_KEYS", "MATCH_CLASS", "CHECK_EXC_MATCH",
              "WITH_EXCEPT_START", "PREP_RERAISE_STAR", "FOR_ITER", "GET_AITER"):
    PROBE_KIND[_name] = "value"
for _name in ("UNPACK_SEQUENCE", "UNPACK_EX", "BEFORE_WITH", "BEFORE_ASYNC_WITH", "CHECK_EG_MATCH"):
    PROBE_KIND[_name] = "multi"
for _name in ("LOAD_DEREF", "LOAD_CLASSDEREF"):
    PROBE_KIND[_name] = "cell"
for _name in ("STORE_DEREF", "DELETE_DEREF", "LOAD_CLOSURE"):
    PROBE_KIND[_name] = "store"
for _name in ("STORE_SUBSCR", "DELETE_SUBSCR", "STORE_ATTR", "DELETE_ATTR", "SET_ADD", "MAP_ADD",
              "LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE", "DICT_MERGE", "DELETE_GLOBAL",
              "IMPORT_STAR", "PRINT_EXPR"):
    PROBE_KIND[_name] = "done"
for _name in CALLS:
    PROBE_KIND[_name] = "call"
del _name

# Operator instructions guarded for operands of the user's classes (``tracer.operators``):
# name -> (operands on the stack, how many of them (from the deepest) have their type tested,
# dispatcher: "binary", "unary", "attribute", "subscript" (the unary dispatcher gets
# ``(container, key)`` as one operand) or "slice" (``container[start:stop]``, the same)).
GUARDED_OPERATORS = {"BINARY_OP": (2, 2, "binary"), "BINARY_SUBSCR": (2, 2, "subscript"),
                     "UNARY_NEGATIVE": (1, 1, "unary"), "UNARY_POSITIVE": (1, 1, "unary"),
                     "UNARY_INVERT": (1, 1, "unary"), "LOAD_ATTR": (1, 1, "attribute")}
# the guarded sequence's forward jumps, by the truth of the tested value; instructions turning
# ``operator_guards.GUARDING`` (a list) into what the jump tests
GUARD_JUMPS = {"false": "POP_JUMP_FORWARD_IF_FALSE", "true": "POP_JUMP_FORWARD_IF_TRUE"}
GUARD_SWITCH_TEST = ()


def guarded_operator(ins):
    """How ``ins`` is guarded: ``GUARDED_OPERATORS``' entry plus the operator (a function of
    ``operator``, or the attribute's name), or None when it is not guarded."""
    guard = GUARDED_OPERATORS.get(ins.name)
    return None if guard is None else (*guard, operator_of(ins, guard[2]))


def operator_of(ins, dispatcher: str):
    """The operator a guarded instruction applies, for its dispatcher."""
    if dispatcher == "binary":
        return BINARY_OPS[ins.arg]
    if dispatcher == "unary":
        return UNARY_OPS[ins.name]
    if dispatcher == "attribute":
        return ins.arg
    return operator.getitem          # subscript, slice


# Code using these is left untraced (recorded as a primitive call): module and class bodies.
UNSUPPORTED = {"LOAD_NAME", "STORE_NAME", "DELETE_NAME", "SETUP_ANNOTATIONS"}

# Code flags of generators, coroutines and async generators, and of those that are traced
# (all three: ``yield``, ``yield from``/``await`` and resume marks).
GENERATOR_FLAGS = 0x20 | 0x80 | 0x100 | 0x200
TRACED_GENERATOR_FLAGS = 0x20 | 0x80 | 0x200
# Instructions leaving the iterator a ``SEND`` loop delegates to (``yield from``, ``await``,
# ``async for``'s next item): the ``delegation.delegated`` probe follows them.
DELEGATING_ITERS = {"GET_YIELD_FROM_ITER", "GET_AWAITABLE", "GET_ANEXT"}


def wraps_async_item(op) -> bool:
    """Does ``op`` (the instruction before a YIELD_VALUE) wrap an async generator's item (a
    real ``yield``, which ends the consumer's ``await`` of ``__anext__``/``asend``; an
    ``await`` inside the async generator yields unwrapped)?"""
    return op.name == "ASYNC_GEN_WRAP"


def multi_count(ins) -> int:
    """How many values a ``multi`` instruction pushes."""
    if ins.name == "UNPACK_SEQUENCE":
        return ins.arg
    if ins.name == "UNPACK_EX":
        return (ins.arg & 0xFF) + 1 + (ins.arg >> 8)
    return 2


_CONST_OPS = frozenset(dis.hasconst)   # opcodes whose ``Instr.arg`` is the constant itself

_POPS_FIXED = {
    "BINARY_OP": 2, "BINARY_SUBSCR": 2, "COMPARE_OP": 2, "IS_OP": 2, "CONTAINS_OP": 2,
    "IMPORT_NAME": 2, "PREP_RERAISE_STAR": 2, "DELETE_SUBSCR": 2, "STORE_ATTR": 2,
    "STORE_SUBSCR": 3, "MAP_ADD": 2, "CHECK_EG_MATCH": 2, "MATCH_CLASS": 3,
    "UNARY_POSITIVE": 1, "UNARY_NEGATIVE": 1, "UNARY_NOT": 1, "UNARY_INVERT": 1,
    "LOAD_ATTR": 1, "LOAD_METHOD": 1, "GET_ITER": 1, "LIST_TO_TUPLE": 1, "UNPACK_SEQUENCE": 1,
    "UNPACK_EX": 1, "BEFORE_WITH": 1, "STORE_DEREF": 1, "STORE_GLOBAL": 1, "DELETE_ATTR": 1,
    "POP_TOP": 1, "RETURN_VALUE": 1, "RERAISE": 1, "POP_EXCEPT": 1, "IMPORT_STAR": 1,
    "PRINT_EXPR": 1, "CHECK_EXC_MATCH": 1, "LIST_APPEND": 1, "SET_ADD": 1, "LIST_EXTEND": 1,
    "SET_UPDATE": 1, "DICT_UPDATE": 1, "DICT_MERGE": 1, "PUSH_EXC_INFO": 1,
    "PRECALL": 0, "KW_NAMES": 0, "STORE_FAST": 1, "YIELD_VALUE": 1, "GET_YIELD_FROM_ITER": 1,
    "GET_AWAITABLE": 1, "GET_AITER": 1, "BEFORE_ASYNC_WITH": 1, "END_ASYNC_FOR": 2,
    "ASYNC_GEN_WRAP": 1,
}


def stack_io(ins, jump: bool = False) -> tuple[int, int]:
    """(values popped, values pushed) of one instruction, in the tracer's semantic model:
    an instruction that only reads a value below the top (FOR_ITER, GET_LEN, MATCH_*) does not
    pop it, and a call's arguments are popped by CALL, not PRECALL."""
    import dis
    name, arg = ins.name, ins.arg
    if name == "PRECALL" or name == "KW_NAMES":
        return 0, 0
    if name == "RETURN_GENERATOR":
        return 0, 1       # the value the first resumption sends (None), popped at once
    if name == "CALL":
        return arg + 2, 1
    if name == "CALL_FUNCTION_EX":
        return 3 + (arg & 1), 1
    if name == "FOR_ITER":
        return (1, 0) if jump else (0, 1)
    if name in DELEGATING_JUMPS:  # [iterator, sent]: the iterator stays unless it returned
        return (2, 1) if jump else (1, 1)
    if name in CONDITIONAL_JUMPS:
        pops_always = CONDITIONAL_JUMPS[name][1]
        return (1, 0) if (pops_always or not jump) else (0, 0)
    if name in ("BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_STRING", "BUILD_SLICE"):
        return arg, 1
    if name == "BUILD_MAP":
        return 2 * arg, 1
    if name == "BUILD_CONST_KEY_MAP":
        return arg + 1, 1
    if name == "FORMAT_VALUE":
        return (2 if int(arg) & 0x04 else 1), 1
    if name == "MAKE_FUNCTION":
        return 1 + bin(int(arg) & 0xF).count("1"), 1
    if name == "RAISE_VARARGS":
        return arg, 0
    if name in ("UNPACK_SEQUENCE", "UNPACK_EX"):
        return 1, multi_count(ins)
    if name == "LOAD_GLOBAL":
        return 0, 2 if arg[0] else 1
    pops = _POPS_FIXED.get(name, 0)
    try:
        effect = dis.stack_effect(ins.opcode, _raw_arg(ins) if ins.require_arg() else None,
                                  jump=jump)
    except ValueError:
        effect = dis.stack_effect(ins.opcode, _raw_arg(ins) if ins.require_arg() else None)
    if pops + effect < 0:
        raise ValueError(f"{name}: inconsistent stack model")
    return pops, pops + effect


def _raw_arg(ins) -> int:
    """The oparg where it is a number (a constant's or a name's value is not an oparg, and
    no stack effect depends on it)."""
    arg = ins.arg
    if isinstance(arg, int) and ins.opcode not in _CONST_OPS:
        return int(arg)
    return 0


# -- what the rewriter and the static analysis ask of a version --------------------------------
# (``py312``/``py313`` override these; everything else in ``rewrite``/``analysis`` is shared.)
from bytecode import Instr  # noqa: E402

LITERAL_LOADS = {"LOAD_CONST"}          # instructions whose constant ``info.literals`` shares
FOR_ITER_SKIP = 0      # instructions at FOR_ITER's target the interpreter skips on exhaustion
NULL_FIRST = True      # a call's NULL (or bound ``self``'s function) sits under the callable
NULL_SLOT_OF_CALL = 0  # index, among a CALL's popped slots, of the NULL-or-function slot
LOAD_CLOSURE = "LOAD_CLOSURE"           # the instruction pushing a cell object
ENTRY_CALLS = False    # the prologue reads its pair, no call: its first append, a C call,
                       # counts against the recursion limit (``recorder.entry_pair``)
METHOD_SITES = True    # ``LOAD_METHOD`` calls with plain loads as arguments may be method
                       # sites (``method_sites``; ``probes.method_site``)
METHOD_SITE_ARGS = frozenset({"LOAD_FAST", "LOAD_CONST"})   # the loads a method site copies


def local_access(ins, cells: frozenset) -> tuple:
    """What ``ins`` does to fast locals, in order: ``("load"|"store"|"delete"|"clear", name)``
    (``clear``: load the value, or NULL when unbound, and unbind)."""
    name = ins.name
    if name == "LOAD_FAST":
        return (("load", ins.arg),)
    if name == "STORE_FAST":
        return (("store", ins.arg),)
    if name == "DELETE_FAST":
        return (("delete", ins.arg),)
    return ()


def null_pushed(ins, j: int) -> bool:
    """Is value ``j`` pushed by ``ins`` the NULL left for a call (LOAD_METHOD is rewritten to
    push NULL and a bound method)?"""
    name = ins.name
    return (name == "PUSH_NULL" or (name == "LOAD_METHOD" and j == 0)
            or (name == "LOAD_GLOBAL" and ins.arg[0] and j == 0))


def global_slots(ins) -> tuple:
    """(push index of a LOAD_GLOBAL's value, push index of its NULL or None)."""
    return (1, 0) if ins.arg[0] else (0, None)


def hook_site(instrs: list, i: int):
    """Index of the call whose callable the hook replaces right before instruction ``i``, or
    None. (Never between KW_NAMES, PRECALL and CALL: KW_NAMES sets state the CALL reads.)"""
    name = instrs[i].name
    if name == "KW_NAMES":
        return i + 2
    if name == "PRECALL" and (i == 0 or instrs[i - 1].name != "KW_NAMES"):
        return i + 1
    if name == "CALL_FUNCTION_EX":
        return i
    return None


def positional_args(instrs: list, call: int, self_layout: bool):
    """The number of positional arguments the call at ``call`` passes, where it passes no
    keyword and unpacks nothing (a ``CALL`` not after ``KW_NAMES``), else None."""
    ins = instrs[call]
    if ins.name != "CALL" or call >= 2 and instrs[call - 2].name == "KW_NAMES":
        return None
    return ins.arg + self_layout


def callee_below(ins, self_layout: bool) -> int:
    """How many stack slots above a call's callable, just before the call (its arguments)."""
    if ins.name == "CALL_FUNCTION_EX":
        return 1 + (ins.arg & 1)
    return ins.arg + self_layout


def call_instrs(nargs: int, loc) -> list:
    """Call the callable under ``nargs`` arguments (NULL placed as ``NULL_FIRST`` says)."""
    return [Instr("PRECALL", nargs, location=loc), Instr("CALL", nargs, location=loc)]


def rewrite(ins, loc):
    """Replacement instructions for ``ins`` (a method load becomes attribute + NULL, so the
    callable slot always holds one callable), or None to keep it."""
    if ins.name == "LOAD_METHOD":
        return [Instr("LOAD_ATTR", ins.arg, location=loc), Instr("PUSH_NULL", location=loc),
                Instr("SWAP", 2, location=loc)]
    return None


def probe_kind(ins, cells: frozenset):
    """The probe after ``ins`` (see the table at the top), before per-use refinements."""
    return PROBE_KIND.get(ins.name)


def value_depth(ins) -> int:
    """How far below the top a ``value`` probe finds the value ``ins`` pushed (0: the top)."""
    return 0


def compare_index(arg) -> int:
    """COMPARE_OP's argument as an index into ``COMPARE_OPS``."""
    return int(arg) & 0xF


def attr_arg(name: str):
    """The argument of a plain ``LOAD_ATTR`` of ``name``."""
    return name
