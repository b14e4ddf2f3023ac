"""``FiniteChoice``: a distribution over an explicit finite list of values.

The registry needs it for calls whose values are not ``0..K-1`` indices: ``random.randint(1, 6)``,
``rng.integers(-2, 3)``, ``random.choice(['a', 'b'])``, ``rng.choice(array, p=...)``. It follows the
part of the ``dcgraph.dist`` contract the analysis uses (``logpdf`` summed, ``logpdf_elementwise``,
``sample(rng, shape)``, ``support`` with ``contains``, ``is_discrete``), and its support lists its
values (``support.values``), which is how ``conditional`` enumerates it.
"""
from __future__ import annotations

import numpy as np

__all__ = ["FiniteChoice", "FiniteSet"]


class FiniteSet:
    """The support ``{v_0, ..., v_{K-1}}`` of a ``FiniteChoice`` (values compared with ``==``)."""

    event_dim = 0
    is_discrete = True

    def __init__(self, values):
        self.values = tuple(values)

    def index(self, x) -> int | None:
        """Position of ``x`` among the values (None when absent)."""
        for k, v in enumerate(self.values):
            try:
                if bool(v == x):
                    return k
            except (TypeError, ValueError):
                continue
        return None

    def contains(self, x) -> np.ndarray:
        if isinstance(x, np.ndarray) and x.ndim:
            return np.array([self.index(e) is not None for e in x.ravel()]).reshape(x.shape)
        return np.asarray(self.index(x) is not None)

    def __len__(self):
        return len(self.values)

    def __repr__(self):
        shown = ", ".join(repr(v) for v in self.values[:6])
        return f"FiniteSet({shown}{', ...' if len(self.values) > 6 else ''})"


class FiniteChoice:
    """``P(X = values[k]) = p[k]`` (uniform when ``p`` is None); ``p`` must sum to 1 (to 1e-8)."""

    is_discrete = True
    event_dim = 0
    batch_shape = ()
    event_shape = ()

    def __init__(self, values, p=None):
        values = list(values)
        if not values:
            raise ValueError("FiniteChoice: values must not be empty")
        if p is None:
            p = np.full(len(values), 1.0 / len(values))
        p = np.asarray(p, dtype=float)
        if p.shape != (len(values),):
            raise ValueError(f"FiniteChoice: p has shape {p.shape}, expected ({len(values)},)")
        if np.any(~np.isfinite(p)) or np.any(p < 0) or abs(p.sum() - 1.0) > 1e-8:
            raise ValueError(f"FiniteChoice: p must be non-negative and sum to 1, got {p}")
        self.p = p
        self.support = FiniteSet(values)

    @property
    def name(self) -> str:
        return "FiniteChoice"

    @property
    def values(self) -> tuple:
        return self.support.values

    def _log_one(self, x) -> float:
        k = self.support.index(x)
        if k is None:
            return -np.inf
        with np.errstate(divide="ignore"):
            return float(np.log(self.p[k]))

    def logpdf_elementwise(self, x) -> np.ndarray:
        if isinstance(x, np.ndarray) and x.ndim:
            return np.array([self._log_one(e) for e in x.ravel()]).reshape(x.shape)
        return np.asarray(self._log_one(x))

    def logpdf(self, x):
        return np.sum(self.logpdf_elementwise(x))

    logpmf = logpdf

    def sample(self, rng, shape=()):
        shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
        idx = rng.choice(len(self.values), size=shape, p=self.p)
        if shape == ():
            return self.values[int(idx)]
        out = np.empty(shape, dtype=object)
        for pos, k in np.ndenumerate(idx):
            out[pos] = self.values[k]
        return out

    def __repr__(self):
        return f"FiniteChoice({list(self.values[:6])}{'...' if len(self.values) > 6 else ''}, p={self.p.round(4).tolist()})"
