"""Importance sampling (Gen's ``importance_sampling`` and ``importance_resampling``).

``importance_sampling(model, args, observations, n, proposal=None, proposal_args=())`` returns
``(traces, log_normalized_weights, log_ml_estimate)``: with no proposal each trace is
``generate(model, args, observations)`` (weight = log density of the observations); with a
proposal ``q(*proposal_args)`` over the latent choices the weight is
``generate``'s weight minus the proposal's log density. ``log_ml_estimate`` is
``logsumexp(log_weights) - log n``.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp

from ..choicemap import ChoiceMap
from ..generative import default_rng
from ..interface import _choices
from .batches import run_batches, split

__all__ = ["importance_sampling", "importance_resampling", "importance_batch"]


def _one(model, args, observations, proposal, proposal_args, rng, store):
    if proposal is None:
        return model.generate(args, observations, rng=rng, store=store)
    choices, pw, _ = proposal.propose(tuple(proposal_args), rng=rng, store=store)
    merged = ChoiceMap().merge(observations).merge(choices)
    trace, mw = model.generate(args, merged, rng=rng, store=store)
    return trace, mw - pw


def importance_batch(n, seed, model, args, observations, proposal, proposal_args, store):
    """``n`` weighted traces from ``numpy.random.default_rng(seed)`` (one executor task)."""
    rng = np.random.default_rng(seed)
    observations = _choices(observations)         # sent as a dict (pickles reliably)
    out = [_one(model, args, observations, proposal, proposal_args, rng, store)
           for _ in range(n)]
    return [t for t, _ in out], [w for _, w in out]


def _sample(model, args, observations, n, proposal, proposal_args, rng, store, executor,
            batches):
    if n < 1:
        raise ValueError(f"importance sampling needs n >= 1 samples, got {n}")
    observations = _choices(observations)
    args = tuple(args)
    if executor is None and batches is None:
        rng = rng or default_rng()
        out = [_one(model, args, observations, proposal, proposal_args, rng, store)
               for _ in range(n)]
        return [t for t, _ in out], np.array([w for _, w in out], dtype=float)
    sizes = split(n, batches or 4)
    parts = run_batches(executor, importance_batch, sizes, rng or default_rng(), model, args,
                        observations.to_dict(), proposal, tuple(proposal_args), store)
    traces = [t for ts, _ in parts for t in ts]
    return traces, np.array([w for _, ws in parts for w in ws], dtype=float)


def importance_sampling(model, args, observations, n: int, proposal=None, proposal_args=(), *,
                        rng=None, store=None, executor=None, batches=None):
    """``-> (traces, log_normalized_weights, log_ml_estimate)``. ``executor``/``batches``: run
    in ``batches`` tasks (default 4 when an executor is given) seeded from ``rng``."""
    traces, lw = _sample(model, args, observations, n, proposal, proposal_args, rng, store,
                         executor, batches)
    total = logsumexp(lw)
    return traces, lw - total, float(total - math.log(n))


def importance_resampling(model, args, observations, n: int, proposal=None, proposal_args=(),
                          *, rng=None, store=None, executor=None, batches=None):
    """``-> (trace, log_ml_estimate)``: one trace drawn in proportion to the weights."""
    rng = rng or default_rng()
    traces, lw = _sample(model, args, observations, n, proposal, proposal_args, rng, store,
                         executor, batches)
    total = logsumexp(lw)
    p = np.exp(lw - total)
    k = int(rng.choice(len(traces), p=p / p.sum()))
    return traces[k], float(total - math.log(n))
