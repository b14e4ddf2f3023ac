"""Generated Python for a sequential BUGS program: log density, log joint, simulation, unconstraining.

``generate(graph, parts, blocks) -> Generated`` builds one ``ast.Module`` with five functions and
compiles it in a namespace holding only numpy, scipy.special, the template constants, the model's
constant arrays and ``runtime.RUNTIME`` (``__builtins__`` is empty):

* ``logdensity(theta, disc)``: log joint of the constrained values ``forward(theta)`` plus the
  log-Jacobians, ``disc`` the values of the discrete unobserved nodes;
* ``logjoint(vals)``: log joint at constrained values, ``vals[j]`` those of parameter part ``j``;
* ``simulate(rng, observed, fixed)``: ancestral draws (``fixed[j]``, when not None, replaces part
  ``j``'s draws where it is not NaN); returns ``{part id: values}`` for every computed part;
* ``unconstrain(vals)``: the unconstrained vector of constrained values;
* ``constrain(theta, disc)``: ``{part id: values}`` of every computed part at ``theta``.

Vector blocks become whole-array statements over all their instances (``emit``); loop blocks stay
Python loops and unrolled blocks become straight-line code (``codegen_loops``); blocks of nodes
(vector and matrix values) go through ``codegen_multi``. Statements whose every input is constant
are evaluated here (their log density terms summed into one number).
"""
from __future__ import annotations

import ast
import itertools
import linecache
from dataclasses import dataclass

import numpy as np

from . import syntax as S
from .codegen_loops import loop_block, straight_line
from .codegen_multi import event_shape, stochastic_multivariate, unconstrained_size
from .codegen_scalar import ScalarStatements
from .emit import Emitter, attr_call, name, num
from .runtime import RUNTIME
from .templates import DISTRIBUTIONS
from .walk import statement_exprs

__all__ = ["generate", "Generated", "ParamSlot"]

_MODEL_COUNTER = itertools.count()


@dataclass
class ParamSlot:
    """Where parameter part ``part`` lives: ``theta[start:stop]`` or ``disc[start:stop]``."""
    part: object
    start: int
    stop: int
    discrete: bool


@dataclass
class Generated:
    module: ast.Module
    namespace: dict
    slots: list                      # ParamSlot per parameter part, in program order
    dim: int
    ndisc: int

    def function(self, fname):
        return self.namespace[fname]


