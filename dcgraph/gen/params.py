"""Trainable parameters of generative functions (Gen's ``@param``) and the store holding them.

Inside a ``@gen`` function, ``param("w")`` reads the parameter ``w`` of that function from the
``ParameterStore`` the GFI call was given (``store=``; the module's ``default_store`` otherwise).
A store keeps, per ``(generative function, name)``, a value and a gradient accumulator;
``accumulate_param_gradients`` adds into the accumulators and optimisers (next issue) read and
reset them. Stores are shared read-only by traces; only gradient accumulation writes.
"""
from __future__ import annotations

import threading

import numpy as np

from .runtime import GenError, param

__all__ = ["ParameterStore", "PrivateAccumulator", "default_store", "param", "init_param",
           "get_param", "get_param_grad", "set_param", "zero_param_grads"]


class ParameterStore:
    """Values and gradient accumulators keyed by ``(generative function, name)``."""

    def __init__(self):
        self.values: dict = {}
        self.grads: dict = {}
        self.lock = threading.Lock()

    def __getstate__(self):
        return self.values, self.grads

    def __setstate__(self, state):
        self.values, self.grads = state
        self.lock = threading.Lock()

    def init_param(self, gen_fn, name: str, value) -> None:
        """Declare parameter ``name`` of ``gen_fn`` with initial ``value`` (gradient zeroed)."""
        self.values[(gen_fn, name)] = value
        self.grads[(gen_fn, name)] = np.zeros_like(value, dtype=float) if np.ndim(value) else 0.0

    def get_param(self, gen_fn, name: str):
        try:
            return self.values[(gen_fn, name)]
        except KeyError:
            raise GenError(f"parameter {name!r} of {gen_fn!r} is not initialised: call "
                           f"init_param({gen_fn!r}, {name!r}, value)") from None

    def set_param(self, gen_fn, name: str, value) -> None:
        self.get_param(gen_fn, name)
        self.values[(gen_fn, name)] = value

    def get_param_grad(self, gen_fn, name: str):
        self.get_param(gen_fn, name)
        return self.grads[(gen_fn, name)]

    def accumulate(self, gen_fn, name: str, grad) -> None:
        """Add ``grad`` into the accumulator of ``name`` (thread-safe)."""
        key = (gen_fn, name)
        with self.lock:
            self.grads[key] = self.grads[key] + grad

    def zero_param_grads(self, gen_fn=None) -> None:
        """Reset the accumulators (of ``gen_fn`` only, when given)."""
        for key, g in self.grads.items():
            if gen_fn is None or key[0] is gen_fn:
                self.grads[key] = np.zeros_like(g) if np.ndim(g) else 0.0

    def parameters(self, gen_fn=None) -> list:
        """The ``(gen_fn, name)`` keys (of ``gen_fn`` only, when given)."""
        return [k for k in self.values if gen_fn is None or k[0] is gen_fn]

    reset_gradients = zero_param_grads

    def private_accumulator(self) -> "PrivateAccumulator":
        """A store sharing this store's parameter values with its own zeroed gradient
        accumulators, for one thread (no locking); ``merge_into`` adds them back."""
        return PrivateAccumulator(self)


class PrivateAccumulator(ParameterStore):
    """Per-thread gradient accumulators over a shared store's values (the C++ design notes'
    "each thread accumulates into its own accumulator, summed after the minibatch")."""

    def __init__(self, shared: ParameterStore):
        self.shared, self.values, self.lock = shared, shared.values, None
        self.grads = {k: np.zeros_like(g) if np.ndim(g) else 0.0
                      for k, g in shared.grads.items()}

    def accumulate(self, gen_fn, name: str, grad) -> None:
        key = (gen_fn, name)
        self.grads[key] = self.grads[key] + grad

    def merge_into(self, store: ParameterStore | None = None) -> None:
        """Add these accumulators into ``store`` (the shared store by default), then zero."""
        store = store or self.shared
        for (gen_fn, name), g in self.grads.items():
            store.accumulate(gen_fn, name, g)
        self.zero_param_grads()


default_store = ParameterStore()


def init_param(gen_fn, name, value, store: ParameterStore | None = None) -> None:
    (store or default_store).init_param(gen_fn, name, value)


def get_param(gen_fn, name, store: ParameterStore | None = None):
    return (store or default_store).get_param(gen_fn, name)


def get_param_grad(gen_fn, name, store: ParameterStore | None = None):
    return (store or default_store).get_param_grad(gen_fn, name)


def set_param(gen_fn, name, value, store: ParameterStore | None = None) -> None:
    (store or default_store).set_param(gen_fn, name, value)


def zero_param_grads(gen_fn=None, store: ParameterStore | None = None) -> None:
    (store or default_store).zero_param_grads(gen_fn)
