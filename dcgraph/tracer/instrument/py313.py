"""CPython 3.13 opcode knowledge: the 3.12 tables (``py312``) with what 3.13 changed.

- The NULL goes *above* the callable: a call sees ``[callable, self_or_null, args...]``
  (``LOAD_GLOBAL``'s NULL, a method load's ``self`` or NULL, ``PUSH_NULL`` after the callable).
- ``KW_NAMES`` is gone: ``CALL_KW`` takes the names tuple from the stack.
- ``TO_BOOL`` precedes tests of non-bool values (``if x``, ``not x``); the replay sees through it.
- ``LOAD_FAST_LOAD_FAST``, ``STORE_FAST_LOAD_FAST``, ``STORE_FAST_STORE_FAST`` superinstructions;
  ``LOAD_CLOSURE`` is emitted as ``LOAD_FAST`` of the cell.
- ``MAKE_FUNCTION`` takes only the code; ``SET_FUNCTION_ATTRIBUTE`` adds defaults, closure, ...
- ``FORMAT_VALUE`` is split into ``CONVERT_VALUE``, ``FORMAT_SIMPLE`` and ``FORMAT_WITH_SPEC``.
- An exhausted ``FOR_ITER`` skips both ``END_FOR`` and the ``POP_TOP`` after it.
- ``COMPARE_OP``'s argument carries a to-bool bit (16).
"""
from __future__ import annotations

from bytecode import CellVar, FreeVar, Instr

from . import py312
from .py312 import (BINARY_OPS, COMPARE_OPS, COMPARE_SYMBOLS, CONDITIONAL_JUMPS,  # noqa: F401
                    DELEGATING_ITERS, DELEGATING_JUMPS, GUARD_JUMPS, INTRINSIC_OPERATORS,
                    guarded_operator,
                    FOLDABLE_TESTS, FOLDING_JUMPS, GENERATOR_FLAGS, INPLACE_FIRST, LITERAL_LOADS,
                    RETURNS, TERMINATORS, UNARY_OPS, UNCONDITIONAL_JUMPS,
                    UNSUPPORTED, attr_arg, call_instrs, compare_index, multi_count,
                    wraps_async_item)

ENDS_BLOCK = py312.ENDS_BLOCK
# guarded operators as on 3.12 (``TO_BOOL`` and ``CONVERT_VALUE`` pick no operator method)
GUARDED_OPERATORS = py312.GUARDED_OPERATORS
GUARD_SWITCH_TEST = ("TO_BOOL",)       # a jump tests exact bools only

TRACED_GENERATOR_FLAGS = py312.TRACED_GENERATOR_FLAGS   # as 3.12 (probes follow the version's call layout)
CALLS = {"CALL", "CALL_KW", "CALL_FUNCTION_EX"}
CALLABLE_PRODUCERS = py312.CALLABLE_PRODUCERS

PROBE_KIND = {name: kind for name, kind in py312.PROBE_KIND.items() if name != "FORMAT_VALUE"}
PROBE_KIND.update({"CALL_KW": "call", "SET_FUNCTION_ATTRIBUTE": "value",
                   "FORMAT_SIMPLE": "value", "FORMAT_WITH_SPEC": "value"})

FOR_ITER_SKIP = 2
NULL_FIRST = False
NULL_SLOT_OF_CALL = 1
ENTRY_CALLS = True     # as on 3.12
METHOD_SITES = False   # no ``LOAD_METHOD``: calls decide every method (``py311``'s method sites)
METHOD_SITE_ARGS = frozenset()
LOAD_CLOSURE = "LOAD_FAST"       # of a CellVar/FreeVar: pushes the cell

_FIXED = {"TO_BOOL": (0, 0), "END_FOR": (1, 0), "MAKE_FUNCTION": (1, 1),
          "SET_FUNCTION_ATTRIBUTE": (2, 1), "CONVERT_VALUE": (1, 1), "FORMAT_SIMPLE": (1, 1),
          "FORMAT_WITH_SPEC": (2, 1), "LOAD_FAST_LOAD_FAST": (0, 2),
          "STORE_FAST_LOAD_FAST": (1, 1), "STORE_FAST_STORE_FAST": (2, 0)}


