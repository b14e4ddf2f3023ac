"""Gradients of the Truncated and Censored log densities.

Both need the derivative of the base's CDF with respect to its parameters, which no family
has in closed form for every parameter; it is computed from the base's closed-form score:
``d/dθ P(X <= a) = ∫_{X <= a} p(t) ∂θ log p(t) dt`` (adaptive quadrature for continuous bases,
integrated over the shorter tail, summation over the support for discrete ones). Bounds of a
discrete base are integers: the log density is piecewise constant in them (gradient 0).

The result has the shape of ``grad_logpdf`` for other families: ``'x'``, ``'low'``, ``'high'``
shaped like those arguments, and ``'base'``: a dict of the base parameters' gradients.
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import quad

from ._math import unbroadcast

__all__ = ["truncated_grad", "censored_grad", "cdf_param_grads"]

_QUAD = dict(limit=200, epsabs=1e-13, epsrel=1e-11)
_SUM_LIMIT = 2_000_000


def cdf_param_grads(base, a: float) -> dict:
    """``{param: d/dθ P(X <= a)}`` for a base without batch dimensions."""
    names = base.params
    if not np.isfinite(a):
        return {p: 0.0 for p in names}
    lo, hi = (float(b) for b in base._bounds())
    if base.is_discrete:
        k0 = lo if np.isfinite(lo) else float(base.ppf(1e-17))
        ks = np.arange(k0, np.floor(a) + 1.0)
        if ks.size > _SUM_LIMIT:
            raise ValueError(f"{base.name}: CDF gradient needs more than {_SUM_LIMIT} terms")
        if ks.size == 0:
            return {p: 0.0 for p in names}
        w = np.exp(base.logpdf_elementwise(ks))
        parts = base._grad_logpdf(ks)
        return {p: float(np.sum(w * np.broadcast_to(parts[p], ks.shape))) for p in names if p in parts}

    def integrand(t, p):
        return float(np.exp(base.logpdf_elementwise(t)) * np.asarray(base._grad_logpdf(np.asarray(t))[p]))

    upper_tail = base.cdf(a) > 0.5          # integrate over the shorter side; total is 0
    mid = float(base.ppf(0.5))
    out = {}
    for p in names:
        if upper_tail:
            out[p] = -_integral(integrand, a, hi, p, mid)
        else:
            out[p] = _integral(integrand, lo, a, p, mid)
    return out


def _integral(f, lo, hi, p, mid):
    """``∫_lo^hi f(t, p) dt``, split at ``mid`` (clipped into the range)."""
    if lo >= hi:
        return 0.0
    mid = min(max(mid, lo), hi)
    return quad(f, lo, mid, args=(p,), **_QUAD)[0] + quad(f, mid, hi, args=(p,), **_QUAD)[0]


def _per_batch(w, fn):
    """Evaluate ``fn(element, idx)`` -> dict of floats for every batch element; stack them."""
    out: dict = {}
    for idx in np.ndindex(w.batch_shape):
        for k, v in fn(w._element(idx), idx).items():
            out.setdefault(k, np.zeros(w.batch_shape))[idx] = v
    return out


def _density(base, a) -> float:
    return float(np.exp(base.logpdf_elementwise(np.asarray(a, dtype=float))))


def truncated_grad(w, x) -> dict:
    """Gradient of ``Truncated.logpdf(x)`` (summed)."""
    x = w._as_value(x)
    full = w._out_shape(x)
    base = w.base
    parts = base.grad_logpdf(x)                     # the base log density term, summed
    count = np.broadcast_to(np.ones(w.batch_shape), full)

    def normaliser(e, idx):
        b, lo, hi = e.base, float(e._below()), float(e._hi)
        mass = float(np.exp(e._log_mass))
        upper = cdf_param_grads(b, hi)
        lower = cdf_param_grads(b, lo)
        d = {p: -(upper[p] - lower[p]) / mass for p in upper}
        if not b.is_discrete:
            d["low"] = _density(b, lo) / mass if e._cut_lo else 0.0
            d["high"] = -_density(b, hi) / mass if e._cut_hi else 0.0
        return d

    norm = _per_batch(w, normaliser)
    grads_base = {}
    for p in base.params:
        total = np.asarray(parts.get(p, 0.0), dtype=float)
        extra = unbroadcast(np.broadcast_to(norm[p], full) * count, np.shape(base.param_value(p)))
        grads_base[p] = total + extra
    out = {"base": grads_base}
    if "x" in parts:                       # discrete bases: no gradient in x
        out["x"] = parts["x"]
    for bound in ("low", "high"):
        g = norm.get(bound, np.zeros(w.batch_shape))
        out[bound] = unbroadcast(np.broadcast_to(g, full) * count, np.shape(getattr(w, bound)))
    return out


def censored_grad(w, x) -> dict:
    """Gradient of ``Censored.logpdf(x)`` (summed): base density inside, CDF masses at the
    censoring bounds."""
    x = w._as_value(x)
    full = w._out_shape(x)
    base = w.base
    xs = np.broadcast_to(x, full)
    at_lo = np.broadcast_to(w._cut_lo & (xs == w._lo), full)
    at_hi = np.broadcast_to(w._cut_hi & (xs == w._hi), full)
    inside = ~(at_lo | at_hi)
    with np.errstate(all="ignore"):
        elementwise = base._grad_logpdf(xs)
    out_x = np.where(inside, np.broadcast_to(elementwise.get("x", 0.0), full), 0.0)
    grads_base = {p: np.where(inside, np.broadcast_to(elementwise[p], full), 0.0)
                  for p in base.params if p in elementwise}
    g_low = np.zeros(full)
    g_high = np.zeros(full)
    for idx in np.ndindex(full):
        if not (at_lo[idx] or at_hi[idx]):
            continue
        bidx = idx[len(idx) - len(w.batch_shape):] if w.batch_shape else ()
        e = w._element(bidx).base
        a = float(xs[idx])
        if at_lo[idx]:
            mass = float(np.exp(e.logcdf(a)))
            dF = cdf_param_grads(e, a)
            scale, bound, sign = 1.0 / mass, g_low, 1.0
        else:
            a_mass = a - 1.0 if e.is_discrete else a
            mass = float(np.exp(e.logsf(a_mass)))
            dF = cdf_param_grads(e, a_mass)
            scale, bound, sign = -1.0 / mass, g_high, -1.0
        for p, v in dF.items():
            grads_base.setdefault(p, np.zeros(full))[idx] = v * scale
        if not e.is_discrete:
            bound[idx] = sign * _density(e, a) / mass
    out = {"base": {p: unbroadcast(v, np.shape(base.param_value(p))) for p, v in grads_base.items()},
           "low": unbroadcast(g_low, np.shape(w.low)), "high": unbroadcast(g_high, np.shape(w.high))}
    if "x" in elementwise:
        out["x"] = unbroadcast(out_x, x.shape)
    return out
