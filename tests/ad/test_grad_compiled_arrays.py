"""Array templates of compiled gradients (``dcgraph.ad.codegen_arrays``): inline numpy
pull-backs, sums kept as scalars, tuple unpacking, whole-array reads, int folding, shape guards
and gradients returned without a copy; each checked against central differences and the sweep
on a fresh trace, with the compiled path in use."""
import math
import pickle
import re

import numpy as np
import pytest

import dcgraph
from dcgraph import ad
from dcgraph.ad.api import _Binding, _scalar_seed
from dcgraph.ad.compiled import GuardFailed, compile_gradient
from dcgraph.ad.core import Sweep

XV = np.array([-14.0, -7.0, 0.0, 7.0, 14.0])


def rats_vec(th, y):
    alpha, beta, mu_a, mu_b = th[0:4], th[4:8], th[8], th[9]
    log_sa, log_sb, log_sy = th[10], th[11], th[12]
    za = (alpha - mu_a) / np.exp(log_sa)
    zb = (beta - mu_b) / np.exp(log_sb)
    r = (y - alpha[:, None] - beta[:, None] * XV) / np.exp(log_sy)
    return (-0.5 * np.sum(za * za) - 4 * log_sa - 0.5 * np.sum(zb * zb) - 4 * log_sb
            - 0.5 * np.sum(r * r) - 20 * log_sy)


def broadcasts(x, m):
    """Operands of other shapes summed back: (3, 1) with (4,), a row, scalars both sides,
    fewer dimensions than the result ((3,) against (4, 3)), a subtracted operand."""
    a = x[:, None] * m[None, :] + x[:, None] - m / (2.0 + x[:, None])
    c = np.exp(m[:, None] - x) * (1.5 - x) - (x - m[:, None] * x)
    s = x[0]
    return np.sum(c * c) / 5.0 + np.sum(a * a) / 7.0 + np.sum(s * a) + np.sum(a / s) + np.sum(s - a) + np.sum(s / (a + 9.0))


def sums_read_twice(x):
    """The operand of a sum used again elsewhere (no scalar stand-in), sums of a sum."""
    p = x * 1.5 - 0.25
    return np.sum(p) * np.sum(p * x) + np.sum(-p) + np.sum(np.exp(x) + np.log(x)) + x @ p


def unary(x, t):
    return float(np.exp(t) * np.log(t + 2.0)) + np.sum(np.exp(-x) * np.log(x)) - (-t)


def normal_terms(x, t):
    """BUGS' normal log density: sums of ``square``, ``log`` and ``exp`` of whole arrays (their
    adjoints read the sum's scalar, no filled array), a square of a scalar, a negated sum."""
    return (15.0 * t - 0.5 * t * np.sum(np.square(x - 1.5)) - 5e-07 * np.square(t)
            + np.sum(np.log(x)) - np.sum(np.exp(-x)) - np.sum(-x))


def powers(xs):
    lp = 0.0
    for i in range(3):
        a, b = xs[i], xs[3 + i]          # 3 + i folds to a literal position
        lp -= a ** 2 + b ** 3 + (a * b) ** 1
    return lp


def quad(q):
    return -0.5 * q @ q


def matvec(w, X):
    """A float64 matrix times the vector: its adjoint is ``g @ X`` (no ``matmul`` rule)."""
    r = X @ w - 1.0
    return -0.5 * (r @ r)


def matvec_matrix(X, w):
    """... and the matrix's: ``outer(g, w)``."""
    r = X @ w + 0.5
    return np.sum(r * r) * 0.25


CASES = [
    (rats_vec, (np.linspace(0.3, 1.7, 13), np.linspace(-1.0, 2.0, 20).reshape(4, 5))),
    (broadcasts, (np.array([0.7, 1.3, 2.1]), np.array([0.5, -1.5, 2.5, 1.0]))),
    (sums_read_twice, (np.array([0.4, 1.1, 2.3, 0.9]),)),
    (unary, (np.array([0.6, 1.7, 3.2]), 0.8)),
    (normal_terms, (np.array([0.6, 1.7, 3.2, 2.2]), 0.8)),
    (powers, ([0.5, 1.25, -0.75, 2.0, 0.3, -1.1],)),
    (quad, (np.linspace(-1.0, 1.0, 7),)),
    (matvec, (np.array([0.3, -1.2, 0.7]), np.linspace(-2.0, 2.0, 15).reshape(5, 3))),
    (matvec_matrix, (np.linspace(-2.0, 2.0, 15).reshape(5, 3), np.array([0.3, -1.2, 0.7]))),
]


