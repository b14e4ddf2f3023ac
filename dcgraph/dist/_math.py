"""Small numerically careful helpers shared by the distribution modules."""
from __future__ import annotations

import numpy as np

LOG_2PI = float(np.log(2.0 * np.pi))
LOG_2 = float(np.log(2.0))


def log1mexp(a):
    """``log(1 - exp(a))`` for ``a <= 0``, accurate for ``a`` near 0 and very negative."""
    a = np.asarray(a, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.where(a > -LOG_2, np.log(-np.expm1(a)), np.log1p(-np.exp(a)))


def logdiffexp(a, b):
    """``log(exp(a) - exp(b))`` for ``a >= b``; ``-inf`` when ``a == b``."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    with np.errstate(invalid="ignore"):
        out = a + log1mexp(b - a)
    return np.where(b == -np.inf, a, out)


def unbroadcast(g, shape):
    """Sum ``g`` down to ``shape``: the adjoint of broadcasting ``shape`` to ``g.shape``."""
    g = np.asarray(g, dtype=float)
    shape = tuple(shape)
    extra = g.ndim - len(shape)
    if extra > 0:
        g = g.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g.reshape(shape)

