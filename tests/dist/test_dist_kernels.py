"""Raw log-density kernels (``dcgraph.dist.kernels``) and switching validation off."""
import numpy as np
import pytest
from scipy import stats

import dcgraph
from dcgraph import dist
from dcgraph.dist import kernels as K

RNG = np.random.default_rng(12)
XR = RNG.normal(0.3, 2.0, 7)                 # real-line values
XP = RNG.gamma(2.0, 1.0, 7)                  # positive values
XU = RNG.uniform(0.02, 0.98, 7)              # unit-interval values
KP = np.array([0.0, 1.0, 2.0, 3.0, 5.0, 8.0, 13.0])
KB = np.array([0.0, 1.0, 1.0, 0.0, 1.0])

# kernel, family, params (family order), values, scipy frozen distribution
CASES = [
    (K.normal_logpdf, dist.Normal, (0.4, 1.7), XR, stats.norm(0.4, 1.7)),
    (K.studentt_logpdf, dist.StudentT, (3.5, 0.4, 1.7), XR, stats.t(3.5, 0.4, 1.7)),
    (K.cauchy_logpdf, dist.Cauchy, (0.4, 1.7), XR, stats.cauchy(0.4, 1.7)),
    (K.laplace_logpdf, dist.Laplace, (0.4, 1.7), XR, stats.laplace(0.4, 1.7)),
    (K.logistic_logpdf, dist.Logistic, (0.4, 1.7), XR, stats.logistic(0.4, 1.7)),
    (K.halfnormal_logpdf, dist.HalfNormal, (1.7,), XP, stats.halfnorm(scale=1.7)),
    (K.lognormal_logpdf, dist.LogNormal, (0.4, 0.8), XP, stats.lognorm(0.8, scale=np.exp(0.4))),
    (K.exponential_logpdf, dist.Exponential, (1.3,), XP, stats.expon(scale=1 / 1.3)),
    (K.gamma_logpdf, dist.Gamma, (2.5, 1.3), XP, stats.gamma(2.5, scale=1 / 1.3)),
    (K.beta_logpdf, dist.Beta, (2.5, 1.3), XU, stats.beta(2.5, 1.3)),
    (K.bernoulli_logpmf, dist.Bernoulli, (0.3,), KB, stats.bernoulli(0.3)),
    (K.binomial_logpmf, dist.Binomial, (13, 0.3), KP, stats.binom(13, 0.3)),
    (K.poisson_logpmf, dist.Poisson, (3.2,), KP, stats.poisson(3.2)),
]
IDS = [c[1].__name__ for c in CASES]


def test_table_covers_every_kernel():
    assert set(K.KERNELS) == {c[0] for c in CASES}
    for kernel, (_, names) in K.KERNELS.items():
        family = next(c[1] for c in CASES if c[0] is kernel)
        assert names == ("x",) + family.params


@pytest.mark.parametrize("kernel, family, params, x, ref", CASES, ids=IDS)
def test_kernel_equals_family_and_scipy(kernel, family, params, x, ref):
    got = kernel(x, *params)
    want = ref.logpmf(x) if family.is_discrete else ref.logpdf(x)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got, family(*params).logpdf_elementwise(x), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kernel, family, params, x, ref", CASES, ids=IDS)
def test_kernel_gradients_match_finite_differences(kernel, family, params, x, ref):
    _, names = K.KERNELS[kernel]
    args = [np.array(x, dtype=float)] + [np.array(p, dtype=float) for p in params]
    diff = [i for i, n in enumerate(names) if not (family.is_discrete and n in ("x", "n"))]
    grads = dcgraph.grad(lambda *a: np.sum(kernel(*a)), argnums=tuple(diff))(*args)
    for i, g in zip(diff, grads):
        fd = np.zeros(np.shape(args[i]))
        for j in np.ndindex(fd.shape):
            h = 1e-6 * max(1.0, abs(float(args[i][j])))
            up, dn = [a.copy() for a in args], [a.copy() for a in args]
            up[i][j] += h
            dn[i][j] -= h
            fd[j] = (np.sum(kernel(*up)) - np.sum(kernel(*dn))) / (2 * h)
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7, err_msg=f"{kernel.__name__} d/d{names[i]}")


