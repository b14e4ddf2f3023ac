"""``NodeGibbs``: node-by-node Gibbs updates that evaluate only Markov blankets.

One ``dcgraph.infer.ExactConditional`` sampler over the coordinates of the parameter parts it
updates. Per sweep it reads the constrained values of every node once (``BUGSTarget.constrained``),
updates its nodes in order on a ``NodeState`` (each a ``ConjugateRule`` draw, or an exact draw of
a discrete node by enumerating its support with ``NodeState.blanket_logp``), and maps the new
values back to the coordinates (``BUGSModel.unconstrain`` for continuous parts, the values
themselves for discrete parts). No update evaluates the joint log density.
"""
from __future__ import annotations

import numpy as np

from .discrete import draw_enumerated, enumerate_conditional

__all__ = ["NodeGibbs", "EnumerationUpdate"]


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

    def __call__(self, rng, x):
        x = np.array(x, dtype=float)
        state = self.state
        state.load(self.target.constrained(x))
        for node, rule in self.updates:
            state.set(node, rule.draw(rng, state, node))
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
        return out[self.indices]


def _param_vars(model) -> list:
    return list(dict.fromkeys(p.name for p in model.parameters))
