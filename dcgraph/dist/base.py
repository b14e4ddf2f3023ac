"""The ``Distribution`` base class and the ``Univariate`` layer (CDFs and quantiles).

Contracts shared by every family:

* Parameters are validated at construction, stored as read-only numpy arrays under
  the names listed in ``params`` and broadcast against each other; their broadcast
  shape is ``batch_shape``. One draw has shape ``event_shape`` (``()`` for scalars).
  ``validation(False)`` (or a family's ``validate_args=False``) skips the checks: the
  parameters are stored as given (float arrays) and ``batch_shape`` is computed on use.
* ``logpdf(x)`` returns the **sum** of the log densities of all elements of ``x`` (a
  numpy float); ``logpdf_elementwise(x)`` returns them with shape
  ``broadcast(x.shape[:-event_dim], batch_shape)``. Values outside the support give
  ``-inf`` (never an error); NaN values give NaN. ``logpmf`` is the discrete alias.
* ``sample(rng, shape)`` takes a ``numpy.random.Generator`` and returns an array of
  shape ``shape + batch_shape + event_shape`` (int64 for discrete families).
* ``mean`` and ``var`` (elementwise variance) follow scipy: NaN where undefined,
  ``inf`` where infinite.
* ``to_unconstrained`` / ``from_unconstrained`` / ``log_abs_det_jacobian`` use the
  bijector of ``support`` (see ``bijectors``); the Jacobian term is summed like ``logpdf``.
* ``grad_logpdf(x)`` returns closed-form partial derivatives of ``logpdf(x)`` (the sum)
  with respect to ``'x'`` (continuous families only) and each continuous parameter, each
  shaped like the argument it differentiates. Symmetric-matrix parameters get the
  symmetric gradient ``G`` with ``d logpdf = sum(G * dA)`` for symmetric ``dA``.
  Elements outside the support give NaN.
"""
from __future__ import annotations

import abc

import numpy as np

from ._math import unbroadcast
from .bijectors import bijector_for
from .support import Simplex
from .validation import broadcast_batch, check_param, fmt_value, is_validating

__all__ = ["Distribution", "Univariate"]

_INT = np.int64


