"""Bad parameters raise errors that name the distribution, the parameter and the bad value."""
import re

import numpy as np
import pytest

import dcgraph.dist as D

BAD = [
    (lambda: D.Normal(0.0, -1.0), "Normal", "scale", "-1.0"),
    (lambda: D.Normal(0.0, 0.0), "Normal", "scale", "0.0"),
    (lambda: D.Normal(np.nan, 1.0), "Normal", "loc", "nan"),
    (lambda: D.Normal(np.inf, 1.0), "Normal", "loc", "inf"),
    (lambda: D.HalfNormal(-2.0), "HalfNormal", "scale", "-2.0"),
    (lambda: D.LogNormal(0.0, 0.0), "LogNormal", "sigma", "0.0"),
    (lambda: D.StudentT(0.0), "StudentT", "df", "0.0"),
    (lambda: D.StudentT(3.0, 0.0, -1.0), "StudentT", "scale", "-1.0"),
    (lambda: D.Cauchy(0.0, -1.0), "Cauchy", "scale", "-1.0"),
    (lambda: D.Laplace(0.0, -3.0), "Laplace", "scale", "-3.0"),
    (lambda: D.Logistic(0.0, -1.0), "Logistic", "scale", "-1.0"),
    (lambda: D.Exponential(-1.0), "Exponential", "rate", "-1.0"),
    (lambda: D.Gamma(-1.0, 1.0), "Gamma", "shape", "-1.0"),
    (lambda: D.Gamma(1.0, 0.0), "Gamma", "rate", "0.0"),
    (lambda: D.InverseGamma(0.0, 1.0), "InverseGamma", "shape", "0.0"),
    (lambda: D.InverseGamma(1.0, -1.0), "InverseGamma", "scale", "-1.0"),
    (lambda: D.Beta(-1.0, 1.0), "Beta", "a", "-1.0"),
    (lambda: D.Beta(1.0, 0.0), "Beta", "b", "0.0"),
    (lambda: D.Uniform(1.0, 0.0), "Uniform", "high", "0.0"),
    (lambda: D.Uniform([0.0, 1.0], [1.0, 1.0]), "Uniform", "high", "1.0"),
    (lambda: D.Weibull(-1.0, 1.0), "Weibull", "shape", "-1.0"),
    (lambda: D.Weibull(1.0, -2.0), "Weibull", "scale", "-2.0"),
    (lambda: D.Pareto(0.0, 1.0), "Pareto", "alpha", "0.0"),
    (lambda: D.Pareto(1.0, -1.0), "Pareto", "scale", "-1.0"),
    (lambda: D.ChiSquared(-1.0), "ChiSquared", "df", "-1.0"),
    (lambda: D.Truncated(D.Normal(0.0, 1.0), 2.0, 1.0), "Truncated", "high", "1.0"),
    (lambda: D.Truncated(D.Normal(0.0, 1.0), np.nan), "Truncated", "low", "nan"),
    (lambda: D.Censored(D.Normal(0.0, 1.0), 1.0, 1.0), "Censored", "high", "1.0"),
    (lambda: D.Dirichlet([1.0, -1.0]), "Dirichlet", "alpha", "-1.0"),
    (lambda: D.MvNormal([0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]]), "MvNormal", "cov", "[[1.0, 2.0], [2.0, 1.0]]"),
    (lambda: D.MvNormal([0.0, 0.0], [[1.0, 0.5], [0.0, 1.0]]), "MvNormal", "cov", "[[1.0, 0.5], [0.0, 1.0]]"),
    (lambda: D.MvNormal([0.0, 0.0], precision=-np.eye(2)), "MvNormal", "precision", "[[-1.0, -0.0], [-0.0, -1.0]]"),
    (lambda: D.MvNormal([0.0, np.nan], np.eye(2)), "MvNormal", "mean", "nan"),
    (lambda: D.Wishart(0.5, np.eye(2)), "Wishart", "df", "0.5"),
    (lambda: D.Wishart(3.0, -np.eye(2)), "Wishart", "scale", "[[-1.0, -0.0], [-0.0, -1.0]]"),
    (lambda: D.Bernoulli(1.5), "Bernoulli", "p", "1.5"),
    (lambda: D.Binomial(-1, 0.5), "Binomial", "n", "-1.0"),
    (lambda: D.Binomial(2.5, 0.5), "Binomial", "n", "2.5"),
    (lambda: D.Binomial(3, -0.1), "Binomial", "p", "-0.1"),
    (lambda: D.Poisson(-1.0), "Poisson", "rate", "-1.0"),
    (lambda: D.Categorical([0.5, 0.6]), "Categorical", "p", "[0.5, 0.6]"),
    (lambda: D.Categorical([1.2, -0.2]), "Categorical", "p", "1.2"),
    (lambda: D.Geometric(0.0), "Geometric", "p", "0.0"),
    (lambda: D.NegativeBinomial(0.0, 0.5), "NegativeBinomial", "n", "0.0"),
    (lambda: D.NegativeBinomial(2.0, 0.0), "NegativeBinomial", "p", "0.0"),
    (lambda: D.BetaBinomial(-1, 1.0, 1.0), "BetaBinomial", "n", "-1.0"),
    (lambda: D.BetaBinomial(3, 0.0, 1.0), "BetaBinomial", "a", "0.0"),
    (lambda: D.Multinomial(1.5, [0.5, 0.5]), "Multinomial", "n", "1.5"),
    (lambda: D.Multinomial(2, [[0.5, 0.5], [0.5, 0.2]]), "Multinomial", "p", "[0.5, 0.2]"),
]


