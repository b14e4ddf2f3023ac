"""Particle filtering over traces (Gen's particle filter API).

``state = initialize_particle_filter(model, args, observations, n)`` generates ``n`` traces;
``particle_filter_step(state, new_args, argdiffs, observations)`` extends each by ``update``
(Unfold-based models extend in one kernel call) or, with a proposal
``proposal(trace, *proposal_args)``, by its choices; ``maybe_resample(state, ess_threshold,
method)`` resamples (``"multinomial"``, ``"stratified"``, ``"residual"``) when the effective
sample size falls below the threshold, folding the weights' mean into the log marginal
likelihood estimate; ``log_ml_estimate(state)``; ``rejuvenate(state, move)`` applies an MCMC
move to every particle.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp

from ..choicemap import ChoiceMap
from ..generative import default_rng
from ..interface import _choices
from .batches import run_batches, split

__all__ = ["ParticleFilterState", "initialize_particle_filter", "particle_filter_step",
           "maybe_resample", "log_ml_estimate", "effective_sample_size", "get_traces",
           "get_log_weights", "sample_unweighted_traces", "rejuvenate", "resample_indices"]


class ParticleFilterState:
    """``traces``, unnormalised ``log_weights``, the log ML accumulated at resampling steps,
    ``parents`` (indices chosen at the last resampling) and the ``rng``."""

    __slots__ = ("traces", "log_weights", "log_ml_est", "parents", "rng")

    def __init__(self, traces, log_weights, rng):
        self.traces, self.log_weights = list(traces), np.asarray(log_weights, dtype=float)
        self.log_ml_est, self.parents, self.rng = 0.0, np.arange(len(traces)), rng

    def __len__(self):
        return len(self.traces)


def _proposed(trace_or_none, model, args, observations, proposal, proposal_args, rng, store):
    choices, pw, _ = proposal.propose((*(() if trace_or_none is None else (trace_or_none,)),
                                       *proposal_args), rng=rng, store=store)
    return ChoiceMap().merge(observations).merge(choices), pw


def _init_batch(n, seed, model, args, observations, proposal, proposal_args, store):
    rng = np.random.default_rng(seed)
    observations = _choices(observations)         # sent as a dict (pickles reliably)
    traces, lws = [], []
    for _ in range(n):
        cons, pw = observations, 0.0
        if proposal is not None:
            cons, pw = _proposed(None, model, args, observations, proposal, proposal_args, rng,
                                 store)
        tr, w = model.generate(args, cons, rng=rng, store=store)
        traces.append(tr)
        lws.append(w - pw)
    return traces, lws


def initialize_particle_filter(model, args, observations, n: int, proposal=None,
                               proposal_args=(), *, rng=None, store=None, executor=None,
                               batches=None) -> ParticleFilterState:
    """``n`` particles from ``generate`` (or from ``proposal(*proposal_args)``)."""
    rng = rng or default_rng()
    obs = _choices(observations)
    if executor is None and batches is None:
        traces, lws = _init_batch(n, int(rng.integers(2**63 - 1)), model, tuple(args), obs,
                                  proposal, tuple(proposal_args), store)
    else:
        parts = run_batches(executor, _init_batch, split(n, batches or 4), rng, model,
                            tuple(args), obs.to_dict(), proposal, tuple(proposal_args), store)
        traces = [t for ts, _ in parts for t in ts]
        lws = [w for _, ws in parts for w in ws]
    return ParticleFilterState(traces, lws, rng)


def particle_filter_step(state, new_args, argdiffs, observations, proposal=None,
                         proposal_args=()):
    """Extend every particle to ``new_args`` with the new ``observations``; ``-> state``."""
    obs = _choices(observations)
    rng, new_args, argdiffs = state.rng, tuple(new_args), tuple(argdiffs)
    for i, tr in enumerate(state.traces):
        cons, pw = obs, 0.0
        if proposal is not None:
            cons, pw = _proposed(tr, None, new_args, obs, proposal, proposal_args, rng, None)
        new, w, _, discard = tr.get_gen_fn().update(tr, new_args, argdiffs, cons, rng)
        if not discard.is_empty():
            raise ValueError(f"particle_filter_step: the update discarded choices "
                             f"{discard.to_dict()}; a step may only add choices")
        state.traces[i] = new
        state.log_weights[i] += w - pw
    return state


def effective_sample_size(log_weights) -> float:
    lw = np.asarray(log_weights, dtype=float)
    w = np.exp(lw - logsumexp(lw))
    return float(1.0 / np.sum(w * w))


def resample_indices(weights, n: int, method: str, rng) -> np.ndarray:
    """Ancestor indices for normalised ``weights``."""
    if method == "multinomial":
        return rng.choice(len(weights), size=n, p=weights)
    cum = np.cumsum(weights)
    cum[-1] = 1.0
    if method == "stratified":
        u = (np.arange(n) + rng.random(n)) / n
        return np.searchsorted(cum, u, side="right")
    if method == "residual":
        copies = np.floor(n * weights).astype(int)
        idx = np.repeat(np.arange(len(weights)), copies)
        rest = n - idx.size
        if rest:
            res = n * weights - copies
            extra = rng.choice(len(weights), size=rest, p=res / res.sum())
            idx = np.concatenate([idx, extra])
        return idx
    raise ValueError(f"unknown resampling method {method!r}: use 'multinomial', "
                     f"'stratified' or 'residual'")


def maybe_resample(state, ess_threshold: float | None = None, method: str = "multinomial",
                   ) -> bool:
    """Resample when ESS < ``ess_threshold`` (default n/2); ``-> whether it did``."""
    n = len(state)
    threshold = n / 2 if ess_threshold is None else ess_threshold
    if effective_sample_size(state.log_weights) >= threshold:
        return False
    total = logsumexp(state.log_weights)
    state.log_ml_est += float(total - math.log(n))
    weights = np.exp(state.log_weights - total)
    idx = resample_indices(weights / weights.sum(), n, method, state.rng)
    state.traces = [state.traces[i] for i in idx]
    state.log_weights = np.zeros(n)
    state.parents = np.asarray(idx)
    return True


def log_ml_estimate(state) -> float:
    return float(state.log_ml_est + logsumexp(state.log_weights) - math.log(len(state)))


def get_traces(state) -> list:
    return state.traces


def get_log_weights(state) -> np.ndarray:
    return state.log_weights


def sample_unweighted_traces(state, n: int) -> list:
    lw = state.log_weights
    w = np.exp(lw - logsumexp(lw))
    return [state.traces[i] for i in state.rng.choice(len(state), size=n, p=w / w.sum())]


def rejuvenate(state, move) -> None:
    """Apply ``move(trace) -> (trace, accepted)`` (e.g. ``lambda t: mh(t, sel)``) to every
    particle; weights are unchanged (the move keeps the posterior invariant)."""
    state.traces = [move(tr)[0] for tr in state.traces]