def test_kernel_gradients_broadcast_back_to_argument_shapes():
    x, mu = XR.reshape(7, 1) + np.zeros((7, 3)), np.array([0.1, 0.2, 0.3])
    gx, gmu, gs = dcgraph.grad(lambda x, m, s: np.sum(K.normal_logpdf(x, m, s)), argnums=(0, 1, 2))(x, mu, 1.5)
    z = (x - mu) / 1.5
    np.testing.assert_allclose(gmu, np.sum(z / 1.5, axis=0), rtol=1e-12)
    np.testing.assert_allclose(gx, -z / 1.5, rtol=1e-12)
    assert np.shape(gs) == () and np.isclose(gs, np.sum((z * z - 1) / 1.5), rtol=1e-12)


def test_kernels_are_recorded_as_primitives_with_rules():
    from dcgraph.ad import registry
    registry.load_deferred()
    for kernel, (_, names) in K.KERNELS.items():
        rule = registry.lookup(kernel)
        assert rule is not None and rule.names == names, kernel.__name__
    assert "dcgraph.dist.kernels.normal_logpdf" in dcgraph.ad.supported()


# -- validation on/off ----------------------------------------------------------------------------
def _message(fn):
    with pytest.raises(ValueError) as info:
        fn()
    return str(info.value)


def test_validation_on_by_default_with_unchanged_messages():
    assert dist.is_validating()
    assert _message(lambda: dist.Normal(0, -1)) == "Normal: parameter 'scale' must be positive, got -1.0"
    assert _message(lambda: dist.Beta(1, [1, 0])) == "Beta: parameter 'b' must be positive, got 0.0 at index (1,)"
    assert _message(lambda: dist.Normal([0, 0], [1, 1, 1], validate_args=True)) == \
        "Normal: parameter shapes do not broadcast: loc (2,), scale (3,)"


def test_validate_args_false_skips_checks_per_instance():
    d = dist.Normal(0.0, -1.0, validate_args=False)        # no error: the caller vouches
    assert float(d.scale) == -1.0
    assert dist.is_validating()
    p = dist.Poisson(-2.0, validate_args=False)
    assert float(p.rate) == -2.0


def test_validation_context_manager_restores_and_instance_overrides():
    with dist.validation(False):
        assert not dist.is_validating()
        dist.Normal(0, -1)
        dist.Binomial(2.5, 1.5)
        msg = _message(lambda: dist.Normal(0, -1, validate_args=True))
        assert msg == "Normal: parameter 'scale' must be positive, got -1.0"
    assert dist.is_validating()
    assert _message(lambda: dist.Normal(0, -1)) == "Normal: parameter 'scale' must be positive, got -1.0"


def test_validation_as_a_function_switches_until_switched_back():
    try:
        dist.validation(False)
        assert not dist.is_validating()
        dist.Gamma(-1.0, 1.0)
    finally:
        dist.validation(True)
    assert dist.is_validating()
    with pytest.raises(ValueError, match="Gamma: parameter 'shape' must be positive"):
        dist.Gamma(-1.0, 1.0)


def test_unvalidated_batch_shape_is_computed_on_use():
    d = dist.Normal(np.zeros(3), np.ones((2, 1)), validate_args=False)
    assert d.batch_shape == (2, 3)
    bad = dist.Normal(np.zeros(2), np.ones(3), validate_args=False)
    assert _message(lambda: bad.batch_shape) == "Normal: parameter shapes do not broadcast: loc (2,), scale (3,)"


