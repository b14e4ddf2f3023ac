"""``BUGSTarget``: a compiled BUGS model as one log density over ``[theta, discrete]``.

The model keeps its discrete unobserved nodes outside ``theta`` (in ``model.discrete``); the
MCMC kernels of ``dcgraph.infer`` need one flat vector. ``x[:dim]`` is the unconstrained
continuous vector, ``x[dim:]`` the values of the discrete nodes; the gradient with respect to
the discrete coordinates is reported as zero (no kernel that uses gradients updates them).
A discrete value that indexes beyond a variable (``mu[z]`` with ``z`` outside ``mu``) has
log density ``-inf``.
"""
from __future__ import annotations

import threading

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
        self._lock = threading.Lock()     # chains on threads share model.discrete

    def _set(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if self.model.ndisc:
            self.model.discrete = x[self.n_theta:].copy()
        return x[:self.n_theta]

    def logdensity(self, x) -> float:
        self.calls += 1
        try:
            with self._lock, np.errstate(all="ignore"):
                value = self.model.logdensity(self._set(x))
        except IndexError:
            if not self.model.ndisc:
                raise
            return -np.inf      # a discrete node used as an index (``mu[z]``) beyond its variable
        return value if value == value else -np.inf

    def logdensity_and_grad(self, x):
        self.calls += 1
        with self._lock, np.errstate(all="ignore"):
            value, grad = self.model.logdensity_and_grad(self._set(x))
        if self.dim != self.n_theta:
            grad = np.concatenate([grad, np.zeros(self.dim - self.n_theta)])
        return (value if value == value else -np.inf), grad

    def __getstate__(self):
        """Pickles with its model (``BUGSModel`` pickles without recompiling) and the discrete
        values; the lock and the call count are not carried."""
        return {"model": self.model, "discrete": np.array(self.model.discrete)}

    def __setstate__(self, state):
        self.__init__(state["model"])
        self.model.discrete = np.array(state["discrete"], dtype=float)

    def initial_point(self, chain: int) -> np.ndarray:
        """``[model.initial_values(chain), model.discrete]`` for ``chain``."""
        theta = self.model.initial_values(chain)
        return np.concatenate([theta, np.asarray(self.model.discrete, dtype=float)])

    def constrained(self, x) -> dict:
        """Named values of every node at ``x`` (see ``BUGSModel.constrained``)."""
        with self._lock, np.errstate(all="ignore"):
            return self.model.constrained(self._set(x))