class Distribution(abc.ABC):
    """Base class of all distributions (see the module docstring for the contracts)."""

    params: tuple = ()
    param_event_dims: dict = {}
    event_dim = 0
    is_discrete = False
    _validate = True          # False: built with validation off (see ``validation``)
    _real_line = False        # True: ``_logpdf`` is already right on all of R (+-inf, NaN): no support test
    _batch_shape: tuple = ()
    _event_shape: tuple = ()

    # ----------------------------------------------------------------- parameters
    @property
    def name(self) -> str:
        return type(self).__name__

    def _set_params(self, validate_args=None, /, **specs):
        """Validate ``name=(value, constraint)`` pairs, store them, set ``batch_shape``.

        With ``validate_args`` False (or None while ``validation(False)`` is in force) the
        values are stored as float (int64 for integer constraints) arrays without checks and
        ``batch_shape`` is computed on first use.
        """
        validate = is_validating() if validate_args is None else bool(validate_args)
        self._validate = validate
        if not validate:
            for pname, (value, constraint) in specs.items():
                setattr(self, pname, np.asarray(value, dtype=_INT if constraint == "nonnegative_integer" else float))
            self._batch_shape = None
            return
        shapes = {}
        for pname, (value, constraint) in specs.items():
            a = check_param(self.name, pname, value, constraint)
            setattr(self, pname, a)
            k = self.param_event_dims.get(pname, 0)
            shapes[pname] = a.shape[: a.ndim - k]
        self._batch_shape = broadcast_batch(self.name, shapes)

    def param_value(self, name: str):
        """The stored value of parameter ``name`` (as validated, not broadcast)."""
        return getattr(self, name)

    def _full(self, v) -> np.ndarray:
        """``v`` broadcast to ``batch_shape + event_shape`` as a fresh float array."""
        return np.array(np.broadcast_to(v, self.batch_shape + self.event_shape), dtype=float)

    @property
    def batch_shape(self) -> tuple:
        if self._batch_shape is None:     # unvalidated parameters: broadcast on first use
            shapes = {}
            for pname in self.params:
                a, k = getattr(self, pname), self.param_event_dims.get(pname, 0)
                shapes[pname] = a.shape[: a.ndim - k]
            self._batch_shape = broadcast_batch(self.name, shapes)
        return self._batch_shape

    @property
    def event_shape(self) -> tuple:
        return self._event_shape

    def __repr__(self):
        def show(v):
            return repr(v) if isinstance(v, Distribution) else fmt_value(v)

        return f"{self.name}({', '.join(f'{p}={show(self.param_value(p))}' for p in self.params)})"

    @property
    @abc.abstractmethod
    def support(self):
        """The ``Support`` object of this distribution."""

    @property
    @abc.abstractmethod
    def mean(self):
        """Mean, shape ``batch_shape + event_shape``."""

    @property
    @abc.abstractmethod
    def var(self):
        """Elementwise variance, shape ``batch_shape + event_shape``."""

    # ---------------------------------------------------------------- densities
    def _as_value(self, x) -> np.ndarray:
        try:
            x = np.asarray(x, dtype=float)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{self.name}: value must be numeric, got {x!r}") from exc
        k = self.event_dim
        if k and (x.ndim < k or x.shape[x.ndim - k:] != self.event_shape):
            raise ValueError(f"{self.name}: value must have trailing shape {self.event_shape}, got shape {x.shape}")
        return x

    def _value_batch(self, x) -> tuple:
        return x.shape[: x.ndim - self.event_dim]

    def _out_shape(self, x) -> tuple:
        try:
            return np.broadcast_shapes(self._value_batch(x), self.batch_shape)
        except ValueError:
            raise ValueError(f"{self.name}: value of shape {x.shape} does not broadcast with "
                             f"batch shape {self.batch_shape}") from None

    @abc.abstractmethod
    def _logpdf(self, x):
        """Elementwise log density, valid where ``x`` is in the support."""

    def logpdf_elementwise(self, x) -> np.ndarray:
        """Log density of each element (each event) of ``x``; ``-inf`` outside the support."""
        x = self._as_value(x)
        shape = self._out_shape(x)
        with np.errstate(all="ignore"):
            lp = np.where(self.support.contains(x), self._logpdf(x), -np.inf)
        isnan = np.isnan(x)
        if self.event_dim:
            isnan = np.any(isnan, axis=tuple(range(-self.event_dim, 0)))
        return np.array(np.broadcast_to(np.where(isnan, np.nan, lp), shape), dtype=float)

    def logpdf(self, x):
        """Sum of ``logpdf_elementwise(x)`` (a numpy float).

        Scalar families take a cheap path when every element of ``x`` is in the support: the
        raw kernel, summed (no masks, no copies); same result. Built with validation off, the
        checks of ``x`` (numeric, shape) are skipped too.
        """
        if self.event_dim == 0:
            if not self._validate:
                x = np.asarray(x, dtype=float)
                if self._real_line or self.support.contains(x).all():
                    return np.sum(self._logpdf(x))
            else:
                x = self._as_value(x)
                shape = self._out_shape(x)
                if self._real_line or self.support.contains(x).all():
                    with np.errstate(all="ignore"):
                        lp = self._logpdf(x)
                    if np.shape(lp) == shape:
                        return np.sum(lp)
        return np.sum(self.logpdf_elementwise(x))

    def logpmf_elementwise(self, x) -> np.ndarray:
        """Alias of ``logpdf_elementwise`` for discrete distributions."""
        if not self.is_discrete:
            raise TypeError(f"{self.name} is continuous: use logpdf_elementwise")
        return self.logpdf_elementwise(x)

    def logpmf(self, x):
        """Alias of ``logpdf`` for discrete distributions."""
        if not self.is_discrete:
            raise TypeError(f"{self.name} is continuous: use logpdf")
        return self.logpdf(x)

    def _grad_logpdf(self, x) -> dict:
        raise NotImplementedError(f"{self.name}: no closed-form gradient of logpdf")

    def grad_logpdf(self, x) -> dict:
        """Closed-form gradient of ``logpdf(x)``: ``{'x': ..., param: ...}`` shaped like each argument."""
        x = self._as_value(x)
        full = self._out_shape(x)
        inside = np.broadcast_to(self.support.contains(x), full)
        with np.errstate(all="ignore"):
            parts = self._grad_logpdf(x)
        out = {}
        for key, val in parts.items():
            if key == "x":
                target, k = x.shape, self.event_dim
            else:
                target, k = np.shape(self.param_value(key)), self.param_event_dims.get(key, 0)
            event = target[len(target) - k:] if k else ()
            val = np.broadcast_to(np.asarray(val, dtype=float), full + event)
            val = np.where(inside.reshape(full + (1,) * k), val, np.nan)
            out[key] = unbroadcast(val, target)
        return out

    # ----------------------------------------------------------------- Gen choices
    def __matmul__(self, address):
        """``dist @ address`` inside a ``dcgraph.gen`` generative function: a random choice at
        ``address`` (handled by ``dcgraph.gen``, imported on first use)."""
        from ..gen.runtime import choice
        return choice(self, address)

    # ----------------------------------------------------------------- sampling
    @abc.abstractmethod
    def _sample(self, rng: np.random.Generator, size: tuple) -> np.ndarray:
        """Draws of shape ``size + event_shape``; ``size`` ends with ``batch_shape``."""

    def sample(self, rng, shape=()) -> np.ndarray:
        """Draw ``shape + batch_shape + event_shape`` values using ``rng`` (a numpy Generator)."""
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"{self.name}.sample: rng must be a numpy.random.Generator, got {type(rng).__name__}")
        shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)
        out = self._sample(rng, shape + self.batch_shape)
        return out.astype(np.int64) if self.is_discrete else np.asarray(out, dtype=float)

    # ---------------------------------------------------------------- bijectors
    @property
    def bijector(self):
        """The bijector onto ``support``; ``TypeError`` for discrete distributions."""
        if self.is_discrete:
            raise TypeError(f"{self.name} is discrete: there is no bijector to unconstrained space")
        return bijector_for(self.support)

    def to_unconstrained(self, x) -> np.ndarray:
        """Map support values ``x`` to unconstrained ``y`` (simplex: ``K -> K-1``; PD: ``p x p -> p(p+1)/2``)."""
        return self.bijector.inverse(x)

    def from_unconstrained(self, y) -> np.ndarray:
        """Map unconstrained ``y`` into the support (inverse of ``to_unconstrained``)."""
        return self.bijector.forward(y)

    def log_abs_det_jacobian(self, y):
        """Summed ``log|det d from_unconstrained(y) / dy|`` (pairs with ``logpdf``)."""
        return np.sum(self.bijector.log_abs_det_jacobian(y))

    def logpdf_unconstrained(self, y):
        """Summed log density of the image of this distribution in unconstrained space.

        ``logpdf(from_unconstrained(y)) + log_abs_det_jacobian(y)``, except that a ``y`` whose
        image underflows onto the boundary of the support (e.g. ``exp(-800) == 0``) gives
        ``-inf``: the density there may be infinite while the true value in ``y`` tends to 0.
        """
        b = self.bijector
        x = b.forward(y)
        lp = self.logpdf_elementwise(x) + b.log_abs_det_jacobian(y)
        sup = self.support
        with np.errstate(invalid="ignore"):
            if self.event_dim == 0:
                edge = (x <= sup.lower) | (x >= sup.upper)
            elif isinstance(sup, Simplex):  # the simplex has its boundary where a coordinate is 0
                edge = np.any(x <= 0.0, axis=-1)
            else:
                edge = False
        return np.sum(np.where(edge, -np.inf, lp))