@pytest.mark.parametrize("family, params, x", [
    (dist.Normal, (0.4, 1.7), [0.1, np.inf, np.nan, -3.0]),
    (dist.Beta, (2.5, 1.3), [0.2, 1.5, -0.1, 0.7]),
    (dist.Beta, (2.5, 1.3), [0.2, np.nan, 0.7]),
    (dist.Poisson, (3.2,), [0.0, 2.5, -1.0, 4.0]),
    (dist.Poisson, (3.2,), [[0.0, 2.0], [1.0, 7.0]]),
    (dist.Binomial, (13, 0.3), [0.0, 14.0, 3.0]),
    (dist.Gamma, (2.5, 1.3), XP),
    (dist.StudentT, (3.5, 0.4, 1.7), XR),
])
def test_cheap_path_gives_the_validated_result(family, params, x):
    on, off = family(*params), family(*params, validate_args=False)
    assert not off._validate and on._validate
    np.testing.assert_equal(off.logpdf(x), on.logpdf(x))
    np.testing.assert_equal(off.logpdf_elementwise(x), on.logpdf_elementwise(x))


def test_gradient_through_unvalidated_family():
    x = XR

    def f(mu, sd):
        return dist.Normal(mu, sd, validate_args=False).logpdf(x)

    gmu, gsd = dcgraph.grad(f, argnums=(0, 1))(0.4, 1.7)
    z = (x - 0.4) / 1.7
    assert np.isclose(gmu, np.sum(z / 1.7), rtol=1e-12)
    assert np.isclose(gsd, np.sum((z * z - 1) / 1.7), rtol=1e-12)


@pytest.mark.parametrize("validate", [True, False])
@pytest.mark.parametrize("family, params, x", [
    (dist.Flat, (), [0.0, np.inf]),
    (dist.Normal, (0.4, 1.7), [0.0, -np.inf]),
    (dist.Laplace, (0.4, 1.7), [0.0, np.nan]),
    (dist.Exponential, (1.3,), [1.0, -1.0]),
    (dist.Bernoulli, (0.3,), [1.0, 0.5]),
])
def test_summed_logpdf_equals_sum_of_elementwise_at_edges(family, params, x, validate):
    d = family(*params) if family is dist.Flat else family(*params, validate_args=validate)
    np.testing.assert_equal(d.logpdf(x), np.sum(d.logpdf_elementwise(x)))


def test_validated_logpdf_still_checks_the_value():
    d = dist.Normal(np.zeros(3), 1.0)
    with pytest.raises(TypeError, match="Normal: value must be numeric"):
        d.logpdf("a")
    assert _message(lambda: d.logpdf(np.zeros(2))) == \
        "Normal: value of shape (2,) does not broadcast with batch shape (3,)"


@pytest.mark.parametrize("make, message", [
    (lambda: dist.Normal(0.0, float("nan")), "Normal: parameter 'scale' must be finite and positive, got nan"),
    (lambda: dist.Normal(float("inf"), 1.0), "Normal: parameter 'loc' must be finite, got inf"),
    (lambda: dist.Binomial(2.5, 0.3), "Binomial: parameter 'n' must be a non-negative integer, got 2.5"),
    (lambda: dist.Bernoulli(1.5), "Bernoulli: parameter 'p' must be in [0, 1], got 1.5"),
    (lambda: dist.Poisson(np.float64(-0.5)), "Poisson: parameter 'rate' must be non-negative, got -0.5"),
    (lambda: dist.Exponential(0), "Exponential: parameter 'rate' must be positive, got 0.0"),
])
def test_scalar_parameter_checks_keep_their_messages(make, message):
    assert _message(make) == message


def test_scalar_parameters_are_stored_read_only_with_their_dtype():
    d = dist.Binomial(3, 0.25)
    assert d.n.dtype == np.int64 and d.p.dtype == np.float64 and d.n.shape == () == d.batch_shape
    assert not d.n.flags.writeable and not d.p.flags.writeable