class _Gen(ScalarStatements):
    def __init__(self, g, parts, blocks):
        self.g, self.parts, self.blocks = g, parts, blocks
        self.slots, self.slot_of = [], {}
        dim = ndisc = 0
        for b in blocks:
            for p in b.parts:
                if p.role == "param":
                    fam = DISTRIBUTIONS[p.statement.ast.dist.name]
                    n = len(p.instances)
                    if fam.event != "scalar":
                        n *= unconstrained_size("discrete" if fam.discrete else fam.support,
                                                event_shape(g, p))
                    start = ndisc if p.discrete else dim
                    slot = ParamSlot(p, start, start + n, p.discrete)
                    self.slot_of[p.id] = len(self.slots)
                    self.slots.append(slot)
                    if p.discrete:
                        ndisc += n
                    else:
                        dim += n
        self.dim, self.ndisc = dim, ndisc
        self.piece_of, self.position, self.widths = {}, {}, {}
        for p in parts:
            self.widths[p.id] = width = len(p.instances[0].target)
            scalar = not p.statement.loops and width == 1
            for k, inst in enumerate(p.instances):
                self.position[id(inst)] = k
                if p.role != "observed":
                    self.piece_of[inst.node] = (p.id, k, scalar)
        self.needed = self._needed()
        self.loop_observed = {}         # part id -> observed value read in a loop block

    def _needed(self):
        """Parts the log density needs: stochastic parts and the logical parts they read."""
        part_of = {nid: entry[0] for nid, entry in self.piece_of.items()}
        need = {p.id for p in self.parts if p.role != "logical"}
        todo = list(need)
        while todo:
            p = self.parts[todo.pop()]
            for inst in p.instances:
                for parent in self.g.nodes[inst.node].parents:
                    q = part_of.get(parent)
                    if q is not None and q not in need:
                        need.add(q)
                        todo.append(q)
        return need

    # -- one function ----------------------------------------------------------------------
    def function(self, mode: str, em: Emitter, args: list) -> ast.FunctionDef:
        em.body, em.log_of = [], {}
        self.mode, self.em = mode, em
        self.const_lp = 0.0
        self.lp_zero = mode in ("density", "joint")
        self.in_loop = False
        self.thetas = []
        for block in self.blocks:
            parts = [p for p in block.parts if mode in ("simulate", "constrain")
                     or p.id in self.needed]
            if not parts:
                continue
            if block.kind == "vector" and self._vectorisable(parts[0]):
                self.vector_part(parts[0])
            elif block.kind == "loop" and loop_block(self, block, {p.id for p in parts}):
                pass
            else:
                steps = block.steps or [(parts[0], i) for i in parts[0].instances]
                straight_line(self, block, {p.id for p in parts}, steps)
        if mode in ("density", "joint"):
            total = name("lp")
            if self.lp_zero:
                total = num(self.const_lp)
            elif self.const_lp:
                total = ast.BinOp(total, ast.Add(), num(self.const_lp))
            em.body.append(ast.Return(total))
        elif mode in ("simulate", "constrain"):
            made = sorted(self._made)
            em.assign("out", ast.Dict([ast.Constant(k) for k in made], [name(f"p{k}") for k in made]))
            if self._observed:
                em.body.append(ast.If(name("observed"), [
                    ast.Assign([ast.Subscript(name("out"), ast.Constant(k), ast.Store())],
                               name(f"p{k}")) for k in sorted(set(self._observed))], []))
            em.body.append(ast.Return(name("out")))
        else:
            em.body.append(ast.Return(attr_call("np", "concatenate", ast.Tuple(
                [attr_call("np", "atleast_1d", t) for t in self.thetas] or
                [em.const(np.zeros(0))], ast.Load()))))
        fn = {"density": "logdensity", "joint": "logjoint", "simulate": "simulate",
              "unconstrain": "unconstrain", "constrain": "constrain"}[mode]
        return ast.FunctionDef(fn, ast.arguments([], [ast.arg(a) for a in args], None, [], [],
                                                 None, []), em.body, [], None)

    def _vectorisable(self, part) -> bool:
        """All references have one shape over the instances, or are ragged vectors read only
        where zero padding changes nothing (``dcat``'s probabilities, ``sum``, ``inprod``)."""
        if not part.statement.loops:
            return True
        insts, st = part.instances, part.statement.ast
        padded = set()
        if part.statement.stochastic and st.dist.name == "dcat":
            padded.update(id(a) for a in st.dist.args if isinstance(a, S.Var))
        for e in statement_exprs(st):
            _zero_safe(e, padded)
        for k, var in enumerate(part.statement.refs):
            if any(k in i.dynamic for i in insts):
                continue
            shapes = {i.refs[k][1] for i in insts}
            if len(shapes) > 1 and (id(var) not in padded or any(len(s) != 1 for s in shapes)):
                return False
        return True

    # -- vector parts ----------------------------------------------------------------------
    def vector_part(self, part):
        em, insts, st = self.em, part.instances, part.statement.ast
        scalar = not part.statement.loops
        refs = {id(v): k for k, v in enumerate(part.statement.refs)}
        if part.role != "observed":
            self._made.add(part.id)
        em.sizes[part.id] = len(insts) * self.widths[part.id]
        n = len(insts)

        def ex(e):
            return em.expr(e, insts, refs, None, scalar)
        if part.role == "logical":
            value = ex(st.expr)
            if st.link is not None:
                value = em.link_inverse(st.link, value)
            width = self.widths[part.id]
            if width > 1:                          # a vector-valued logical node (a block)
                shape = ((n,) if not scalar else ()) + insts[0].target_shape
                value = attr_call("np", "ravel", attr_call("np", "broadcast_to", value, ast.Tuple(
                    [ast.Constant(int(d)) for d in shape], ast.Load())))
            elif not scalar and not self._varies(part, st.expr):
                value = attr_call("np", "broadcast_to", value, ast.Tuple([ast.Constant(n)], ast.Load()))
            em.assign(f"p{part.id}", value)
            return
        self.stochastic(part, ex, None if scalar else n, 0)

    def _varies(self, part, expr) -> bool:
        insts = part.instances
        if len(insts) == 1:
            return True
        for k, var in enumerate(part.statement.refs):
            first = insts[0].refs[k][0]
            if any(k in i.dynamic for i in insts):
                return True
            if first is None:
                if len({i.env[var.name] for i in insts}) > 1:
                    return True
            else:
                rows = [i.refs[k][0] for i in insts]
                if len({len(r) for r in rows}) > 1 or np.any(np.stack(rows) != first):
                    return True
        return False

    # -- stochastic statements (vectorised: size n; one step: size None) -----------------------
    def stochastic(self, part, ex, size, index, local_name=None, inst=None):
        em, st, mode = self.em, part.statement.ast, self.mode
        fam = DISTRIBUTIONS[st.dist.name]
        if fam.event != "scalar":
            if mode == "simulate" and part.role != "observed":
                self._made.add(part.id)
            return stochastic_multivariate(self, part, fam, ex, size)
        params = dict(zip(fam.params, [em.simple(ex(a)) for a in st.dist.args]))
        lo, hi = self.bounds(part, fam, params, ex)
        target = local_name or f"p{part.id}"
        log_x = None
        if part.role == "observed":
            if mode == "constrain":
                return
            if mode == "simulate":
                if size is not None or inst is None:
                    mark = len(em.body)
                    draw = self.sample(part, fam, params, lo, hi, size, index)
                    inner = em.body[mark:] + [ast.Assign([name(target, True)], draw)]
                    del em.body[mark:]
                    em.body.append(ast.If(name("observed"), inner, []))
                    self._observed.append(part.id)
                return
            x = self.loop_observed.get(part.id) or em.const(self._observed_values(part, inst))
        elif mode == "simulate":
            x = self.sample(part, fam, params, lo, hi, size, index)
        elif part.discrete and mode in ("density", "constrain"):
            slot = self.slots[self.slot_of[part.id]]
            x = self._slice(name("disc"), slot.start, size, index)
        elif mode in ("joint", "unconstrain"):
            x = ast.Subscript(name("vals"), ast.Constant(self.slot_of[part.id]), ast.Load())
            if size is None and part.statement.loops:
                x = ast.Subscript(x, index if isinstance(index, ast.AST) else ast.Constant(index),
                                  ast.Load())
            if mode == "unconstrain":
                x = em.simple(x)
                if part.discrete:
                    em.assign(target, x)
                    return
                self.thetas.append(em.simple(self.inverse(x, lo, hi)))
        else:
            slot = self.slots[self.slot_of[part.id]]
            u = em.simple(self._slice(name("theta"), slot.start, size, index))
            x = self.forward(u, lo, hi, size)
            zero = em.constant_value(lo) if lo is not None and hi is None else None
            if zero is not None and np.all(np.asarray(zero) == 0):
                log_x = u                          # x = exp(u): log(x) is u itself
        x = em.simple(x)
        if part.role != "observed":
            em.assign(target, x)
            x = name(target)
            if log_x is not None:
                em.log_of[target] = log_x
        if mode in ("density", "joint"):
            self.logpdf(part, fam, params, x, lo, hi, size)

    def _slice(self, src, start, size, index):
        if size is None:
            if isinstance(index, ast.AST):        # a per-iteration table read (loop blocks)
                at = index if start == 0 else ast.BinOp(ast.Constant(start), ast.Add(), index)
                return ast.Subscript(src, at, ast.Load())
            return ast.Subscript(src, ast.Constant(start + index), ast.Load())
        return ast.Subscript(src, ast.Slice(ast.Constant(start), ast.Constant(start + size)),
                             ast.Load())

    def _observed_values(self, part, inst):
        insts = [inst] if inst is not None else part.instances
        vals = [np.ravel(self.g.nodes[i.node].value)[0] for i in insts]
        if inst is not None or not part.statement.loops:
            return vals[0]
        return np.array(vals, dtype=float)