class Univariate(Distribution):
    """Scalar-valued distributions: adds ``cdf``, ``sf``, ``logcdf``, ``logsf``, ``ppf``, ``isf``.

    All are elementwise and follow scipy (``sf(x) = P(X > x)``); discrete families are
    evaluated at ``floor(x)``. ``ppf(q)`` is the smallest ``x`` with ``cdf(x) >= q`` and
    ``isf(q)`` the smallest ``x`` with ``sf(x) <= q``; both give NaN outside ``[0, 1]``
    and the support bounds at 0 and 1.
    """

    event_dim = 0

    def _bounds(self):
        return np.asarray(self.support.lower, dtype=float), np.asarray(self.support.upper, dtype=float)

    def _clipped(self, x):
        x = np.asarray(x, dtype=float)
        if self.is_discrete:
            x = np.floor(x)
        lo, hi = self._bounds()
        return x, np.clip(x, lo, hi), lo, hi

    @abc.abstractmethod
    def _logcdf(self, x):
        """log P(X <= x) for ``x`` inside the support bounds."""

    @abc.abstractmethod
    def _logsf(self, x):
        """log P(X > x) for ``x`` inside the support bounds."""

    def logcdf(self, x):
        x, xc, lo, hi = self._clipped(x)
        with np.errstate(all="ignore"):
            r = self._logcdf(xc)
        return np.where(x < lo, -np.inf, np.where(x >= hi, 0.0, r))

    def logsf(self, x):
        x, xc, lo, hi = self._clipped(x)
        with np.errstate(all="ignore"):
            r = self._logsf(xc)
        return np.where(x < lo, 0.0, np.where(x >= hi, -np.inf, r))

    def cdf(self, x):
        return np.exp(self.logcdf(x))

    def sf(self, x):
        return np.exp(self.logsf(x))

    def _quantile(self, q, fn, at0, at1):
        q = np.asarray(q, dtype=float)
        bad = ~((q >= 0) & (q <= 1))
        with np.errstate(all="ignore"):
            r = fn(np.where(bad, 0.5, q))
        r = np.where(q == 0, at0, np.where(q == 1, at1, r))
        return np.where(bad, np.nan, r)

    def ppf(self, q):
        lo, hi = self._bounds()
        return self._quantile(q, self._ppf, lo, hi)

    def isf(self, q):
        lo, hi = self._bounds()
        return self._quantile(q, self._isf, hi, lo)

    def _ppf(self, q):
        if not self.is_discrete:
            raise NotImplementedError(f"{self.name}: no quantile function")
        return self._integer_search(lambda k: self.cdf(k) >= q, q.shape)

    def _isf(self, q):
        if not self.is_discrete:
            raise NotImplementedError(f"{self.name}: no inverse survival function")
        return self._integer_search(lambda k: self.sf(k) <= q, q.shape)

    def _integer_search(self, pred, qshape):
        """Elementwise smallest support integer ``k`` with ``pred(k)`` (``pred`` monotone)."""
        lo_s, hi_s = self._bounds()
        shape = np.broadcast_shapes(qshape, self.batch_shape, lo_s.shape, hi_s.shape)
        finite = np.broadcast_to(np.isfinite(hi_s), shape)
        lo = np.broadcast_to(lo_s - 1.0, shape).copy()
        hi = np.broadcast_to(np.where(np.isfinite(hi_s), hi_s, np.maximum(lo_s, 0.0) + 1.0), shape).copy()
        for _ in range(64):  # grow the bracket for unbounded supports
            grow = ~finite & ~pred(hi)
            if not np.any(grow):
                break
            lo = np.where(grow, hi, lo)
            hi = np.where(grow, 2.0 * hi + 1.0, hi)
        while np.any(hi - lo > 1):
            mid = np.floor((lo + hi) / 2.0)
            ok = pred(mid)
            hi = np.where(ok, mid, hi)
            lo = np.where(ok, lo, mid)
        return hi
