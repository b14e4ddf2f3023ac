"""CPython 3.12 opcode knowledge: the 3.11 tables (``py311``, whose docstring lists the probe
kinds) with what 3.12 changed.

- No ``PRECALL``; ``KW_NAMES`` still precedes ``CALL`` (the hook goes before it).
- ``LOAD_METHOD`` is gone: ``LOAD_ATTR``'s argument is ``(method bit, name)``, and
  ``LOAD_SUPER_ATTR`` ``(method bit, two-argument bit, name)`` replaces ``super().name``'s call.
  A method load is rewritten to a plain load plus NULL (as 3.11's ``LOAD_METHOD`` was).
- Comprehensions are inlined (PEP 709): ``LOAD_FAST_AND_CLEAR`` saves the loop variable (NULL
  when unbound) and a ``STORE_FAST`` restores it.
- ``FOR_ITER`` jumps to ``END_FOR`` but, exhausted, pops the iterator and skips ``END_FOR``
  itself. The tables keep ``dis``'s model (the jump keeps the iterator and pushes a dummy,
  ``END_FOR`` pops both), and the rewriter puts the loop exit's mark after ``END_FOR``.
- ``RETURN_CONST``; ``BINARY_SLICE``/``STORE_SLICE``; ``LOAD_FAST_CHECK``;
  ``CALL_INTRINSIC_1`` (unary ``+``, list-to-tuple, ...) and ``CALL_INTRINSIC_2``;
  ``POP_JUMP_IF_*`` without direction; no ``JUMP_IF_*_OR_POP``.
"""
from __future__ import annotations

import operator

from bytecode import Instr

from . import py311
from .py311 import (BINARY_OPS, COMPARE_OPS, COMPARE_SYMBOLS, DELEGATING_ITERS,  # noqa: F401
                    GENERATOR_FLAGS,
                    INPLACE_FIRST, LOAD_CLOSURE, callee_below, compare_index, global_slots,
                    multi_count, value_depth)

UNARY_OPS = {name: fn for name, fn in py311.UNARY_OPS.items() if name != "UNARY_POSITIVE"}

CONDITIONAL_JUMPS = {
    "POP_JUMP_IF_FALSE": ("false", True), "POP_JUMP_IF_TRUE": ("true", True),
    "POP_JUMP_IF_NONE": ("none", True), "POP_JUMP_IF_NOT_NONE": ("not none", True),
}
UNCONDITIONAL_JUMPS = py311.UNCONDITIONAL_JUMPS
TERMINATORS = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"}
RETURNS = {"RETURN_VALUE": 1, "RETURN_CONST": 0}   # as 3.11's, with its constant return
DELEGATING_JUMPS = {"SEND"}        # as 3.11's; returning, it jumps to END_SEND (keeps the iterator)
ENDS_BLOCK = set(CONDITIONAL_JUMPS) | UNCONDITIONAL_JUMPS | TERMINATORS | {"FOR_ITER"} \
    | DELEGATING_JUMPS
# Guarded operators (see ``py311``): unary ``+`` is ``CALL_INTRINSIC_1``, ``c[a:b]`` one
# ``BINARY_SLICE`` (only the container's type is tested: the bounds' never pick a method), and
# only a plain ``LOAD_ATTR`` (a method load is a call's callable, decided by the hook).
GUARDED_OPERATORS = {name: guard for name, guard in py311.GUARDED_OPERATORS.items()
                     if name != "UNARY_POSITIVE"}
GUARDED_OPERATORS.update({"BINARY_SLICE": (3, 1, "slice"), "CALL_INTRINSIC_1": (1, 1, "unary")})
GUARD_JUMPS = {"false": "POP_JUMP_IF_FALSE", "true": "POP_JUMP_IF_TRUE"}
GUARD_SWITCH_TEST = ()
# CALL_INTRINSIC_1's argument -> the operator it applies (the other intrinsics are no operators)
INTRINSIC_OPERATORS = {5: operator.pos}     # INTRINSIC_UNARY_POSITIVE


def guarded_operator(ins):
    """As ``py311.guarded_operator``, for 3.12's instructions."""
    guard = GUARDED_OPERATORS.get(ins.name)
    if guard is None:
        return None
    if ins.name == "LOAD_ATTR":
        return None if ins.arg[0] else (*guard, ins.arg[1])
    if ins.name == "CALL_INTRINSIC_1":
        fn = INTRINSIC_OPERATORS.get(int(ins.arg))
        return None if fn is None else (*guard, fn)
    return (*guard, py311.operator_of(ins, guard[2]))
CALLS = {"CALL", "CALL_FUNCTION_EX"}
FOLDABLE_TESTS = py311.FOLDABLE_TESTS
FOLDING_JUMPS = {"POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE"}
CALLABLE_PRODUCERS = {"LOAD_GLOBAL", "LOAD_ATTR"}

_GONE = {"LOAD_METHOD", "UNARY_POSITIVE", "LIST_TO_TUPLE", "PREP_RERAISE_STAR",
         "LOAD_CLASSDEREF", "PRECALL"}
PROBE_KIND = {name: kind for name, kind in py311.PROBE_KIND.items() if name not in _GONE}
PROBE_KIND.update({"BINARY_SLICE": "value", "CALL_INTRINSIC_1": "value",
                   "CALL_INTRINSIC_2": "value", "LOAD_SUPER_ATTR": "value",
                   "STORE_SLICE": "done"})

