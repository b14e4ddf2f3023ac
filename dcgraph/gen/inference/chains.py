"""Independent MCMC chains over traces, optionally on an ``executor``.

``run_chains(model, args, observations, step, n_chains, n_iter)`` starts each chain from
``generate(model, args, observations)`` and applies ``step(trace, rng) -> trace`` ``n_iter``
times (e.g. ``lambda t, rng: mh(t, select("x"), rng=rng)[0]``, but a module-level function
when chains run in processes); ``-> [[record(trace) per iteration] per chain]`` with
``record`` defaulting to the choices as a nested dict. Chain ``k`` is seeded from ``rng``, so
results do not depend on the executor.
"""
from __future__ import annotations

import numpy as np

from ..generative import default_rng
from ..interface import _choices
from .batches import run_batches

__all__ = ["run_chains"]


def _choices_dict(trace):
    return trace.get_choices().to_dict()


def _chain(size, seed, model, args, observations, step, n_iter, record, store):
    rng = np.random.default_rng(seed)
    trace, _ = model.generate(args, _choices(observations), rng=rng, store=store)
    out = []
    for _ in range(n_iter):
        trace = step(trace, rng)
        out.append(record(trace))
    return out


def run_chains(model, args, observations, step, n_chains: int, n_iter: int, *, record=None,
               rng=None, store=None, executor=None) -> list:
    obs = _choices(observations).to_dict()
    return run_batches(executor, _chain, [1] * n_chains, rng or default_rng(), model,
                       tuple(args), obs, step, n_iter, record or _choices_dict, store)
