"""The BUGS distribution table as data: BUGS parametrisation -> a ``dcgraph.dist`` family.

``DISTRIBUTIONS[name]`` is a ``BUGSDistribution`` with the parameter names in BUGS order, whether
the value is continuous or discrete, its support (in words; the exact ``Support`` and bijector come
from the ``dcgraph.dist`` object), the dimension of the value and of each parameter, and
``to_dist(*bugs_params) -> dcgraph.dist.Distribution``. Parameters are validated by the family when
``to_dist`` builds it (a ``ValueError`` naming the family, the parameter and the value).

OpenBUGS is followed where implementations disagree (see ``../shared/bugs-reference.md``):
precisions for ``dnorm``/``dlnorm``/``dt``/``dmnorm``/``dmt``, scale ``1/tau`` for ``ddexp`` and
``dlogis``, ``dweib(v, lambda)`` with scale ``lambda^(-1/v)``, ``dcat`` on ``1..K`` with ``p``
summing to 1 (not renormalised), ``dgeom`` counting trials (``x >= 1``), and ``dhyper(n, m, N, psi)``
in OpenBUGS order (JAGS's ``dhyper(n1, n2, m1, psi)`` is the same law with ``n1 = n``,
``n2 = N - n``, ``m1 = m``).
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable

import numpy as np

from .. import dist as D
from ..dist.validation import check_param

__all__ = ["BUGSDistribution", "DISTRIBUTIONS", "ALIASES"]


@dataclass(frozen=True)
class BUGSDistribution:
    """One BUGS distribution (see the module docstring)."""

    name: str
    params: tuple            # BUGS parameter names, in BUGS order
    kind: str                # "continuous" or "discrete"
    value: str               # "scalar", "vector" or "matrix"
    param_dims: tuple        # number of dimensions of each parameter (0 scalar, 1 vector, 2 matrix)
    support: str             # the value's support, in words
    family: str              # the dcgraph.dist family it maps onto
    mapping: str             # how the BUGS parameters become the family's parameters
    to_dist: Callable        # (*bugs_params) -> dcgraph.dist.Distribution
    note: str = ""

    @property
    def is_discrete(self) -> bool:
        return self.kind == "discrete"

    def bijector(self, *bugs_params):
        """The ``dcgraph.dist`` bijector from unconstrained space onto the value's support.

        ``TypeError`` for discrete distributions (they have no bijector).
        """
        return self.to_dist(*bugs_params).bijector

    def value_shape(self, param_shapes) -> tuple:
        """Shape of one value given the shapes of the parameters (in BUGS order)."""
        if self.value == "scalar":
            return ()
        first = tuple(param_shapes[0])
        return first[-1:] if self.value == "vector" else first[-2:]


def _tau(dist, tau):
    """A BUGS precision, validated in BUGS terms (``dnorm: parameter 'tau' must be positive, ...``)."""
    return check_param(dist, "tau", tau, "positive")


def _sd(dist, tau):
    return 1.0 / np.sqrt(_tau(dist, tau))


def _weibull(v, lam):
    return D.Weibull(v, np.power(lam, -1.0 / np.asarray(v, dtype=float)))


def _hyper(n, m, N, psi):
    return D.NoncentralHypergeometric(n, np.asarray(N) - np.asarray(n), m, psi)


def _dmt(mu, T, k):
    return D.MvStudentT(k, mu, precision=T)


_C, _K = "continuous", "discrete"
_ROWS = [
    # name, params, kind, value, param_dims, support, family, mapping, to_dist, note
    ("dnorm", ("mu", "tau"), _C, "scalar", (0, 0), "real", "Normal", "Normal(mu, 1/sqrt(tau))",
     lambda mu, tau: D.Normal(mu, _sd("dnorm", tau)), "tau is a precision"),
    ("dlnorm", ("mu", "tau"), _C, "scalar", (0, 0), "x > 0", "LogNormal", "LogNormal(mu, 1/sqrt(tau))",
     lambda mu, tau: D.LogNormal(mu, _sd("dlnorm", tau)), "tau is the precision of log x"),
    ("dt", ("mu", "tau", "k"), _C, "scalar", (0, 0, 0), "real", "StudentT", "StudentT(k, mu, 1/sqrt(tau))",
     lambda mu, tau, k: D.StudentT(k, mu, _sd("dt", tau)), "precision tau, k degrees of freedom last"),
    ("dlogis", ("mu", "tau"), _C, "scalar", (0, 0), "real", "Logistic", "Logistic(mu, 1/tau)",
     lambda mu, tau: D.Logistic(mu, 1.0 / _tau("dlogis", tau)), "scale 1/tau (not 1/sqrt(tau))"),
    ("ddexp", ("mu", "tau"), _C, "scalar", (0, 0), "real", "Laplace", "Laplace(mu, 1/tau)",
     lambda mu, tau: D.Laplace(mu, 1.0 / _tau("ddexp", tau)), "scale 1/tau (not 1/sqrt(tau))"),
    ("dexp", ("lambda",), _C, "scalar", (0,), "x >= 0", "Exponential", "Exponential(lambda)",
     lambda lam: D.Exponential(lam), "lambda is a rate"),
    ("dgamma", ("r", "mu"), _C, "scalar", (0, 0), "x >= 0", "Gamma", "Gamma(r, mu)",
     lambda r, mu: D.Gamma(r, mu), "shape r, rate mu"),
    ("dchisqr", ("k",), _C, "scalar", (0,), "x >= 0", "ChiSquared", "ChiSquared(k)",
     lambda k: D.ChiSquared(k), ""),
    ("dweib", ("v", "lambda"), _C, "scalar", (0, 0), "x >= 0", "Weibull", "Weibull(v, lambda^(-1/v))",
     _weibull, "density v lambda x^(v-1) exp(-lambda x^v); scale 1/lambda is a known bug elsewhere"),
    ("dpar", ("alpha", "c"), _C, "scalar", (0, 0), "x >= c", "Pareto", "Pareto(alpha, c)",
     lambda a, c: D.Pareto(a, c), ""),
    ("dbeta", ("a", "b"), _C, "scalar", (0, 0), "0 <= x <= 1", "Beta", "Beta(a, b)",
     lambda a, b: D.Beta(a, b), ""),
    ("dunif", ("a", "b"), _C, "scalar", (0, 0), "a <= x <= b", "Uniform", "Uniform(a, b)",
     lambda a, b: D.Uniform(a, b), ""),
    ("dflat", (), _C, "scalar", (), "real", "Flat", "Flat()", lambda: D.Flat(), "improper"),
    ("dggamma", ("r", "mu", "beta"), _C, "scalar", (0, 0, 0), "x >= 0", "GeneralizedGamma",
     "GeneralizedGamma(r, mu, beta)", lambda r, mu, b: D.GeneralizedGamma(r, mu, b),
     "beta mu^(beta r) x^(beta r - 1) exp(-(mu x)^beta) / Gamma(r); JAGS spells it dgen.gamma"),
    ("dgev", ("mu", "sigma", "eta"), _C, "scalar", (0, 0, 0), "1 + eta (x - mu)/sigma > 0",
     "GeneralizedExtremeValue", "GeneralizedExtremeValue(mu, sigma, eta)",
     lambda mu, s, eta: D.GeneralizedExtremeValue(mu, s, eta), "scipy genextreme with c = -eta"),
    ("dgpar", ("mu", "sigma", "eta"), _C, "scalar", (0, 0, 0), "x >= mu (and x <= mu - sigma/eta if eta < 0)",
     "GeneralizedPareto", "GeneralizedPareto(mu, sigma, eta)",
     lambda mu, s, eta: D.GeneralizedPareto(mu, s, eta), "scipy genpareto with c = eta"),
    ("df", ("n", "m", "mu", "tau"), _C, "scalar", (0, 0, 0, 0), "x > mu", "GeneralizedF",
     "GeneralizedF(n, m, mu, tau)", lambda n, m, mu, tau: D.GeneralizedF(n, m, mu, tau),
     "sqrt(tau) (x - mu) ~ F(n, m) (OpenBUGS GraphF); scipy f(n, m, loc=mu, scale=1/sqrt(tau))"),
    ("dinvgamma", ("shape", "scale"), _C, "scalar", (0, 0), "x > 0", "InverseGamma",
     "InverseGamma(shape, scale)", lambda a, b: D.InverseGamma(a, b), "NIMBLE"),
    ("dloglik", ("lambda",), _C, "scalar", (0,), "real", "LogLikelihoodTerm", "LogLikelihoodTerm(lambda)",
     lambda lam: D.LogLikelihoodTerm(lam), "adds lambda to the log density whatever the (dummy) value"),
    # ---- discrete
    ("dbern", ("p",), _K, "scalar", (0,), "{0, 1}", "Bernoulli", "Bernoulli(p)", lambda p: D.Bernoulli(p), ""),
    ("dbin", ("p", "n"), _K, "scalar", (0, 0), "{0, ..., n}", "Binomial", "Binomial(n, p)",
     lambda p, n: D.Binomial(n, p), "p before n"),
    ("dpois", ("lambda",), _K, "scalar", (0,), "{0, 1, ...}", "Poisson", "Poisson(lambda)",
     lambda lam: D.Poisson(lam), ""),
    ("dnegbin", ("p", "r"), _K, "scalar", (0, 0), "{0, 1, ...}", "NegativeBinomial", "NegativeBinomial(r, p)",
     lambda p, r: D.NegativeBinomial(r, p), "C(x+r-1, x) p^r (1-p)^x"),
    ("dgeom", ("p",), _K, "scalar", (0,), "{1, 2, ...}", "TrialsGeometric", "TrialsGeometric(p)",
     lambda p: D.TrialsGeometric(p), "(1-p)^(x-1) p: trials up to the first success"),
    ("dgeom0", ("p",), _K, "scalar", (0,), "{0, 1, ...}", "Geometric", "Geometric(p)",
     lambda p: D.Geometric(p), "(1-p)^x p: failures before the first success"),
    ("dbetabin", ("a", "b", "n"), _K, "scalar", (0, 0, 0), "{0, ..., n}", "BetaBinomial",
     "BetaBinomial(n, a, b)", lambda a, b, n: D.BetaBinomial(n, a, b), "JAGS"),
    ("dhyper", ("n", "m", "N", "psi"), _K, "scalar", (0, 0, 0, 0), "{max(0, n+m-N), ..., min(n, m)}",
     "NoncentralHypergeometric", "NoncentralHypergeometric(n, N - n, m, psi)", _hyper,
     "OpenBUGS order (n, m, N, psi); JAGS's dhyper(n1, n2, m1, psi) differs"),
    ("dcat", ("p",), _K, "scalar", (1,), "{1, ..., K}", "OneBasedCategorical", "OneBasedCategorical(p)",
     lambda p: D.OneBasedCategorical(p), "P(x) = p[x]; p must sum to 1 (OpenBUGS; JAGS normalises)"),
    # ---- multivariate
    ("dmulti", ("p", "N"), _K, "vector", (1, 0), "non-negative integers summing to N", "Multinomial",
     "Multinomial(N, p)", lambda p, n: D.Multinomial(n, p), "p first"),
    ("ddirich", ("alpha",), _C, "vector", (1,), "simplex", "Dirichlet", "Dirichlet(alpha)",
     lambda a: D.Dirichlet(a), "alias ddirch"),
    ("dmnorm", ("mu", "T"), _C, "vector", (1, 2), "real vectors", "MvNormal", "MvNormal(mu, precision=T)",
     lambda mu, T: D.MvNormal(mu, precision=T), "T is a precision matrix"),
    ("dmnorm.vcov", ("mu", "Sigma"), _C, "vector", (1, 2), "real vectors", "MvNormal",
     "MvNormal(mu, cov=Sigma)", lambda mu, S: D.MvNormal(mu, cov=S), "JAGS"),
    ("dmt", ("mu", "T", "k"), _C, "vector", (1, 2, 0), "real vectors", "MvStudentT",
     "MvStudentT(k, mu, precision=T)", _dmt, "T is a precision matrix; k >= 2"),
    ("dwish", ("R", "k"), _C, "matrix", (2, 0), "positive-definite matrices", "Wishart",
     "Wishart(k, inverse(R))", lambda R, k: D.Wishart(k, np.linalg.inv(R)),
     "density prop. to |x|^((k-p-1)/2) exp(-tr(R x)/2)"),
]

#: Other spellings of the same distribution (JAGS: ddirch, dgen.gamma, dbinom, dchisq).
ALIASES = MappingProxyType({"ddirch": "ddirich", "dgen.gamma": "dggamma", "dbinom": "dbin", "dchisq": "dchisqr"})


def _table() -> MappingProxyType:
    rows = {r[0]: BUGSDistribution(*r) for r in _ROWS}
    for alias, name in ALIASES.items():
        base = rows[name]
        rows[alias] = BUGSDistribution(alias, *(getattr(base, f) for f in (
            "params", "kind", "value", "param_dims", "support", "family", "mapping", "to_dist")),
            note=f"alias of {name}")
    return MappingProxyType(rows)


#: Read-only table BUGS name -> BUGSDistribution.
DISTRIBUTIONS = _table()
