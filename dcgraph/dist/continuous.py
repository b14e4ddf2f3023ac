"""Continuous families on the whole real line: Normal, StudentT, Cauchy, Laplace, Logistic, Flat."""
from __future__ import annotations

import numpy as np
from scipy.special import log_expit, log_ndtr, logit, ndtri, stdtr, stdtrit

from ._math import log1mexp
from .base import Univariate
from .kernels import (cauchy_logpdf, cauchy_logpdf_grad, laplace_logpdf, laplace_logpdf_grad, logistic_logpdf,
                      logistic_logpdf_grad, normal_logpdf, normal_logpdf_grad, studentt_logpdf, studentt_logpdf_grad)
from .support import Real

__all__ = ["Normal", "StudentT", "Cauchy", "Laplace", "Logistic", "Flat"]


class _SymmetricLocationScale(Univariate):
    """A family on the real line symmetric about ``loc``: ``x = loc + scale z`` where the
    standard ``z`` has log CDF ``_std_logcdf(z)`` and quantile ``_std_ppf(q)`` (set by each
    family), and ``F(-z) = 1 - F(z)``: so ``log sf(x) = _std_logcdf(-z)`` and
    ``isf(q) = loc - scale _std_ppf(q)``. Support Real; ``_logpdf`` is right on all of it."""

    support = Real()
    _real_line = True

    def _z(self, x):
        return (x - self.loc) / self.scale

    def _logcdf(self, x):
        return self._std_logcdf(self._z(x))

    def _logsf(self, x):
        return self._std_logcdf(-self._z(x))

    def _ppf(self, q):
        return self.loc + self.scale * self._std_ppf(q)

    def _isf(self, q):
        return self.loc - self.scale * self._std_ppf(q)


class Normal(_SymmetricLocationScale):
    """Normal(loc, scale): mean ``loc`` (real), standard deviation ``scale > 0``.

    ``log p(x) = -z^2/2 - log(scale) - log(2 pi)/2`` with ``z = (x - loc)/scale``; support Real.
    Note ``scale`` is a standard deviation, not a precision.
    ``validate_args=False`` skips the parameter checks (see ``dcgraph.dist.validation``).
    """

    params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self._set_params(validate_args, loc=(loc, "real"), scale=(scale, "positive"))

    def _logpdf(self, x):
        return normal_logpdf(x, self.loc, self.scale)

    def _grad_logpdf(self, x):
        dx, dloc, dscale = normal_logpdf_grad(x, self.loc, self.scale)
        return {"x": dx, "loc": dloc, "scale": dscale}

    _std_logcdf = staticmethod(log_ndtr)
    _std_ppf = staticmethod(ndtri)

    def _sample(self, rng, size):
        return rng.normal(self.loc, self.scale, size)

    @property
    def mean(self):
        return self._full(self.loc)

    @property
    def var(self):
        return self._full(self.scale**2)


class StudentT(_SymmetricLocationScale):
    """StudentT(df, loc=0, scale=1): Student's t with ``df > 0`` degrees of freedom, shifted and scaled.

    ``log p(x) = lgamma((df+1)/2) - lgamma(df/2) - log(df pi)/2 - log(scale)
    - (df+1)/2 log(1 + z^2/df)``, ``z = (x - loc)/scale``; support Real.
    Mean ``loc`` for ``df > 1`` (else NaN); variance ``scale^2 df/(df-2)`` for ``df > 2``,
    ``inf`` for ``1 < df <= 2``, NaN otherwise.
    """

    params = ("df", "loc", "scale")

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self._set_params(validate_args, df=(df, "positive"), loc=(loc, "real"), scale=(scale, "positive"))

    def _logpdf(self, x):
        return studentt_logpdf(x, self.df, self.loc, self.scale)

    def _grad_logpdf(self, x):
        return dict(zip(("x",) + self.params, studentt_logpdf_grad(x, self.df, self.loc, self.scale)))

    def _std_logcdf(self, z):
        return np.log(stdtr(self.df, z))

    def _std_ppf(self, q):
        return stdtrit(self.df, q)

    def _sample(self, rng, size):
        return self.loc + self.scale * rng.standard_t(self.df, size)

    @property
    def mean(self):
        return self._full(np.where(self.df > 1, self.loc, np.nan))

    @property
    def var(self):
        nu = self.df
        with np.errstate(divide="ignore", invalid="ignore"):
            v = np.where(nu > 2, self.scale**2 * nu / (nu - 2), np.where(nu > 1, np.inf, np.nan))
        return self._full(v)


