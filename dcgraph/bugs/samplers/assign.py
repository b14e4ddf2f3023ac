"""Which sampler updates which node: ``assign(model, target, sampler) -> Assignment``.

``sampler="auto"`` chooses from the model graph, as JAGS and NIMBLE do: a conjugate update
(``conjugate.RULES``) for each parameter part whose nodes all have one, an exact draw by
enumeration for each discrete node, a slice update on the Markov blanket (``slice.SliceUpdate``)
for each remaining part of univariate nodes that NUTS cannot serve, and NUTS (on the
unconstrained scale, gradients from the traced model) for the other continuous parameters: one
block, or one per conditionally independent group of them (``components.nuts_blocks``). A
univariate node is sliced when its log density is piecewise constant in it (``step``, ``equals``,
``round``, ``trunc``, an index or a bound: a zero gradient, NUTS cannot move it) or when it shares
no Markov blanket with another NUTS node and its blanket is small (NUTS would run over it alone,
each gradient evaluating the whole model, where the slice evaluates its few blanket terms: the issue's "slice sampling for the
remaining univariate nodes; NUTS over blocks"). This is NIMBLE's ``configureHMC`` rule (NUTS where
derivatives serve, the default univariate samplers elsewhere) with JAGS's slice as that default. ``"nuts"``: NUTS for every continuous
parameter, enumeration for the discrete ones. ``"slice"``: coordinate-wise slice sampling of the
continuous parameters instead of NUTS. The node updates (conjugate and enumeration) evaluate only
Markov blankets (``nodes.NodeGibbs``); a discrete node whose blanket holds a truncated or censored
node is enumerated on the joint log density instead. The nodes of a conjugate part with disjoint
Markov blankets (``theta[i]`` with their own Poisson children) are drawn in one vectorised update
(``conjugate_groups``, printed "(vectorised)"); a lone sliced node whose value a lone conjugate
node's full conditional depends on (Pumps' ``alpha`` and ``beta``) is sliced with that node
integrated out, which is drawn right after it (``collapsed``). ``print(assignment)`` lists the
samplers per node, as NIMBLE's ``configureMCMC`` does.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...infer import NUTS, ExactConditional, Gibbs, Slice
from ...infer.adaptation import EARLY_WINDOWS
from .blanket import NodeState
from .components import nuts_blocks
from .conjugate import conjugacy
from .collapsed import CollapsedSlice, pairs
from .conjugate_groups import grouped
from .discrete import EnumerationSampler
from .interweave import Interweave, scale_groups
from .nodes import EnumerationUpdate, NodeGibbs, NodeKernel
from .slice import SliceUpdate, coupled_nodes, piecewise_constant

__all__ = ["Assignment", "assign", "SAMPLERS"]

SAMPLERS = ("auto", "nuts", "slice")


def _bugs_nuts() -> NUTS:
    """NUTS with the early metric windows: BUGS models' vague priors leave parameters on scales
    that differ by orders of magnitude, where the unit-metric warm-up iterations are the
    expensive ones (``dcgraph.infer.NUTS``, ``adapt_windows``)."""
    return NUTS(adapt_windows=EARLY_WINDOWS)


_CONTINUOUS = {"auto": ("NUTS", _bugs_nuts), "nuts": ("NUTS", _bugs_nuts), "slice": ("slice", Slice)}


@dataclass(frozen=True)
class Assignment:
    """``rows``: ``(sampler name, node names)`` in update order; ``kernel``: the MCMC kernel
    over ``[theta, discrete]``."""
    rows: tuple
    kernel: object

    def __str__(self) -> str:
        lines = []
        for k, (name, nodes) in enumerate(self.rows, 1):
            lines.append(f"[{k}] {name} sampler: {', '.join(nodes)}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)


def _node_label(p) -> str:
    if not p.shape:
        return p.name
    if len(p.indices) == 1:
        return f"{p.name}[{','.join(map(str, p.indices[0]))}]"
    lo = tuple(min(ix[d] for ix in p.indices) for d in range(len(p.shape)))
    hi = tuple(max(ix[d] for ix in p.indices) for d in range(len(p.shape)))
    rng = ",".join(str(a) if a == b else f"{a}:{b}" for a, b in zip(lo, hi))
    return f"{p.name}[{rng}] ({len(p.indices)} nodes)"


def _nodes(model, slot) -> list:
    return [model.graph.nodes[i.node] for i in slot.part.instances]


# A slice update evaluates its blanket term by term in Python (~6 evaluations per update), NUTS
# the whole model in compiled vectorised code: a lone node is sliced only when its blanket is small.
SLICE_MAX_BLANKET = 16


def _sliced(model, state, rest) -> set:
    """Indices into ``rest`` (``(parameter, coordinates)`` left to NUTS) of the parts to slice:
    every node scalar with a supported blanket and piecewise constant, or coupled to no other
    NUTS node with at most ``SLICE_MAX_BLANKET`` nodes in its blanket; repeated until no part
    moves (slicing one part can isolate another)."""
    parts = {k: _nodes(model, _slot_of(model, p)) for k, (p, _) in enumerate(rest)}
    candidates = {k for k, nodes in parts.items()
                  if all(n.instance.target_shape == () and state.supported(n) for n in nodes)}
    flat = {k: all(piecewise_constant(state, n) for n in parts[k]) for k in candidates}
    nuts = {n.id for nodes in parts.values() for n in nodes}
    sliced, moved = set(), True
    while moved:
        moved = False
        for k in sorted(candidates - sliced):
            small = all(len(state.blanket(n)) <= SLICE_MAX_BLANKET for n in parts[k])
            if flat[k] or (small and not any(coupled_nodes(state, n) & (nuts - {n.id})
                                             for n in parts[k])):
                sliced.add(k)
                nuts -= {n.id for n in parts[k]}
                moved = True
    return sliced


def _part_rules(model, state, slot, sampler):
    """``[(node, rule)]`` for every node of ``slot``'s part, or None when one has no node update."""
    nodes = _nodes(model, slot)
    if slot.discrete:
        if all(n.instance.target_shape == () and state.supported(n) for n in nodes):
            update = EnumerationUpdate()
            return [(n, update) for n in nodes]
        return None
    if sampler != "auto":
        return None
    rules = [conjugacy(state, n) for n in nodes]
    if any(r is None for r in rules) or len({r.name for r in rules}) != 1:
        return None
    group = grouped(state, list(zip(nodes, rules)))
    return [(tuple(nodes), group)] if group is not None else list(zip(nodes, rules))


