"""The same gradients as HIPS autograd, to 1e-10, wherever autograd can run the function.

Functions take the numpy/scipy modules as keyword defaults so autograd can be handed its own
wrapped modules; plain arithmetic, branches, loops, recursion and list/dict code run as is.
"""
import numpy
import pytest
import scipy.special
import scipy.stats

from dcgraph import ad

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")
asp = pytest.importorskip("autograd.scipy.special")
astats = pytest.importorskip("autograd.scipy.stats")


def poly_branch(x, y):
    z = x * x * y - 3.0 * x / y
    if z > 0:
        z = z ** 1.5 + x
    else:
        z = -z * y
    return z


def while_recursion(x):
    def rec(v, n):
        return v if n == 0 else v * rec(v + 0.1, n - 1) - n
    s, k = x, 0
    while s < 30.0:
        s = s * 1.3 + k * x
        k += 1
    return rec(s / 10.0, 4)


def lists_and_dicts(x, y):
    out = []
    for i in range(6):
        out.append(x * i - y / (i + 1))
    out[2] = out[2] * out[3]
    out[-1] += y * y
    d = {"a": out[0] + out[1], "b": sum(out)}
    d["c"] = d["a"] * d["b"]
    return d["c"] + out[-1] * x


def numpy_mix(w, X, np=numpy):
    h = np.tanh(np.dot(X, w))
    return np.sum(h ** 2) + np.mean(np.exp(-w * w)) + np.max(h) * np.log(1 + np.sum(w ** 2))


def numpy_shapes(a, np=numpy):
    b = np.reshape(a, (4, 3)).T
    c = np.concatenate([a, b], axis=0)
    return np.sum(np.sin(c) * np.cos(c)) + np.sum(b @ a[:2].T) \
        + np.sum(np.where(a > 0, a, 0.1 * a)) + np.std(a, axis=0).sum()


def numpy_loop(w, X, np=numpy):
    total = 0.0
    for i in range(X.shape[0]):
        total = total + np.log1p(np.exp(np.dot(X[i], w))) * (i + 1)
    return total


def logistic(w, X, y, np=numpy, sp=scipy.special):
    p = sp.expit(np.dot(X, w))
    return np.sum(y * np.log(p) + (1 - y) * np.log(1 - p))


def special_funcs(x, np=numpy, sp=scipy.special):
    return np.sum(sp.gammaln(x) + sp.digamma(x) + sp.erf(x) + sp.logsumexp(x)
                  + sp.expit(x) * sp.erfc(x))


def normal_model(mu, sigma, x, np=numpy, norm=scipy.stats.norm):
    return np.sum(norm.logpdf(x, mu, sigma)) + norm.logpdf(mu, 0.0, 10.0)


RNG = numpy.random.default_rng(3)
W = RNG.normal(size=3)
XM = RNG.normal(size=(8, 3))
YV = (RNG.uniform(size=8) > 0.5).astype(float)

CASES = [
    (poly_branch, (1.3, 0.7), {}, {}),
    (poly_branch, (0.2, -0.7), {}, {}),
    (while_recursion, (1.1,), {}, {}),
    (lists_and_dicts, (1.1, 0.4), {}, {}),
    (numpy_mix, (W, XM), {}, {"np": anp}),
    (numpy_shapes, (RNG.normal(size=(3, 4)),), {}, {"np": anp}),
    (numpy_loop, (W, XM), {}, {"np": anp}),
    (logistic, (W, XM, YV), {}, {"np": anp, "sp": asp}),
    (special_funcs, (RNG.uniform(0.5, 2.0, size=4),), {}, {"np": anp, "sp": asp}),
    (normal_model, (0.3, 1.4, RNG.normal(size=5)), {}, {"np": anp, "norm": astats.norm}),
]


@pytest.mark.parametrize("f, args, ours, theirs", CASES,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_same_gradient_as_autograd(f, args, ours, theirs):
    nargs = 2 if f is normal_model else 1
    for argnum in range(nargs):
        got = ad.grad(f, argnum)(*args, **ours)
        want = autograd.grad(f, argnum)(*args, **theirs)
        assert numpy.allclose(got, want, rtol=1e-10, atol=1e-10), (argnum, got, want)


def _scalar_cases():
    import test_grad_containers
    import test_grad_scalar
    cases = list(test_grad_scalar.CASES)
    cases += [c for c in test_grad_containers.CASES if not isinstance(c[1][0], numpy.ndarray)]
    return cases


@pytest.mark.parametrize("f, args", _scalar_cases(),
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(_scalar_cases())])
def test_scalar_suite_same_as_autograd_where_it_runs(f, args):
    nums = tuple(i for i, a in enumerate(args) if isinstance(a, float))
    try:
        want = autograd.grad(f, nums)(*args)
    except (TypeError, AttributeError, ValueError, NotImplementedError) as exc:
        pytest.skip(f"autograd cannot run {f.__name__}: {type(exc).__name__}")
    got = ad.grad(f, nums)(*args)
    assert numpy.allclose(got, want, rtol=1e-10, atol=1e-10), (got, want)
