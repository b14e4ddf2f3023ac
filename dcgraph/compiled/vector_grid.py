"""Two-dimensional runs: a nested loop's inner iterations as the columns of ``(n, m)`` arrays.

A run's group (one outer iteration) may hold ``m`` copies of the same ``q`` lines (the inner
loop, unrolled): ``vector_blocks.inner_blocks`` finds them from the lines' templates. ``GridRun`` writes
each of those ``q`` lines once, over an ``(n, m)`` array (row ``k``: outer group ``k``,
column ``c``: inner copy ``c``), instead of ``m`` times over ``n``-vectors. Operands:

* a value of an outer line (before the inner block, same group): its vector as a column
  ``w[:, None]`` (broadcast over the copies);
* a value of an inner line of the same copy: that line's array;
* an inner value read by an outer line after the block: column ``c`` of its array;
* values from before the run: one scalar, a row of ``m`` (the same in every group), a
  column of ``n`` (the same in every copy), or the whole table (packed, guarded as in ``Run``);
* literals likewise (bound arrays);
* items of rows an outer line read (``y[i][j]``): one 2-D read of the rows' first items
  (``itemgetter``), type-guarded as one flat list.

Loop-carried sums are ``vector_grid_sums``'. Anything else that crosses copies or groups, or
an operand of no known class, raises ``NotVector`` and the caller writes the one-dimensional
``Run``. Values are found by the definitions that reach each read in the scalar code's order
(``reaching``: the code reuses names), never by name alone.
"""
from __future__ import annotations

import ast
import operator

import numpy as np

from .vector_grid_sums import GridSums
from .vector_run import Run
from .vector_sums import FLOATS, NotVector, literal as _literal, node_id

__all__ = ["GridRun"]

