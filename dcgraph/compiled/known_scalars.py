"""Scalars whose type, or int value, the compiled forward code knows without a guard.

A node's value is a *known scalar* (``known_scalars``) when it is a real or integer scalar
(``FAST``) of the recorded type and either a literal or a call already known. A call's type is
*stable* (``stable_type``) when its inputs' known types fix it: arithmetic, int literal powers
and ``math`` functions on known scalars, ``range`` steps, tuple and list displays, slices. An
int is *fixed* when compiling (``fixed_int``): a literal, a step of ``iter(range(...))`` over
ints (``int_range``, ``range_step``) or int arithmetic on fixed ints (``folds``); its value is
then the recorded one. ``steps`` (call -> its known int) and ``typed`` (calls an inline form
gave with the recorded type) are the ``PathCode``'s tables; ``known`` is the set of calls
written so far whose type is known.
"""
from __future__ import annotations

import operator
import types

import numpy as np

from ..tape import Constant, PrimitiveCall
from ..tracer import ops
from .expressions import tuple_item
from .support import symbol, unalias

__all__ = ["FAST", "STABLE_OPS", "known_scalars", "stable_type", "range_step", "int_range",
           "folds", "fixed_int"]

FAST = frozenset({float, int, bool, np.float64, np.float32, np.float16, np.longdouble})
STABLE_OPS = dict.fromkeys([operator.add, operator.sub, operator.mul, operator.truediv,
                            operator.floordiv, operator.mod, operator.neg, operator.pos,
                            operator.abs, operator.iadd, operator.isub, operator.imul,
                            operator.itruediv, operator.ifloordiv, operator.imod], True)


def known_scalars(nodes, known) -> bool:
    """Are these real or integer scalars of the recorded type (unpacked items: as theirs)?"""
    for x in nodes:
        if type(x.value) not in FAST:
            return False
        u = x if type(x) is PrimitiveCall else unalias(x)
        while type(u) is PrimitiveCall and u not in known:
            item = tuple_item(u)              # unpacking: the item's value itself
            if item is None:
                return False
            u = item if type(item) is PrimitiveCall else unalias(item)
        if type(u) is not Constant and u not in known:
            return False
    return True


def stable_type(node, known, typed, steps) -> bool:
    """Is the type of this call's value fixed by its inputs' known types? (Arithmetic, int
    literal powers and ``math`` functions on real and integer scalars, ``range`` steps.)"""
    fn = node.fn
    if node in typed:
        return True
    if fn is ops.next_item:
        return node in steps or range_step(node)
    if (fn is ops.build_tuple or fn is ops.build_list or fn is slice) and not node.kwargs \
            and node.fn_node is None:
        return True                   # a tuple or list display, a slice: always that type
    if node.kwargs or node.fn_node is not None or not known_scalars(node.args, known):
        return False
    if (fn is operator.pow or fn is operator.ipow) and len(node.args) == 2:
        e = node.args[1]                # ``x ** 2``: a real's integer power is real
        return type(e) is Constant and e.tape is None and type(e.value) is int
    return symbol(STABLE_OPS, fn) is not None or (
        type(fn) is types.BuiltinFunctionType and getattr(fn, "__module__", "") == "math")


def range_step(node) -> bool:
    """Is ``node`` (a ``next_item``) a step of ``iter(range(...))``?"""
    it = unalias(node.args[0])
    return type(it) is PrimitiveCall and it.fn is iter and len(it.args) == 1 and \
        type(it.args[0]) is PrimitiveCall and it.args[0].fn is range and \
        type(it.value).__name__ == "range_iterator"


def int_range(node) -> bool:
    """Is ``node`` (a ``range_step``) a step of ``iter(range(...))`` over ints? Its steps are
    then known once the bounds are (constants, or guarded equal to the recorded ones), and the
    loop's exit needs no test: the loop count is part of the path."""
    rng = unalias(node.args[0]).args[0]
    return all(type(x.value) is int for x in rng.args) and not rng.kwargs


def folds(node, steps) -> bool:
    """Is ``node`` int arithmetic on ints known when compiling? (Its value: the recorded.)"""
    return not node.kwargs and node.fn_node is None and \
        symbol(STABLE_OPS, node.fn) is not None and all(fixed_int(x, steps) for x in node.args)


def fixed_int(node, steps) -> bool:
    """Is ``node`` an int known when compiling (a literal, a folded range step or result)?"""
    return type(node.value) is int and (
        (type(node) is Constant and node.tape is None) or unalias(node) in steps)
