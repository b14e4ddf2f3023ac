"""Array templates of the compiled backward pass (``codegen``): ``+ - * /`` on float64 arrays
and real scalars pulled back by inline numpy expressions instead of rule calls (no
un-broadcasting when an operand has the result's shape, one reduction for a scalar operand),
and the adjoint of a full ``sum(x)`` kept as a scalar that stands for a filled array while
only these templates read it (``x`` used once, by the sum: ``sum(r * r)`` pulls back as
``2.0 * c * r``, with no filled array made).

``codegen_array_forms`` writes the text of each operand's adjoint. The shapes and dtypes the
templates rely on are guarded once, after the forward code (a guard failing there is a guard
like any other: nothing observable ran). A node's shape and
dtype need no guard of their own when it is an elementwise operation whose array inputs are
float64 arrays whose shapes are known and whose other inputs are real scalars or ints.
"""
from __future__ import annotations

import operator

import numpy as np

from ..compiled.expressions import tuple_item
from ..compiled.support import symbol, unalias
from ..tape import Constant, PrimitiveCall
from ..tracer import ops
from .codegen_array_forms import ArrayForms

__all__ = ["ArrayTemplates", "F8"]

F8 = np.dtype(np.float64)
_BINARY = {operator.add: "add", np.add: "add", operator.sub: "sub", np.subtract: "sub",
           operator.mul: "mul", np.multiply: "mul", operator.truediv: "div",
           np.divide: "div"}
_UNARY = dict.fromkeys([operator.neg, np.negative, np.exp, np.log, np.sqrt, np.log1p,
                        np.expm1, np.tanh, np.sin, np.cos, np.square], True)
_PRODUCTS = dict.fromkeys([operator.matmul, np.matmul, np.dot], True)
_UNARY_FORMS = {np.exp: "{g} * {ans}", np.log: "{g} / {x}", np.negative: "-{g}",
                operator.neg: "-{g}", np.square: "(2.0 * {g}) * {x}"}
_POWERS = dict.fromkeys([operator.pow, operator.ipow], True)
_SUMS = dict.fromkeys([np.sum, np.ndarray.sum], True)
_NUMBERS = (float, np.float64, int)
# the callables a template may take when the value is no array (``array_template`` needs one)
_SCALAR_TEMPLATED = dict.fromkeys([*_SUMS, *_PRODUCTS, *_UNARY_FORMS, *_POWERS], True)


def _f8(value) -> bool:
    """A float64 array (native byte order; unpickled arrays have equal, other dtype objects)."""
    return type(value) is np.ndarray and value.dtype == F8


