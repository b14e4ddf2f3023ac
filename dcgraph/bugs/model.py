"""The compiled BUGS model: parameter layout, log density and gradient, log joint, simulation.

``BUGSModel`` wraps the generated functions of ``codegen``. The unconstrained vector ``theta``
holds the continuous unobserved stochastic nodes, part by part in program order (``parameters``
lists them with their BUGS indices, constraints and slices). Discrete unobserved nodes (missing
categorical data, ...) are not in ``theta``: ``discrete`` holds their current values, which
``logdensity`` conditions on (a Gibbs step changes them). Named values are dicts of BUGS variable
name -> array in the variable's shape (NaN where not given).
"""
from __future__ import annotations

import ast
import linecache
from dataclasses import dataclass

import numpy as np

from .graph import element_name

__all__ = ["BUGSModel", "Parameter"]


@dataclass(frozen=True)
class Parameter:
    """One parameter part: ``name`` with its 1-based ``indices``; ``theta[slice]`` (or
    ``discrete[slice]``); ``support`` such as ``"positive"``; ``shape`` of the whole variable."""
    name: str
    indices: tuple
    shape: tuple
    slice: slice
    support: str
    discrete: bool
    line: int

    @property
    def names(self) -> list:
        """One name per coordinate of ``theta[slice]``: the elements, or for simplex and
        positive-definite blocks (fewer unconstrained coordinates) ``name[...]#j``."""
        if not self.shape:
            return [self.name]
        names = [f"{self.name}[{','.join(map(str, ix))}]" for ix in self.indices]
        n = self.slice.stop - self.slice.start
        if n == len(names):
            return names
        return [f"{self.name}#{j + 1}" for j in range(n)]