class Cauchy(_SymmetricLocationScale):
    """Cauchy(loc, scale): median ``loc``, half-width at half-maximum ``scale > 0``.

    ``log p(x) = -log(pi) - log(scale) - log(1 + z^2)``; support Real; mean and variance NaN.
    """

    params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self._set_params(validate_args, loc=(loc, "real"), scale=(scale, "positive"))

    def _logpdf(self, x):
        return cauchy_logpdf(x, self.loc, self.scale)

    def _grad_logpdf(self, x):
        return dict(zip(("x",) + self.params, cauchy_logpdf_grad(x, self.loc, self.scale)))

    @staticmethod
    def _std_logcdf(z):
        return np.log(np.arctan2(1.0, -z) / np.pi)

    def _ppf(self, q):                   # (as written: ``scale * (-1/tan)`` rounds twice)
        return self.loc - self.scale / np.tan(np.pi * q)

    def _isf(self, q):
        return self.loc + self.scale / np.tan(np.pi * q)

    def _sample(self, rng, size):
        return self.loc + self.scale * rng.standard_cauchy(size)

    @property
    def mean(self):
        return self._full(np.nan)

    @property
    def var(self):
        return self._full(np.nan)


class Laplace(_SymmetricLocationScale):
    """Laplace(loc, scale): double exponential, ``log p(x) = -log(2 scale) - |x - loc|/scale``.

    ``scale > 0`` is the mean absolute deviation (BUGS ``ddexp(mu, tau)`` has ``scale = 1/tau``);
    support Real; mean ``loc``, variance ``2 scale^2``.
    """

    params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self._set_params(validate_args, loc=(loc, "real"), scale=(scale, "positive"))

    def _logpdf(self, x):
        return laplace_logpdf(x, self.loc, self.scale)

    def _grad_logpdf(self, x):
        return dict(zip(("x",) + self.params, laplace_logpdf_grad(x, self.loc, self.scale)))

    @staticmethod
    def _std_logcdf(z):
        return np.where(z < 0, np.log(0.5) + z, log1mexp(np.log(0.5) - np.abs(z)))

    @staticmethod
    def _std_ppf(q):
        return np.where(q <= 0.5, np.log(2.0 * q), -np.log(2.0 * (1.0 - q)))

    def _sample(self, rng, size):
        return rng.laplace(self.loc, self.scale, size)

    @property
    def mean(self):
        return self._full(self.loc)

    @property
    def var(self):
        return self._full(2.0 * self.scale**2)


class Logistic(_SymmetricLocationScale):
    """Logistic(loc, scale): ``log p(x) = -z - log(scale) - 2 log(1 + exp(-z))``, ``z = (x-loc)/scale``.

    ``scale > 0``; support Real; mean ``loc``, variance ``scale^2 pi^2 / 3``.
    """

    params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self._set_params(validate_args, loc=(loc, "real"), scale=(scale, "positive"))

    def _logpdf(self, x):
        return logistic_logpdf(x, self.loc, self.scale)

    def _grad_logpdf(self, x):
        return dict(zip(("x",) + self.params, logistic_logpdf_grad(x, self.loc, self.scale)))

    _std_logcdf = staticmethod(log_expit)
    _std_ppf = staticmethod(logit)

    def _sample(self, rng, size):
        return rng.logistic(self.loc, self.scale, size)

    @property
    def mean(self):
        return self._full(self.loc)

    @property
    def var(self):
        return self._full(self.scale**2 * np.pi**2 / 3.0)


class Flat(Univariate):
    """Flat(): the improper uniform density on the real line, ``log p(x) = 0`` for finite ``x``.

    Usable as a prior in unnormalised targets only: ``sample``, the CDF family and the
    wrappers raise ``ValueError``; mean and variance are NaN. Bijector: identity.
    """

    params = ()
    support = Real()

    def _logpdf(self, x):
        return np.zeros(np.shape(x))

    def _grad_logpdf(self, x):
        return {"x": np.zeros(np.shape(x))}

    def _improper(self, what):
        raise ValueError(f"Flat: improper distribution has no {what}")

    def _logcdf(self, x):
        self._improper("CDF")

    def _logsf(self, x):
        self._improper("survival function")

    def _ppf(self, q):
        self._improper("quantile function")

    def _isf(self, q):
        self._improper("quantile function")

    def _sample(self, rng, size):
        self._improper("sampler")

    @property
    def mean(self):
        return np.array(np.nan)

    @property
    def var(self):
        return np.array(np.nan)