class ArrayTemplates(ArrayForms):
    """Mixin of ``codegen.GradientCode``: its ``add``, ``emit``, ``mark``, ``v``, ``bind``,
    ``wants``, ``state`` are used; ``uses`` counts each node's consumers on the path."""

    def setup_arrays(self, tape) -> None:
        self.known_shapes: set = set()     # nodes whose recorded shape and dtype hold
        self.shape_guards: list = []       # nodes guarded after the forward code
        self.bcast: set = set()            # nodes whose adjoint is a scalar standing for
                                           # a filled array
        self.dense: set = set()            # nodes whose adjoint is an ndarray (or None)
        self.fresh: set = set()            # ... an array made in the call, shared with nothing
        self._uses = None

    @property
    def uses(self) -> dict:
        """Node -> how many nodes of the path take it as an input (counted when first asked:
        only the sum template does)."""
        if self._uses is None:
            uses: dict = {}
            for node in self.tape.walk():
                for x in node.inputs:
                    uses[x] = uses.get(x, 0) + 1
            tape = self.tape
            ret = tape.returned.inputs[0] if tape.returned is not None else None
            uses[ret] = uses.get(ret, 0) + 1
            self._uses = uses
        return self._uses

    # -- what is known about shapes ------------------------------------------------------------
    def know_shape(self, x) -> None:
        """Make sure ``x`` (a float64 array) has its recorded shape and dtype at run time."""
        u = unalias(x)
        while type(u) is PrimitiveCall and tuple_item(u) is not None:
            self.implied.add(u)               # an item of a tuple display: the item's
            self.known_shapes.add(u)
            u = unalias(tuple_item(u))
        if u in self.known_shapes:
            return
        self.known_shapes.add(u)
        if type(u) is PrimitiveCall and not u.kwargs and u.fn_node is None and _f8(u.value) \
                and (symbol(_BINARY, u.fn) is not None or symbol(_UNARY, u.fn) is not None) \
                and all(_f8(a.value) or type(a.value) in _NUMBERS for a in u.args):
            for a in u.args:
                if _f8(a.value):
                    self.know_shape(a)
                elif not (type(a) is Constant and a.tape is None):
                    self.mark(a)
            self.implied.add(u)           # its type too: no guard of its own
            return
        if type(u) is PrimitiveCall and u.fn is operator.getitem and len(u.args) == 2 \
                and not u.kwargs and u.fn_node is None and _f8(u.value) \
                and _f8(u.args[0].value) and _literal(u.args[1]) \
                and self._whole_or_slices(u.args[1].value):
            self.know_shape(u.args[0])    # a literal slice of a known array
            self.implied.add(u)
            return
        self.shape_guards.append(u)

    def imply_types(self) -> None:
        """Leave out the type guards of nodes whose types the other guards imply: reads of
        a known array at literal positions, sums of known arrays, and ufuncs and arithmetic
        on float64 scalars of known types (their result is a float64 scalar)."""
        known, ids = self.known_shapes, self.ids
        grew = True
        while grew:                           # a monotone fixpoint. In execution order what
            size = len(self.relevant)         # a node's test reads (its inputs' nodes, the
            todo = [u for u in self.relevant if type(u) is PrimitiveCall   # items of tuples)
                    and u not in self.implied and not u.kwargs and u.fn_node is None]
            todo.sort(key=lambda u: ids.get(u, -1))      # is decided before it: one pass
            for u in todo:                    # suffices unless a test made more nodes
                if self._implied_type(u, known):          # relevant
                    self.implied.add(u)
            grew = len(self.relevant) != size

    def _implied_type(self, u, known) -> bool:
        fn, args, value = u.fn, u.args, u.value
        item = tuple_item(u)
        if item is not None:                  # the item's type, guarded or implied
            item = unalias(item)
            if type(item) is PrimitiveCall and item not in self.relevant:
                self.relevant.add(item)
            return type(item) is PrimitiveCall or item in known
        if fn is operator.getitem and len(args) == 2:
            a = unalias(args[0])
            return a in known and _f8(a.value) and _literal(args[1]) and (
                (type(value) is np.float64 and type(args[1].value) is int and a.value.ndim == 1)
                or (_f8(value) and type(args[1].value) in (slice, tuple)
                    and (u in known or self._whole_or_slices(args[1].value))))
        if type(value) is not np.float64:
            return False
        if symbol(_SUMS, fn) is not None:
            return len(args) == 1 and unalias(args[0]) in known and _f8(args[0].value)
        if symbol(_BINARY, fn) is None and symbol(_UNARY, fn) is None:
            return False
        for x in args:
            t, ux = type(x.value), unalias(x)
            if t not in _NUMBERS or t is bool:
                return False
            if not ((type(x) is Constant and x.tape is None) or ux in self.implied
                    or (ux in self.relevant and type(ux) is PrimitiveCall)):
                return False
        return True

    @staticmethod
    def _whole_or_slices(key) -> bool:
        keys = key if type(key) is tuple else (key,)
        return all(k is None or type(k) is slice for k in keys)

    def shape_guard_lines(self) -> list:
        """The guards of ``shape_guards`` (lines run after the forward code)."""
        if not self.shape_guards:
            return []
        nd, f8 = self.bind(np.ndarray, "_ndarray"), self.bind(F8, "_F8")
        out = []
        for u in self.shape_guards:
            v = self.v(u)
            out.append(f"if _type({v}) is not {nd} or {v}.shape != {u.value.shape!r} or "
                       f"({v}.dtype is not {f8} and {v}.dtype != {f8}): "
                       f"raise _GF({self.ids.get(u, 0)})")
        return out

    # -- templates ---------------------------------------------------------------------------
    @staticmethod
    def may_template(node) -> bool:
        """Can one of the templates below take ``node``? (False: none would.)"""
        return type(node.value) is np.ndarray or symbol(_SCALAR_TEMPLATED, node.fn) is not None

    def array_template(self, node, g) -> bool:
        """Emit the pull-back of ``node`` as inline numpy when a template fits (True)."""
        fn, args, ans = node.fn, node.args, node.value
        if node.kwargs or node.fn_node is not None or not _f8(ans):
            return False
        kind = symbol(_BINARY, fn) if len(args) == 2 else None
        if kind is None:
            return False
        x, y = args
        shape = ans.shape
        forms = []
        for a in args:
            if _f8(a.value) and a.value.shape == shape:
                forms.append("A")
            elif _f8(a.value) and a.value.ndim <= ans.ndim:
                forms.append("B")                      # broadcast: summed back
            elif type(a.value) in _NUMBERS:
                forms.append("S")
            else:
                return False
        if forms == ["S", "S"]:
            return False
        b = node in self.bcast
        if b and "B" in forms:
            self.materialize(node, g)
            b = False
        if not b and node not in self.dense:
            self.emit(f"if _type({g}) is _Sparse: {g} = _dense({self.v(node)}.shape, {g}, "
                      f"{self.v(node)}.dtype)")
        targets = [(i, a) for i, a in enumerate(args) if self.wants(a)]
        if not targets:
            return True
        self.mark(node)
        for a, form in zip(args, forms):
            if form != "S":
                self.know_shape(a)
            elif not (type(a) is Constant and a.tape is None):
                self.mark(a)
        vx, vy, va = self.v(x), self.v(y), self.v(node)
        if kind == "mul" and unalias(x) is unalias(y) and x is y:
            self.add(x, f"(2.0 * {g}) * {vx}" if b else f"2.0 * ({g} * {vx})", "array")
            return True
        n = ans.size
        for i, a in targets:
            other, vo = (y, vy) if i == 0 else (x, vx)
            if forms[i] == "B":                  # x - y: y's adjoint negated once summed
                k2 = "add" if kind == "sub" and i == 1 else kind
                text = self.row_sums(k2, g, a, other, vo, shape, k2 != kind)
                if text is not None:
                    self.add(a, text, "array")
                    continue
                text = self.template_text(k2, i, ["A", forms[1 - i]] if i == 0 else
                                          [forms[0], "A"], g, b, vx, vy, va, vo, other, n)
                text = self.summed(text, a.value.shape, shape)
                self.add(a, text if k2 == kind else f"-({text})", "array")
                continue
            text = self.template_text(kind, i, forms, g, b, vx, vy, va, vo, other, n)
            self.add(a, text, "array" if forms[i] == "A" else "scalar")
        return True

    def matmul_template(self, node, g) -> bool:
        """``x @ y`` of two float64 vectors of one shape: ``g * y`` and ``g * x``; of a float64
        matrix and vector: ``g @ x`` and ``outer(g, y)``."""
        args = node.args
        if symbol(_PRODUCTS, node.fn) is None or len(args) != 2 or node.kwargs \
                or node.fn_node is not None:
            return False
        x, y = args
        if _f8(node.value) and node.value.ndim == 1 and _f8(x.value) and x.value.ndim == 2 \
                and _f8(y.value) and y.value.ndim == 1:
            if node not in self.dense:
                self.emit(f"if _type({g}) is _Sparse: {g} = _dense({self.v(node)}.shape, {g}, "
                          f"{self.v(node)}.dtype)")
            self.mark(node)
            self.know_shape(x)
            self.know_shape(y)
            self.add(y, f"{g} @ {self.v(x)}", "array")
            self.add(x, f"{self.bind(np.outer)}({g}, {self.v(y)})", "array")
            return True
        if type(node.value) is not np.float64:
            return False
        if not (_f8(x.value) and _f8(y.value) and x.value.ndim == 1
                and x.value.shape == y.value.shape):
            return False
        self.mark(node)
        for a, other in ((x, y), (y, x)):
            if self.wants(a):
                self.know_shape(a)
                self.know_shape(other)
                vo = self.v(other)
                self.add(a, vo if g == "1.0" else f"{g} * {vo}", "array")
        return True

    def unary_template(self, node, g) -> bool:
        """``exp``, ``log``, ``square``, negation of a real scalar or a float64 array."""
        form = symbol(_UNARY_FORMS, node.fn)
        args = node.args
        if form is None or len(args) != 1 or node.kwargs or node.fn_node is not None:
            return False
        x, ans = args[0], node.value
        scalar = type(x.value) in (float, np.float64) and type(ans) is np.float64
        if not (scalar or (_f8(ans) and _f8(x.value) and x.value.shape == ans.shape)):
            return False
        b = node in self.bcast
        if not scalar and not b and node not in self.dense:
            self.emit(f"if _type({g}) is _Sparse: {g} = _dense({self.v(node)}.shape, {g}, "
                      f"{self.v(node)}.dtype)")
        if not self.wants(x):
            return True
        if b and form == "-{g}":
            self.materialize(node, g)
        self.mark(node)
        self.mark(x)
        self.add(x, form.format(g=g, x=self.v(x), ans=self.v(node)),
                 "scalar" if scalar else "array")
        return True

    def power_template(self, node, g) -> bool:
        """``x ** n`` of a real scalar ``x`` and a literal int ``n >= 1``: ``g * n * x ** (n
        - 1)``, as the rule computes it."""
        args = node.args
        if symbol(_POWERS, node.fn) is None or len(args) != 2 or node.kwargs \
                or node.fn_node is not None:
            return False
        x, y = args
        if not (type(x.value) in (float, np.float64) and type(node.value) is type(x.value)
                and type(y) is Constant and y.tape is None and type(y.value) is int
                and y.value >= 1):
            return False
        if self.wants(x):
            self.mark(x)
            self.mark(node)
            n, vx = y.value, self.v(x)
            text = g if n == 1 else f"{g} * {n} * {vx}" if n == 2 else \
                f"{g} * {n} * {vx} ** {n - 1}"
            self.add(x, text, "scalar")
        return True

    def sum_template(self, node, g) -> bool:
        """``sum(x)`` of a whole float64 array: the adjoint of ``x`` is ``g`` everywhere;
        kept as the scalar when only a template reads it (``x`` used by the sum only: an
        arithmetic operation, or ``exp``/``log``/``square``, whose forms take a scalar ``g``)."""
        if symbol(_SUMS, node.fn) is None or len(node.args) != 1 or node.kwargs \
                or node.fn_node is not None or type(node.value) is not np.float64:
            return False
        x = node.args[0]
        if not _f8(x.value) or not self.wants(x):
            return True if _f8(x.value) else False
        self.mark(node)
        self.know_shape(x)
        if type(x) is PrimitiveCall and self.uses.get(x) == 1 and x not in self.wrt \
                and (symbol(_BINARY, x.fn) is not None
                     or symbol(_UNARY_FORMS, x.fn) not in (None, "-{g}")) \
                and self.state.get(x, 0) == 0 and not self.cond:
            self.add(x, g, "array")
            self.bcast.add(x)
            return True
        self.add(x, f"{self.bind(np.full, '_full')}({self.v(x)}.shape, {g})", "array")
        return True

    def reshaping_read(self, node, a, key, g) -> bool:
        """``a[:, None]``, ``a[None]``, ``a[...]`` (every element, in order; the key built
        from literals): the adjoint of ``a`` is ``g`` reshaped."""
        if not (_f8(a.value) and _f8(node.value) and node.value.size == a.value.size
                and _whole(key.value) and _literal(key)):
            return False
        if node not in self.dense:
            self.emit(f"if _type({g}) is _Sparse: {g} = _dense({self.v(node)}.shape, {g})")
        self.know_shape(a)
        self.mark(node)
        st = self.state.get(a, 0)
        self.add(a, f"{g}.reshape({a.value.shape!r})", "array")
        if st == 0:
            self.fresh.discard(a)          # a view of g
        return True

    def materialize(self, node, g) -> None:
        """A scalar standing for a filled array read by something else than a template."""
        if node in self.bcast:
            self.bcast.discard(node)
            self.emit(f"{g} = {self.bind(np.full, '_full')}({self.v(node)}.shape, {g})")


def _whole(key) -> bool:
    """Does this index select every element, in order (full slices, None, Ellipsis)?"""
    keys = key if type(key) is tuple else (key,)
    return all(k is None or k is Ellipsis or (type(k) is slice and k == slice(None))
               for k in keys)


def _literal(node, depth: int = 0) -> bool:
    """Is ``node``'s value built from literal constants only (the same on every call)?"""
    if type(node) is Constant:
        return node.tape is None
    return type(node) is PrimitiveCall and depth < 3 and node.fn in (slice, ops.build_tuple) \
        and not node.kwargs and node.fn_node is None \
        and all(_literal(x, depth + 1) for x in node.args)
