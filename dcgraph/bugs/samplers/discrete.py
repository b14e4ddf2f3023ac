"""Exact Gibbs updates of integer-valued nodes by enumerating their full conditional.

For each coordinate in turn the conditional log density is evaluated at the current value and
at values stepping outwards from it (one side stops where the density is zero, i.e. outside the
support, or falls ``tail`` nats below the best value seen, or after ``max_values`` values); the
new value is drawn from the normalised weights. Finite supports (``dcat``, ``dbern``, ``dbin``)
are enumerated exactly; unbounded ones (``dpois``, ``dnegbin``) are truncated where the
neglected mass is below ``exp(-tail)`` per value (with a unimodal conditional).
"""
from __future__ import annotations

import numpy as np

__all__ = ["EnumerationSampler", "enumerate_conditional", "draw_enumerated"]


def enumerate_conditional(at, current: int, tail: float = 40.0, max_values: int = 10_000):
    """``(values, log weights)``: ``at(v)`` (the log conditional at ``v``) at ``current`` and
    outwards from it until the support ends, the weight falls ``tail`` nats below the best, or
    ``max_values`` values were seen."""
    values, logw = [current], [at(current)]
    best = logw[0]
    if not np.isfinite(best):
        raise ValueError(f"zero density at the current value {current}")
    for step in (1, -1):
        v = current + step
        while len(values) < max_values:
            lp = at(v)
            if not np.isfinite(lp):
                break
            values.append(v)
            logw.append(lp)
            best = max(best, lp)
            if lp < best - tail:
                break
            v += step
    return np.array(values, dtype=float), np.array(logw)


def draw_enumerated(rng: np.random.Generator, values, logw) -> float:
    """One value drawn with probabilities proportional to ``exp(logw)``."""
    w = np.exp(logw - logw.max())
    return values[rng.choice(len(values), p=w / w.sum())]


class EnumerationSampler:
    """``sampler(rng, x) -> new values of x[indices]`` for ``dcgraph.infer.ExactConditional``.

    ``logdensity(x)``: the joint log density of the full vector ``x``."""

    def __init__(self, logdensity, indices, tail: float = 40.0, max_values: int = 10_000):
        self.logdensity = logdensity
        self.indices = np.asarray(indices, dtype=int)
        self.tail = float(tail)
        self.max_values = int(max_values)

    def conditional(self, x: np.ndarray, i: int):
        """``(values, log weights)`` of coordinate ``i`` of ``x`` given the others."""
        x = np.array(x, dtype=float)

        def at(v):
            x[i] = v
            return self.logdensity(x)

        try:
            return enumerate_conditional(at, round(float(x[i])), self.tail, self.max_values)
        except ValueError as exc:
            raise ValueError(f"discrete coordinate {i}: {exc}") from None

    def __call__(self, rng: np.random.Generator, x: np.ndarray) -> np.ndarray:
        x = np.array(x, dtype=float)
        for i in self.indices:
            x[i] = draw_enumerated(rng, *self.conditional(x, int(i)))
        return x[self.indices]
