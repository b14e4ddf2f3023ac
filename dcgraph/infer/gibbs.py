"""Gibbs composition: update named blocks of coordinates in turn, each with its own kernel.

A block's kernel sees a :class:`BlockTarget`, the joint log density as a
function of the block's coordinates with every other coordinate held at its
current value (the full conditional up to a constant).  Any kernel works
there, including :class:`ExactConditional`, which draws the block from a
user-supplied exact conditional sampler (the usual choice for discrete
blocks).
"""

from __future__ import annotations

import math
from typing import Callable, Mapping, NamedTuple

import numpy as np

from .kernel import KernelBase
from .mh import MHState
from .target import InvalidPointError, check_point

__all__ = ["Gibbs", "ExactConditional", "BlockTarget"]


class BlockTarget:
    """The log density of ``base`` restricted to ``indices``, the other coordinates fixed at ``context``."""

    def __init__(self, base, context: np.ndarray, indices: np.ndarray):
        self.base = base
        self.context = context
        self.indices = indices
        self.has_grad = getattr(base, "has_grad", True)
        self.dim = indices.shape[0]

    def full(self, x: np.ndarray) -> np.ndarray:
        """The full parameter vector with the block set to ``x``."""
        theta = self.context.copy()
        theta[self.indices] = x
        return theta

    def logdensity(self, x: np.ndarray) -> float:
        return self.base.logdensity(self.full(x))

    def logdensity_and_grad(self, x: np.ndarray):
        logp, grad = self.base.logdensity_and_grad(self.full(x))
        return logp, grad[self.indices]


class ExactInfo(NamedTuple):
    """An exact conditional draw is always accepted; nothing to report."""


class ExactConditional(KernelBase):
    """Draw a block exactly from its full conditional.

    ``sampler(rng, theta) -> values`` receives the generator and a copy of the
    full current parameter vector and returns the block's new values (one per
    block coordinate).  Only meaningful inside :class:`Gibbs`.
    """

    needs_gradient = False

    def __init__(self, sampler: Callable[[np.random.Generator, np.ndarray], np.ndarray]):
        if not callable(sampler):
            raise TypeError(f"sampler must be callable, got {type(sampler).__name__}")
        self.sampler = sampler

    def init(self, target, position) -> MHState:
        return MHState(np.array(position, dtype=float), math.nan)

    def start_warmup(self, rng, target, state, n_warmup):
        return None

    def warmup_step(self, rng, target, state, tuning):
        state, info = self.step(rng, target, state, None)
        return state, tuning, info

    def finish_warmup(self, tuning):
        return None

    def step(self, rng, target, state, params):
        if not isinstance(target, BlockTarget):
            raise TypeError("ExactConditional can only update a block inside Gibbs")
        values = np.asarray(self.sampler(rng, target.full(state.position)), dtype=float).reshape(-1)
        if values.shape != state.position.shape:
            raise ValueError(
                f"exact conditional sampler returned {values.shape[0]} values for a block of "
                f"{state.position.shape[0]} coordinates"
            )
        return MHState(values, math.nan), ExactInfo()


class Gibbs(KernelBase):
    """Systematic-scan Gibbs sampler over named blocks.

    ``blocks`` maps a block name to ``(indices, kernel)``; indices are an int,
    a slice or a sequence of ints into the parameter vector.  Blocks must be
    disjoint and together cover every coordinate.  Statistics are reported as
    ``"<block>.<field>"``.
    """

    def __init__(self, blocks: Mapping[str, tuple]):
        if not blocks:
            raise ValueError("Gibbs needs at least one block")
        self.blocks = {}
        for name, spec in blocks.items():
            try:
                indices, kernel = spec
            except (TypeError, ValueError):
                raise TypeError(f"block {name!r} must be (indices, kernel), got {spec!r}") from None
            if not hasattr(kernel, "step") or not hasattr(kernel, "init"):
                raise TypeError(f"block {name!r}: {kernel!r} is not a kernel")
            self.blocks[str(name)] = (indices, kernel)
        self.needs_gradient = any(k.needs_gradient for _, k in self.blocks.values())
        self._layout_cache = {}

    def _resolved(self, dim: int):
        """``[(name, indices, kernel)]`` for a ``dim``-vector, validated once per dimension."""
        if dim not in self._layout_cache:
            self._layout_cache[dim] = self._resolve(dim)
        return self._layout_cache[dim]

    def _resolve(self, dim: int):
        owner = np.full(dim, -1)
        resolved = []
        for b, (name, (indices, kernel)) in enumerate(self.blocks.items()):
            if isinstance(indices, slice):
                idx = np.arange(dim)[indices]
            else:
                idx = np.atleast_1d(np.asarray(indices))
                if idx.dtype.kind not in "iu":
                    raise TypeError(f"block {name!r}: indices must be integers or a slice")
            if idx.size == 0:
                raise ValueError(f"block {name!r} has no coordinates")
            if idx.min() < -dim or idx.max() >= dim:
                raise ValueError(f"block {name!r}: indices {idx.tolist()} out of range for dimension {dim}")
            idx = idx % dim
            clash = idx[owner[idx] >= 0]
            if clash.size:
                raise ValueError(f"block {name!r} overlaps another block at coordinates {sorted(set(clash.tolist()))}")
            owner[idx] = b
            resolved.append((name, idx, kernel))
        missing = np.flatnonzero(owner < 0)
        if missing.size:
            raise ValueError(f"coordinates {missing.tolist()} belong to no Gibbs block")
        return resolved

    def init(self, target, position) -> MHState:
        position = np.array(position, dtype=float)
        logp, _ = check_point(target, position, need_grad=False)
        self._resolved(position.shape[0])
        return MHState(position, logp)

    def _sweep(self, rng, target, state, per_block, warm: bool):
        theta = state.position.copy()
        logp = state.logdensity
        infos = {}
        new_tuning = {}
        for name, idx, kernel in self._resolved(theta.shape[0]):
            block_target = BlockTarget(target, theta.copy(), idx)
            try:
                block_state = kernel.init(block_target, theta[idx])
            except InvalidPointError as exc:
                raise InvalidPointError(f"Gibbs block {name!r}, after the previous blocks' updates: {exc}") from None
            if warm:
                block_state, new_tuning[name], info = kernel.warmup_step(rng, block_target, block_state, per_block[name])
            else:
                block_state, info = kernel.step(rng, block_target, block_state, per_block[name])
            theta[idx] = block_state.position
            logp = block_state.logdensity
            fields = info._asdict() if hasattr(info, "_asdict") else dict(info)
            for key, value in fields.items():
                infos[f"{name}.{key}"] = value
        if not logp == logp:
            logp = float(target.logdensity(theta))
        return MHState(theta, float(logp)), new_tuning, infos

    def start_warmup(self, rng, target, state, n_warmup):
        tuning = {}
        for name, idx, kernel in self._resolved(state.position.shape[0]):
            block_target = BlockTarget(target, state.position.copy(), idx)
            block_state = kernel.init(block_target, state.position[idx])
            tuning[name] = kernel.start_warmup(rng, block_target, block_state, n_warmup)
        return tuning

    def warmup_step(self, rng, target, state, tuning):
        return self._sweep(rng, target, state, tuning, warm=True)

    def finish_warmup(self, tuning):
        return {name: self.blocks[name][1].finish_warmup(t) for name, t in tuning.items()}

    def step(self, rng, target, state, params):
        state, _, infos = self._sweep(rng, target, state, params, warm=False)
        return state, infos
