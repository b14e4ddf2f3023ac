"""Optimisers for the parameters of a ``ParameterStore`` (Gen's update configurations).

Gen's convention: the accumulated gradients are of an objective to MAXIMISE (log densities), so
``apply_update(store, optimiser)`` moves every parameter UP its gradient and then zeroes the
accumulators. ``FixedStepGradientDescent(step)``: ``value += step * grad``.
``GradientDescent(step_size_init, step_size_beta)``: step ``init * (beta + 1) / (beta + t)`` at
the t-th update. ``ADAM(learning_rate, beta1, beta2, epsilon)``: Kingma & Ba with bias
correction. An optimiser keeps its state per ``(store, parameter)``.
"""
from __future__ import annotations


import numpy as np

__all__ = ["FixedStepGradientDescent", "GradientDescent", "ADAM", "apply_update"]


class _Optimiser:
    def __init__(self):
        self.state: dict = {}

    def step(self, key, value, grad):
        raise NotImplementedError


class FixedStepGradientDescent(_Optimiser):
    def __init__(self, step_size: float):
        super().__init__()
        self.step_size = step_size

    def step(self, key, value, grad):
        return value + self.step_size * grad


class GradientDescent(_Optimiser):
    """Decaying step ``step_size_init * (step_size_beta + 1) / (step_size_beta + t)``."""

    def __init__(self, step_size_init: float, step_size_beta: float):
        super().__init__()
        self.init, self.beta = step_size_init, step_size_beta

    def step(self, key, value, grad):
        t = self.state.get(key, 0) + 1
        self.state[key] = t
        return value + self.init * (self.beta + 1) / (self.beta + t) * grad


class ADAM(_Optimiser):
    def __init__(self, learning_rate: float = 1e-3, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8):
        super().__init__()
        self.lr, self.beta1, self.beta2, self.eps = learning_rate, beta1, beta2, epsilon

    def step(self, key, value, grad):
        m, v, t = self.state.get(key, (0.0, 0.0, 0))
        t += 1
        m = self.beta1 * m + (1 - self.beta1) * grad
        v = self.beta2 * v + (1 - self.beta2) * grad * grad
        self.state[key] = (m, v, t)
        m_hat = m / (1 - self.beta1 ** t)
        v_hat = v / (1 - self.beta2 ** t)
        return value + self.lr * m_hat / (np.sqrt(v_hat) + self.eps)


def apply_update(store, optimiser, gen_fn=None) -> None:
    """One optimiser step on every parameter (of ``gen_fn`` only, when given) of ``store``,
    up the accumulated gradient; the accumulators are then zeroed."""
    for key in store.parameters(gen_fn):
        value, grad = store.values[key], store.grads[key]
        new = optimiser.step((id(store), key), value, grad)
        store.values[key] = float(new) if not np.ndim(value) and not isinstance(
            value, np.ndarray) else new
    store.zero_param_grads(gen_fn)