def _zero_safe(e, out: set):
    """Variables read directly by ``sum``/``inprod``, where zero padding changes nothing."""
    if isinstance(e, S.Call):
        for a in e.args:
            if e.name in ("sum", "inprod") and isinstance(a, S.Var):
                out.add(id(a))
            _zero_safe(a, out)
    elif isinstance(e, S.Unary):
        _zero_safe(e.operand, out)
    elif isinstance(e, S.Binary):
        _zero_safe(e.left, out)
        _zero_safe(e.right, out)


def generate(g, parts, blocks) -> Generated:
    gen = _Gen(g, parts, blocks)
    em = Emitter(g, gen.piece_of)
    em.widths = gen.widths
    defs = []
    for mode, args in (("density", ["theta", "disc"]), ("joint", ["vals"]),
                       ("simulate", ["rng", "observed", "fixed"]), ("unconstrain", ["vals"]),
                       ("constrain", ["theta", "disc"])):
        gen._made, gen._observed = set(), []
        defs.append(gen.function(mode, em, args))
    module = ast.Module(defs, [])
    ast.fix_missing_locations(module)
    filename = f"<bugs-model-{next(_MODEL_COUNTER)}>"
    text = ast.unparse(module)
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = dict(em.namespace, __builtins__={}, __name__="bugs_generated",
                     **RUNTIME)
    exec(compile(ast.parse(text, filename), filename, "exec"), namespace)
    return Generated(module, namespace, gen.slots, gen.dim, gen.ndisc)
