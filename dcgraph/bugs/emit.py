"""Building the ``ast`` of generated code: names, constants, value gathers and template calls.

An ``Emitter`` owns the generated identifiers (``p3`` the values of part 3, ``t7`` temporaries,
``k2`` constants bound in the namespace) and the statements emitted so far. ``gather`` produces the
expression reading a set of node elements: a whole part's values, a slice or an index into them,
a constant, or several sources concatenated. ``expr`` translates a BUGS expression for a set of
instances (vectorised over them) or for one instance. Nothing of the user's text reaches the code:
names are generated and numbers are ``ast.Constant`` of parsed floats.
"""
from __future__ import annotations

import ast
import copy

import numpy as np

from . import syntax as S
from .functions import FUNCTIONS, LINKS, template_ast
from .templates import NAMESPACE

__all__ = ["Emitter", "name", "attr_call", "num"]

_OPS = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "^": ast.Pow}


def name(ident: str, store: bool = False) -> ast.Name:
    return ast.Name(ident, ast.Store() if store else ast.Load())


def num(value) -> ast.expr:
    value = float(value)
    if value < 0 or not np.isfinite(value):
        return ast.UnaryOp(ast.USub(), ast.Constant(-value)) if value < 0 else ast.Constant(value)
    return ast.Constant(value)


def attr_call(module: str, fn: str, *args, **kwargs) -> ast.Call:
    return ast.Call(ast.Attribute(name(module), fn, ast.Load()), list(args),
                    [ast.keyword(k, v) for k, v in kwargs.items()])


class _Substitute(ast.NodeTransformer):
    def __init__(self, mapping):
        self.mapping = mapping

    def visit_Name(self, node):
        return copy.deepcopy(self.mapping[node.id]) if node.id in self.mapping else node


class _Fold(ast.NodeTransformer):
    """Evaluate subexpressions whose leaves are all constants (``log(0.001)``, ``k1 - k2``)."""

    def __init__(self, emitter):
        self.em = emitter

    def _constant(self, node) -> bool:
        if isinstance(node, ast.Constant):
            return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
        if isinstance(node, ast.Name):
            return node.id in self.em.namespace and not node.id.startswith(("np", "sp"))
        if isinstance(node, ast.UnaryOp):
            return self._constant(node.operand)
        return False

    def _is(self, node, value) -> bool:
        return isinstance(node, ast.Constant) and node.value == value \
            and not isinstance(node.value, bool)

    def generic_visit(self, node):
        node = super().generic_visit(node)
        if isinstance(node, ast.BinOp):   # x - 0, x + 0, 0 + x (not 1.0 * x: it turns bools to floats)
            if isinstance(node.op, (ast.Add, ast.Sub)) and self._is(node.right, 0.0):
                return node.left
            if isinstance(node.op, ast.Add) and self._is(node.left, 0.0):
                return node.right
            leaves = [node.left, node.right]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id in ("np", "sp"):
            leaves = list(node.args) + [k.value for k in node.keywords]
            fn, last = node.func.attr, leaves[-1] if leaves else None
            if isinstance(last, ast.Name) and last.id in self.em.log_of and not node.keywords:
                log = copy.deepcopy(self.em.log_of[last.id])       # the value is exp(log)
                if fn == "log" and node.func.value.id == "np" and len(leaves) == 1:
                    return log
                if fn == "xlogy" and node.func.value.id == "sp" and len(leaves) == 2:
                    return ast.BinOp(leaves[0], ast.Mult(), log)
        else:
            return node
        if not leaves or not all(self._constant(x) for x in leaves):
            return node
        tree = ast.Expression(node)
        ast.fix_missing_locations(tree)
        with np.errstate(all="ignore"):
            value = eval(compile(tree, "<fold>", "eval"), dict(self.em.namespace))
        arr = np.asarray(value)
        if arr.dtype.kind not in "fiub":
            return node
        return self.em.const(arr) if arr.ndim else num(float(arr))