@pytest.mark.parametrize("make,dist,param,value", BAD, ids=[f"{b[1]}-{b[2]}-{i}" for i, b in enumerate(BAD)])
def test_bad_parameter_message(make, dist, param, value):
    with pytest.raises(ValueError) as info:
        make()
    msg = str(info.value)
    assert msg.startswith(f"{dist}: parameter '{param}' must be "), msg
    assert re.search(rf"got {re.escape(value)}( |$)", msg), msg


def test_exact_message_and_array_index():
    with pytest.raises(ValueError, match=r"^Normal: parameter 'scale' must be positive, got -1\.0$"):
        D.Normal(0.0, -1.0)
    with pytest.raises(ValueError, match=r"^Normal: parameter 'scale' must be positive, got -2\.0 at index \(1,\)$"):
        D.Normal(0.0, [1.0, -2.0])


def test_family_specific_errors():
    with pytest.raises(ValueError, match=r"Normal: parameter shapes do not broadcast: loc \(3,\), scale \(2,\)"):
        D.Normal(np.zeros(3), np.ones(2))
    with pytest.raises(TypeError, match="Normal: parameter 'loc' must be numeric, got 'a'"):
        D.Normal("a", 1.0)
    with pytest.raises(TypeError, match="Gamma: parameter 'rate' must be numeric, got None"):
        D.Gamma(1.0, None)
    with pytest.raises(ValueError, match="MvNormal: give exactly one of 'cov' and 'precision'"):
        D.MvNormal([0.0], [[1.0]], precision=[[1.0]])
    with pytest.raises(ValueError, match="MvNormal: parameter 'cov' has shape"):
        D.MvNormal([0.0, 0.0, 0.0], np.eye(2))
    with pytest.raises(ValueError, match=r"Dirichlet: parameter 'alpha' must have shape \(\.\.\., K\) with K >= 2"):
        D.Dirichlet([1.0])
    with pytest.raises(ValueError, match="Truncated: interval .* has zero probability"):
        D.Truncated(D.Gamma(2.0, 1.0), -5.0, -1.0)  # below the support
    with pytest.raises(ValueError, match="Truncated: interval"):
        D.Truncated(D.Poisson(3.0), 1.2, 1.8)  # no integer inside
    with pytest.raises(TypeError, match="Truncated: parameter 'base' must be a univariate distribution"):
        D.Truncated(D.Dirichlet([1.0, 1.0]), 0.0, 1.0)
    with pytest.raises(ValueError, match="Censored: parameter 'base' must be a proper distribution"):
        D.Censored(D.Flat(), 0.0, 1.0)
    with pytest.raises(ValueError, match="Wishart: parameter 'df' must be greater than p - 1 = 2"):
        D.Wishart(1.5, np.eye(3))
    with pytest.raises(ValueError, match="does not broadcast with batch shape"):
        D.Normal(np.zeros(3), 1.0).logpdf(np.zeros(2))
