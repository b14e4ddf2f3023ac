"""``NodeGibbs``: node-by-node Gibbs updates that evaluate only Markov blankets.

One sampler over the coordinates of the parameter parts it updates, run inside
``dcgraph.infer.Gibbs`` by ``NodeKernel`` (which adapts the slice widths during warm-up). Per sweep
it reads the constrained values of every node once (``BUGSTarget.constrained``),
updates its nodes in order on a ``NodeState`` (each a ``ConjugateRule`` draw, an exact draw of
a discrete node by enumerating its support with ``NodeState.blanket_logp``, or a ``SliceUpdate``
of a univariate continuous node; an update with ``grouped`` set, ``GroupConjugate``, draws a
tuple of nodes at once and refreshes their logical nodes itself), and maps the new
values back to the coordinates (``BUGSModel.unconstrain`` for continuous parts, the values
themselves for discrete parts). No update evaluates the joint log density.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ...infer.gibbs import BlockTarget
from ...infer.kernel import KernelBase
from ...infer.mh import MHState
from .discrete import draw_enumerated, enumerate_conditional

__all__ = ["NodeGibbs", "NodeKernel", "EnumerationUpdate"]


class EnumerationUpdate:
    """Exact draw of a scalar discrete node from its full conditional (its blanket only)."""
    name = "enumeration"

    def __init__(self, tail: float = 40.0, max_values: int = 10_000):
        self.tail, self.max_values = tail, max_values

    def draw(self, rng, state, node):
        def at(v):
            state.set(node, v)
            return state.blanket_logp(node)

        values, logw = enumerate_conditional(at, round(float(state.get(node))), self.tail,
                                             self.max_values)
        return draw_enumerated(rng, values, logw)


class NodeGibbs:
    """``sampler(rng, x) -> x[indices]`` updating ``updates`` = ``[(node, rule)]`` in order;
    ``parts``: ``(slot, indices into x)`` of the parameter parts the nodes make up."""

    def __init__(self, target, state, updates, parts):
        self.target, self.state = target, state
        self.updates = list(updates)
        self.parts = list(parts)
        self.indices = np.concatenate([idx for _, idx in self.parts])
        self.n_adaptive = sum(getattr(rule, "adaptive", False) for _, rule in self.updates)

    def __call__(self, rng, x):
        return self.sweep(rng, x, np.ones(self.n_adaptive))[0]

    def sweep(self, rng, x, widths):
        """``(x[indices] after one sweep, jumps)``: ``widths`` and ``jumps`` (on the slice
        scale) of the adaptive (slice) updates, in update order."""
        x = np.array(x, dtype=float)
        state = self.state
        state.load(self.target.constrained(x))
        jumps = np.zeros(self.n_adaptive)
        k = 0
        for node, rule in self.updates:
            if getattr(rule, "grouped", False):      # conjugate_groups.GroupConjugate: nodes
                rule.update(rng)                     # drawn, written and refreshed together
                continue
            if getattr(rule, "adaptive", False):
                value, jumps[k] = rule.draw(rng, state, node, widths[k])
                k += 1
            else:
                value = rule.draw(rng, state, node)
            state.set(node, value)
            state.refresh(node)
        named = state.named()
        model = self.target.model
        out = x.copy()
        theta = None
        for slot, idx in self.parts:
            if slot.discrete:
                out[idx] = np.concatenate([state.values[slot.part.statement.ast.target.name][i.target]
                                           for i in slot.part.instances])
            else:
                if theta is None:
                    theta = model.unconstrain({k: named[k] for k in _param_vars(model)})
                out[idx] = theta[slot.start:slot.stop]
        return out[self.indices], jumps


class WidthTuning(NamedTuple):
    """Slice widths with the running sum of jumps over ``count`` warm-up sweeps."""
    widths: np.ndarray
    jump_sum: np.ndarray
    count: int


class NodeKernel(KernelBase):
    """``NodeGibbs`` as a Gibbs block kernel. During warm-up each slice width becomes twice the
    mean jump of its node (after 10 sweeps; as ``dcgraph.infer.Slice`` and JAGS adapt)."""
    needs_gradient = False

    def __init__(self, gibbs: NodeGibbs, width: float = 1.0):
        self.gibbs, self.width = gibbs, float(width)

    def init(self, target, position):
        return MHState(np.array(position, dtype=float), math.nan)

    def _step(self, rng, target, state, widths):
        if not isinstance(target, BlockTarget):
            raise TypeError("NodeKernel can only update a block inside Gibbs")
        values, jumps = self.gibbs.sweep(rng, target.full(state.position), widths)
        return MHState(values, math.nan), jumps

    def start_warmup(self, rng, target, state, n_warmup):
        n = self.gibbs.n_adaptive
        return WidthTuning(np.full(n, self.width), np.zeros(n), 0)

    def warmup_step(self, rng, target, state, tuning):
        state, jumps = self._step(rng, target, state, tuning.widths)
        jump_sum, count = tuning.jump_sum + jumps, tuning.count + 1
        widths = tuning.widths
        if count >= 10:
            proposed = 2.0 * jump_sum / count
            widths = np.where(proposed > 0, proposed, widths)
        return state, WidthTuning(widths, jump_sum, count), {}

    def finish_warmup(self, tuning):
        return tuning.widths

    def step(self, rng, target, state, params):
        widths = np.full(self.gibbs.n_adaptive, self.width) if params is None else params
        return self._step(rng, target, state, widths)[0], {}


def _param_vars(model) -> list:
    return list(dict.fromkeys(p.name for p in model.parameters))
