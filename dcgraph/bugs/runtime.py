"""The helpers generated code may call besides numpy and scipy.special (simulation only).

``RUNTIME`` maps the generated names to them: ``_merge`` (fixed values over draws), ``_bounded``
(draws kept inside ``T``/``C``/``I`` bounds), ``_dirichlet`` and ``_wishart`` (batched draws) and
``_range`` (``range``, for loop blocks: the only one a log density calls).
"""
from __future__ import annotations

import numpy as np

__all__ = ["RUNTIME"]


def merge(draw, fixed, index=None):
    if fixed is None:
        return draw
    fixed = np.asarray(fixed, dtype=float)
    if index is not None:
        fixed = fixed[index]
    return np.where(np.isnan(fixed), draw, fixed)


def bounded(draw, lo, hi, tries=200):
    """Redraw values outside ``[lo, hi]``; the few left after ``tries`` go just inside."""
    x = np.asarray(draw(), dtype=float)
    lo, hi = np.broadcast_to(lo, x.shape), np.broadcast_to(hi, x.shape)
    for _ in range(tries):
        bad = (x < lo) | (x > hi)
        if not np.any(bad):
            return x
        x = np.where(bad, draw(), x)
    with np.errstate(invalid="ignore"):
        inside = np.where(np.isfinite(lo), lo + 1e-3 * (1 + np.abs(lo)),
                          hi - 1e-3 * (1 + np.abs(hi)))
    return np.where((x < lo) | (x > hi), np.clip(inside, lo, hi), x)



def dirichlet(rng, alpha, shape):
    g = rng.gamma(np.broadcast_to(alpha, shape))
    return g / np.sum(g, axis=-1, keepdims=True)


def wishart(rng, R, k, shape):
    """Draws of ``dwish(R, k)``: Wishart with ``k`` degrees of freedom and scale ``inverse(R)``
    (``k`` rounded to an integer: sums of ``k`` outer products)."""
    R = np.broadcast_to(R, shape)
    k = int(round(float(np.max(k))))
    chol = np.linalg.cholesky(np.linalg.inv(R))
    z = rng.normal(size=shape[:-2] + (k, shape[-1]))
    y = np.matmul(z, np.swapaxes(chol, -1, -2))
    return np.matmul(np.swapaxes(y, -1, -2), y)


RUNTIME = {"_merge": merge, "_bounded": bounded, "_dirichlet": dirichlet, "_wishart": wishart,
           "_range": range}
