"""Elliptical slice sampling (Murray, Adams & MacKay 2010; Gen's ``elliptical_slice``) for a
choice with a Gaussian prior ``N(mu, cov)``: every proposal is accepted, on the ellipse through
the current value and a prior draw, by shrinking an angle bracket."""
from __future__ import annotations

import math

import numpy as np

from ..choicemap import ChoiceMap
from ..execution import NO_CHANGE
from ..generative import default_rng

__all__ = ["elliptical_slice"]


def elliptical_slice(trace, addr, mu, cov, *, rng=None):
    """``-> new trace``; ``cov`` a matrix, or a scalar variance for a scalar choice."""
    rng = rng or default_rng()
    args = trace.get_args()
    diffs = (NO_CHANGE,) * len(args)
    x = np.asarray(trace[addr], dtype=float)
    mu = np.asarray(mu, dtype=float)
    cov = np.asarray(cov, dtype=float)
    if cov.ndim == 0:
        nu = math.sqrt(cov) * rng.standard_normal(x.shape)
    else:
        nu = np.linalg.cholesky(cov) @ rng.standard_normal(x.shape)
    log_y = math.log(rng.random())
    theta = rng.uniform(0, 2 * math.pi)
    lo, hi = theta - 2 * math.pi, theta
    gen_fn = trace.get_gen_fn()
    while True:
        new_x = (x - mu) * math.cos(theta) + nu * math.sin(theta) + mu
        cm = ChoiceMap()
        cm.set_value(addr, float(new_x) if new_x.ndim == 0 else new_x)
        new, w, _, _ = gen_fn.update(trace, args, diffs, cm, rng)
        prior_delta = _gauss(new_x, mu, cov) - _gauss(x, mu, cov)
        if w - prior_delta > log_y:
            return new
        if theta < 0:
            lo = theta
        else:
            hi = theta
        theta = rng.uniform(lo, hi)


def _gauss(x, mu, cov) -> float:
    d = np.atleast_1d(x - mu)
    c = np.atleast_2d(cov)
    return float(-0.5 * d @ np.linalg.solve(c, d))
