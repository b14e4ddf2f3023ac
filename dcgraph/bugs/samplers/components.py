"""Independent NUTS blocks: the continuous parameters left to NUTS split where the graph does.

``nuts_blocks(model, state, rest)`` groups the coordinates of ``rest`` (``(parameter,
coordinates)`` pairs) into the connected components of the Markov-blanket coupling between
their nodes (``slice.coupled_nodes``; the nodes other samplers update are held fixed while
NUTS runs, so they do not couple). Conditionally independent components (Magnesium's six
priors, each its own model) then get their own NUTS with its own step size, metric and tree:
one joint block would run every component at the step size of the hardest one, and a
divergence in one funnel would cut the trajectories of all. The split is used only when it
yields between 2 and ``MAX_NUTS_BLOCKS`` components (each block's gradient evaluates the whole
model); otherwise ``rest`` stays one block. A parameter part whose coordinates are not one per
node (a simplex or a Wishart block) stays whole.
"""
from __future__ import annotations

import numpy as np

from .slice import coupled_nodes

__all__ = ["nuts_blocks", "MAX_NUTS_BLOCKS"]

MAX_NUTS_BLOCKS = 8


def _units(model, rest):
    """``[(node ids, coordinates)]``: one unit per node, or per part when not one coordinate each."""
    units = []
    for p, idx in rest:
        slot = model.slots[model.parameters.index(p)]
        nodes = [i.node for i in slot.part.instances]
        if len(nodes) == len(idx):
            units.extend(([n], np.array([i])) for n, i in zip(nodes, idx))
        else:
            units.append((nodes, np.asarray(idx)))
    return units


def nuts_blocks(model, state, rest) -> list:
    """``[(node ids, coordinates)]`` per independent block, in coordinate order, or one block."""
    units = _units(model, rest)
    owner = {n: k for k, (nodes, _) in enumerate(units) for n in nodes}
    root = list(range(len(units)))

    def find(k):
        while root[k] != k:
            root[k] = root[root[k]]
            k = root[k]
        return k

    for k, (nodes, _) in enumerate(units):
        for n in nodes:
            for m in coupled_nodes(state, state.graph.nodes[n]):
                if m in owner:
                    root[find(k)] = find(owner[m])
    groups = {}
    for k in range(len(units)):
        groups.setdefault(find(k), []).append(k)
    if not 2 <= len(groups) <= MAX_NUTS_BLOCKS:
        return [([n for nodes, _ in units for n in nodes], np.concatenate([i for _, i in units]))]
    blocks = []
    for ks in groups.values():
        idx = np.concatenate([units[k][1] for k in ks])
        order = np.argsort(idx)
        blocks.append(([n for k in ks for n in units[k][0]], idx[order]))
    return sorted(blocks, key=lambda b: int(b[1][0]))
