"""Which sampler updates which node: ``assign(model, sampler) -> Assignment``.

``sampler="nuts"`` (and ``"auto"``): one NUTS block for every continuous parameter (on the
unconstrained scale, gradients from the traced model) and exact enumeration for each discrete
node, in a systematic-scan Gibbs sweep. ``"slice"``: coordinate-wise slice sampling of the
continuous parameters instead of NUTS. ``print(assignment)`` lists the samplers per node, as
NIMBLE's ``configureMCMC`` does.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...infer import NUTS, ExactConditional, Gibbs, Slice
from .discrete import EnumerationSampler

__all__ = ["Assignment", "assign", "SAMPLERS"]

SAMPLERS = ("auto", "nuts", "slice")
_CONTINUOUS = {"auto": ("NUTS", NUTS), "nuts": ("NUTS", NUTS), "slice": ("slice", Slice)}


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


def _node_label(p) -> str:
    if not p.shape:
        return p.name
    if len(p.indices) == 1:
        return f"{p.name}[{','.join(map(str, p.indices[0]))}]"
    lo = tuple(min(ix[d] for ix in p.indices) for d in range(len(p.shape)))
    hi = tuple(max(ix[d] for ix in p.indices) for d in range(len(p.shape)))
    rng = ",".join(str(a) if a == b else f"{a}:{b}" for a, b in zip(lo, hi))
    return f"{p.name}[{rng}] ({len(p.indices)} nodes)"


def assign(model, target, sampler: str = "auto") -> Assignment:
    """The kernel for ``target`` (a ``BUGSTarget`` of ``model``) and its printable assignment."""
    if sampler not in SAMPLERS:
        raise ValueError(f"unknown sampler {sampler!r}; choose one of {', '.join(SAMPLERS)}")
    cname, ckernel = _CONTINUOUS[sampler]
    continuous = [p for p in model.parameters if not p.discrete]
    discrete = [p for p in model.parameters if p.discrete]
    rows, blocks = [], {}
    if continuous:
        rows.append((cname, tuple(_node_label(p) for p in continuous)))
        blocks["continuous"] = (np.arange(model.dim), ckernel())
    for p in discrete:
        idx = np.arange(model.dim + p.slice.start, model.dim + p.slice.stop)
        rows.append(("enumeration", (_node_label(p),)))
        blocks[f"discrete:{p.name}:{p.line}"] = (idx, ExactConditional(EnumerationSampler(target.logdensity, idx)))
    if not blocks:
        raise ValueError("the model has no unobserved stochastic nodes to sample")
    kernel = blocks["continuous"][1] if len(blocks) == 1 and continuous else Gibbs(blocks)
    return Assignment(tuple(rows), kernel)
