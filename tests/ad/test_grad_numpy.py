"""Gradients of numpy code (ufuncs, reductions, products, shapes, indexing, element writes)
against central finite differences."""
import numpy as np
import pytest

from dcgraph import ad

RNG = np.random.default_rng(7)
A = RNG.normal(size=(3, 4))
B = RNG.normal(size=(4, 2))
V = RNG.normal(size=4)
P = RNG.uniform(0.2, 0.9, size=(3, 4))
ADD_REDUCE = np.add.reduce       # called by name, as compiled gradients call it


def ufuncs(a):
    return np.sum(np.exp(a) * np.sin(a) + np.cos(a) ** 2 - np.tanh(a) / (1 + np.square(a))
                  + np.arctan(a) + np.sinh(a) * np.cosh(a) + np.log1p(np.abs(a)) + np.expm1(a))


def positive_ufuncs(p):
    return np.sum(np.log(p) + np.sqrt(p) + np.log2(p) * np.log10(p) + np.arcsin(p)
                  + np.arccos(p) + np.reciprocal(p) + np.cbrt(p) + np.power(p, 1.5)
                  + np.arctanh(p) + np.arccosh(1 + p) + np.arcsinh(p) + np.exp2(p))


def binary_ufuncs(a, b):
    return np.sum(np.maximum(a, b) * np.minimum(a, 0.3) + np.logaddexp(a, b)
                  + np.hypot(a, b) + np.arctan2(a, b + 3) + np.divide(a, b + 4)
                  + np.subtract(a, b) ** 2 + np.multiply(a, b) + np.add(a, 1.0))


def broadcasting(a, v, s):
    return np.sum((a + v) * s - v / (2 + a ** 2) + a * v[None, :] * np.exp(s))


def reductions(a):
    return (a.sum(axis=0) * a.mean(axis=1, keepdims=True).repeat(4, axis=1)).sum() \
        + np.max(a, axis=1).sum() + a.min() + np.prod(a[:2, :2] + 2, axis=0).sum() \
        + a.var(axis=0).sum() + np.std(a, ddof=1) + np.cumsum(a, axis=1)[:, -1].sum() \
        + np.linalg.norm(a) + (ADD_REDUCE(a) ** 2).sum() + ADD_REDUCE(a, None) \
        + (ADD_REDUCE(a, (1,), None, None, True) * a).sum()


def products(a, b, v):
    return np.sum(a @ b) + np.dot(a, v).sum() + v.dot(v) + np.einsum("ij,jk->ik", a, b).sum() \
        + np.einsum("ij,j", a, v).sum() + np.outer(v, v).trace() + np.inner(v, v) \
        + np.tensordot(a, a, axes=([1], [1])).sum() + np.matmul(v, b).sum() \
        + np.vdot(a, np.flip(a, 1)) + np.vdot(v, a[0]) + np.vdot(b, a[:2])


def shapes(a, v):
    m = a.reshape(4, 3).T
    n = np.transpose(a) * v[:, None]
    k = np.concatenate([a.ravel(), v, a[0]])
    s = np.stack([v, v ** 2], axis=1)
    h = np.hstack([v, v * 2])[:4] + np.vstack([a, a])[4]
    return (m * a).sum() + (n ** 2).sum() + (k * np.arange(k.size)).sum() + s[:, 1].sum() \
        + np.swapaxes(a[None], 0, 2).sum() + np.expand_dims(v, 0).squeeze().sum() + h.sum() \
        + np.flip(v)[0] * np.roll(v, 1)[0] + np.diff(v).sum() * 3 + np.sort(v)[0]


def indexing(a, v):
    idx = np.array([0, 2, 2])
    mask = v > 0
    return a[1, 2] * a[0][3] + a[:, 1].sum() + a[idx].sum() + a[1:, ::2].sum() \
        + (v[mask] ** 2).sum() + a[..., -1].prod() + a[[0, 1], [1, 2]].sum() + v[-1]


def selection(a, b):
    c = np.where(a > 0, a * b, b ** 2)
    return np.clip(c, -0.5, 0.7).sum() + a.clip(min=-0.1).sum() + np.clip(b, a, None).sum()


def array_element_writes(v, s):
    out = np.zeros(5)
    for i in range(4):
        out[i] = v[i] * s + i
    out[4] = out[0] * out[1]
    out[1:3] += v[2:]
    out[0] *= s
    return np.sum(out ** 2)


def array_read_before_write(v):
    b = v * 2.0
    c = b * v           # reads b before b is written below
    b[0] = 7.0
    b += v
    return c.sum() + (b * b).sum()


