"""Gamma log densities at extreme parameters: finite where the density is, against closed forms."""
import math

import numpy as np
import pytest
from scipy import stats

from dcgraph import dist


def test_a_tiny_shape():
    a, x = 1e-320, 0.5
    # lgamma(a) = -log(a) + lgamma(1 + a), and lgamma(1 + a) = 0 to double precision
    expected = a * 0.0 + math.log(a) + (a - 1.0) * math.log(x) - x
    assert dist.Gamma(a, 1.0).logpdf(x) == pytest.approx(expected, rel=1e-15)


def test_huge_shape_and_rate():
    # at the mean x = a/b = 1, Stirling: log p = log(a)/2 - log(2 pi)/2 - 1/(12 a) + ...
    a = 1e308
    expected = 0.5 * math.log(a) - 0.5 * math.log(2 * math.pi)
    assert dist.Gamma(a, a).logpdf(1.0) == pytest.approx(expected, rel=1e-15)
    # at x = 2: a (log 2 - 1) dominates, finite
    assert dist.Gamma(a, a).logpdf(2.0) == pytest.approx(a * (math.log(2.0) - 1.0), rel=1e-15)


@pytest.mark.parametrize("a, b, x", [(2.0, 3.0, 0.7), (0.3, 2.0, 1.1), (1e-9, 1.0, 0.2),
                                     (15000.0, 20000.0, 0.74), (5e4, 5e4, 1.001),
                                     (1e6, 2.0, 5e5)])
def test_agrees_with_scipy_where_scipy_is_accurate(a, b, x):
    assert dist.Gamma(a, b).logpdf(x) == pytest.approx(stats.gamma(a, scale=1 / b).logpdf(x),
                                                       rel=1e-9, abs=1e-9)


def test_arrays_of_parameters():
    a = np.array([2.0, 1e-320, 1e308])
    b = np.array([1.0, 1.0, 1e308])
    x = np.array([1.0, 0.5, 1.0])
    total = dist.Gamma(a, b).logpdf(x)
    assert np.isfinite(total)
    assert total == pytest.approx(-1.0 + (math.log(1e-320) + math.log(2) - 0.5)
                                  + 0.5 * math.log(1e308) - 0.5 * math.log(2 * math.pi))
