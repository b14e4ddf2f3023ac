"""The text of array adjoints in compiled gradients (``codegen_arrays``' templates): the
adjoint of each operand of ``+ - * /`` on float64 arrays and real scalars, and sums of them
back to a broadcast operand's shape, as inline numpy expressions over generated names.

Reductions call ``np.add.reduce`` (``ndarray.sum`` without its Python-level wrapper), sums of
products ``np.vdot``, and row sums of a ``(m, n)`` adjoint one ``np.dot``; each has a VJP
rule, so second derivatives trace the generated code.
"""
from __future__ import annotations

import numpy as np

__all__ = ["ArrayForms"]

_ADD_REDUCE = np.add.reduce        # one bound method: one generated name


def _f8(value) -> bool:
    return type(value) is np.ndarray and value.dtype == np.float64


class ArrayForms:
    """Mixin of ``codegen_arrays.ArrayTemplates``: uses ``bind`` (a name for an object)."""

    def summed(self, text: str, xshape: tuple, shape: tuple) -> str:
        """``text`` (shaped ``shape``) summed back to the broadcast operand's ``xshape``."""
        lead = len(shape) - len(xshape)
        axes = tuple(range(lead)) + tuple(lead + i for i, m in enumerate(xshape)
                                          if m == 1 and shape[lead + i] != 1)
        if not axes:
            return text
        reduce = self.bind(_ADD_REDUCE, "_reduce")
        if not lead:
            return f"{reduce}({text}, {axes!r}, None, None, True)"
        if len(axes) == lead:
            return f"{reduce}({text}, {axes!r})"
        return f"{reduce}({text}, {axes!r}).reshape({xshape!r})"

    def row_sums(self, kind, g, a, other, vo, shape, negated=False):
        """The adjoint of ``a`` shaped ``(m, 1)`` against a result ``(m, n)`` by one ``dot``:
        ``g @ other`` for a product with a vector ``(n,)``, ``g @ ones`` for a sum (``g @
        -ones`` when ``negated``); None: the general form."""
        if len(shape) != 2 or a.value.shape != (shape[0], 1):
            return None
        if kind == "mul" and not negated and _f8(other.value) \
                and other.value.shape == (shape[1],):
            vec = vo
        elif kind in ("add", "sub"):
            ones = np.full(shape[1], -1.0 if negated else 1.0)
            vec = self.bind(ones, "_minus_ones" if negated else "_ones")
        else:
            return None
        return f"{self.bind(np.dot, '_dot')}({g}, {vec}).reshape({a.value.shape!r})"

    def total(self, text: str) -> str:
        """The sum of every element of the array ``text``."""
        return f"{self.bind(_ADD_REDUCE, '_reduce')}({text}, None)"

    def template_text(self, kind, i, forms, g, b, vx, vy, va, vo, other, n) -> str:
        """The adjoint of operand ``i`` (form 'A': an array of the result's shape, 'S': a
        scalar) of ``x <kind> y``; ``b``: ``g`` is a scalar standing for a filled array."""
        form, full = forms[i], self.bind(np.full, "_full")
        other_a = forms[1 - i] == "A"
        if kind in ("add", "sub"):
            neg = kind == "sub" and i == 1
            if form == "S":
                text = f"{g} * {n}" if b else self.total(g)
            else:
                text = f"{full}({va}.shape, {g})" if b else g
            return f"-({text})" if neg else text
        if kind == "mul":
            if form == "A":
                if b and not other_a:
                    return f"{full}({va}.shape, {g} * {vo})"
                return f"{g} * {vo}"
            return f"{g} * {self.total(vo)}" if b else self.inner(g, vo)   # vo: the result's shape
        if i == 0:                                     # x / y
            if form == "A":
                if b and not other_a:
                    return f"{full}({va}.shape, {g} / {vy})"
                return f"{g} / {vy}"
            return self.total(f"{g} / {vy}")
        if form == "A":
            return f"-{g} * {va} / {vy}"
        return f"-({g} * {self.total(va)}) / {vy}" if b else f"-{self.inner(g, va)} / {vy}"

    def inner(self, g, v) -> str:
        """``sum(g * v)`` for float64 arrays of one shape: one ``vdot`` (no product array)."""
        return f"{self.bind(np.vdot, '_vdot')}({g}, {v})"
