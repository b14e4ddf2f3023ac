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
    index_base: int = 1

    def flat_names(self) -> list[str]:
        """``name`` for a scalar, ``name[i]`` / ``name[i,j]`` (C order) otherwise, indices
        counted from ``index_base`` (1 as in BUGS and Stan: ``alpha[3]`` is ``fit["alpha"][..., 2]``)."""
        if self.shape == ():
            return [self.name]
        b = self.index_base
        return [f"{self.name}[{','.join(str(i + b) for i in ix)}]" for ix in np.ndindex(*self.shape)]


def parse_layout(names, dim: int, index_base: int = 1) -> tuple[ParameterLayout, ...]:
    """Layout of a ``dim``-vector from ``names``.

    ``None``: one vector parameter ``theta``; a sequence of ``dim`` strings:
    scalars; a mapping ``name -> shape`` (int or tuple) whose sizes add up to ``dim``.
    ``index_base``: 1 (BUGS, Stan: ``theta[1]`` is the first coordinate) or 0.
    """
    if index_base not in (0, 1):
        raise ValueError(f"index_base must be 0 or 1, got {index_base!r}")
    if names is None:
        return (ParameterLayout("theta", (dim,), 0, dim, index_base),)
    if isinstance(names, Mapping):
        layout, start = [], 0
        for name, shape in names.items():
            shape = (int(shape),) if np.isscalar(shape) else tuple(int(s) for s in shape)
            size = math.prod(shape)
            layout.append(ParameterLayout(str(name), shape, start, start + size, index_base))
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
    return tuple(ParameterLayout(n, (), i, i + 1, index_base) for i, n in enumerate(names))