class GridRun(GridSums, Run):
    """A run whose groups hold an inner block ``(j0, q, m)`` (see the module). Line ``j`` of
    the collapsed group: outer lines ``j < j0``, the inner lines ``j0 ... j0 + q - 1``, then
    outer lines after the block."""

    def __init__(self, ctx, start: int, period: int, groups: int, number: int, block):
        self.j0, self.q, self.m = block
        self.shapes: dict = {}       # line -> "scalar" | "row" | "col" | "full" | "vector"
        self._node_shape: dict = {}
        self._leaf = "scalar"
        self._reaching = None
        self._local: dict = {}       # (line, operand) -> (line, view) ``local`` found
        self.summed: set = set()     # chains accumulated
        super().__init__(ctx, start, period, groups, number)

    # -- layout ----------------------------------------------------------------------------
    def layout(self) -> None:
        ctx, s, p, n = self.ctx, self.s, self.p, self.n
        j0, q, m = self.j0, self.q, self.m
        self.orig = list(range(j0)) + list(range(j0, j0 + q)) \
            + list(range(j0 + m * q, p))                   # collapsed line -> group line
        self.ops, self.forms = [], []
        for j, g in enumerate(self.orig):
            if self.inner(j):
                self.ops.append([ctx.operands_of(s + k * p + g + c * q)
                                 for k in range(n) for c in range(m)])
            else:
                self.ops.append([ctx.operands_of(s + k * p + g) for k in range(n)])
            self.forms.append(ctx.form_of(s + g))

    def inner(self, j: int) -> bool:
        return self.j0 <= j < self.j0 + self.q

    def size(self, j: int) -> int:
        return self.n * self.m if self.inner(j) else self.n

    def shape_text(self, j: int) -> str:
        return f"({self.n}, {self.m})" if self.inner(j) else str(self.n)

    def flat(self, j: int, w: str) -> str:
        if not self.inner(j):
            return w
        if self.shapes.get(j) == "full":
            return f"{w}.ravel()"
        return f"_vx_bcast({w}, ({self.n}, {self.m})).ravel()"

    def order(self):
        lines = list(self.targets)
        for k in range(self.n):
            yield from self.events_of_group(k, lines)

    # -- operands --------------------------------------------------------------------------
    def local(self, j: int, seq: list):
        """The line before ``j`` in the group whose values operand ``seq`` of line ``j``
        reads in every group and copy, by the definitions that reach each read in the
        scalar code's order (names are reused): an inner line's array, an outer line's
        column (``view``: ``[:, None]``), or one copy of an inner line (``[:, c]``)."""
        self.view = ""
        for q in range(1 if j in self.targets else 0, len(self.ops[j][0])):
            if self.column(j, f"_Po{q}") == seq:
                known = self._local.get((j, q))
                if known is None:
                    known = self._local[(j, q)] = self.source(j, self.reaching()[(j, q)])
                i, c = known
                if i is not None:
                    self.view = self.view_of(j, i, c)
                return i
        return None

    def source(self, j: int, found: list) -> tuple:
        """``(line, copy)`` all the events ``found`` of line ``j`` read, in their own copy or
        group (copy: which copy an outer line after the block reads), or ``(None, None)``."""
        if not found or found[0] is None:
            return None, None
        i = found[0][0]
        if any(d is None or d[0] != i for d in found):
            return None, None
        if any(self.crosses(d, (j, e)) for e, d in enumerate(found)):
            return None, None
        if self.inner(i) and not self.inner(j):
            copies = {d[1] % self.m for d in found}
            return (i, copies.pop()) if len(copies) == 1 else (None, None)
        return i, None

    def view_of(self, j: int, i: int, c) -> str:
        """How line ``j`` reads line ``i``'s array (by its shape, once known)."""
        ji, ii = self.inner(j), self.inner(i)
        shape = self.shapes.get(i, "full" if ii else "vector")     # a sum's: not yet known
        if ji and not ii:
            return "[:, None]" if shape == "vector" else ""
        if ii and not ji:
            return {"full": f"[:, {c}]", "row": f"[{c}]", "col": "[:, 0]"}.get(shape, "")
        return ""

    def reaching(self) -> dict:
        """``(line, operand) -> [(line, index) of the assignment it reads, or None: from
        before the run]`` for each of the line's events, in the scalar code's order."""
        if self._reaching is None:
            current, out, slots = {}, {}, []
            get, all_ops, targets = current.get, self.ops, self.targets
            for j in range(len(self.forms)):     # per line: its lists of reads, by operand
                skip = 1 if j in targets else 0
                lists = [out.setdefault((j, q), []) for q in range(skip, len(all_ops[j][0]))]
                slots.append((skip, lists))
            lines = list(range(len(self.forms)))
            for k in range(self.n):
                for j, idx in self.events_of_group(k, lines):
                    ops = all_ops[j][idx]
                    skip, lists = slots[j]
                    for q, found in enumerate(lists, skip):
                        found.append(get(ops[q]))
                    if skip:
                        current[ops[0]] = (j, idx)
            self._reaching = out
        return self._reaching

    def events_of_group(self, k: int, lines: list):
        j0, q, m = self.j0, self.q, self.m
        for j in lines:
            if j < j0:
                yield j, k
        for c in range(m):
            for j in lines:
                if j0 <= j < j0 + q:
                    yield j, k * m + c
        for j in lines:
            if j >= j0 + q:
                yield j, k

    def pack(self, j: int, ph: str, seq: list):
        if not self.inner(j):
            return super().pack(j, ph, seq)
        n, m = self.n, self.m
        row = seq[:m]
        if seq == row * n:
            self._leaf = "row"
            return super().pack(j, ph, row)
        col = seq[::m]
        if seq == [x for x in col for _ in range(m)]:
            self._leaf = "col"
            text, _ = super().pack(j, ph, col)
            return f"{text}[:, None]", True
        self._leaf = "full"
        gathered = self.gather(j, seq)
        if gathered is not None:
            return gathered, True
        text, _ = super().pack(j, ph, seq)
        return f"{text}.reshape({n}, {m})", True

    def gather(self, j: int, seq: list):
        """``seq`` (``n * m`` values from before the run) taken from one earlier run's vector
        and a few single floats in one indexing by a bound ``(n, m)`` array of positions,
        or None when most of them are not elements of one vector."""
        key = tuple(seq)
        if key in self.packed:
            return self.packed[key]
        vectors = self.ctx.vectors
        refs = [vectors.get(x) for x in seq]
        counts = {}
        for ref in refs:
            if ref is not None:
                counts[ref[0]] = counts.get(ref[0], 0) + 1
        if not counts:
            return None
        array = max(counts, key=counts.get)
        if 2 * counts[array] < len(seq):
            return None
        extras = list(dict.fromkeys(x for x, ref in zip(seq, refs)
                                    if ref is None or ref[0] != array))
        for x in extras:
            if self.ctx.recorded_type(x) not in FLOATS:
                return None
        for x in extras:
            self.guard_type(x, node_id(x))
        e = len(extras)
        index = np.array([ref[1] + e if ref is not None and ref[0] == array
                          else extras.index(x) for x, ref in zip(seq, refs)])
        where = self.ctx.bind(index.reshape(self.n, self.m), f"_vk{self.r}_{j}_ix")
        source = f"_vx_cat(([{', '.join(extras)}], {array}))" if extras else array
        name = f"_q{self.r}_{len(self.packed)}"
        self.body.append(f"{name} = {source}[{where}]")
        self.packed[key] = name
        return name

    def literal(self, j: int, ph: str):
        if not self.inner(j):
            return super().literal(j, ph)
        seq = self.column(j, ph)
        if seq.count(seq[0]) == len(seq):
            return seq[0], False
        n, m = self.n, self.m
        values = [float(_literal(x)) for x in seq]
        if any(abs(v) >= 1 << 53 and type(_literal(x)) is int for v, x in zip(values, seq)):
            raise NotVector("an int literal beyond float precision")
        array = np.array(values).reshape(n, m)
        if (array == array[:1]).all() and seq == seq[:m] * n:
            self._leaf, array = "row", array[0].copy()
        elif seq == [x for x in seq[::m] for _ in range(m)]:
            self._leaf, array = "col", array[:, :1].copy()
        else:
            self._leaf = "full"
        return self.ctx.bind(array, f"_vk{self.r}_{j}_{ph[3:]}"), True

    def text(self, j: int, node):
        """As ``Run.text``, recording the shape of each inner expression."""
        if not self.inner(j):
            return super().text(j, node)
        t = type(node)
        if t is ast.Name:
            self._leaf = "scalar"
            out = super().text(j, node)
            if out[1] and self._leaf == "scalar":    # an inner line's own array
                i = self.local(j, self.column(j, node.id))
                self._leaf = self.shapes.get(i, "full") if i is not None else "full"
                if self._leaf == "vector":
                    self._leaf = "col"
            self._node_shape[id(node)] = self._leaf if out[1] else "scalar"
            return out
        out = super().text(j, node)
        kids = [node.operand] if t is ast.UnaryOp else [node.left, node.right] \
            if t is ast.BinOp else [node.args[0]]
        self._node_shape[id(node)] = _combine(self._node_shape[id(k)] for k in kids)
        return out

    def expression(self, j: int) -> None:
        super().expression(j)
        if self.inner(j):
            self.shapes[j] = self._node_shape[id(self.forms[j].tree)] if self.vec[j][1] \
                else "scalar"
        else:
            self.shapes[j] = "vector" if self.vec[j][1] else "scalar"

    def read(self, j: int) -> None:
        if not self.inner(j):
            super().read(j)
            self.shapes[j] = "vector"
            return
        n, m = self.n, self.m
        src_ph, key_ph = self.forms[j].slots
        src, keys = self.column(j, src_ph), self.column(j, key_ph)
        if not all(x[0].isdigit() for x in keys):
            raise NotVector("a read at a computed position")
        types = {*map(self.ctx.recorded_type, self.targets[j])}
        t = types.pop() if len(types) == 1 else None
        if t not in FLOATS:
            raise NotVector("an inner read of something else than floats")
        i = self.local(j, src)
        row = keys[:m]
        code = self.read_codes.get(j, self.code_for(j))
        if i is None:
            self.flat_read(j, src, keys, t, code)
            return
        if self.vec.get(i, (0, 0, ""))[2] != "objects" or keys != row * n:
            raise NotVector("an inner read that is not the items of outer rows")
        r, w, rows = f"_r{self.r}_{j}", f"_w{self.r}_{j}", self.vec[i][0]
        if list(map(_literal, row)) == list(range(m)) and self.whole_rows(i):
            self.body.append(f"if not _vx_lengths({rows}, {m}): raise _GF({code})")
            self.body.append(f"{r} = list(_vx_chain({rows}))")     # rows of m items each
        else:
            items = list(map(_literal, row))
            if min(items) < 0:
                raise NotVector("an inner read at a negative position")
            getter = self.ctx.bind(operator.itemgetter(*items), f"_vk_items{self.r}_{j}")
            self.body.append(f"if not _vx_longer({rows}, {max(items)}): raise _GF({code})")
            self.body.append(f"{r} = list(_vx_chain(map({getter}, {rows})))")
        self.body.append(f"if not _vx_alltype({r}, {self.ctx.bind(t, '_vk_t')}): "
                         f"raise _GF({code})")
        self.body.append(f"{w} = _vx_array({r}, float).reshape({n}, {m})")
        self.vec[j] = (w, True, "floats", t)
        self.shapes[j] = "full"
        self.out[j] = ("list", r)

    def flat_read(self, j: int, src: list, keys: list, t, code: int) -> None:
        """Items of one list from before the run at positions in progression: the same
        ``m`` in every group (a row), or in progression through all groups and copies."""
        n, m = self.n, self.m
        if any(x != src[0] for x in src) or src[0] in self.defined \
                or self.ctx.recorded_type(src[0]) not in (list, tuple):
            raise NotVector("an inner read from varying containers")
        row = keys == keys[:m] * n
        pos = [_literal(x) for x in (keys[:m] if row else keys)]
        d = pos[1] - pos[0]
        if d == 0 or min(pos) < 0 or any(p != pos[0] + k * d for k, p in enumerate(pos)):
            raise NotVector("inner reads at positions not in progression")
        self.guard_type(src[0], code)
        r, w = f"_r{self.r}_{j}", f"_w{self.r}_{j}"
        stop = pos[0] + len(pos) * d
        self.body.append(f"{r} = {src[0]}[{pos[0]}:{'' if stop < 0 else stop}:{d}]")
        self.body.append(f"if len({r}) != {len(pos)} or not _vx_alltype({r}, "
                         f"{self.ctx.bind(t, '_vk_t')}): raise _GF({code})")
        if row:
            self.body.append(f"{w} = _vx_array({r}, float)")
            self.out[j] = ("list", f"({r} * {n})")
        else:
            self.body.append(f"{w} = _vx_array({r}, float).reshape({n}, {m})")
            self.out[j] = ("list", r)
        self.vec[j] = (w, True, "floats", t)
        self.shapes[j] = "row" if row else "full"

    def whole_rows(self, i: int) -> bool:
        """Were the rows outer line ``i`` read all ``m`` items long when recorded?"""
        nodes = self.ctx.nodes
        for x in self.targets[i]:
            k = node_id(x)
            value = nodes[k].value if k < len(nodes) and nodes[k] is not None else None
            if type(value) not in (list, tuple) or len(value) != self.m:
                return False
        return True

    def register(self) -> None:
        """Offer the outer vectors and the full inner arrays (flat) to later runs."""
        assigned = self.ctx.assigned
        for j, (w, vector, kind, _) in self.vec.items():
            if vector and kind == "floats" and self.shapes.get(j) in ("vector", "full"):
                flat = f"{w}.ravel()" if self.inner(j) else w
                for k, x in enumerate(self.targets[j]):
                    if assigned.get(x) == 1:
                        self.ctx.vectors[x] = (flat, k)

def _combine(shapes) -> str:
    found = set(shapes)
    if "full" in found or {"row", "col"} <= found:
        return "full"
    for shape in ("row", "col"):
        if shape in found:
            return shape
    return "scalar"