def assign(model, target, sampler: str = "auto") -> Assignment:
    """The kernel for ``target`` (a ``BUGSTarget`` of ``model``) and its printable assignment."""
    if sampler not in SAMPLERS:
        raise ValueError(f"unknown sampler {sampler!r}; choose one of {', '.join(SAMPLERS)}")
    cname, ckernel = _CONTINUOUS[sampler]
    state = NodeState(model)
    rows, blocks, updates, node_parts, rest, fallback = [], {}, [], [], [], []
    order = list(reversed(list(zip(model.parameters, model.slots))))     # data upwards
    part_rules = [_part_rules(model, state, slot, sampler) for _, slot in order]
    if sampler == "auto":
        left = [k for k, (rules, (_, slot)) in enumerate(zip(part_rules, order))
                if rules is None and not slot.discrete]
        update = SliceUpdate()
        for j in _sliced(model, state, [order[k] for k in left]):
            part_rules[left[j]] = [(n, update) for n in _nodes(model, order[left[j]][1])]
    partner = _collapse(state, order, part_rules) if sampler == "auto" else {}
    for k, ((p, slot), rules) in enumerate(zip(order, part_rules)):
        idx = np.arange(slot.start, slot.stop) + (model.dim if slot.discrete else 0)
        if rules is not None:
            node_parts.append((slot, idx))
            if k in partner.values():
                continue                     # drawn with its sliced node (below)
            vectorised = (" (vectorised)" if getattr(rules[0][1], "grouped", False)
                          and len(rules[0][0]) > 1 else "")
            if k in partner:
                j = partner[k]
                other = _node_label(order[j][0])
                rows.append((f"slice ({other} integrated out)", (_node_label(p),)))
                rows.append((f"{part_rules[j][0][1].name} (with {_node_label(p)})", (other,)))
            else:
                rows.append((rules[0][1].name + vectorised, (_node_label(p),)))
            updates.extend(rules)
        elif slot.discrete:
            fallback.append((p, idx))
        else:
            rest.append((p, idx))
    if updates:
        gibbs = NodeGibbs(target, state, updates, node_parts)
        blocks["nodes"] = (gibbs.indices, NodeKernel(gibbs))
    for p, idx in fallback:
        rows.append(("enumeration (joint density)", (_node_label(p),)))
        blocks[f"discrete:{p.name}:{p.line}"] = (idx, ExactConditional(EnumerationSampler(target.logdensity, idx)))
    rest.reverse()
    split = nuts_blocks(model, state, rest) if rest and sampler == "auto" else []
    if len(split) > 1:
        for k, (ids, idx) in enumerate(split, 1):
            rows.append((f"{cname} (block {k} of {len(split)})", _block_labels(model, ids)))
            blocks[f"continuous:{k}"] = (idx, ckernel())
    elif rest:
        rows.append((cname, tuple(_node_label(p) for p, _ in rest)))
        blocks["continuous"] = (np.concatenate([i for _, i in rest]), ckernel())
    if not blocks:
        raise ValueError("the model has no unobserved stochastic nodes to sample")
    if len(blocks) == 1 and "continuous" in blocks and not model.ndisc and len(rest) == len(model.parameters):
        kernel = blocks["continuous"][1]
    else:
        kernel = Gibbs(blocks)
    in_rest = {i.node for p, _ in rest for i in _slot_of(model, p).part.instances}
    in_rest |= {n.id for n, rule in updates if rule.name == "slice"}
    per_node = [(n, r) for entry, rule in updates for n, r in (
        zip(entry, [rule.rule] * len(entry)) if getattr(rule, "grouped", False) else [(entry, rule)])]
    groups = [(t, b) for t, b in scale_groups(state, per_node) if all(n.id in in_rest for n in b)]
    if groups:
        kernel = Interweave(kernel, target, state, groups)
        rows.append(("interweaving (log-scale slice)", tuple(
            f"{t.name} with {_names(bs)}" for t, bs in groups)))
    return Assignment(tuple(rows), kernel)


