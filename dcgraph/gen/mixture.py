"""Gen's ``HeterogeneousMixture`` and ``HomogeneousMixture`` as distributions for ``@``.

``HeterogeneousMixture([uniform, beta])(weights, (0.0, 3.4), (2.3, 1.0))`` is the mixture of
``uniform(0, 3.4)`` and ``beta(2.3, 1.0)`` with ``weights``: ``logpdf(x) = logsumexp_k(log w_k +
log p_k(x))``; a draw picks a component by weight and draws from it. ``HomogeneousMixture(
family)(weights, args_1, args_2, ...)`` is the same with one family. (Gen.jl passes the
components' arguments flattened; here each component gets a tuple.)
"""
from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from .execution import draw, logpdf

__all__ = ["HeterogeneousMixture", "HomogeneousMixture", "MixtureDistribution"]


class MixtureDistribution:
    """A finite mixture of distribution instances; ``dist @ addr`` makes it a choice."""

    def __init__(self, weights, components):
        w = np.asarray(weights, dtype=float)
        if w.ndim != 1 or len(w) != len(components):
            raise ValueError(f"mixture: {len(components)} components but weights of shape "
                             f"{w.shape}")
        if np.any(w < 0) or not np.isclose(w.sum(), 1.0):
            raise ValueError(f"mixture: weights must be >= 0 and sum to 1, got {list(w)}")
        self.weights, self.components = w, list(components)

    def logpdf(self, value) -> float:
        with np.errstate(divide="ignore"):
            terms = [np.log(w) + logpdf(c, value) for w, c in zip(self.weights,
                                                                   self.components)]
        return float(logsumexp(terms))

    def gen_logpdf(self, value) -> float:
        return self.logpdf(value)

    def gen_sample(self, rng):
        k = int(rng.choice(len(self.components), p=self.weights))
        return draw(self.components[k], rng)

    def sample(self, rng):
        return np.asarray(self.gen_sample(rng))

    def __matmul__(self, address):
        from .runtime import choice
        return choice(self, address)

    def __repr__(self):
        return f"Mixture({list(self.weights)}, {self.components!r})"


class HeterogeneousMixture:
    """Mixture of different families: ``call(weights, *per_component_args)``."""

    def __init__(self, families):
        self.families = list(families)

    def __call__(self, weights, *component_args) -> MixtureDistribution:
        if len(component_args) != len(self.families):
            raise ValueError(f"HeterogeneousMixture of {len(self.families)} families got "
                             f"{len(component_args)} argument tuples")
        return MixtureDistribution(weights, [f(*a) for f, a in zip(self.families,
                                                                     component_args)])


class HomogeneousMixture:
    """Mixture of one family: ``call(weights, *per_component_args)``."""

    def __init__(self, family):
        self.family = family

    def __call__(self, weights, *component_args) -> MixtureDistribution:
        return MixtureDistribution(weights, [self.family(*a) for a in component_args])
