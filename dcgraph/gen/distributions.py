"""Lowercase distribution constructors with Gen's names, one per ``dcgraph.dist`` family.

Parametrised as in ``dcgraph.dist``: ``normal(mu, sigma)`` (standard deviation, as in Gen),
``gamma(shape, rate)`` (Gen: scale), ``inv_gamma(shape, scale)``, ``exponential(rate)``,
``uniform(low, high)``, ``categorical(p)`` (0-based values; Gen's are 1-based). Inside a
generative function ``normal(mu, 1) @ "x"`` is a random choice; ``Normal(mu, 1) @ "x"`` too.

The hot families (``normal``, ``bernoulli``, ``categorical``, ``uniform``, ``exponential``) are
subclasses of their ``dcgraph.dist`` class with a fast path for scalar parameters: validation
in plain Python, and ``gen_logpdf``/``gen_sample`` for scalar values (the same numbers and the
same use of the random generator as the family's own ``logpdf``/``sample``). Any other input
takes the family's own constructor, so errors and array behaviour are the family's. The other
names are the ``dcgraph.dist`` classes themselves.
"""
from __future__ import annotations

import math
import re
from itertools import accumulate
from types import MappingProxyType

import numpy as np

from .. import dist

__all__ = ["GEN_NAMES", "FAST_FAMILIES", "normal", "half_normal", "lognormal", "student_t",
           "cauchy", "laplace", "logistic", "exponential", "gamma", "inv_gamma", "beta",
           "uniform", "weibull", "pareto", "chi_squared", "flat", "truncated", "censored",
           "dirichlet", "mvnormal", "wishart", "bernoulli", "binom", "poisson", "categorical",
           "geometric", "neg_binom", "beta_binomial", "multinomial"]

_SCALAR = (float, int, np.float64)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_log = math.log


def _ro(v: float) -> np.ndarray:
    a = np.array(v, dtype=float)
    a.flags.writeable = False
    return a


def _real(*vs) -> bool:
    for v in vs:
        if type(v) not in _SCALAR or not math.isfinite(v):
            return False
    return True


class normal(dist.Normal):
    __doc__ = dist.Normal.__doc__

    def __init__(self, loc, scale):
        if _real(loc, scale) and scale > 0:
            self._f = (float(loc), float(scale))
            self.loc, self.scale, self._batch_shape = _ro(loc), _ro(scale), ()
        else:
            self._f = None
            dist.Normal.__init__(self, loc, scale)

    def gen_logpdf(self, x) -> float:
        if self._f is None or type(x) not in _SCALAR:
            return float(self.logpdf(x))
        m, s = self._f
        z = (x - m) / s
        return -0.5 * z * z - _log(s) - _HALF_LOG_2PI

    def gen_sample(self, rng):
        if self._f is None:
            return None
        return rng.normal(self._f[0], self._f[1])


class uniform(dist.Uniform):
    __doc__ = dist.Uniform.__doc__

    def __init__(self, low, high):
        if _real(low, high) and low < high:
            self._f = (float(low), float(high))
            self.low, self.high, self._batch_shape = _ro(low), _ro(high), ()
        else:
            self._f = None
            dist.Uniform.__init__(self, low, high)

    def gen_logpdf(self, x) -> float:
        if self._f is None or type(x) not in _SCALAR:
            return float(self.logpdf(x))
        lo, hi = self._f
        return -_log(hi - lo) if lo <= x <= hi else -math.inf

    def gen_sample(self, rng):
        return None


class exponential(dist.Exponential):
    __doc__ = dist.Exponential.__doc__

    def __init__(self, rate):
        if _real(rate) and rate > 0:
            self._f = float(rate)
            self.rate, self._batch_shape = _ro(rate), ()
        else:
            self._f = None
            dist.Exponential.__init__(self, rate)

    def gen_logpdf(self, x) -> float:
        if self._f is None or type(x) not in _SCALAR:
            return float(self.logpdf(x))
        return _log(self._f) - self._f * x if x >= 0 else -math.inf

    def gen_sample(self, rng):
        return None