def _collapse(state, order, part_rules) -> dict:
    """``{part k: part j}``: part ``k``'s lone sliced node is updated with part ``j``'s lone
    conjugate node integrated out, then ``j`` drawn (``collapsed.CollapsedSlice``, which
    becomes ``k``'s rule); a precision that interweaves is never a partner."""
    def lone(k):
        rules = part_rules[k]
        return rules[0] if rules is not None and len(rules) == 1 else (None, None)
    sliced = [k for k in range(len(order)) if getattr(lone(k)[1], "name", None) == "slice"]
    conjugates = []
    for k in range(len(order)):
        rule = lone(k)[1]
        if getattr(rule, "grouped", False) and rule.n == 1 and not scale_groups(
                state, [(rule.nodes[0], rule.rule)]):
            conjugates.append(k)
    found = pairs(state, [lone(k)[0] for k in sliced], [lone(j)[1] for j in conjugates])
    out = {}
    for k in sliced:
        node = lone(k)[0]
        if node.id in found:
            j = conjugates[found[node.id]]
            part_rules[k] = [(node, CollapsedSlice(state, node, lone(j)[1]))]
            out[k] = j
    return out


def _block_labels(model, ids) -> tuple:
    """Labels of nodes ``ids`` per variable, in program order: ``mu[2]``, ``theta[2,1:8] (8 nodes)``."""
    by_var = {}
    for n in sorted(ids):
        node = model.graph.nodes[n]
        by_var.setdefault(node.var, []).append(node)
    out = []
    for var, nodes in by_var.items():
        if len(nodes) == 1:
            out.append(nodes[0].name)
            continue
        shape = nodes[0].shape
        ix = np.array([np.unravel_index(int(o), shape) for n in nodes for o in n.offsets]) + 1
        rng = ",".join(str(a) if a == b else f"{a}:{b}" for a, b in zip(ix.min(0), ix.max(0)))
        out.append(f"{var}[{rng}] ({len(nodes)} nodes)")
    return tuple(out)


def _slot_of(model, p):
    return model.slots[model.parameters.index(p)]


def _names(nodes) -> str:
    counts = {}
    for n in nodes:
        counts[n.var] = counts.get(n.var, 0) + 1
    return ", ".join(f"{v} ({k} nodes)" if k > 1 else v for v, k in counts.items())