class SampleResult:
    """Draws from ``n_chains`` chains of a sampler, with per-draw statistics.

    ``draws``: array ``(chains, draws, dim)`` on the flat parameter vector.
    ``stats``: statistic name -> array ``(chains, draws)`` (e.g. ``divergent``,
    ``n_leapfrog``, ``logdensity``).  ``tuned``: per chain, the kernel
    parameters found in warm-up.  ``elapsed``: seconds per chain,
    ``(warmup, sampling)``.  ``warmup_draws``/``warmup_stats`` are kept only
    when asked for.  ``warmup``: warm-up iterations per chain (the first draw
    is iteration ``warmup + 1``, OpenBUGS's ``start``).

    A run stopped early (Ctrl-C, an error in a chain) is *incomplete*:
    ``statuses`` says how far each chain got, ``chain_draws`` holds every
    chain's draws so far, and ``draws`` the chains ``chain_ids`` that have
    draws, cut to the shortest of them so that every statistic stays valid.
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
        warmup: int = 0,
        statuses: Sequence[Any] = (),
        chain_draws: Sequence[np.ndarray] | None = None,
        chain_ids: Sequence[int] | None = None,
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
        self.warmup = int(warmup)
        self.statuses = tuple(statuses)
        self.chain_draws = list(chain_draws) if chain_draws is not None else list(self.draws)
        self.chain_ids = tuple(chain_ids) if chain_ids is not None else tuple(range(self.n_chains))

    @property
    def complete(self) -> bool:
        """False when sampling stopped early (see ``statuses``)."""
        return all(getattr(s, "stopped", None) is None for s in self.statuses)

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

    def transformed(self, fn, names=None) -> "SampleResult":
        """The same run with each draw ``theta`` replaced by ``fn(theta)`` (a flat vector),
        laid out by ``names`` (as for :func:`parse_layout`): e.g. constrained parameters
        from unconstrained ones, or monitored derived quantities.  Statistics, statuses
        and timings are kept; ``chain_draws`` and warm-up draws are transformed too."""
        def apply(draws, width=None):
            flat = draws.reshape(-1, draws.shape[-1])
            if not len(flat):
                return np.zeros((*draws.shape[:-1], width))
            out = np.array([np.asarray(fn(x), dtype=float).ravel() for x in flat])
            return out.reshape(*draws.shape[:-1], -1)

        if self.draws.shape[0] * self.draws.shape[1] == 0:
            raise ValueError("no draws to transform")
        draws = apply(self.draws)
        width = draws.shape[-1]
        base = self.layout[0].index_base if self.layout else 1
        return self._replace_draws(draws, parse_layout(names, width, base),
                                   [apply(d, width) for d in self.chain_draws],
                                   None if self.warmup_draws is None else apply(self.warmup_draws, width))

    def with_draws(self, extra: Mapping[str, np.ndarray]) -> "SampleResult":
        """The same run with more named quantities, each ``(chains, draws, *shape)`` for the
        chains in ``chain_ids`` (monitored logical nodes, predictions)."""
        arrays, layout, start = [self.draws], list(self.layout), self.dim
        base = self.layout[0].index_base if self.layout else 1
        for name, values in extra.items():
            values = np.asarray(values, dtype=float)
            if values.shape[:2] != self.draws.shape[:2]:
                raise ValueError(f"{name!r}: draws have shape {values.shape}, expected ({self.n_chains}, {self.n_draws}, ...)")
            if any(p.name == name for p in layout):
                raise ValueError(f"{name!r} is already a parameter of this result")
            size = math.prod(values.shape[2:])
            layout.append(ParameterLayout(str(name), values.shape[2:], start, start + size, base))
            arrays.append(values.reshape(self.n_chains, self.n_draws, size))
            start += size
        return self._replace_draws(np.concatenate(arrays, axis=2), tuple(layout), None, None)

    def _replace_draws(self, draws, layout, chain_draws, warmup_draws) -> "SampleResult":
        return SampleResult(
            draws, self.stats, layout, seed=self.seed, tuned=self.tuned, elapsed=self.elapsed,
            warmup_draws=warmup_draws, warmup_stats=self.warmup_stats if warmup_draws is not None else None,
            kernel=self.kernel, warmup=self.warmup, statuses=self.statuses, chain_draws=chain_draws,
            chain_ids=self.chain_ids,
        )

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
        coords, dims = {}, {}
        for p in self.layout:
            dims[p.name] = [f"{p.name}_dim_{k}" for k in range(len(p.shape))]
            for k, size in enumerate(p.shape):
                coords[f"{p.name}_dim_{k}"] = np.arange(p.index_base, p.index_base + size)
        return arviz.from_dict(posterior=self.posterior, sample_stats=stats, coords=coords, dims=dims, **kwargs)

    def to_csv(self, path) -> str:
        """Write one row per draw: ``chain``, ``draw`` (from ``warmup + 1``), every flat
        parameter name, then the sampler statistics; numbers in full precision."""
        stats = [k for k, v in self.stats.items() if np.shape(v) == (self.n_chains, self.n_draws)]
        header = ["chain", "draw", *self.names, *stats]
        m, n = self.n_chains, self.n_draws
        columns = [
            np.repeat(np.asarray(self.chain_ids, dtype=float), n),
            np.tile(np.arange(self.warmup + 1, self.warmup + n + 1, dtype=float), m),
            *self.draws.reshape(m * n, self.dim).T,
            *(np.asarray(self.stats[k], dtype=float).reshape(m * n) for k in stats),
        ]
        table = np.column_stack(columns) if columns else np.zeros((0, 0))
        fmt = ["%d", "%d"] + ["%.17g"] * (len(header) - 2)
        np.savetxt(path, table, fmt=fmt, delimiter=",", header=",".join(header), comments="")
        return str(path)

    def summary(self, **kwargs):
        """:func:`dcgraph.infer.summary` of these draws."""
        from .summary import summary

        return summary(self, **kwargs)

    def __repr__(self) -> str:
        text = (
            f"SampleResult(chains={self.n_chains}, draws={self.n_draws}, dim={self.dim}, "
            f"kernel={self.kernel or '?'}, divergences={self.divergences}"
        )
        if not self.complete:
            text += ", incomplete: " + "; ".join(s.describe() for s in self.statuses if s.stopped)
        return text + ")"
