"""Gen's lowercase constructors: the fast scalar paths agree with the dcgraph.dist families."""
import math

import numpy as np
import pytest

from dcgraph import dist
from dcgraph.gen import (FAST_FAMILIES, GEN_NAMES, bernoulli, categorical, choice_gradients,
                         exponential, gen, generate, normal, select, simulate, uniform)
from dcgraph.gen.execution import draw, logpdf

CASES = [
    (normal(0.5, 2.0), dist.Normal(0.5, 2.0), [-1.0, 0.5, 3.25]),
    (uniform(-1.0, 3.0), dist.Uniform(-1.0, 3.0), [-2.0, -1.0, 0.5, 3.0, 4.0]),
    (exponential(1.5), dist.Exponential(1.5), [-1.0, 0.0, 2.5]),
    (bernoulli(0.3), dist.Bernoulli(0.3), [0, 1, True, 2]),
    (bernoulli(1.0), dist.Bernoulli(1.0), [0, 1]),
    (categorical(np.array([0.2, 0.5, 0.3])), dist.Categorical([0.2, 0.5, 0.3]), [0, 1, 2, 3, -1]),
    (categorical(np.array([0.0, 1.0])), dist.Categorical([0.0, 1.0]), [0, 1]),
]


@pytest.mark.parametrize("fast, family, xs", CASES)
def test_fast_paths_match_the_family(fast, family, xs):
    assert isinstance(fast, type(family))
    for x in xs:
        expected = float(family.logpdf(x))
        got = logpdf(fast, x)
        assert got == pytest.approx(expected, abs=1e-14) or (got == expected == -math.inf)
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    for _ in range(50):
        assert draw(fast, a) == family.sample(b).item()
    assert fast.grad_logpdf(xs[1]).keys() == family.grad_logpdf(xs[1]).keys()


def test_non_scalar_and_bad_parameters_take_the_family_path():
    v = normal(np.zeros(3), 1.0)
    assert v.batch_shape == (3,) and logpdf(v, np.zeros(3)) == pytest.approx(
        float(dist.Normal(np.zeros(3), 1.0).logpdf(np.zeros(3))))
    with pytest.raises(ValueError, match=r"normal: parameter 'scale' must be positive, "
                                         r"got -1.0"):
        normal(0.0, -1.0)
    with pytest.raises(ValueError, match=r"categorical: parameter 'p' must be a probability "
                                         r"vector summing to 1"):
        categorical(np.array([0.5, 0.6]))
    assert set(GEN_NAMES) >= {"normal", "gamma", "beta", "mvnormal", "dirichlet", "binom",
                              "neg_binom", "poisson", "categorical", "bernoulli"}
    # families without a Gen.jl name: snake case, a run of capitals one word
    assert GEN_NAMES["lkj_cholesky"] is dist.LKJCholesky
    assert GEN_NAMES["mv_student_t"] is dist.MvStudentT and "l_k_j_cholesky" not in GEN_NAMES
    assert len(GEN_NAMES) == len(dist.LOGPDF_FAMILIES)
    covered = {c.__mro__[1] if c in FAST_FAMILIES else c for c in GEN_NAMES.values()}
    assert covered == set(dist.LOGPDF_FAMILIES.values())


@gen
def with_classes(mu):
    x = dist.Normal(mu, 1.0) @ "x"            # the dcgraph.dist class works too
    k = bernoulli(0.25) @ "k"
    y = dist.Gamma(2.0, 1.0 + k) @ "y"
    return normal(x * y, 1.0) @ "z"


def test_dist_classes_as_choices_and_their_gradients():
    tr = simulate(with_classes, (0.5,), rng=np.random.default_rng(0))
    assert set(tr.get_choices().to_dict()) == {"x", "k", "y", "z"}
    tr, w = generate(with_classes, (0.5,), {"x": 0.2, "k": 1, "y": 1.5, "z": 0.1})
    _, _, grads = choice_gradients(tr, select("x", "y"))
    # d/dx [logN(x; mu, 1) + logN(z; x y, 1)] = -(x - mu) + (z - x y) y
    assert grads["x"] == pytest.approx(-(0.2 - 0.5) + (0.1 - 0.3) * 1.5, abs=1e-12)
    # d/dy [log Gamma(y; 2, rate 2) + logN(z; x y, 1)] = 1/y - 2 + (z - x y) x
    assert grads["y"] == pytest.approx(1 / 1.5 - 2.0 + (0.1 - 0.3) * 0.2, abs=1e-12)


def test_fast_categorical_keeps_the_family_methods():
    p = np.array([0.2, 0.5, 0.3])
    fast, family = categorical(p), dist.Categorical(p)
    for x in range(3):
        assert float(fast.logcdf(x)) == pytest.approx(float(family.logcdf(x)), abs=1e-15)
        assert float(fast.logsf(x)) == pytest.approx(float(family.logsf(x)), abs=1e-15)
    a, b = np.random.default_rng(1), np.random.default_rng(1)
    assert np.array_equal(fast.sample(a, (5,)), family.sample(b, (5,)))
