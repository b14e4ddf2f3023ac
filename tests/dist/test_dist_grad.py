"""Closed-form grad_logpdf against central finite differences of the summed logpdf."""
import numpy as np
import pytest
from scipy.special import xlogy

import dcgraph.dist as D
from dist_cases import UNIVARIATE, ids

WRAPPERS = (D.Truncated, D.Censored)
CASES = [c for c in UNIVARIATE if not isinstance(c.make(), WRAPPERS)]
INTEGER_PARAMS = {"Binomial": {"n"}, "BetaBinomial": {"n"}, "Multinomial": {"n"}}
SYMMETRIC = {("MvNormal", "cov"), ("MvNormal", "precision"), ("Wishart", "scale"), ("Wishart", "x")}


def _step(v):
    return 1e-6 * max(1.0, abs(float(v)))


def _fd(f, v, symmetric=False):
    """Central differences of scalar f w.r.t. each element of array v (paired (i, j)/(j, i) if symmetric)."""
    v = np.array(v, dtype=float)
    g = np.zeros_like(v)
    for idx in np.ndindex(v.shape):
        if symmetric and idx[-1] > idx[-2]:
            continue
        h = _step(v[idx])
        e = np.zeros_like(v)
        e[idx] = h
        if symmetric:
            e[idx[:-2] + (idx[-1], idx[-2])] = h
        g[idx] = (f(v + e) - f(v - e)) / (2 * h)
    return g


def _as_symmetric_fd(g):
    """Map a symmetric gradient G to what paired differences measure: G_ij + G_ji off the diagonal."""
    out = g + np.swapaxes(g, -1, -2)
    p = g.shape[-1]
    out[..., np.arange(p), np.arange(p)] = np.diagonal(g, axis1=-2, axis2=-1)
    return np.tril(out)


def check_grad(d, x, logpdf_x=None):
    grads = d.grad_logpdf(x)
    name = d.name
    expected_keys = set(d.params) - INTEGER_PARAMS.get(name, set()) | (set() if d.is_discrete else {"x"})
    assert set(grads) == expected_keys
    kwargs = {p: np.array(d.param_value(p), dtype=float) for p in d.params}
    for key, g in grads.items():
        sym = (name, key) in SYMMETRIC
        if key == "x":
            assert g.shape == np.shape(x)
            f = logpdf_x or d.logpdf
            fd = _fd(f, x, sym)
        else:
            assert g.shape == kwargs[key].shape
            fd = _fd(lambda v: type(d)(**{**kwargs, key: v}).logpdf(x), kwargs[key], sym)
        want = _as_symmetric_fd(g) if sym else g
        assert np.all(np.isfinite(fd)), (key, fd)
        np.testing.assert_allclose(want, fd, rtol=2e-5, atol=2e-5 * max(1.0, np.max(np.abs(fd))), err_msg=key)


def _interior(d, xs):
    """Points with room for finite differences in x and parameters."""
    keep = []
    for x in xs[:, 0]:
        margin = 1e-3 * max(1.0, abs(x))
        if d.is_discrete or all(np.all(d.support.contains(np.broadcast_to(v, d.batch_shape)))
                                for v in (x - margin, x + margin)):
            keep.append(x)
    return np.array(keep).reshape(-1, 1)


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_univariate_grad(case):
    d = case.make()
    xs = _interior(d, case.xs)
    if isinstance(d, D.Laplace):
        xs = np.array([[-8.0], [0.5], [12.0]])  # away from the kinks at loc
    assert xs.size >= 2
    check_grad(d, xs)


def test_categorical_grad():
    # p is validated onto the simplex, so compare with the formal partial of log p[x] directly
    p = np.array([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8]])
    x = np.array([[0], [2], [2]])
    g = D.Categorical(p).grad_logpdf(x)
    assert set(g) == {"p"}
    fd = _fd(lambda v: np.sum(np.log(v[np.arange(2), x])), p)
    np.testing.assert_allclose(g["p"], fd, rtol=1e-6)


def test_dirichlet_grad():
    d = D.Dirichlet([[0.5, 2.0, 1.5], [3.0, 1.0, 0.8]])
    x = np.random.default_rng(1).dirichlet([2.0, 2.0, 2.0], size=(4, 1))
    check_grad(d, x, logpdf_x=lambda v: np.sum(d._logpdf(v)))  # formal partial: x leaves the simplex


@pytest.mark.parametrize("key", ["cov", "precision"])
def test_mvnormal_grad(key):
    a = np.array([[2.0, 0.3, -0.4], [0.3, 1.0, 0.2], [-0.4, 0.2, 0.5]])
    d = D.MvNormal([[0.0, 1.0, -1.0], [0.5, 0.0, 0.2]], **{key: a})
    x = np.random.default_rng(2).standard_normal((3, 1, 3))
    check_grad(d, x)


def test_wishart_grad():
    s = np.array([[1.0, 0.3], [0.3, 0.5]])
    d = D.Wishart(np.array([3.5, 5.0]), s)
    x = D.Wishart(6.0, s).sample(np.random.default_rng(3), (2, 1))
    check_grad(d, x)


def test_multinomial_grad():
    p = np.array([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8]])
    x = np.array([[[1, 2, 2]], [[0, 0, 5]]], dtype=float)
    d = D.Multinomial(5, p)
    g = d.grad_logpdf(x)
    assert set(g) == {"p"} and g["p"].shape == p.shape
    formula = lambda v: np.sum(xlogy(x, v))  # noqa: E731  the p-dependent part of the log pmf
    np.testing.assert_allclose(g["p"], _fd(formula, p), rtol=1e-6)


def test_grad_outside_support_is_nan():
    g = D.Gamma(2.0, 1.0).grad_logpdf(np.array([-1.0, 1.0]))
    assert np.isnan(g["x"][0]) and np.isfinite(g["x"][1]) and np.isnan(g["shape"])