class bernoulli(dist.Bernoulli):
    __doc__ = dist.Bernoulli.__doc__

    def __init__(self, p):
        if type(p) in _SCALAR and 0.0 <= p <= 1.0:
            self._f = float(p)
            self.p, self._batch_shape = _ro(p), ()
        else:
            self._f = None
            dist.Bernoulli.__init__(self, p)

    def gen_logpdf(self, x) -> float:
        p = self._f
        if p is None or type(x) not in (int, bool, np.int64, np.bool_):
            return float(self.logpdf(x))
        if x == 1:
            return _log(p) if p > 0 else -math.inf
        if x == 0:
            return math.log1p(-p) if p < 1 else -math.inf
        return -math.inf

    def gen_sample(self, rng):
        if self._f is None:
            return None
        return int(rng.random() < self._f)


class categorical(dist.Categorical):
    __doc__ = dist.Categorical.__doc__

    def __init__(self, p):
        a = np.array(p, dtype=float) if type(p) is np.ndarray and p.ndim == 1 else None
        if a is not None and a.size:
            lst = a.tolist()
            if all(0.0 <= v <= 1.0 for v in lst) and abs(sum(lst) - 1.0) <= 1e-8:
                a.flags.writeable = False
                self.p, self._batch_shape, self._f = a, (), lst
                self._fcum = list(accumulate(lst))
                return
        self._f = None
        dist.Categorical.__init__(self, p)

    @property
    def _cum(self):
        """The family's cumulative probabilities, computed on first use on the fast path."""
        v = self.__dict__.get("_cum_")
        if v is None:
            v = self.__dict__["_cum_"] = np.cumsum(self.p, axis=-1)
        return v

    @_cum.setter
    def _cum(self, v):
        self.__dict__["_cum_"] = v

    @property
    def _tail(self):
        v = self.__dict__.get("_tail_")
        if v is None:
            v = self.__dict__["_tail_"] = np.cumsum(self.p[..., ::-1], axis=-1)[..., ::-1]
        return v

    @_tail.setter
    def _tail(self, v):
        self.__dict__["_tail_"] = v

    def gen_logpdf(self, x) -> float:
        p = self._f
        if p is None or type(x) not in (int, np.int64):
            return float(self.logpdf(x))
        if 0 <= x < len(p):
            v = p[x]
            return _log(v) if v > 0 else -math.inf
        return -math.inf

    def gen_sample(self, rng):
        if self._f is None:
            return None
        u = rng.random()
        k = 0
        for c in self._fcum:
            if c < u:
                k += 1
        return min(k, len(self._f) - 1)


#: The fast subclasses and the ``dcgraph.dist`` class each extends.
FAST_FAMILIES = MappingProxyType({normal: dist.Normal, uniform: dist.Uniform,
                                  exponential: dist.Exponential, bernoulli: dist.Bernoulli,
                                  categorical: dist.Categorical})

half_normal, lognormal = dist.HalfNormal, dist.LogNormal
student_t, cauchy, laplace, logistic = dist.StudentT, dist.Cauchy, dist.Laplace, dist.Logistic
gamma, inv_gamma = dist.Gamma, dist.InverseGamma
beta, weibull, pareto = dist.Beta, dist.Weibull, dist.Pareto
chi_squared, flat, truncated, censored = dist.ChiSquared, dist.Flat, dist.Truncated, dist.Censored
dirichlet, mvnormal, wishart = dist.Dirichlet, dist.MvNormal, dist.Wishart
binom, poisson = dist.Binomial, dist.Poisson
geometric, neg_binom, beta_binomial = dist.Geometric, dist.NegativeBinomial, dist.BetaBinomial
multinomial = dist.Multinomial

_NAMED = {name: globals()[name] for name in __all__[2:]}
_BY_CLASS = {FAST_FAMILIES.get(c, c): n for n, c in _NAMED.items()}


def _snake(name: str) -> str:
    """``MvStudentT`` -> ``mv_student_t``; a run of capitals is one word: ``LKJCholesky`` -> ``lkj_cholesky``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


#: Gen name -> constructor for every ``dcgraph.dist`` family (families without a Gen name get
#: their class name in snake case: ``MvStudentT`` -> ``mv_student_t``).
GEN_NAMES = MappingProxyType({**_NAMED, **{_snake(n): c for n, c in dist.LOGPDF_FAMILIES.items()
                                           if c not in _BY_CLASS}})


def __getattr__(name):
    try:
        return GEN_NAMES[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