# Class bodies and annotation scopes (3.12's LOAD_LOCALS, LOAD_FROM_DICT_OR_*): left untraced
# like 3.11's module bodies.
# Generators are traced as on 3.11; every generator body lies in a handler range (3.12 turns
# a StopIteration leaving it into RuntimeError), which opens after the prologue (``rewrite``).
TRACED_GENERATOR_FLAGS = py311.TRACED_GENERATOR_FLAGS   # as on 3.11
ASYNC_GEN_WRAP = 4      # CALL_INTRINSIC_1's INTRINSIC_ASYNC_GEN_WRAP (3.11's ASYNC_GEN_WRAP)


def wraps_async_item(op) -> bool:
    """As ``py311.wraps_async_item``: 3.12 wraps with ``CALL_INTRINSIC_1``."""
    return op.name == "CALL_INTRINSIC_1" and int(op.arg) == ASYNC_GEN_WRAP
UNSUPPORTED = py311.UNSUPPORTED | {"LOAD_LOCALS", "LOAD_FROM_DICT_OR_GLOBALS",
                                   "LOAD_FROM_DICT_OR_DEREF"}

LITERAL_LOADS = {"LOAD_CONST", "RETURN_CONST"}
FOR_ITER_SKIP = 1
NULL_FIRST = True
NULL_SLOT_OF_CALL = 0
ENTRY_CALLS = True     # C calls no longer count against the recursion limit: the prologue
                       # takes its pair through a Python call (``recorder.entry_pair``)
METHOD_SITES = False   # no ``LOAD_METHOD``: calls decide every method (``py311``'s method sites)
METHOD_SITE_ARGS = frozenset()
# (call sites decide C callables in the bytecode, as on 3.11: ``probes.hook_site`` puts no jump
# target right after the hook's call, where 3.12.1's ``sys.settrace`` would report the line
# again: returning from a Python call, the frame's last instruction is the call's inline cache,
# whose line it does not know)

_FIXED = {"KW_NAMES": (0, 0), "FOR_ITER": (0, 1), "END_FOR": (2, 0), "RETURN_CONST": (0, 0),
          "LOAD_FAST_CHECK": (0, 1), "LOAD_FAST_AND_CLEAR": (0, 1), "BINARY_SLICE": (3, 1),
          "STORE_SLICE": (4, 0), "CALL_INTRINSIC_1": (1, 1), "CALL_INTRINSIC_2": (2, 1),
          "END_SEND": (2, 1), "SEND": (1, 1), "CLEANUP_THROW": (3, 2)}


def stack_io(ins, jump: bool = False) -> tuple[int, int]:
    """(values popped, values pushed), as ``py311.stack_io``; an exhausted FOR_ITER keeps its
    iterator and pushes a dummy, which END_FOR pops with it."""
    name = ins.name
    fixed = _FIXED.get(name)
    if fixed is not None:
        return fixed
    if name in CONDITIONAL_JUMPS:
        return 1, 0
    if name == "LOAD_ATTR":
        return 1, 1 + bool(ins.arg[0])
    if name == "LOAD_SUPER_ATTR":
        return 3, 1 + bool(ins.arg[0])
    return py311.stack_io(ins, jump)


def local_access(ins, cells: frozenset) -> tuple:
    """As ``py311.local_access``, with LOAD_FAST_CHECK and LOAD_FAST_AND_CLEAR."""
    name = ins.name
    if name == "LOAD_FAST_CHECK":
        return (("load", ins.arg),)
    if name == "LOAD_FAST_AND_CLEAR":
        return (("clear", ins.arg),)
    return py311.local_access(ins, cells)


def null_pushed(ins, j: int) -> bool:
    """Is push ``j`` of ``ins`` a NULL under a callable (method loads rewritten to push one)?"""
    name = ins.name
    if name in ("LOAD_GLOBAL", "LOAD_ATTR", "LOAD_SUPER_ATTR"):
        return bool(ins.arg[0]) and j == 0
    return name == "PUSH_NULL"


def hook_site(instrs: list, i: int):
    """Index of the call whose callable the hook replaces right before instruction ``i``."""
    name = instrs[i].name
    if name == "KW_NAMES":
        return i + 1
    if name == "CALL" and (i == 0 or instrs[i - 1].name != "KW_NAMES"):
        return i
    if name == "CALL_FUNCTION_EX":
        return i
    return None


def positional_args(instrs: list, call: int, self_layout: bool):
    """As 3.11's (``KW_NAMES`` right before the ``CALL``)."""
    ins = instrs[call]
    if ins.name != "CALL" or call >= 1 and instrs[call - 1].name == "KW_NAMES":
        return None
    return ins.arg + self_layout


def call_instrs(nargs: int, loc) -> list:
    return [Instr("CALL", nargs, location=loc)]


def rewrite(ins, loc):
    """A method load (``LOAD_ATTR``/``LOAD_SUPER_ATTR`` with the method bit) becomes a plain
    load and a NULL under it: the callable slot then always holds one callable."""
    if ins.name in ("LOAD_ATTR", "LOAD_SUPER_ATTR") and ins.arg[0]:
        return [Instr(ins.name, (False,) + tuple(ins.arg[1:]), location=loc),
                Instr("PUSH_NULL", location=loc), Instr("SWAP", 2, location=loc)]
    return None


def probe_kind(ins, cells: frozenset):
    if wraps_async_item(ins):
        return None                      # the item itself: the replay passes it on
    return PROBE_KIND.get(ins.name)


def attr_arg(name: str):
    """The argument of a plain ``LOAD_ATTR`` of ``name`` (method bit off)."""
    return (False, name)
