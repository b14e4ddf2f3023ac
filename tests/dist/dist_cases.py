"""Shared test cases: each univariate family with a scipy reference and points to evaluate.

``xs`` have shape (m, 1) so they broadcast against a batch of parameters of shape (B,).
Wrapper references are built from scalar scipy distributions (TruncRef, CensRef).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from scipy import stats

import dcgraph.dist as D


class TruncRef:
    """scipy reference for ``Truncated(base, lo, hi)`` (scalar parameters)."""

    def __init__(self, frozen, lo, hi, discrete=False):
        self.f, self.lo, self.hi, self.discrete = frozen, lo, hi, discrete
        self.a = lo - 1 if discrete else lo
        self.mass = frozen.cdf(hi) - frozen.cdf(self.a)

    def logpdf(self, x):
        x = np.asarray(x, dtype=float)
        base = self.f.logpmf(x) if self.discrete else self.f.logpdf(x)
        return np.where((x >= self.lo) & (x <= self.hi), base - np.log(self.mass), -np.inf)

    logpmf = logpdf

    def cdf(self, x):
        x = np.clip(np.asarray(x, dtype=float), self.a, self.hi)
        return (self.f.cdf(x) - self.f.cdf(self.a)) / self.mass

    def _expect(self, g):
        kw = {} if self.discrete else dict(epsabs=1e-14, epsrel=1e-12, limit=200)
        return self.f.expect(g, lb=self.lo, ub=self.hi, conditional=True, **kw)

    def mean(self):
        return self._expect(lambda t: t)

    def var(self):
        m = self.mean()
        return self._expect(lambda t: (t - m) ** 2)


class CensRef:
    """scipy reference for ``Censored(base, lo, hi)`` (scalar parameters, finite bounds)."""

    def __init__(self, frozen, lo, hi, discrete=False):
        self.f, self.lo, self.hi, self.discrete = frozen, lo, hi, discrete
        self.atom_lo = frozen.cdf(lo)
        self.atom_hi = frozen.sf(hi - 1) if discrete else frozen.sf(hi)

    def logpdf(self, x):
        x = np.asarray(x, dtype=float)
        inner = self.f.logpmf(x) if self.discrete else self.f.logpdf(x)
        out = np.where(x == self.lo, np.log(self.atom_lo), np.where(x == self.hi, np.log(self.atom_hi), inner))
        return np.where((x >= self.lo) & (x <= self.hi), out, -np.inf)

    logpmf = logpdf

    def cdf(self, x):
        x = np.asarray(x, dtype=float)
        return np.where(x < self.lo, 0.0, np.where(x >= self.hi, 1.0, self.f.cdf(x)))

    def _moment(self, g):
        lo, hi = (self.lo + 1, self.hi - 1) if self.discrete else (self.lo, self.hi)
        kw = {} if self.discrete else dict(epsabs=1e-14, epsrel=1e-12, limit=200)
        inner = self.f.expect(g, lb=lo, ub=hi, **kw) if lo <= hi else 0.0
        return inner + g(self.lo) * self.atom_lo + g(self.hi) * self.atom_hi

    def mean(self):
        return self._moment(lambda t: t)

    def var(self):
        m = self.mean()
        return self._moment(lambda t: (t - m) ** 2)


@dataclass
class Case:
    id: str
    make: Callable[[], Any]
    ref: Any
    xs: Any
    outside: list = field(default_factory=list)
    moments: bool = True  # finite fourth moment: test mean and variance from samples
    bijector: bool = True

    def __post_init__(self):
        self.xs = np.asarray(self.xs, dtype=float).reshape(-1, 1)

    @property
    def discrete(self):
        return self.make().is_discrete


def _arr(*v):
    return np.array(v, dtype=float)


CONTINUOUS = [
    Case("Normal", lambda: D.Normal(_arr(0.0, 1.5, -2.0), _arr(1.0, 2.0, 0.5)),
         stats.norm(_arr(0.0, 1.5, -2.0), _arr(1.0, 2.0, 0.5)), [-3.0, -0.4, 0.0, 1.2, 4.0], [np.inf, np.nan]),
    Case("HalfNormal", lambda: D.HalfNormal(_arr(0.5, 2.0)), stats.halfnorm(scale=_arr(0.5, 2.0)),
         [0.0, 0.1, 0.7, 2.5], [-0.5]),
    Case("LogNormal", lambda: D.LogNormal(_arr(0.0, 1.0), _arr(0.5, 1.2)),
         stats.lognorm(_arr(0.5, 1.2), scale=np.exp(_arr(0.0, 1.0))), [0.05, 0.8, 1.0, 3.3, 20.0], [0.0, -1.0]),
    Case("StudentT", lambda: D.StudentT(_arr(6.0, 30.0), 1.0, 2.0), stats.t(_arr(6.0, 30.0), 1.0, 2.0),
         [-10.0, -1.0, 1.0, 2.5, 40.0]),
    Case("StudentT-heavy", lambda: D.StudentT(_arr(1.5, 3.0), _arr(-1.0, 0.5), _arr(0.5, 3.0)),
         stats.t(_arr(1.5, 3.0), _arr(-1.0, 0.5), _arr(0.5, 3.0)), [-30.0, -1.0, 0.0, 2.0, 100.0], moments=False),
    Case("Cauchy", lambda: D.Cauchy(_arr(0.0, 3.0), _arr(1.0, 0.2)), stats.cauchy(_arr(0.0, 3.0), _arr(1.0, 0.2)),
         [-50.0, -1.0, 0.0, 3.1, 1e4], moments=False),
    Case("Laplace", lambda: D.Laplace(_arr(0.0, -1.0), _arr(1.0, 3.0)), stats.laplace(_arr(0.0, -1.0), _arr(1.0, 3.0)),
         [-8.0, -1.0, 0.0, 0.5, 12.0]),
    Case("Logistic", lambda: D.Logistic(_arr(0.0, 2.0), _arr(1.0, 0.3)), stats.logistic(_arr(0.0, 2.0), _arr(1.0, 0.3)),
         [-30.0, -1.0, 0.0, 2.2, 800.0]),
    Case("Exponential", lambda: D.Exponential(_arr(0.5, 3.0)), stats.expon(scale=1.0 / _arr(0.5, 3.0)),
         [0.0, 0.01, 1.0, 7.5], [-1e-9]),
    Case("Gamma", lambda: D.Gamma(_arr(0.5, 2.0, 7.0), _arr(1.0, 3.0, 0.5)),
         stats.gamma(_arr(0.5, 2.0, 7.0), scale=1.0 / _arr(1.0, 3.0, 0.5)), [1e-3, 0.4, 2.0, 15.0], [-0.1]),
    Case("InverseGamma", lambda: D.InverseGamma(_arr(5.0, 7.5), _arr(1.0, 2.0)),
         stats.invgamma(_arr(5.0, 7.5), scale=_arr(1.0, 2.0)), [0.02, 0.2, 0.5, 3.0], [0.0, -1.0]),
    Case("InverseGamma-heavy", lambda: D.InverseGamma(_arr(0.7, 1.8), _arr(1.0, 2.0)),
         stats.invgamma(_arr(0.7, 1.8), scale=_arr(1.0, 2.0)), [0.05, 1.0, 30.0], [0.0], moments=False),
    Case("Beta", lambda: D.Beta(_arr(0.5, 2.0, 5.0), _arr(0.7, 3.0, 1.0)),
         stats.beta(_arr(0.5, 2.0, 5.0), _arr(0.7, 3.0, 1.0)), [1e-4, 0.3, 0.5, 0.9, 0.9999], [-0.1, 1.1]),
    Case("Uniform", lambda: D.Uniform(_arr(-1.0, 0.0), _arr(1.0, 5.0)),
         stats.uniform(_arr(-1.0, 0.0), _arr(2.0, 5.0)), [0.2, 0.5, 0.999], [-1.5, 5.5]),
    Case("Weibull", lambda: D.Weibull(_arr(0.8, 2.5), _arr(1.0, 3.0)),
         stats.weibull_min(_arr(0.8, 2.5), scale=_arr(1.0, 3.0)), [0.01, 0.5, 2.0, 6.0], [-1.0]),
    Case("Pareto", lambda: D.Pareto(_arr(5.0, 8.0), _arr(1.0, 2.0)), stats.pareto(_arr(5.0, 8.0), scale=_arr(1.0, 2.0)),
         [2.0, 2.5, 7.0], [0.5, 0.99]),
    Case("Pareto-heavy", lambda: D.Pareto(_arr(0.8, 1.5), _arr(1.0, 2.0)),
         stats.pareto(_arr(0.8, 1.5), scale=_arr(1.0, 2.0)), [2.0, 2.5, 40.0], [0.5], moments=False),
    Case("ChiSquared", lambda: D.ChiSquared(_arr(1.0, 4.5, 10.0)), stats.chi2(_arr(1.0, 4.5, 10.0)),
         [0.01, 1.0, 5.0, 25.0], [-1.0]),
    Case("Truncated-Normal", lambda: D.Truncated(D.Normal(0.5, 2.0), -1.0, 3.0),
         TruncRef(stats.norm(0.5, 2.0), -1.0, 3.0), [-1.0, 0.0, 2.9, 3.0], [-1.01, 3.5]),
    Case("Truncated-Normal-tail", lambda: D.Truncated(D.Normal(0.0, 1.0), 4.0),
         TruncRef(stats.norm(0.0, 1.0), 4.0, np.inf), [4.0, 4.5, 6.0], [3.9]),
    Case("Truncated-Gamma", lambda: D.Truncated(D.Gamma(2.0, 1.5), high=2.5),
         TruncRef(stats.gamma(2.0, scale=1 / 1.5), 0.0, 2.5), [0.1, 1.0, 2.4], [-0.1, 2.6]),
    Case("Censored-Normal", lambda: D.Censored(D.Normal(0.0, 1.0), -1.0, 1.5),
         CensRef(stats.norm(0.0, 1.0), -1.0, 1.5), [-1.0, -0.2, 0.7, 1.5], [-1.2, 1.6], bijector=False),
    Case("Censored-Weibull", lambda: D.Censored(D.Weibull(1.5, 2.0), 0.5, 3.0),
         CensRef(stats.weibull_min(1.5, scale=2.0), 0.5, 3.0), [0.5, 1.0, 3.0], [0.4, 3.1], bijector=False),
]

DISCRETE = [
    Case("Bernoulli", lambda: D.Bernoulli(_arr(0.2, 0.9)), stats.bernoulli(_arr(0.2, 0.9)), [0, 1], [-1, 0.5, 2]),
    Case("Binomial", lambda: D.Binomial(np.array([5, 20]), _arr(0.3, 0.7)),
         stats.binom(np.array([5, 20]), _arr(0.3, 0.7)),
         [0, 2, 5], [-1, 2.5, 21]),
    Case("Poisson", lambda: D.Poisson(_arr(0.5, 4.0, 30.0)), stats.poisson(_arr(0.5, 4.0, 30.0)),
         [0, 1, 4, 25, 60], [-1, 1.5]),
    Case("Geometric", lambda: D.Geometric(_arr(0.2, 0.7)), stats.geom(_arr(0.2, 0.7), loc=-1),
         [0, 1, 3, 20], [-1, 0.5]),
    Case("NegativeBinomial", lambda: D.NegativeBinomial(_arr(1.5, 5.0), _arr(0.3, 0.8)),
         stats.nbinom(_arr(1.5, 5.0), _arr(0.3, 0.8)), [0, 1, 4, 30], [-2, 3.3]),
    Case("BetaBinomial", lambda: D.BetaBinomial(np.array([10, 3]), _arr(0.5, 2.0), _arr(2.0, 3.0)),
         stats.betabinom(np.array([10, 3]), _arr(0.5, 2.0), _arr(2.0, 3.0)), [0, 1, 3], [-1, 11, 0.5]),
    Case("Truncated-Poisson", lambda: D.Truncated(D.Poisson(3.0), 1, 6),
         TruncRef(stats.poisson(3.0), 1, 6, discrete=True), [1, 3, 6], [0, 7]),
    Case("Censored-Binomial", lambda: D.Censored(D.Binomial(10, 0.4), 2, 7),
         CensRef(stats.binom(10, 0.4), 2, 7, discrete=True), [2, 3, 6, 7], [1, 8]),
]

UNIVARIATE = CONTINUOUS + DISCRETE


def ids(cases):
    return [c.id for c in cases]


def ref_logpdf(case, x):
    return case.ref.logpmf(x) if case.discrete else case.ref.logpdf(x)
