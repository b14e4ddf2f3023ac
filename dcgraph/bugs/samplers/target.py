"""``BUGSTarget``: a compiled BUGS model as one log density over ``[theta, discrete]``.

The model keeps its discrete unobserved nodes outside ``theta`` (in ``model.discrete``); the
MCMC kernels of ``dcgraph.infer`` need one flat vector. ``x[:dim]`` is the unconstrained
continuous vector, ``x[dim:]`` the values of the discrete nodes; the gradient with respect to
the discrete coordinates is reported as zero (no kernel that uses gradients updates them).
A discrete value that indexes beyond a variable (``mu[z]`` with ``z`` outside ``mu``) has
log density ``-inf``.
"""
from __future__ import annotations

import numpy as np

__all__ = ["BUGSTarget"]


class BUGSTarget:
    """Log density of ``model`` over ``x = [theta, discrete]`` (``dim = model.dim + model.ndisc``).

    ``calls`` counts log-density evaluations (with or without gradient)."""

    def __init__(self, model):
        self.model = model
        self.n_theta = model.dim
        self.dim = model.dim + model.ndisc
        self.has_grad = True
        self.calls = 0

    def _set(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if self.model.ndisc:
            self.model.discrete = x[self.n_theta:].copy()
        return x[:self.n_theta]

    def logdensity(self, x) -> float:
        self.calls += 1
        theta = self._set(x)
        try:
            with np.errstate(all="ignore"):
                value = self.model.logdensity(theta)
        except IndexError:
            if not self.model.ndisc:
                raise
            return -np.inf      # a discrete node used as an index (``mu[z]``) beyond its variable
        return value if value == value else -np.inf

    def logdensity_and_grad(self, x):
        self.calls += 1
        theta = self._set(x)
        with np.errstate(all="ignore"):
            value, grad = self.model.logdensity_and_grad(theta)
        full = np.zeros(self.dim)
        full[:self.n_theta] = grad
        return (value if value == value else -np.inf), full

    def initial_point(self, chain: int) -> np.ndarray:
        """``[model.initial_values(chain), model.discrete]`` for ``chain``."""
        theta = self.model.initial_values(chain)
        return np.concatenate([theta, np.asarray(self.model.discrete, dtype=float)])

    def constrained(self, x) -> dict:
        """Named values of every node at ``x`` (see ``BUGSModel.constrained``)."""
        theta = self._set(x)
        with np.errstate(all="ignore"):
            return self.model.constrained(theta)