def array_iteration(a):
    total = 0.0
    for row in a:
        for x in row:
            total += x * x
    return total + sum(a[0]) + float(a[1, 1])


def lists_to_arrays(x, y):
    arr = np.array([x, y, x * y])
    m = np.array([[x, 1.0], [y, x]])
    return np.sum(arr ** 2) + np.linalg.det(m) + np.exp(np.array([x, y])).sum() \
        + np.sum([x, y * 3])


def linalg(a, v):
    m = a @ a.T + 3 * np.eye(3)
    sign, logdet = np.linalg.slogdet(m)
    return np.trace(np.linalg.inv(m)) + logdet + np.linalg.solve(m, v[:3]).sum()


def softplus_loop(w, x):
    total = 0.0
    for i in range(x.shape[0]):
        total += np.log1p(np.exp(x[i] @ w))
    return total


CASES = [
    (ufuncs, (A,)),
    (positive_ufuncs, (P,)),
    (binary_ufuncs, (A, A[::-1] * 0.5)),
    (broadcasting, (A, V, 0.7)),
    (reductions, (A,)),
    (products, (A, B, V)),
    (shapes, (A, V)),
    (indexing, (A, V)),
    (selection, (A, A[::-1] * 0.5)),
    (array_element_writes, (V, 0.7)),
    (array_read_before_write, (V,)),
    (array_iteration, (A,)),
    (lists_to_arrays, (0.6, 1.7)),
    (linalg, (A, V)),
    (softplus_loop, (V, RNG.normal(size=(6, 4)))),
]


@pytest.mark.parametrize("f, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_numpy_code_matches_finite_differences(check, f, args):
    report = check(f, *args, tol=1e-5)
    assert report.worst < 1e-5


def test_vdot_of_complex_arrays_is_refused():
    from dcgraph.ad.rules_linalg import vdot_vjp_0, vdot_vjp_1
    for rule in (vdot_vjp_0, vdot_vjp_1):
        with pytest.raises(TypeError, match="vdot: no rule for complex"):
            rule(1.0, 0j, A * 1j, A * 1j)


def test_array_gradients_have_argument_shapes():
    g = ad.grad(broadcasting, argnums=(0, 1, 2))(A, V, 0.7)
    assert g[0].shape == A.shape and g[1].shape == V.shape and np.ndim(g[2]) == 0


def test_unbroadcast_matches_manual():
    g = ad.grad(lambda_free_broadcast)(V)
    assert np.allclose(g, 3.0)


def lambda_free_broadcast(v):
    return np.sum(v + np.zeros((3, 4)))


def more_products(a, b3, m):
    return np.einsum("ij->j", a).sum() + np.einsum("ij,ij->", a, a) \
        + np.einsum("bij,jk->bik", b3, m).sum() + np.matmul(b3, m).sum() \
        + np.dot(b3, m[:, 0]).sum() + np.tensordot(b3, m, axes=1).sum() \
        + np.tensordot(a, a, axes=2) + np.linalg.solve(m @ m.T + 4 * np.eye(3), m).sum()


def more_reductions(a):
    z = a.copy()
    z[0, 0] = 0.0
    ties = np.maximum(a, 0.2)
    return np.prod(z + 1.0 * (z != 0)) + np.prod(a, axis=1).sum() + ties.max(axis=0).sum() \
        + a.std(axis=1, keepdims=True).sum() + np.cumsum(a).sum() \
        + np.linalg.norm(a, axis=0).sum() + a.mean(axis=(0, 1)) + np.amin(a, axis=0).sum()


def more_indexing(a, v):
    return np.take(v, [0, 0, 3]).sum() + np.take(a, [1, 2], axis=1).sum() \
        + np.repeat(v, 2).sum() * v[0] + np.diag(a[:, :3]).sum() + np.diag(v).sum() \
        + a.flatten()[5] + np.append(v, a[0])[-2] + np.moveaxis(a[None], 0, -1)[1, 2, 0] \
        + np.broadcast_to(v, (2, 4))[1, 3] + np.flipud(a)[0, 1] + np.fliplr(a)[0, 1]


CASES_MORE = [
    (more_products, (A, RNG.normal(size=(2, 4, 3)), RNG.normal(size=(3, 3)))),
    (more_reductions, (A,)),
    (more_indexing, (A, V)),
]


@pytest.mark.parametrize("f, args", CASES_MORE, ids=[f.__name__ for f, _ in CASES_MORE])
def test_more_numpy_code_matches_finite_differences(check, f, args):
    assert check(f, *args, tol=1e-5).worst < 1e-5