def finite_differences(f, args, h=1e-6):
    x = args[0]
    flat = np.array(x, dtype=float).ravel()
    out = np.zeros_like(flat)
    for k in range(flat.size):
        up, down = flat.copy(), flat.copy()
        up[k] += h
        down[k] -= h
        shaped = [lambda v: v.reshape(np.shape(x)), lambda v: list(map(float, v))][type(x) is list]
        out[k] = (f(shaped(up), *args[1:]) - f(shaped(down), *args[1:])) / (2 * h)
    return out


def swept(f, args):
    value, tape = dcgraph.track(f, *args)
    tape.lint()
    binding = _Binding(f, tape, args, {})
    sweep = Sweep(tape, wrt=binding.nodes_for((0,)))
    sweep.run(tape, _scalar_seed(value))
    return value, binding.gradient(sweep.adj, 0)


@pytest.mark.parametrize("f, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_compiled_templates_match_finite_differences_and_the_sweep(f, args):
    vg = ad.value_and_grad(f)
    for _ in range(3):
        value, g = vg(*args)
    stats = vg.compiled.stats
    assert vg.compiled.reason is None and stats["compiles"] == 1 and stats["hits"] >= 1
    ref_value, ref = swept(f, args)
    assert value == pytest.approx(ref_value, rel=1e-12)
    np.testing.assert_allclose(np.asarray(g, dtype=float), np.asarray(ref, dtype=float),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.ravel(g), finite_differences(f, args), rtol=1e-6, atol=1e-6)
    scaled = (np.asarray(args[0]) * 1.1,) if type(args[0]) is np.ndarray else None
    if scaled is not None:                      # other values, same path: still exact
        new_args = scaled + args[1:]
        _, g2 = vg(*new_args)
        np.testing.assert_allclose(g2, swept(f, new_args)[1], rtol=1e-12, atol=1e-12)
        assert vg.compiled.stats["compiles"] == 1


def compiled_source(f, *args):
    """``f``'s one compiled path (called until compiled): its ``source`` is the generated code."""
    vg = ad.value_and_grad(f)
    for _ in range(3):
        vg(*args)
    (cg, _), = next(iter(vg.compiled.paths.values()))
    return cg


def test_templates_are_in_the_generated_code():
    cg = compiled_source(rats_vec, *CASES[0][1])
    src = cg.source
    assert "sum_vjp" not in src and "mul_vjp" not in src and "build_seq_rule" not in src
    assert ".reshape((4,))" in src                      # alpha[:, None] pulled back
    assert re.search(r" = _dot\(g\d+, v\d+\)\.reshape\(\(4, 1\)\)", src)   # beta[:, None] * XV
    assert re.search(r" = _dot\(g\d+, _minus_ones\)\.reshape\(\(4, 1\)\)", src)  # y - alpha[:, None]
    assert "is not None" not in src and "_Sparse" not in src    # th's slices: dense adjoints
    assert ".sum(" not in src.split("g45 =")[1]         # backward sums: np.add.reduce, vdot
    assert "v0.shape != (13,)" in src                   # the parameter vector is guarded
    assert src.count("(2.0 * ") == 3                    # za * za, zb * zb, r * r as squares
    assert src.count("_vdot(") == 3 and ".sum() / " not in src   # d/ds of z / exp(s)
    assert cg.fresh == (True,)
    for f, args in CASES[-2:]:
        cg = compiled_source(f, *args)
        assert "matmul_vjp" not in cg.source and ("outer(" in cg.source) == (f is matvec_matrix)


def test_broadcast_operands_are_summed_back_by_reductions():
    """Of ``broadcasts``: (3, 1) operands against a (3, 4) result by one ``dot`` (with ``m``
    for a product, ones for a difference), other shapes by ``np.add.reduce``."""
    src = compiled_source(broadcasts, *CASES[1][1]).source
    assert src.count("_dot(") == 1 and "_ones).reshape((3, 1))" in src
    assert src.count(", (1,), None, None, True)") == 2 and src.count(", (0,))") == 4
    assert ".sum(axis" not in src


def test_sums_of_unary_templates_keep_the_scalar():
    x, t = np.array([0.6, 1.7, 3.2, 2.2]), 0.8
    src = compiled_source(normal_terms, x, t).source
    assert "square_vjp" not in src and "log_vjp" not in src and "exp_vjp" not in src
    assert src.count("_full(") == 1                   # the negated sum only
    assert src.count("(2.0 * ") == 1                  # square of x (t is not differentiated)


def test_a_changed_shape_fails_a_guard():
    def f(x):
        return np.sum(x * x) * 0.5 + x @ x

    x = np.array([1.0, 2.0, 3.0])
    _, tape = dcgraph.track(f, x)
    tape.lint()
    cg = compile_gradient(tape, None, (x,), {}, f, _scalar_seed)
    value, adj = cg((x,), {})
    assert value == pytest.approx(21.0)
    np.testing.assert_allclose(next(iter(adj.values())), 3.0 * x)
    with pytest.raises(GuardFailed):
        cg((np.ones(4),), {})
    with pytest.raises(GuardFailed):
        cg((np.ones(3, dtype=np.float32),), {})


def test_unpickled_arrays_take_the_compiled_path():
    """Unpickled float64 arrays carry an equal dtype that is another object: no guard fails."""
    th, y = CASES[0][1]
    vg = ad.value_and_grad(rats_vec)
    for _ in range(3):
        vg(th, y)
    th2, y2 = pickle.loads(pickle.dumps((th, y)))
    g = vg(th2, y2)[1]
    assert vg.compiled.stats["guard_failures"] == 0 and vg.compiled.stats["traces"] == 2
    np.testing.assert_allclose(g, swept(rats_vec, (th, y))[1], rtol=1e-12, atol=1e-12)


def test_returned_gradients_share_no_memory():
    c = np.arange(3.0)
    vg_alias = ad.value_and_grad(lambda x: x @ c)       # the gradient is c itself
    vg_views = ad.value_and_grad(lambda x, z: np.sum((x[:, None] + z[:, None]) * c),
                                 argnums=(0, 1))
    x = np.ones(3)
    for _ in range(3):
        g = vg_alias(x)[1]
        gx, gz = vg_views(x, x + 1.0)[1]
    assert not np.shares_memory(g, c) and not np.shares_memory(gx, gz)
    np.testing.assert_allclose(g, c)
    np.testing.assert_allclose(gx, np.full(3, 3.0))
    g[:] = 9.0
    assert vg_alias(x)[1] is not g and c.tolist() == [0.0, 1.0, 2.0]
    assert vg_alias.compiled.stats["hits"] >= 2


def test_keyword_and_positional_calls_keep_separate_paths():
    def f(x, scale=1.0):
        return scale * np.sum(np.exp(x))

    vg = ad.value_and_grad(f)
    x = np.array([0.1, 0.2])
    for _ in range(3):
        g1 = vg(x)[1]
        g2 = vg(x, scale=2.0)[1]
    np.testing.assert_allclose(g1, np.exp(x))
    np.testing.assert_allclose(g2, 2.0 * np.exp(x))
    assert vg.compiled.stats["compiles"] == 2 and math.isclose(vg(x)[0], np.exp(x).sum())


@pytest.mark.parametrize("f, args", CASES[:4], ids=[f.__name__ for f, _ in CASES[:4]])
def test_second_derivatives_through_the_templates(f, args):
    """``hessian`` traces the generated gradient code (templates included)."""
    H = ad.hessian(f)(*args)
    g = ad.grad(f)
    x, h = np.asarray(args[0], float), 1e-5
    fd = np.array([(g(x + h * e, *args[1:]) - g(x - h * e, *args[1:])) / (2 * h)
                   for e in np.eye(x.size)])
    np.testing.assert_allclose(H, fd, rtol=1e-6, atol=1e-6)
