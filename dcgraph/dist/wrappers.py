"""Truncated and Censored wrappers around a univariate distribution.

``low``/``high`` default to ``None`` (no bound), may be arrays broadcasting with the base
batch and are clipped to the base support. For discrete bases both bounds are inclusive
integers (``ceil(low)``..``floor(high)``).

* ``Truncated(base, low, high)``: density ``base.pdf(x) / P(low <= X <= high)`` on the bounds.
* ``Censored(base, low, high)``: ``X`` clipped to ``[low, high]``; ``logpdf`` is
  ``log P(X <= low)`` at ``x == low``, ``log P(X >= high)`` at ``x == high``, the base
  density strictly between and ``-inf`` outside. A censored continuous variable is
  mixed (atoms plus density), so it has no bijector; use it for observed data.

Both have closed-form ``logpdf``/CDFs/quantiles; ``mean`` and ``var`` are computed numerically
per batch element (quadrature, or summation over at most 2e6 support points for discrete
bases), NaN when that is not possible or when a bound is open and the base moments are not
finite. ``grad_logpdf`` (``wrapper_grads``) gives ``'x'``, ``'low'``, ``'high'`` and ``'base'``
(a dict of the base parameters' gradients); CDF derivatives come from the base's score by
quadrature.
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import quad

from ._math import logdiffexp
from .base import Univariate
from .continuous import Flat
from .support import IntegerInterval, Interval
from .validation import broadcast_batch, check_ordered, check_param, fmt_value

__all__ = ["Truncated", "Censored"]

_ENUM_LIMIT = 2_000_000


class _Wrapper(Univariate):
    params = ("base", "low", "high")

    def __init__(self, base, low=None, high=None):
        if not isinstance(base, Univariate):
            raise TypeError(f"{self.name}: parameter 'base' must be a univariate distribution, got {base!r}")
        if isinstance(base, Flat):
            raise ValueError(f"{self.name}: parameter 'base' must be a proper distribution, got {base!r}")
        self.base = base
        self.is_discrete = base.is_discrete
        self.low = check_param(self.name, "low", -np.inf if low is None else low, "extended_real")
        self.high = check_param(self.name, "high", np.inf if high is None else high, "extended_real")
        self._batch_shape = broadcast_batch(
            self.name, {"base": base.batch_shape, "low": self.low.shape, "high": self.high.shape})
        check_ordered(self.name, self.low, self.high, self._batch_shape)
        b_lo, b_hi = base._bounds()
        low_, high_ = (np.ceil(self.low), np.floor(self.high)) if self.is_discrete else (self.low, self.high)
        self._lo = self._full(np.maximum(low_, b_lo))
        self._hi = self._full(np.minimum(high_, b_hi))
        # whether each side really censors/truncates (the bound lies inside the base support)
        self._cut_lo = self._full(self.low > b_lo).astype(bool)
        self._cut_hi = self._full(self.high < b_hi).astype(bool)

    @property
    def support(self):
        return IntegerInterval(self._lo, self._hi) if self.is_discrete else Interval(self._lo, self._hi)

    def _below(self):
        """The point ``a`` with ``P(X <= a)`` the mass strictly below the lower bound."""
        return self._lo - 1.0 if self.is_discrete else self._lo

    def _element(self, idx):
        b = self.base
        kw = {}
        for p in b.params:
            v = np.asarray(b.param_value(p))
            k = b.param_event_dims.get(p, 0)
            kw[p] = np.broadcast_to(v, self.batch_shape + v.shape[v.ndim - k:])[idx]
        low = np.broadcast_to(self.low, self.batch_shape)[idx]
        high = np.broadcast_to(self.high, self.batch_shape)[idx]
        return type(self)(type(b)(**kw), low, high)

    def _moments(self):
        mean, var = np.empty(self.batch_shape), np.empty(self.batch_shape)
        for idx in np.ndindex(self.batch_shape):
            if not (self._cut_lo[idx] or self._cut_hi[idx]):  # bounds outside the base support: no effect
                mean[idx] = np.broadcast_to(self.base.mean, self.batch_shape)[idx]
                var[idx] = np.broadcast_to(self.base.var, self.batch_shape)[idx]
            else:
                mean[idx], var[idx] = self._element(idx)._scalar_moments()
        return mean, var

    def _enumerated_moments(self):
        lo, hi = float(self._lo), float(self._hi)
        if not np.isfinite(hi):
            hi = float(self.base.isf(1e-300))
        if hi - lo > _ENUM_LIMIT:
            return np.nan, np.nan
        k = np.arange(lo, hi + 1.0)
        w = np.exp(self.logpdf_elementwise(k))
        m = np.sum(k * w)
        return m, np.sum((k - m) ** 2 * w)

    def _gated(self):
        """True when an open bound meets a base moment that is not finite."""
        open_side = not (np.isfinite(self._lo) and np.isfinite(self._hi))
        return open_side and not (np.isfinite(self.base.mean) and np.isfinite(self.base.var))

    def _integral(self, g, log_norm=0.0):
        """``int g(x) f_base(x) dx / exp(log_norm)`` over ``(lo, hi)``, split at the median of the range."""
        lo, hi = float(self._lo), float(self._hi)
        mid = float(self.ppf(0.5))
        f = lambda t: g(t) * float(np.exp(self.base.logpdf_elementwise(t) - log_norm))  # noqa: E731
        kw = dict(limit=200, epsabs=1e-14, epsrel=1e-12)
        return quad(f, lo, mid, **kw)[0] + quad(f, mid, hi, **kw)[0]

    @property
    def mean(self):
        return self._moments()[0]

    @property
    def var(self):
        return self._moments()[1]


class Truncated(_Wrapper):
    """Truncated(base, low=None, high=None): ``base`` conditioned on ``low <= X <= high``.

    Raises ``ValueError`` if the interval has zero probability under ``base``. Sampling is by
    inversion of the CDF (from the nearer tail, so far-tail truncations stay accurate).
    """

    def __init__(self, base, low=None, high=None):
        super().__init__(base, low, high)
        a, hi = self._below(), self._hi
        with np.errstate(all="ignore"):
            self._upper = self._full(base.cdf(a) > 0.5).astype(bool)
            self._log_mass = self._full(np.where(
                self._upper, logdiffexp(base.logsf(a), base.logsf(hi)), logdiffexp(base.logcdf(hi), base.logcdf(a))))
            # where the probabilities below are too small or too close for linear-space inversion
            near = np.where(self._upper, base.logsf(a), base.logcdf(hi))
            self._fragile = self._full((self._log_mass - near < -13.8) | (near < -575.0)).astype(bool)
        bad = ~(self._log_mass > -np.inf) | (self._lo > self._hi)
        if np.any(bad):
            i = tuple(int(j) for j in np.argwhere(bad)[0])
            raise ValueError(f"{self.name}: interval [{fmt_value(self._lo[i])}, {fmt_value(self._hi[i])}] "
                             f"has zero probability under {base!r}")

    def _logpdf(self, x):
        return self.base.logpdf_elementwise(x) - self._log_mass

    def grad_logpdf(self, x) -> dict:
        from .wrapper_grads import truncated_grad
        return truncated_grad(self, x)

    def _logcdf(self, x):
        b, a = self.base, self._below()
        return np.where(self._upper, logdiffexp(b.logsf(a), b.logsf(x)),
                        logdiffexp(b.logcdf(x), b.logcdf(a))) - self._log_mass

    def _logsf(self, x):
        b, hi = self.base, self._hi
        return np.where(self._upper, logdiffexp(b.logsf(x), b.logsf(hi)),
                        logdiffexp(b.logcdf(hi), b.logcdf(x))) - self._log_mass

    def _invert(self, q, from_top):
        b, a, hi = self.base, self._below(), self._hi
        fa, fh, sa, sh = b.cdf(a), b.cdf(hi), b.sf(a), b.sf(hi)
        if from_top:  # smallest x with sf(x) <= q
            x = np.where(self._upper, b.isf(sh + q * (sa - sh)), b.ppf(fh - q * (fh - fa)))
        else:
            x = np.where(self._upper, b.isf(sa - q * (sa - sh)), b.ppf(fa + q * (fh - fa)))
        if np.any(self._fragile):
            x = np.where(self._fragile, self._bisect(q, from_top), x)
        return np.clip(x, self._lo, self._hi)

    def _bisect(self, q, from_top):
        """Invert the truncated CDF in log space by bracketing and bisection (extreme truncations)."""
        shape = np.broadcast_shapes(np.shape(q), self.batch_shape)
        with np.errstate(divide="ignore"):
            logq = np.log(q)

        def done(x):
            return self.logsf(x) <= logq if from_top else self.logcdf(x) >= logq

        lo = np.broadcast_to(self._lo, shape).copy()
        hi = np.broadcast_to(self._hi, shape).copy()
        for _ in range(2100):  # replace infinite ends by finite brackets
            grow_hi, grow_lo = ~np.isfinite(hi), ~np.isfinite(lo)
            if not (np.any(grow_hi) or np.any(grow_lo)):
                break
            width = np.maximum(1.0, np.where(grow_hi, np.abs(lo), np.abs(hi)))
            x = np.where(grow_hi, lo + width, np.where(grow_lo, hi - width, 0.0))
            ok = done(x)
            lo = np.where((grow_hi | grow_lo) & ~ok, x, lo)  # x is below the quantile
            hi = np.where((grow_hi | grow_lo) & ok, x, hi)  # x is at or above it
        for _ in range(200):
            if np.all(hi - lo <= 4 * np.finfo(float).eps * np.maximum(np.abs(lo), np.abs(hi))):
                break
            mid = 0.5 * (lo + hi)
            ok = done(mid)
            hi, lo = np.where(ok, mid, hi), np.where(ok, lo, mid)
        return hi

    def _ppf(self, q):
        return super()._ppf(q) if self.is_discrete else self._invert(q, False)

    def _isf(self, q):
        return super()._isf(q) if self.is_discrete else self._invert(q, True)

    def _sample(self, rng, size):
        return self._quantile(rng.random(size), self._ppf, self._lo, self._hi)

    def _scalar_moments(self):
        if self.is_discrete:
            return self._enumerated_moments()
        if self._gated():
            return np.nan, np.nan
        lm = float(self._log_mass)
        m = self._integral(lambda t: t, lm)
        return m, self._integral(lambda t: (t - m) ** 2, lm)


class Censored(_Wrapper):
    """Censored(base, low=None, high=None): ``clip(X, low, high)`` for ``X ~ base``.

    ``logpdf(low) = log P(X <= low)``, ``logpdf(high) = log P(X >= high)`` (the CDF mass at the
    censoring bounds), the base log density strictly inside, ``-inf`` outside ``[low, high]``.
    """

    def __init__(self, base, low=None, high=None):
        super().__init__(base, low, high)
        b, lo, hi = base, self._lo, self._hi
        with np.errstate(all="ignore"):
            self._log_atom_lo = self._full(b.logcdf(lo))
            self._log_atom_hi = self._full(b.logsf(hi - 1.0) if self.is_discrete else b.logsf(hi))

    @property
    def bijector(self):
        if self.is_discrete:
            return super().bijector
        raise TypeError(f"{self.name}: a censored continuous distribution has atoms at its bounds "
                        "and no bijector to unconstrained space")

    def grad_logpdf(self, x) -> dict:
        from .wrapper_grads import censored_grad
        return censored_grad(self, x)

    def _logpdf(self, x):
        lp = self.base.logpdf_elementwise(x)
        lp = np.where(self._cut_lo & (x == self._lo), self._log_atom_lo, lp)
        return np.where(self._cut_hi & (x == self._hi), self._log_atom_hi, lp)

    def _logcdf(self, x):
        return self.base.logcdf(x)

    def _logsf(self, x):
        return self.base.logsf(x)

    def _ppf(self, q):
        return np.clip(self.base.ppf(q), self._lo, self._hi)

    def _isf(self, q):
        return np.clip(self.base.isf(q), self._lo, self._hi)

    def _sample(self, rng, size):
        return np.clip(self.base._sample(rng, size), self._lo, self._hi)

    def _scalar_moments(self):
        if self.is_discrete:
            return self._enumerated_moments()
        if self._gated():
            return np.nan, np.nan
        lo, hi = float(self._lo), float(self._hi)
        atoms = [(v, float(np.exp(la))) for v, la, cut in
                 ((lo, self._log_atom_lo, self._cut_lo), (hi, self._log_atom_hi, self._cut_hi)) if cut]
        m = self._integral(lambda t: t) + sum(v * w for v, w in atoms)
        v2 = self._integral(lambda t: (t - m) ** 2) + sum((v - m) ** 2 * w for v, w in atoms)
        return m, v2
