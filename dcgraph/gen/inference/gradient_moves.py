"""Gradient-based moves on the selected continuous choices of a trace: Gen's ``hmc``,
``mala`` and ``map_optimize``, with gradients from ``choice_gradients`` and new values placed
with ``update``."""
from __future__ import annotations

import math

import numpy as np

from ..choicemap import ChoiceMap
from ..execution import NO_CHANGE
from ..generative import default_rng
from ..interface import _selection

__all__ = ["hmc", "mala", "map_optimize", "flatten", "unflatten"]


def flatten(cm: ChoiceMap):
    """The values of a choice map as one float vector, and the (address, shape) layout."""
    layout, parts = [], []
    for addr, v in cm.items():
        a = np.asarray(v, dtype=float)
        layout.append((addr, a.shape))
        parts.append(a.ravel())
    return (np.concatenate(parts) if parts else np.zeros(0)), layout


def unflatten(vec, layout) -> ChoiceMap:
    cm, k = ChoiceMap(), 0
    for addr, shape in layout:
        size = int(np.prod(shape)) if shape else 1
        chunk = vec[k:k + size]
        cm.set_value(addr, float(chunk[0]) if shape == () else chunk.reshape(shape).copy())
        k += size
    return cm


def _grad(trace, selection):
    _, values, grads = trace.get_gen_fn().choice_gradients(trace, selection, None)
    x, layout = flatten(values)
    g, _ = flatten(grads)
    return x, g, layout


def _move(trace, x, layout):
    args = trace.get_args()
    new, w, _, _ = trace.get_gen_fn().update(trace, args, (NO_CHANGE,) * len(args),
                                             unflatten(x, layout), None)
    return new, w


def hmc(trace, selection, L: int = 10, eps: float = 0.1, *, rng=None):
    """Hamiltonian Monte Carlo (unit mass, ``L`` leapfrog steps of size ``eps``);
    ``-> (trace, accepted)``."""
    rng, selection = rng or default_rng(), _selection(selection)
    x, g, layout = _grad(trace, selection)
    p = rng.standard_normal(x.size)
    p0 = p
    new = trace
    for _ in range(L):
        p = p + 0.5 * eps * g
        x = x + eps * p
        new, _ = _move(new, x, layout)
        _, g, _ = _grad(new, selection)
        p = p + 0.5 * eps * g
    alpha = new.get_score() - trace.get_score() - 0.5 * p @ p + 0.5 * p0 @ p0
    if math.log(rng.random()) < alpha:
        return new, True
    return trace, False


def mala(trace, selection, tau: float, *, rng=None):
    """Metropolis-adjusted Langevin: ``x' ~ N(x + tau grad, 2 tau)``; ``-> (trace, accepted)``."""
    rng, selection = rng or default_rng(), _selection(selection)
    x, g, layout = _grad(trace, selection)
    sd = math.sqrt(2 * tau)
    mean = x + tau * g
    x_new = mean + sd * rng.standard_normal(x.size)
    new, w = _move(trace, x_new, layout)
    _, g_new, _ = _grad(new, selection)
    back = x_new + tau * g_new
    fwd_lp = -0.5 * np.sum((x_new - mean) ** 2) / sd ** 2
    bwd_lp = -0.5 * np.sum((x - back) ** 2) / sd ** 2
    if math.log(rng.random()) < w - fwd_lp + bwd_lp:
        return new, True
    return trace, False


def map_optimize(trace, selection, max_step_size: float = 0.1, tau: float = 0.5,
                 min_step_size: float = 1e-16):
    """One backtracking gradient-ascent step on the score in the selected choices (Gen's
    ``map_optimize``): the step halves (by ``tau``) until the score improves."""
    selection = _selection(selection)
    x, g, layout = _grad(trace, selection)
    step = max_step_size
    while step >= min_step_size:
        new, _ = _move(trace, x + step * g, layout)
        if new.get_score() > trace.get_score():
            return new
        step *= tau
    return trace