class BUGSModel:
    """Pickles as its graph, parameter layout and generated syntax tree with the constants the
    code reads; unpickling compiles that tree again (no parsing, graph building or code
    generation), so chains can run in other processes."""

    def __init__(self, graph, parts, blocks, generated, inits=(), seed=0):
        self.graph, self.parts, self.blocks = graph, parts, blocks
        self._bind(generated)
        self.dim, self.ndisc = generated.dim, generated.ndisc
        self.parameters = []
        for slot in generated.slots:
            p = slot.part
            var = p.statement.ast.target.name
            shape = graph.shapes[var]
            idx = tuple(tuple(int(v) + 1 for v in np.unravel_index(int(off), shape))
                        for i in p.instances for off in i.target) if shape else ((),)
            support = _support_text(p)
            self.parameters.append(Parameter(var, idx, shape, slice(slot.start, slot.stop),
                                             support, slot.discrete, p.statement.line))
        self.slots = list(generated.slots)       # ParamSlot per entry of ``parameters``
        self.inits = list(inits)
        self.seed = seed
        self.discrete = np.zeros(self.ndisc)
        if self.ndisc:
            self.initial_values(0)

    def _bind(self, generated):
        self._gen = generated
        self._logdensity = generated.function("logdensity")
        self._logjoint = generated.function("logjoint")
        self._simulate = generated.function("simulate")
        self._unconstrain = generated.function("unconstrain")
        self._constrain = generated.function("constrain")
        self._vg = None

    def __getstate__(self):
        state = {k: v for k, v in self.__dict__.items() if not k.startswith("_")}
        gen = self._gen
        constants = {k: v for k, v in gen.namespace.items() if isinstance(v, np.ndarray)}
        state["_generated"] = (gen.module, constants, gen.slots, gen.dim, gen.ndisc)
        return state

    def __setstate__(self, state):
        from .codegen import Generated
        from .runtime import RUNTIME
        from .templates import NAMESPACE
        module, constants, slots, dim, ndisc = state.pop("_generated")
        self.__dict__.update(state)
        namespace = dict(NAMESPACE, **constants, __builtins__={}, __name__="bugs_generated",
                         **RUNTIME)
        filename = f"<bugs-model-unpickled-{id(self):x}>"
        text = ast.unparse(module)
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        exec(compile(ast.parse(text, filename), filename, "exec"), namespace)
        self._bind(Generated(module, namespace, slots, dim, ndisc))

    # -- evaluation -------------------------------------------------------------------------
    @property
    def parameter_names(self) -> list:
        return [n for p in self.parameters if not p.discrete for n in p.names]

    def _theta(self, theta) -> np.ndarray:
        theta = np.asarray(theta, dtype=float)
        if theta.shape != (self.dim,):
            raise ValueError(f"theta has shape {theta.shape}; this model has {self.dim} "
                             f"unconstrained parameters")
        return theta

    def logdensity(self, theta) -> float:
        """Log joint density at ``forward(theta)`` plus log-Jacobians (normalising constants in)."""
        return float(self._logdensity(self._theta(theta), self.discrete))

    def logdensity_and_grad(self, theta):
        """``(logdensity(theta), gradient)`` through the traced generated code (compiled replay)."""
        if self._vg is None:
            from ..ad.api import sampling_value_and_grad
            self._vg = sampling_value_and_grad(self._logdensity, argnums=0)
        value, grad = self._vg(self._theta(theta), self.discrete)
        return float(value), np.asarray(grad, dtype=float)

    def sample(self, **kwargs):
        """MCMC draws of the monitored nodes (``dcgraph.bugs.fit.sample(self, **kwargs)``)."""
        from .fit import sample
        return sample(self, **kwargs)

    def samplers(self, sampler: str = "auto"):
        """The sampler assignment ``sample(sampler=...)`` uses (prints node -> sampler)."""
        from .samplers import BUGSTarget, assign
        return assign(self, BUGSTarget(self), sampler)

    def logjoint(self, values: dict) -> float:
        """Log joint density of all stochastic nodes at named constrained ``values``."""
        return float(self._logjoint(self._part_values(values, require=True)))

    def simulate(self, rng=None, observed: bool = False) -> dict:
        """Ancestral draws of every unobserved stochastic node (and observed ones if asked) with
        the logical nodes, as named values (data and constants filled in)."""
        rng = np.random.default_rng(rng)
        with np.errstate(all="ignore"):          # vague priors draw values that underflow
            out = self._simulate(rng, observed, [None] * len(self.parameters))
        return self._named(out, observed)

    def initial_values(self, chain: int = 0) -> np.ndarray:
        """Unconstrained start for ``chain``: its inits where given, the rest drawn from the prior
        (seeded by ``seed`` and ``chain``; a draw that over- or underflows, as vague priors do, is
        replaced by uniform(-2, 2) on the unconstrained scale). Also sets ``discrete``. Inits
        outside the support are a ``BUGSError`` naming the parameters."""
        inits = self.inits[chain % len(self.inits)] if self.inits else {}
        fixed = self._part_values(inits, require=False)
        rng = np.random.default_rng([self.seed, chain])
        try:
            with np.errstate(all="ignore"):
                out = self._simulate(rng, False, fixed)
        except ValueError as exc:          # numpy refuses a draw: a parameter given out of range
            raise self.graph.error(f"cannot draw the initial values of chain {chain} from the "
                                   f"prior given its inits: {exc}") from None
        vals = [out[p.part.id] for p in self._gen.slots]
        if self.ndisc:
            self.discrete = np.concatenate([np.atleast_1d(np.asarray(v, dtype=float))
                                            for v, s in zip(vals, self._gen.slots) if s.discrete])
        with np.errstate(all="ignore"):
            theta = np.asarray(self._unconstrain(vals), dtype=float)
        given = np.zeros(self.dim, dtype=bool)
        for slot, f in zip(self._gen.slots, fixed):
            if f is not None and not slot.discrete:
                f = np.isfinite(np.asarray(f, dtype=float)).ravel()
                n = slot.stop - slot.start
                given[slot.start:slot.stop] = f if len(f) == n else np.all(f)
        drawn_bad = ~np.isfinite(theta) & ~given
        if np.any(drawn_bad):         # vague priors (dgamma(0.001, 0.001)) draw values that
            theta[drawn_bad] = rng.uniform(-2, 2, int(drawn_bad.sum()))    # underflow: Stan's init
        bad = [n for n, v in zip(self.parameter_names, theta) if not np.isfinite(v)]
        if bad:
            raise self.graph.error(f"initial values outside the support of {', '.join(bad[:5])}"
                                   f"{' ...' if len(bad) > 5 else ''} (chain {chain})")
        return theta

    def unconstrain(self, values: dict) -> np.ndarray:
        """The unconstrained vector of named constrained ``values`` (every parameter needed)."""
        return np.asarray(self._unconstrain(self._part_values(values, require=True)), dtype=float)

    def constrained(self, theta) -> dict:
        """Named values of every node at ``theta`` (parameters, logical nodes, data)."""
        out = self._constrain(self._theta(theta), self.discrete)
        return self._named(out, False)

    # -- named values <-> part values -------------------------------------------------------------
    def _part_values(self, values: dict, require: bool) -> list:
        out = []
        known = set(self.graph.shapes)
        for name in values:
            if name not in known:
                raise self.graph.error(f"no variable '{name}' in the model (given in values/inits)")
        for slot in self._gen.slots:
            p = slot.part
            var = p.statement.ast.target.name
            given = values.get(var)
            offsets = np.concatenate([i.target for i in p.instances])
            if given is None:
                if require:
                    raise self.graph.error(f"a value for '{var}' is needed (line "
                                           f"{p.statement.line} defines it as a parameter)")
                out.append(None)
                continue
            arr = np.asarray(given, dtype=float)
            shape = self.graph.shapes[var]
            if arr.shape != shape and arr.size != int(np.prod(shape)):
                raise self.graph.error(f"'{var}' has shape {arr.shape}, the model needs {shape}")
            vals = arr.ravel()[offsets]
            if require and np.any(np.isnan(vals)):
                bad = offsets[np.isnan(vals)][0]
                raise self.graph.error(f"a value for {element_name(var, shape, int(bad))} is "
                                       f"needed")
            out.append(vals if p.statement.loops or len(offsets) > 1 else vals[0])
        return out

    def _named_plan(self):
        """``(templates, fills)``, built once: per variable its array with data and constant
        nodes filled in (NaN elsewhere); per part ``(id, variable, flat offsets)``."""
        plan = self.__dict__.get("_named_cache")
        if plan is None:
            g = self.graph
            templates = {}
            for stmt in g.statements:
                var = stmt.ast.target.name
                if var not in templates:
                    base = g.data.get(var)
                    templates[var] = np.full(g.shapes[var], np.nan) if base is None else base.copy()
            for node in g.nodes:
                if node.constant:
                    templates[node.var].reshape(-1)[node.offsets] = np.ravel(node.value)
            fills = [(p.id, p.statement.ast.target.name,
                      np.concatenate([i.target for i in p.instances])) for p in self.parts]
            plan = self._named_cache = (templates, fills)
        return plan

    def _named(self, parts_out: dict, observed: bool) -> dict:
        templates, fills = self._named_plan()
        named = {var: base.copy() for var, base in templates.items()}
        for pid, var, offsets in fills:
            if pid in parts_out:
                vals = np.ravel(np.asarray(parts_out[pid], dtype=float))
                named[var].reshape(-1)[offsets] = (
                    vals if vals.size == offsets.size else np.broadcast_to(vals, offsets.shape))
        return {k: (v[()] if v.shape == () else v) for k, v in named.items()}

    # -- views -------------------------------------------------------------------------------------
    def program(self) -> str:
        """The sequential program in BUGS syntax (``~`` parameters, ``≂`` observed statements)."""
        from .program import render_program
        return render_program(self.graph, self.blocks)

    def source(self) -> str:
        """The generated Python."""
        return ast.unparse(self._gen.module)

    def __repr__(self):
        return (f"<BUGSModel {len(self.graph.nodes)} nodes, {self.dim} parameters"
                f"{f', {self.ndisc} discrete' if self.ndisc else ''}>")


def _support_text(part) -> str:
    from .templates import DISTRIBUTIONS
    fam = DISTRIBUTIONS[part.statement.ast.dist.name]
    b = part.statement.ast.bounds
    if b is None:
        return fam.support
    return f"{fam.support}, {b.kind}({'lo' if b.lower else ''},{'hi' if b.upper else ''})"