def stack_io(ins, jump: bool = False) -> tuple[int, int]:
    """(values popped, values pushed), as ``py312.stack_io``; TO_BOOL leaves the tested value
    in place in this model (the replay tests the value itself)."""
    name = ins.name
    if name == "CALL_KW":
        return ins.arg + 3, 1
    fixed = _FIXED.get(name)
    if fixed is not None:
        return fixed
    return py312.stack_io(ins, jump)


def is_cell_load(ins, cells: frozenset) -> bool:
    """A LOAD_FAST that pushes a cell object (3.11's LOAD_CLOSURE)."""
    arg = ins.arg
    return ins.name == "LOAD_FAST" and (isinstance(arg, (CellVar, FreeVar)) or arg in cells)


def local_access(ins, cells: frozenset) -> tuple:
    """As ``py312.local_access``, with the superinstructions (in execution order)."""
    name = ins.name
    if name.count("FAST") == 2 and any(not isinstance(n, str) or n in cells for n in ins.arg):
        # never emitted by 3.13's compiler: the code is then recorded as a primitive call
        raise ValueError(f"{name} {ins.arg!r} names a cell")
    if name == "LOAD_FAST_LOAD_FAST":
        return (("load", ins.arg[0]), ("load", ins.arg[1]))
    if name == "STORE_FAST_LOAD_FAST":
        return (("store", ins.arg[0]), ("load", ins.arg[1]))
    if name == "STORE_FAST_STORE_FAST":
        return (("store", ins.arg[0]), ("store", ins.arg[1]))
    if is_cell_load(ins, cells):
        return ()
    return py312.local_access(ins, cells)


def null_pushed(ins, j: int) -> bool:
    """Is push ``j`` of ``ins`` the NULL above a callable?"""
    name = ins.name
    if name in ("LOAD_GLOBAL", "LOAD_ATTR", "LOAD_SUPER_ATTR"):
        return bool(ins.arg[0]) and j == 1
    return name == "PUSH_NULL"


def global_slots(ins) -> tuple:
    return (0, 1) if ins.arg[0] else (0, None)


def value_depth(ins) -> int:
    """A load with the NULL bit leaves the NULL on top of its value."""
    if ins.name in ("LOAD_GLOBAL", "LOAD_ATTR", "LOAD_SUPER_ATTR") and ins.arg[0]:
        return 1
    return 0


def hook_site(instrs: list, i: int):
    return i if instrs[i].name in CALLS else None


def positional_args(instrs: list, call: int, self_layout: bool):
    """As 3.11's: a ``CALL`` (``CALL_KW`` passes keywords). Its self-or-NULL slot holds a
    NULL at a call of a plain load (``rewrite`` makes method loads plain)."""
    ins = instrs[call]
    return ins.arg + self_layout if ins.name == "CALL" else None


def callee_below(ins, self_layout: bool) -> int:
    """Slots above the callable just before the call: self_or_null, arguments, names."""
    name = ins.name
    if name == "CALL_FUNCTION_EX":
        return 2 + (ins.arg & 1)
    return ins.arg + (2 if name == "CALL_KW" else 1)


def rewrite(ins, loc):
    """A method load becomes a plain load with a NULL above it."""
    if ins.name in ("LOAD_ATTR", "LOAD_SUPER_ATTR") and ins.arg[0]:
        return [Instr(ins.name, (False,) + tuple(ins.arg[1:]), location=loc),
                Instr("PUSH_NULL", location=loc)]
    return None


def probe_kind(ins, cells: frozenset):
    if is_cell_load(ins, cells):
        return "value"               # the cell, so a new closure's reads find their writer
    if wraps_async_item(ins):
        return None                      # the item itself: the replay passes it on
    return PROBE_KIND.get(ins.name)

