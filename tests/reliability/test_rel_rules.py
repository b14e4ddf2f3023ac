"""Gradient rules found missing or raising by running real code."""
import math

import numpy as np
import pytest

import dcgraph
from dcgraph import dist


def test_methods_of_numpy_scalars_have_the_array_rules():
    x = np.array([0.5, 1.5, -1.0])

    def loglik(mu):
        return dist.Normal(mu, 1.0).logpdf(x).sum()   # logpdf of an array, then .sum()

    mu = 0.25
    assert dcgraph.grad(loglik)(mu) == pytest.approx(float(np.sum(x - mu)))

    def scalar_methods(v):
        s = np.float64(v) * v
        return s.sum() + s.mean() * 2.0 + s.astype(np.float64).item() + float(s.max())

    assert dcgraph.grad(scalar_methods)(3.0) == pytest.approx(5 * 2 * 3.0)
    dcgraph.check_grads(scalar_methods, 1.3)


@pytest.mark.parametrize("fn, x, slope", [
    (math.sqrt, 0.0, math.inf), (math.cbrt, 0.0, math.inf), (math.asin, 1.0, math.inf),
    (math.acos, 1.0, -math.inf), (math.acosh, 1.0, math.inf), (math.sqrt, 4.0, 0.25)])
def test_a_vertical_slope_is_infinite_as_for_the_power_operator(fn, x, slope):
    assert dcgraph.grad(fn)(x) == slope
    if x == 0.0:
        assert dcgraph.grad(lambda v: v ** 0.5)(x) == math.inf
