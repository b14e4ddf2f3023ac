"""A slice update with a conjugate partner integrated out: an exact update of the pair.

``CollapsedSlice(state, node, partner)``: ``node`` a scalar node the auto assignment slices,
``partner`` the ``conjugate_groups.GroupConjugate`` of one node whose full conditional depends on
``node`` (``node`` is a parent of the partner or of its children, not its child: Pumps' ``alpha``,
the shape of ``theta[i] ~ dgamma(alpha, beta)``, with the rate ``beta``). One update

1. slices ``node`` from its conditional with the partner integrated out,
   ``p(node | rest) = p(node, partner | rest) / p(partner | node, rest)`` (the right-hand side
   does not depend on the partner's value; it is evaluated at the current one): as a function of
   ``node`` the numerator is ``node``'s Markov blanket density (``NodeState.blanket_logp``, one
   call per statement; the partner's other terms do not involve ``node``), the denominator the
   partner's closed-form full conditional;
2. draws the partner from its full conditional given the new value of ``node``.

Together a draw of ``(node, partner)`` given the rest, as a joint update: where the two are
correlated a posteriori (a gamma's shape and rate), node-by-node Gibbs moves along the ridge in
small steps. ``pairs(state, candidates, conjugates)`` chooses the pairs.
"""
from __future__ import annotations

import numpy as np

from .slice import SliceUpdate, coupled_nodes

__all__ = ["CollapsedSlice", "pairs"]


def pairs(state, sliced, conjugates) -> dict:
    """``{sliced node id: index into conjugates}``: ``sliced``, lone scalar nodes to slice;
    ``conjugates``, ``GroupConjugate`` updates of one node whose full conditional depends on
    the sliced node, which is not its child; each used at most once, first come first paired."""
    out, used = {}, set()
    for node in sliced:
        for k, rule in enumerate(conjugates):
            b = rule.nodes[0]
            if (k not in used and node.id in coupled_nodes(state, b)
                    and node.id not in state._children[b.id]):
                out[node.id] = k
                used.add(k)
                break
    return out


class CollapsedSlice:
    """Slice ``node`` with ``partner`` integrated out, then draw the partner (module docstring)."""
    name = "slice"
    adaptive = True

    def __init__(self, state, node, partner, update: SliceUpdate | None = None):
        self.state, self.node, self.partner = state, node, partner
        self.slice = update or SliceUpdate()

    def __reduce__(self):
        return CollapsedSlice, (self.state, self.node, self.partner, self.slice)

    def marginal_logp(self) -> float:
        """``log p(node | rest)`` up to a constant at the current values (partner integrated out)."""
        total = self.state.blanket_logp(self.node)
        if total == -np.inf:
            return total
        with np.errstate(all="ignore"):
            return total - self.partner.log_conditional()

    def draw(self, rng, state, node, width):
        """``(value, jump)`` of ``node``; the partner is drawn and written too."""
        value, jump = self.slice.draw(rng, state, node, width, logp=self.marginal_logp)
        state.set(node, value)
        state.refresh(node)
        self.partner.update(rng)
        return value, jump
