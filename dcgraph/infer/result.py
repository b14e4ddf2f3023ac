"""The output of a sampling run: draws per chain, named parameters, statistics."""

from __future__ import annotations

import math
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np

__all__ = ["SampleResult", "ParameterLayout", "parse_layout"]

# sampler statistic -> ArviZ sample_stats name
_ARVIZ_STATS = {
    "accept_prob": "acceptance_rate",
    "n_leapfrog": "n_steps",
    "tree_depth": "tree_depth",
    "divergent": "diverging",
    "energy": "energy",
    "step_size": "step_size",
    "logdensity": "lp",
}


class ParameterLayout(NamedTuple):
    """One named parameter: its shape and its slice of the flat vector."""

    name: str
    shape: tuple
    start: int
    stop: int

    def flat_names(self) -> list[str]:
        """``name`` for a scalar, ``name[i]`` / ``name[i,j]`` (C order) otherwise."""
        if self.shape == ():
            return [self.name]
        return [f"{self.name}[{','.join(map(str, ix))}]" for ix in np.ndindex(*self.shape)]


def parse_layout(names, dim: int) -> tuple[ParameterLayout, ...]:
    """Layout of a ``dim``-vector from ``names``.

    ``None``: one vector parameter ``theta``; a sequence of ``dim`` strings:
    scalars; a mapping ``name -> shape`` (int or tuple) whose sizes add up to ``dim``.
    """
    if names is None:
        return (ParameterLayout("theta", (dim,), 0, dim),)
    if isinstance(names, Mapping):
        layout, start = [], 0
        for name, shape in names.items():
            shape = (int(shape),) if np.isscalar(shape) else tuple(int(s) for s in shape)
            size = math.prod(shape)
            layout.append(ParameterLayout(str(name), shape, start, start + size))
            start += size
        if start != dim:
            raise ValueError(f"parameter shapes in names cover {start} coordinates, the target has {dim}")
        return tuple(layout)
    if isinstance(names, str):
        raise TypeError("names must be a sequence of strings or a mapping name -> shape, not a string")
    names = [str(n) for n in names]
    if len(names) != dim:
        raise ValueError(f"got {len(names)} names for {dim} coordinates")
    if len(set(names)) != len(names):
        raise ValueError("parameter names must be unique")
    return tuple(ParameterLayout(n, (), i, i + 1) for i, n in enumerate(names))


class SampleResult:
    """Draws from ``n_chains`` chains of a sampler, with per-draw statistics.

    ``draws``: array ``(chains, draws, dim)`` on the flat parameter vector.
    ``stats``: statistic name -> array ``(chains, draws)`` (e.g. ``divergent``,
    ``n_leapfrog``, ``logdensity``).  ``tuned``: per chain, the kernel
    parameters found in warm-up.  ``elapsed``: seconds per chain,
    ``(warmup, sampling)``.  ``warmup_draws``/``warmup_stats`` are kept only
    when asked for.
    """

    def __init__(
        self,
        draws: np.ndarray,
        stats: dict[str, np.ndarray],
        layout: Sequence[ParameterLayout],
        seed: Any = None,
        tuned: Sequence[Any] = (),
        elapsed: np.ndarray | None = None,
        warmup_draws: np.ndarray | None = None,
        warmup_stats: dict[str, np.ndarray] | None = None,
        kernel: str = "",
    ):
        self.draws = np.asarray(draws, dtype=float)
        if self.draws.ndim != 3:
            raise ValueError(f"draws must have shape (chains, draws, dim), got {self.draws.shape}")
        self.stats = dict(stats)
        self.layout = tuple(layout)
        self.seed = seed
        self.tuned = list(tuned)
        self.elapsed = np.zeros((self.n_chains, 2)) if elapsed is None else np.asarray(elapsed, dtype=float)
        self.warmup_draws = warmup_draws
        self.warmup_stats = warmup_stats or {}
        self.kernel = kernel

    @property
    def n_chains(self) -> int:
        return self.draws.shape[0]

    @property
    def n_draws(self) -> int:
        return self.draws.shape[1]

    @property
    def dim(self) -> int:
        return self.draws.shape[2]

    @property
    def names(self) -> list[str]:
        """Flat names of the coordinates (``theta[0]``, ``mu``, ``beta[1,2]``...)."""
        return [n for p in self.layout for n in p.flat_names()]

    def __getitem__(self, name: str) -> np.ndarray:
        """Draws of parameter ``name`` with shape ``(chains, draws, *shape)``."""
        for p in self.layout:
            if p.name == name:
                return self.draws[:, :, p.start:p.stop].reshape(self.n_chains, self.n_draws, *p.shape)
        raise KeyError(f"no parameter {name!r}; parameters are {[p.name for p in self.layout]}")

    @property
    def posterior(self) -> dict[str, np.ndarray]:
        """Parameter name -> draws ``(chains, draws, *shape)``."""
        return {p.name: self[p.name] for p in self.layout}

    @property
    def divergences(self) -> int:
        """Number of divergent transitions after warm-up (0 for kernels without the notion)."""
        return int(sum(np.sum(v) for k, v in self.stats.items() if k == "divergent" or k.endswith(".divergent")))

    @property
    def n_grad_evals(self) -> int:
        """Gradient evaluations after warm-up (sum of leapfrog steps)."""
        return int(sum(np.sum(v) for k, v in self.stats.items() if k == "n_leapfrog" or k.endswith(".n_leapfrog")))

    def to_dict(self) -> dict[str, dict[str, np.ndarray]]:
        """Plain arrays: ``{"posterior": {name: (chains, draws, *shape)}, "sample_stats": {stat: (chains, draws)}}``."""
        return {"posterior": self.posterior, "sample_stats": {k: v.copy() for k, v in self.stats.items()}}

    def to_arviz(self):
        """An ``arviz.InferenceData`` (needs ArviZ; statistics renamed to ArviZ's conventions)."""
        try:
            import arviz
        except ImportError as exc:
            raise ImportError("to_arviz needs ArviZ (pip install arviz); to_dict() gives plain arrays") from exc
        stats = {_ARVIZ_STATS.get(k, k.replace(".", "_")): v for k, v in self.stats.items()}
        kwargs = {}
        if self.warmup_draws is not None:
            kwargs["warmup_posterior"] = {
                p.name: self.warmup_draws[:, :, p.start:p.stop].reshape(self.n_chains, -1, *p.shape) for p in self.layout
            }
            kwargs["warmup_sample_stats"] = {_ARVIZ_STATS.get(k, k.replace(".", "_")): v for k, v in self.warmup_stats.items()}
            kwargs["save_warmup"] = True
        return arviz.from_dict(posterior=self.posterior, sample_stats=stats, **kwargs)

    def summary(self, **kwargs):
        """:func:`dcgraph.infer.summary` of these draws."""
        from .summary import summary

        return summary(self, **kwargs)

    def __repr__(self) -> str:
        return (
            f"SampleResult(chains={self.n_chains}, draws={self.n_draws}, dim={self.dim}, "
            f"kernel={self.kernel or '?'}, divergences={self.divergences})"
        )
