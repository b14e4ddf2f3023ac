"""Learning the parameters of a generative function by stochastic gradient ascent on the log
likelihood of data (Gen's ``train!``), with threaded gradient accumulation.

``train(model, data_generator, store, optimiser, minibatch=64, threads=4)``: each minibatch
draws ``minibatch`` examples ``(args, constraints) = data_generator(rng)``, generates a trace
for each and accumulates ``1/minibatch`` times its parameter gradients. ``threads`` workers
take examples from a shared counter (traces of stochastic control flow differ in cost, so work
is handed out dynamically), each into its own ``PrivateAccumulator``; the accumulators are
summed into the store after the minibatch and ``apply_update`` takes one optimiser step.
Example ``i`` uses its own generator seeded from ``rng``, so the samples, and the gradients up
to summation order, do not depend on ``threads``. The GIL limits the speedup to the time spent
in numpy code that releases it.
"""
from __future__ import annotations

import concurrent.futures as cf
import itertools
import threading

import numpy as np

from .generative import default_rng
from .interface import _choices
from .optimizers import apply_update

__all__ = ["train", "minibatch_gradients"]


def _example(model, data_generator, seed, store, scale):
    rng = np.random.default_rng(seed)
    args, constraints = data_generator(rng)
    trace, w = model.generate(tuple(args), _choices(constraints), rng=rng, store=store)
    model.accumulate_param_gradients(trace, None, scale)
    return w


def minibatch_gradients(model, data_generator, store, seeds, threads: int = 1,
                        pool: cf.ThreadPoolExecutor | None = None) -> float:
    """Accumulate ``1/len(seeds)`` times the gradients of one example per seed into ``store``;
    ``-> mean generate weight`` (the data's log likelihood under the model)."""
    n = len(seeds)
    if threads <= 1:
        return sum(_example(model, data_generator, s, store, 1.0 / n) for s in seeds) / n
    counter, lock = itertools.count(), threading.Lock()
    accumulators = [store.private_accumulator() for _ in range(threads)]
    weights = [0.0] * n

    def work(acc):
        while True:
            with lock:
                i = next(counter)
            if i >= n:
                return
            weights[i] = _example(model, data_generator, seeds[i], acc, 1.0 / n)

    own = pool is None
    pool = pool or cf.ThreadPoolExecutor(threads)
    try:
        for f in [pool.submit(work, acc) for acc in accumulators]:
            f.result()
    finally:
        if own:
            pool.shutdown()
    for acc in accumulators:
        acc.merge_into(store)
    return sum(weights) / n


def train(model, data_generator, store, optimiser, *, num_minibatch: int = 100,
          minibatch: int = 64, threads: int = 4, rng=None, callback=None) -> list:
    """``num_minibatch`` optimiser steps; ``-> list of each minibatch's mean log likelihood``.
    ``callback(i, mean_log_likelihood)`` is called after each step."""
    rng = rng or default_rng()
    history = []
    pool = cf.ThreadPoolExecutor(threads) if threads > 1 else None
    try:
        for i in range(num_minibatch):
            seeds = [int(s) for s in rng.integers(0, 2**63 - 1, size=minibatch)]
            ll = minibatch_gradients(model, data_generator, store, seeds, threads, pool)
            apply_update(store, optimiser)
            history.append(ll)
            if callback is not None:
                callback(i, ll)
    finally:
        if pool is not None:
            pool.shutdown()
    return history
