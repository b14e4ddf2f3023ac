"""One run of isomorphic groups written as array code (``vectorise`` finds the runs).

``Run(ctx, start, period, groups, number)`` analyses units ``start + k * period + j`` (group
``k``, line ``j``) and writes ``lines``, or raises ``NotVector`` when some operand or line
fits none of the classes ``vectorise`` lists. ``unpack(wanted)`` gives the lines that set the
run's variables later code reads (``wanted(name)``), from its vectors, with recorded types.
Names the code defines: ``_w<run>_<line>`` (a line's vector, or its value when the same in
every group), ``_r..`` (a read's list), ``_a..`` (a chain's partial sums), ``_t..``/``_d..``
(terms, divisors); ``_vk..`` are bound constants.
"""
from __future__ import annotations

import ast
import operator

import numpy as np

from .vector_forms import FUNCTIONS, agrees, binary_symbol, unary_symbol
from .vector_sums import FLOATS as _FLOATS, NotVector, Sums
from .vector_sums import literal as _literal, node_id as _node_id

__all__ = ["Run", "NotVector"]

_INT_EXACT = 1 << 53
_FIRST = operator.itemgetter(0)


class Run(Sums):
    """A vectorised run (see the module)."""

    def __init__(self, ctx, start: int, period: int, groups: int, number: int):
        self.ctx, self.s, self.p, self.n, self.r = ctx, start, period, groups, number
        self.layout()
        self.targets = {j: [o[0] for o in self.ops[j]] for j, f in enumerate(self.forms)
                        if f.kind in ("expr", "read")}
        self.defined = {name for names in self.targets.values() for name in names}
        self.first: dict = {}        # a line's first target -> the lines with it
        for j, names in self.targets.items():
            self.first.setdefault(names[0], []).append(j)
        self.head, self.body = [], []
        self.vec: dict = {}          # line -> (text, is_vector, kind, element type)
        self.out: dict = {}          # line -> how to read group k's value: (kind, text, ...)
        self.guarded: set = set()
        self.packed: dict = {}       # operand names (a tuple) -> the array holding them
        self.read_codes: dict = {}
        self._code = None
        ctx.runtime()
        self.chains = self.find_chains()
        self.prepare_guards()
        for j, f in enumerate(self.forms):
            if f.kind == "expr" and j not in self.chain_of:
                self.expression(j)
            elif f.kind == "read":
                self.read(j)
            elif f.kind == "expr":
                self.term(j)
        for chain in self.chains:
            self.accumulate(chain)
        self.lines = self.head + self.body
        self.register()

    view = ""                        # what ``local`` found: a view of the line's vector

    def layout(self) -> None:
        """``ops[j][k]``: the operands of line ``j`` in group ``k``; ``forms[j]``: its form."""
        ctx, start, period = self.ctx, self.s, self.p
        self.ops = [[ctx.operands_of(start + k * period + j) for k in range(self.n)]
                    for j in range(period)]
        self.forms = [ctx.form_of(start + j) for j in range(period)]

    def size(self, j: int) -> int:
        """How many values line ``j`` has (one per group)."""
        return self.n

    def flat(self, j: int, w: str) -> str:
        """Line ``j``'s vector ``w`` as a flat array (element ``k``: group ``k``)."""
        return w

    def order(self):
        """``(line, index)`` of the run's assignments in the order the scalar code runs them."""
        for k in range(self.n):
            for j in self.targets:
                yield j, k

    # -- operands --------------------------------------------------------------------------
    def column(self, j: int, ph: str) -> list:
        q = int(ph[3:])                   # "_Po<q>"
        return [o[q] for o in self.ops[j]]

    def local(self, j: int, seq: list):
        """The latest line before ``j`` in the group whose targets are ``seq`` (or None)."""
        for i in reversed(self.first.get(seq[0], ())):
            if i < j and self.targets[i] == seq:
                return i
        return None

    def carried(self, seq: list):
        """The line whose previous-group target ``seq`` reads in every later group (a
        loop-carried value; ``seq[0]`` is its value before the run)."""
        for i in self.first.get(seq[1], ()):
            if self.targets[i][:-1] == seq[1:]:
                return i
        return None

    def code_for(self, j: int) -> int:
        ops = self.ops[j][0]
        return _node_id(ops[0]) if ops and ops[0][0] in "vg" else -1

    def forward(self, j: int) -> bool:
        return self.ops[j][0][0][0] == "v"

    def guard_type(self, name: str, code: int) -> None:
        """Values read from before the run keep their recorded types (array code needs it)."""
        t = self.ctx.recorded_type(name)
        if name in self.guarded or t is None:
            return
        if t not in _FLOATS and t not in (list, tuple):
            raise NotVector(f"{name} is not a float or a list")
        self.guarded.add(name)
        self.head.append(f"if _type({name}) is not {self.ctx.bind(t, '_vk_t')}: raise _GF({code})")

    def name(self, j: int, ph: str):
        """``(text, is_vector)`` of a name operand of line ``j`` (not a chain's own link)."""
        seq = self.column(j, ph)
        i = self.local(j, seq)
        if i is not None:
            if not self.readable(i, j):
                raise NotVector("a chain's partial sum or a list used in arithmetic")
            w, vector = self.vec[i][:2]
            return (w + self.view if vector else w), vector
        if not self.defined.isdisjoint(seq):
            raise NotVector("a value of the run used across groups")
        first = seq[0]
        if seq.count(first) == len(seq):
            self.guard_type(first, self.code_for(j))
            return first, False
        return self.pack(j, ph, seq)

    def pack(self, j: int, ph: str, seq: list):
        """``(text, True)``: the values ``seq`` from before the run as one float array."""
        key = tuple(seq)
        if key in self.packed:                    # the same values read by another line
            return self.packed[key], True
        pieces = self.pieces(seq)
        if pieces is not None:
            if pieces.startswith("_vx_cat("):
                name = f"_q{self.r}_{len(self.packed)}"
                self.body.append(f"{name} = {pieces}")
                pieces = name
            self.packed[key] = pieces
            return pieces, True
        types = {*map(self.ctx.recorded_type, seq)}
        if len(types) != 1 or not types <= {None, *_FLOATS}:
            raise NotVector("packed values of several types")
        t = types.pop()
        pack = f"_p{self.r}_{j}_{ph[3:]}"
        self.body.append(f"{pack} = [{', '.join(seq)}]")
        if t is not None:
            self.body.append(f"if not _vx_alltype({pack}, {self.ctx.bind(t, '_vk_t')}): "
                             f"raise _GF({self.code_for(j)})")
        self.body.append(f"{pack} = _vx_array({pack}, float)")
        self.packed[key] = pack
        return pack, True

    def readable(self, i: int, j: int) -> bool:
        """May line ``j`` read line ``i``'s vector in arithmetic (not a chain's partial sum
        nor a list)?"""
        return i not in self.chain_of and i in self.vec and self.vec[i][2] != "objects"

    def pieces(self, seq: list):
        """``seq`` as slices of earlier runs' vectors (and a few single values between
        them), or None when it is not mostly such slices."""
        vectors, parts, k, covered = self.ctx.vectors, [], 0, 0
        while k < len(seq):
            ref = vectors.get(seq[k])
            nxt = vectors.get(seq[k + 1]) if k + 1 < len(seq) else None
            if ref is None or nxt is None or nxt[0] != ref[0] or nxt[1] == ref[1]:
                if parts and parts[-1][0] == "names":
                    parts[-1][1].append(seq[k])
                else:
                    parts.append(("names", [seq[k]]))
                k += 1
                continue
            arr, i0 = ref
            d, m = nxt[1] - i0, 2
            while k + m < len(seq) and vectors.get(seq[k + m]) == (arr, i0 + m * d):
                m += 1
            stop = i0 + m * d
            parts.append(("slice", f"{arr}[{i0}:{'' if stop < 0 else stop}:{d}]"))
            covered, k = covered + m, k + m
        if 2 * covered < len(seq) or len(parts) > 4:
            return None
        if len(parts) == 1:
            return parts[0][1]
        for kind, names in parts:
            if kind == "names":
                for x in names:
                    if self.ctx.recorded_type(x) not in (None, *_FLOATS):
                        return None
                    self.guard_type(x, _node_id(x))
        return "_vx_cat((" + "".join(
            (f"[{', '.join(p)}]" if kind == "names" else p) + ", " for kind, p in parts) + "))"

    def literal(self, j: int, ph: str):
        seq = self.column(j, ph)
        if seq.count(seq[0]) == len(seq):
            return seq[0], False
        values = [_literal(x) for x in seq]
        if any(type(v) is int and abs(v) >= _INT_EXACT for v in values):
            raise NotVector("an int literal beyond float precision")
        return self.ctx.bind(np.array(values, dtype=float), f"_vk{self.r}_{j}_{ph[3:]}"), True

    # -- lines -----------------------------------------------------------------------------
    def text(self, j: int, node):
        """``(text, is_vector)`` of an expression of line ``j``'s template."""
        t = type(node)
        if t is ast.Name:
            seq = self.column(j, node.id)
            numbers = sum(map(str.isdigit, map(_FIRST, seq)))   # literals
            if numbers == len(seq):
                return self.literal(j, node.id)
            if numbers:                  # a literal in the first groups (before a loop)
                raise NotVector("a literal in some groups, a name in others", self.p)
            return self.name(j, node.id)
        if t is ast.UnaryOp:
            x, vx = self.text(j, node.operand)
            return f"({unary_symbol(node.op)}{x})", vx
        if t is ast.BinOp:
            a, va = self.text(j, node.left)
            b, vb = self.text(j, node.right)
            op = binary_symbol(node.op)
            if op == "/":
                b = self.divisor(j, b, vb)
            return f"({a} {op} {b})", va or vb
        fn_name = node.func.id
        x, vx = self.text(j, node.args[0])
        if not vx:
            return f"{fn_name}({x})", False
        fn = self.ctx.ns[fn_name]
        ufunc = FUNCTIONS[fn][0]
        if not self.forward(j) or agrees(fn):
            return f"_vx_{ufunc.__name__}({x})", True
        return f"_vx_map({fn_name}, {x})", True

    def divisor(self, j: int, b: str, vector: bool) -> str:
        """A divisor that may hold a zero fails a guard (the scalar code would raise)."""
        d = f"_d{self.r}_{j}_{len(self.body)}"
        self.body.append(f"{d} = {b}")
        test = f"not _vx_nozero({d})" if vector else f"{d} == 0"
        self.body.append(f"if {test}: raise _GF({self.code_for(j)})")
        return d

    def element_type(self, j: int):
        types = {*map(self.ctx.recorded_type, self.targets[j])}
        if len(types) != 1:
            raise NotVector("targets of several types")
        t = types.pop()
        if t is not None and t not in _FLOATS:
            raise NotVector("a target that is not a float")
        return t

    def expression(self, j: int) -> None:
        t = self.element_type(j)
        text, vector = self.text(j, self.forms[j].tree)
        w = f"_w{self.r}_{j}"
        self.body.append(f"{w} = {text}")
        self.vec[j] = (w, vector, "floats" if vector else "scalar", t)

    def read(self, j: int) -> None:
        src_ph, key_ph = self.forms[j].slots
        src, keys = self.column(j, src_ph), self.column(j, key_ph)
        if not all(x[0].isdigit() for x in keys) or any(x[0].isdigit() for x in src):
            raise NotVector("a read at a computed position", self.p)
        types = {*map(self.ctx.recorded_type, self.targets[j])}
        if len(types) != 1:
            raise NotVector("a read of mixed types")
        t = types.pop()
        if t not in _FLOATS and t not in (list, tuple):
            raise NotVector("a read of something else than floats or lists")
        r = f"_r{self.r}_{j}"
        code = self.read_codes.get(j, self.code_for(j))
        i = self.local(j, src)
        if i is not None:                # items of the lists an earlier line read
            if self.vec.get(i, (0, 0, ""))[2] != "objects" or len(set(keys)) != 1:
                raise NotVector("a nested read at varying positions")
            getter = self.ctx.bind(operator.itemgetter(_literal(keys[0])), f"_vk_item{keys[0]}")
            self.body.append(f"{r} = list(map({getter}, {self.vec[i][0]}))")
            check = ""
        else:
            if any(x != src[0] for x in src) or src[0] in self.defined \
                    or self.ctx.recorded_type(src[0]) not in (list, tuple):
                raise NotVector("a read from varying containers")
            pos = [_literal(x) for x in keys]
            d = pos[1] - pos[0]
            if d == 0 or any(p != pos[0] + k * d for k, p in enumerate(pos)) or min(pos) < 0:
                raise NotVector("reads at positions not in progression")
            self.guard_type(src[0], code)
            stop = pos[0] + self.n * d
            self.body.append(f"{r} = {src[0]}[{pos[0]}:{'' if stop < 0 else stop}:{d}]")
            check = f"len({r}) != {self.n} or "
        self.body.append(f"if {check}not _vx_alltype({r}, {self.ctx.bind(t, '_vk_t')}): "
                         f"raise _GF({code})")
        if t in _FLOATS:
            w = f"_w{self.r}_{j}"
            self.body.append(f"{w} = _vx_array({r}, float)")
            self.vec[j] = (w, True, "floats", t)
        else:
            self.vec[j] = (r, True, "objects", t)
        self.out[j] = ("list", r)

    def prepare_guards(self) -> None:
        """Guards in the group: on read values they join the read's guard; on computed
        values they hold by the recorded types; on values from before, once; on literals,
        decided now."""
        for j, f in enumerate(self.forms):
            if f.kind == "constguard":
                if not all(o[int(ph[3:])][0].isdigit() for o in self.ops[j] for ph in f.slots[:2]):
                    raise NotVector("a guard on values")
                for o in self.ops[j]:
                    left, right = (_literal(o[int(ph[3:])]) for ph in f.slots[:2])
                    if f.extra(left, right):
                        raise NotVector("a guard that fails")
            elif f.kind == "typeguard":
                seq = self.column(j, f.slots[0])
                i = self.local(j, seq)
                code = int(self.ops[j][0][int(f.slots[1][3:])])
                if i is not None:
                    if any(self.ctx.recorded_type(x) is not f.extra for x in seq):
                        raise NotVector("a type guard that fails")
                    if self.forms[i].kind == "read":
                        self.read_codes.setdefault(i, code)
                elif seq.count(seq[0]) == len(seq) and seq[0] not in self.defined:
                    self.head.append(f"if _type({seq[0]}) is not "
                                     f"{self.ctx.bind(f.extra, '_vk_t')}: raise _GF({code})")
                else:
                    raise NotVector("a type guard on values of several groups")

    # -- results ---------------------------------------------------------------------------
    def register(self) -> None:
        """Offer this run's float vectors to later runs (names assigned once only)."""
        assigned = self.ctx.assigned
        for j, (w, vector, kind, _) in self.vec.items():
            if vector and kind == "floats":
                for k, x in enumerate(self.targets[j]):
                    if assigned.get(x) == 1:
                        self.ctx.vectors[x] = (w, k)

    def code(self) -> str:
        if self._code is None:
            self._code = "\n".join(self.lines)
        return self._code

    def unpack(self, wanted) -> list:
        """Lines setting the run's variables that ``wanted`` (their last values)."""
        last = {}
        for j, k in self.order():
            last[self.targets[j][k]] = (j, k)
        per_line: dict = {}
        for x, (j, k) in last.items():
            if wanted(x):
                per_line.setdefault(j, []).append((k, x))
        lines = []
        for j, items in sorted(per_line.items()):
            w, vector, kind, t = self.vec[j]
            if not vector:
                lines.append(f"{' = '.join(x for _, x in items)} = {w}")
                continue
            size = self.size(j)
            if j in self.out:                     # a read: the objects themselves
                whole = src = self.out[j][1]
                one = src + "[{}]"
            elif t is np.float64:
                flat = self.flat(j, w)
                whole, one = f"list({flat})", flat + "[{}]"
            else:
                flat = self.flat(j, w)
                whole, one = f"{flat}.tolist()", flat + ".item({})"
            if 4 * len(items) >= size:
                names = ["_"] * size
                for k, x in items:
                    names[k] = x
                lines.append(f"{', '.join(names)} = {whole}")
            else:
                lines += [f"{x} = {one.format(k)}" for k, x in items]
        return lines
