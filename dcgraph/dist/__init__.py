"""Probability distributions for dcgraph (issue #6, part 1).

Every family validates its parameters at construction (errors name the family, the
parameter and the offending value), broadcasts them, and provides ``sample(rng, shape)``,
``logpdf(x)`` (summed; ``logpdf_elementwise`` per element; ``-inf`` outside the support),
``support``, ``mean``/``var``, the unconstrained-space bijector
(``to_unconstrained``/``from_unconstrained``/``log_abs_det_jacobian``) and, for all
non-wrapper families, closed-form ``grad_logpdf``. See ``dcgraph.dist.base`` for the contracts.
"""
from types import MappingProxyType

from . import bijectors, kernels, support
from .base import Distribution, Univariate
from .bounded import Beta, Uniform
from .bugs_discrete import NoncentralHypergeometric, OneBasedCategorical, TrialsGeometric
from .continuous import Cauchy, Flat, Laplace, Logistic, Normal, StudentT
from .discrete import Bernoulli, BetaBinomial, Binomial, Categorical, Geometric, NegativeBinomial, Poisson
from .fdist import GeneralizedF
from .lkj import CorrCholeskyFactors, LKJCholesky
from .generalized import GeneralizedExtremeValue, GeneralizedGamma, GeneralizedPareto, LogLikelihoodTerm
from .multivariate import Dirichlet, Multinomial, MvNormal
from .mvt import MvStudentT
from .gamma_family import ChiSquared, Gamma, InverseGamma
from .positive import Exponential, HalfNormal, LogNormal, Pareto, Weibull
from .support import (Interval, IntegerInterval, IntegerSimplex, NonNegative, NonNegativeInteger, Positive,
                      PositiveDefinite, Real, RealVector, Simplex, Support, UnitInterval)
from .wishart import Wishart
from .validation import is_validating, validation
from .wrappers import Censored, Truncated

_FAMILIES = (
    Normal, HalfNormal, LogNormal, StudentT, Cauchy, Laplace, Logistic, Exponential, Gamma, InverseGamma,
    Beta, Uniform, Weibull, Pareto, ChiSquared, Flat, Truncated, Censored, Dirichlet, MvNormal, Wishart,
    Bernoulli, Binomial, Poisson, Categorical, Geometric, NegativeBinomial, BetaBinomial, Multinomial,
    # BUGS families (issue 12)
    OneBasedCategorical, TrialsGeometric, NoncentralHypergeometric, GeneralizedGamma, GeneralizedExtremeValue,
    GeneralizedPareto, LogLikelihoodTerm, MvStudentT, GeneralizedF,
    LKJCholesky,
)

#: Read-only table from class name to distribution class, for generic code (e.g. BUGS mapping).
LOGPDF_FAMILIES = MappingProxyType({cls.__name__: cls for cls in _FAMILIES})

__all__ = [cls.__name__ for cls in _FAMILIES] + [
    "LOGPDF_FAMILIES", "Distribution", "Univariate", "bijectors", "kernels", "support", "validation", "is_validating",
    "Support", "Real", "RealVector", "Positive", "NonNegative", "Interval", "UnitInterval", "Simplex",
    "PositiveDefinite", "CorrCholeskyFactors", "NonNegativeInteger", "IntegerInterval", "IntegerSimplex",
]
