"""Second derivatives (issue 16, part 3): ``grad(grad(f))``, ``hessian``, ``hvp`` against
closed forms and central differences of ``grad``."""
from __future__ import annotations

import math

import numpy as np
import pytest

import dcgraph
from dcgraph import ad


def _fd_hessian(f, x, h=1e-5):
    g = dcgraph.grad(f)
    return np.array([(g(x + h * e) - g(x - h * e)) / (2 * h) for e in np.eye(x.size)])


def test_grad_of_grad_scalar_closed_form():
    def f(t):
        return math.sin(t) * t ** 3
    t = 0.7
    exact = -math.sin(t) * t ** 3 + 6 * math.cos(t) * t ** 2 + 6 * t * math.sin(t)
    assert dcgraph.grad(dcgraph.grad(f))(t) == pytest.approx(exact, rel=1e-12)
    assert dcgraph.hessian(f)(t) == pytest.approx(exact, rel=1e-12)


def test_mixed_partials_through_nested_grad():
    def f(x, y):
        return x ** 2 * y ** 3 + math.exp(x * y)
    x, y = 0.4, 1.3
    dfdy = dcgraph.grad(f, argnums=1)
    exact = 6 * x * y ** 2 + math.exp(x * y) * (1 + x * y)       # d/dx d/dy f
    assert dcgraph.grad(dfdy, argnums=0)(x, y) == pytest.approx(exact, rel=1e-12)


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def _rosenbrock_hessian(x):
    n = x.size
    h = np.zeros((n, n))
    for i in range(n - 1):
        h[i, i] += 1200 * x[i] ** 2 - 400 * x[i + 1] + 2
        h[i + 1, i + 1] += 200
        h[i, i + 1] = h[i + 1, i] = -400 * x[i]
    return h


def test_hessian_of_rosenbrock_closed_form():
    x = np.array([0.3, -1.2, 0.8, 1.1])
    np.testing.assert_allclose(dcgraph.hessian(rosenbrock)(x), _rosenbrock_hessian(x),
                               rtol=1e-12, atol=1e-9)


def test_hvp_of_rosenbrock_closed_form():
    x = np.array([0.3, -1.2, 0.8, 1.1])
    v = np.array([1.0, -2.0, 0.5, 0.25])
    np.testing.assert_allclose(dcgraph.hvp(rosenbrock)(x, v), _rosenbrock_hessian(x) @ v,
                               rtol=1e-12, atol=1e-9)


def test_hessian_of_quadratic_form_is_the_symmetric_part():
    a = np.array([[2.0, 1.0, 0.0], [3.0, 4.0, 1.0], [0.0, -1.0, 5.0]])
    b = np.array([1.0, -2.0, 0.5])

    def f(x):
        return 0.5 * x @ a @ x + b @ x
    np.testing.assert_allclose(dcgraph.hessian(f)(np.ones(3)), (a + a.T) / 2, atol=1e-12)


def logistic_loss(w):
    X = np.array([[1.0, 0.5], [-0.3, 2.0], [0.7, -1.1]])
    y = np.array([1.0, 0.0, 1.0])
    z = X @ w
    return np.sum(np.logaddexp(0.0, z) - y * z) + 0.1 * np.sum(np.tanh(w) * w)


def test_hessian_matches_differences_of_grad():
    w = np.array([0.2, -0.4])
    np.testing.assert_allclose(dcgraph.hessian(logistic_loss)(w),
                               _fd_hessian(logistic_loss, w), rtol=1e-6, atol=1e-7)


def test_element_reads_and_scalar_math_mix():
    def f(x):
        return math.sin(x[0]) * x[1] + np.sum(np.exp(x * 2)) + x @ x
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(dcgraph.hessian(f)(x), _fd_hessian(f, x), rtol=1e-6)
    np.testing.assert_allclose(dcgraph.hvp(f)(x, np.array([1.0, -1.0])),
                               _fd_hessian(f, x) @ np.array([1.0, -1.0]), rtol=1e-6)


def test_grad_of_grad_inside_a_larger_function():
    def f(x):
        return x ** 3

    def outer(x):
        return dcgraph.grad(f)(x) * x        # 3x^2 * x: derivative 9x^2
    assert dcgraph.grad(outer)(1.5) == pytest.approx(9 * 1.5 ** 2, rel=1e-12)


def test_unsupported_paths_are_refused_with_the_reason():
    def f(x):
        xs = [x]
        xs.append(x * x)                    # a list built here: compiled replay handles it
        return xs[0] * xs[1]
    assert dcgraph.hessian(f)(1.5) == pytest.approx(6 * 1.5, rel=1e-12)

    def g(x):
        d = {}
        d["a"] = x * x                      # other container mutation: refused
        return d["a"] * x
    with pytest.raises(ad.MissingRuleError, match="container mutation other than append"):
        dcgraph.hessian(g)(1.5)
    with pytest.raises(TypeError, match="argnums must be an int"):
        dcgraph.hessian(f, argnums=(0,))


def test_grad_through_value_and_grad_uses_both_outputs():
    vg = dcgraph.value_and_grad(lambda x: x ** 3)

    def h(x):
        v, g = vg(x)
        return 2.0 * v + g * x                # 2x^3 + 3x^3: derivative 15x^2
    assert dcgraph.grad(h)(1.5) == pytest.approx(15 * 1.5 ** 2, rel=1e-12)


def test_third_derivative_is_refused_clearly():
    g3 = dcgraph.grad(dcgraph.grad(dcgraph.grad(lambda x: x ** 4)))
    with pytest.raises(ad.MissingRuleError, match="need a path compiled replay supports"):
        g3(2.0)