class Emitter:
    """Generated statements plus the constants they use (``namespace``)."""

    def __init__(self, graph, piece_of):
        self.g = graph
        self.piece_of = piece_of        # node id -> (part id, position, part is scalar)
        self.namespace = dict(NAMESPACE)
        self.body = []
        self._count = 0
        self._consts = {}
        self.sizes = {}                 # part id -> number of values
        self.widths = {}                # part id -> elements per node (multivariate blocks)
        self.log_of = {}                # name -> the expression of its log (x = exp(u))
        self._tables = {}

    # -- names -----------------------------------------------------------------------------
    def fold(self, value: ast.expr) -> ast.expr:
        return _Fold(self).visit(value)

    def fresh(self, prefix: str) -> str:
        """A new generated identifier."""
        self._count += 1
        return f"{prefix}{self._count}"

    def temp(self, value: ast.expr, prefix: str = "t") -> ast.Name:
        value = self.fold(value)
        if isinstance(value, (ast.Name, ast.Constant)):
            return value
        self._count += 1
        ident = f"{prefix}{self._count}"
        self.body.append(ast.Assign([name(ident, True)], value))
        return name(ident)

    def assign(self, ident: str, value: ast.expr):
        value = self.fold(value)
        self.body.append(ast.Assign([name(ident, True)], value))

    def const(self, value) -> ast.expr:
        arr = np.asarray(value)
        if arr.ndim == 0:
            return num(arr)
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        ident = self._consts.get(key)
        if ident is None:
            ident = f"k{len(self._consts)}"
            self._consts[key] = ident
            self.namespace[ident] = arr.copy()
            self.namespace[ident].setflags(write=False)
        return name(ident)

    def constant_value(self, value: ast.expr):
        """The number or array a constant expression stands for, or None."""
        if isinstance(value, ast.Constant):
            return value.value
        if isinstance(value, ast.UnaryOp) and isinstance(value.operand, ast.Constant):
            return -value.operand.value if isinstance(value.op, ast.USub) else value.operand.value
        if isinstance(value, ast.Name) and value.id.startswith("k") and value.id in self.namespace:
            return self.namespace[value.id]
        return None

    def template(self, body: str, mapping: dict) -> ast.expr:
        return _Substitute(mapping).visit(copy.deepcopy(template_ast(body)))

    # -- reading node elements ---------------------------------------------------------------
    def element(self, var: str, offset: int, local: dict) -> tuple:
        """``(kind, payload)`` for one element: ("local", ast) ("piece", (part, pos, scalar)) or
        ("const", value)."""
        if offset < 0:                                   # padding of a ragged vector
            return "const", 0.0
        nid = self.g.node_at.get((var, offset))
        if nid is not None and nid in local:
            return "local", local[nid]
        if nid is not None and nid in self.piece_of:
            part, k, scalar = self.piece_of[nid]
            width = self.widths.get(part, 1)
            if width > 1:
                k = k * width + list(self.g.nodes[nid].offsets).index(offset)
            return "piece", (part, k, scalar)
        node = self.g.nodes[nid] if nid is not None else None
        if node is not None:
            value = np.ravel(node.value)
            pos = list(node.offsets).index(offset) if len(value) > 1 else 0
            return "const", float(value[pos])
        return "const", float(self.g.data[var].ravel()[offset])

    def _table(self, var: str):
        """Per element of ``var`` (plus one padding slot at the end): source part (-1: constant),
        position in the part, constant value, whether the part is a scalar."""
        table = self._tables.get(var)
        if table is None:
            size = int(np.prod(self.g.shapes[var], dtype=np.int64))
            part = np.full(size + 1, -1, dtype=np.int64)
            pos = np.zeros(size + 1, dtype=np.int64)
            value = np.zeros(size + 1)
            scalar = np.zeros(size + 1, dtype=bool)
            data = self.g.data.get(var)
            if data is not None:
                value[:size] = data.ravel()
            for off in range(size):
                kind, payload = self.element(var, off, {}) if (var, off) in self.g.node_at \
                    else ("data", None)
                if kind == "piece":
                    part[off], pos[off], scalar[off] = payload
                elif kind == "const":
                    value[off] = payload
            table = self._tables[var] = (part, pos, value, scalar)
        return table

    def gather(self, var: str, offsets: np.ndarray, shape: tuple, local=None) -> ast.expr:
        """The values of elements ``offsets`` of ``var``, shaped ``shape``."""
        if not local and len(offsets) > 1:
            part, pos, value, scalar = self._table(var)
            offs = np.where(np.asarray(offsets) < 0, len(part) - 1, offsets)
            parts = part[offs]
            if np.all(parts < 0):
                return self.const(value[offs].reshape(shape))
            first = parts[0]
            if np.all(parts == first):
                src = name(f"p{first}")
                if scalar[offs[0]]:
                    return src
                return self._index(src, pos[offs], shape, self.sizes[int(first)])
        elems = [self.element(var, int(o), local or {}) for o in offsets]
        kinds = {k for k, _ in elems}
        if kinds == {"const"}:
            values = np.array([v for _, v in elems]).reshape(shape)
            return self.const(values)
        if "local" in kinds or len(elems) <= 1 and shape == ():
            parts = [self._one(k, v) for k, v in elems]
            if shape == ():
                return parts[0]
            arr = ast.List(parts, ast.Load())
            out = attr_call("np", "array", arr)
            return out if len(shape) == 1 else attr_call("np", "reshape", out, self.const(shape))
        pieces = sorted({v[0] for k, v in elems if k == "piece"})
        if kinds == {"piece"} and len(pieces) == 1:
            part, _, scalar = elems[0][1]
            src = name(f"p{part}")
            if scalar:                  # one value read by every instance: numpy broadcasts it
                return src
            positions = np.array([v[1] for _, v in elems])
            return self._index(src, positions, shape, self.sizes[part])
        # several sources: concatenate them, constants last
        srcs, base, size = [], {}, 0
        for part in pieces:
            base[part] = size
            piece = name(f"p{part}")
            srcs.append(attr_call("np", "atleast_1d", piece))
            size += self.sizes[part]
        consts = [v for k, v in elems if k == "const"]
        if consts:
            srcs.append(self.const(np.array(consts)))
        positions, c = [], size
        for k, v in elems:
            if k == "piece":
                positions.append(base[v[0]] + v[1])
            else:
                positions.append(c)
                c += 1
        joined = self.temp(attr_call("np", "concatenate", ast.Tuple(srcs, ast.Load())))
        return self._index(joined, np.array(positions), shape, None)

    def _one(self, kind, payload):
        if kind == "local":
            return payload
        if kind == "const":
            return num(payload)
        part, pos, scalar = payload
        src = name(f"p{part}")
        return src if scalar else ast.Subscript(src, ast.Constant(int(pos)), ast.Load())

    def _index(self, src, positions, shape, size):
        if shape == () and len(positions) == 1:
            return ast.Subscript(src, ast.Constant(int(positions[0])), ast.Load())
        reps = _repeats(positions)
        if reps > 1:     # each of a run of positions r times: np.repeat (its adjoint is a reshaped sum)
            run = self._index(src, positions[::reps], (len(positions) // reps,), size)
            out = attr_call("np", "repeat", run, ast.Constant(reps))
            if len(shape) > 1:
                out = attr_call("np", "reshape", out, self.const(np.array(shape)))
            return out
        if size is not None and len(positions) == size and np.array_equal(positions, np.arange(size)):
            out = src
        elif len(positions) > 1 and np.all(np.diff(positions) == 1):
            out = ast.Subscript(src, ast.Slice(ast.Constant(int(positions[0])),
                                               ast.Constant(int(positions[-1]) + 1)), ast.Load())
        else:
            out = ast.Subscript(src, self.const(positions.astype(np.int64)), ast.Load())
        if len(shape) > 1:
            out = attr_call("np", "reshape", out, self.const(np.array(shape)))
        return out

    # -- expressions -------------------------------------------------------------------------
    def expr(self, e, insts, refs, local=None, scalar=False) -> ast.expr:
        """``e`` for the instances ``insts`` of one statement (vectorised over them unless
        ``scalar``); ``refs`` maps each ``syntax.Var`` of the statement to its position."""
        if isinstance(e, S.Number):
            return num(e.value)
        if isinstance(e, S.Var):
            k = refs[id(e)]
            if insts[0].refs[k][0] is None:                   # a loop variable
                vals = np.array([i.env[e.name] for i in insts], dtype=float)
                return num(vals[0]) if scalar or len(set(vals)) == 1 else self.const(vals)
            if any(k in i.dynamic for i in insts):
                return self.dynamic(e.name, insts, k, local, scalar)
            shape0 = insts[0].refs[k][1]
            if scalar:
                offs, shape = insts[0].refs[k]
                return self.gather(e.name, offs, shape, local)
            if any(i.refs[k][1] != shape0 for i in insts):  # ragged vectors: zero-padded
                width = max(len(i.refs[k][0]) for i in insts)
                offs = np.full((len(insts), width), -1, dtype=np.int64)
                for row, i in enumerate(insts):
                    offs[row, :len(i.refs[k][0])] = i.refs[k][0]
                return self.gather(e.name, offs.ravel(), (len(insts), width), local)
            offs = np.concatenate([i.refs[k][0] for i in insts])
            return self.gather(e.name, offs, (len(insts),) + shape0, local)
        if isinstance(e, S.Unary):
            inner = self.expr(e.operand, insts, refs, local, scalar)
            return ast.UnaryOp(ast.USub() if e.op == "-" else ast.UAdd(), inner)
        if isinstance(e, S.Binary):
            return ast.BinOp(self.expr(e.left, insts, refs, local, scalar), _OPS[e.op](),
                             self.expr(e.right, insts, refs, local, scalar))
        if isinstance(e, S.Call):
            args = [self.simple(self.expr(a, insts, refs, local, scalar)) for a in e.args]
            params, body, _ = FUNCTIONS[e.name].form(len(args))
            return self.template(body, dict(zip(params, args)))
        raise TypeError(type(e).__name__)

    def dynamic(self, var, insts, k, local, scalar) -> ast.expr:
        """A read through stochastic indices: ``src[TABLE[base + sum(stride * (z - 1))]]`` with
        ``src`` every element the instances may read and ``z`` the index nodes' current values."""
        cands = np.unique(np.concatenate([i.refs[k][0] for i in insts]))
        src = self.simple(self.gather(var, cands, (len(cands),), local))
        table = np.full(int(np.prod(self.g.shapes[var], dtype=np.int64)), -1, dtype=np.int64)
        table[cands] = np.arange(len(cands))
        slots = max(len(i.dynamic.get(k, (0, []))[1]) for i in insts)
        bases = np.array([i.dynamic[k][0] if k in i.dynamic else int(i.refs[k][0][0])
                          for i in insts], dtype=float)
        offset = num(bases[0]) if scalar else self.const(bases)
        for j in range(slots):
            terms = [i.dynamic[k][1][j] if k in i.dynamic else None for i in insts]
            zvar = next(t[1] for t in terms if t is not None)
            first = next(t[2] for t in terms if t is not None)
            strides = np.array([t[0] if t is not None else 0 for t in terms], dtype=float)
            zoffs = np.array([t[2] if t is not None else first for t in terms], dtype=np.int64)
            z = self.gather(zvar, zoffs, () if scalar else (len(insts),), local)
            step = ast.BinOp(num(strides[0]) if scalar else self.const(strides), ast.Mult(),
                             ast.BinOp(z, ast.Sub(), num(1.0)))
            offset = ast.BinOp(offset, ast.Add(), step)
        index = attr_call("np", "asarray", offset,
                          dtype=ast.Attribute(name("np"), "int64", ast.Load()))
        return ast.Subscript(src, ast.Subscript(self.const(table), index, ast.Load()), ast.Load())

    def simple(self, value: ast.expr) -> ast.expr:
        """``value`` if it is a name or a constant, else a temporary holding it."""
        if isinstance(value, (ast.Name, ast.Constant)):
            return value
        return self.temp(value)

    def link_inverse(self, link: str, value: ast.expr) -> ast.expr:
        params, body, _ = FUNCTIONS[LINKS[link]].form(1)
        return self.template(body, {params[0]: self.simple(value)})


def _repeats(positions) -> int:
    """``r`` when ``positions`` is each of consecutive positions repeated ``r > 1`` times
    (``[0, 0, 1, 1, 2, 2]``), else 1."""
    n = len(positions)
    if n < 2 or positions[1] != positions[0]:
        return 1
    r = int(np.argmax(positions != positions[0])) or n
    if n % r or r == n:
        return 1
    runs = np.asarray(positions).reshape(-1, r)
    if np.all(runs == runs[:, :1]) and np.all(np.diff(runs[:, 0]) == 1):
        return r
    return 1
