"""The kernel protocol shared by every sampler.

A kernel is a small configuration object whose methods are pure functions of
their arguments (the random generator aside): NamedTuple states in,
NamedTuple states out.  The chain driver calls, per chain::

    state = kernel.init(target, position)
    tuning = kernel.start_warmup(rng, target, state, n_warmup)
    for each warm-up iteration: state, tuning, info = kernel.warmup_step(rng, target, state, tuning)
    params = kernel.finish_warmup(tuning)
    for each draw: state, info = kernel.step(rng, target, state, params)

States have ``position`` and ``logdensity`` fields; ``info`` is a NamedTuple
(or a dict) of per-transition statistics recorded by the driver.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["Kernel", "KernelBase"]


@runtime_checkable
class Kernel(Protocol):
    """What the chain driver and :class:`~dcgraph.infer.gibbs.Gibbs` require of a sampler."""

    needs_gradient: bool

    def init(self, target, position: np.ndarray) -> Any: ...

    def start_warmup(self, rng: np.random.Generator, target, state, n_warmup: int) -> Any: ...

    def warmup_step(self, rng: np.random.Generator, target, state, tuning) -> tuple[Any, Any, Any]: ...

    def finish_warmup(self, tuning) -> Any: ...

    def step(self, rng: np.random.Generator, target, state, params) -> tuple[Any, Any]: ...


class KernelBase:
    """Convenience: ``kernel.sample(target, ...)`` runs :func:`dcgraph.infer.sample` with this kernel."""

    needs_gradient = False

    def sample(self, target, **kwargs):
        """Sample ``target`` with this kernel; keyword arguments as for :func:`dcgraph.infer.sample`."""
        from .chains import sample

        return sample(target, self, **kwargs)

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"
