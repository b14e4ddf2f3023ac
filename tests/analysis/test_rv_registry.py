"""The random-primitive registry: lookup of every calling form, parameterisations, registration,
and RandomContext keeping registered Python functions primitive."""
import math
import random

import numpy as np
import pytest
from scipy import stats

import dcgraph
from dcgraph.analysis import random_primitives as registry
from dcgraph.analysis import FiniteChoice, RandomContext, random_variables
from dcgraph.dist import Categorical, Normal


def _dist(fn, *args, **kwargs):
    entry = registry.lookup(fn)
    assert entry is not None, fn
    return entry.distribution(args, kwargs)


def test_lookup_normalises_bound_and_unbound_forms():
    rng = np.random.default_rng(0)
    cases = [
        (random.random, random.Random.random),            # bound builtin of the hidden Random
        (random.gauss, random.Random.gauss),              # bound Python method
        (random.Random(3).randint, random.Random.randint),
        (rng.normal, np.random.Generator.normal),         # bound method of a Generator
        (np.random.Generator.normal, np.random.Generator.normal),
        (np.random.normal, np.random.RandomState.normal),  # legacy module function
        (Normal(0, 1).sample, dcgraph.dist.Distribution.sample),
    ]
    for fn, key in cases:
        entry = registry.lookup(fn)
        assert entry is not None and entry.key is key, fn
    for fn in (math.sin, len, np.sum, rng.bit_generator.random_raw, print, lambda: 1):
        assert registry.lookup(fn) is None, fn


def test_bound_object_is_passed_first():
    state = random.Random(1)
    assert registry.lookup(state.random).bound_self is state
    assert registry.lookup(np.random.Generator.normal).bound_self is registry.NOT_BOUND


@pytest.mark.parametrize("make, ref, xs", [
    (lambda: _dist(random.gammavariate, 2.0, 3.0), stats.gamma(2.0, scale=3.0), [0.5, 4.0]),
    (lambda: _dist(random.expovariate, 2.5), stats.expon(scale=1 / 2.5), [0.1, 1.0]),
    (lambda: _dist(random.weibullvariate, 2.0, 1.5), stats.weibull_min(1.5, scale=2.0), [0.3, 2.0]),
    (lambda: _dist(random.lognormvariate, 0.5, 0.7), stats.lognorm(0.7, scale=math.exp(0.5)), [0.4, 3.0]),
    (lambda: _dist(random.uniform, 3.0, 1.0), stats.uniform(1.0, 2.0), [1.5, 2.9]),
    (lambda: _dist(random.paretovariate, 3.0), stats.pareto(3.0), [1.2, 5.0]),
    (lambda: _dist(np.random.Generator.gamma, None, 2.0, scale=3.0), stats.gamma(2.0, scale=3.0), [0.5, 4.0]),
    (lambda: _dist(np.random.Generator.exponential, None, 2.0), stats.expon(scale=2.0), [0.5, 4.0]),
    (lambda: _dist(np.random.Generator.normal, None, 1.0, 2.0), stats.norm(1.0, 2.0), [0.0, 3.0]),
    (lambda: _dist(np.random.Generator.weibull, None, 1.7), stats.weibull_min(1.7), [0.2, 1.4]),
    (lambda: _dist(np.random.normal, 1.0, 2.0), stats.norm(1.0, 2.0), [0.0, 3.0]),
    (lambda: _dist(np.random.standard_t, 4.0), stats.t(4.0), [-1.0, 0.5]),
])
def test_continuous_parameterisations_match_scipy(make, ref, xs):
    d = make()
    for x in xs:
        assert d.logpdf(x) == pytest.approx(ref.logpdf(x), rel=1e-10)


@pytest.mark.parametrize("make, ref, ks", [
    (lambda: _dist(np.random.Generator.negative_binomial, None, 3, 0.4), stats.nbinom(3, 0.4), [0, 2, 7]),
    (lambda: _dist(np.random.Generator.binomial, None, 5, 0.3), stats.binom(5, 0.3), [0, 2, 5]),
    (lambda: _dist(np.random.Generator.poisson, None, 2.5), stats.poisson(2.5), [0, 3]),
])
def test_discrete_parameterisations_match_scipy(make, ref, ks):
    d = make()
    for k in ks:
        assert d.logpdf(k) == pytest.approx(ref.logpmf(k), rel=1e-10)


def test_finite_choices():
    d = _dist(random.randint, 1, 6)
    assert isinstance(d, FiniteChoice) and d.values == (1, 2, 3, 4, 5, 6)
    assert d.logpdf(4) == pytest.approx(-math.log(6)) and d.logpdf(7) == -np.inf
    assert _dist(random.randrange, 0, 10, 3).values == (0, 3, 6, 9)
    assert _dist(np.random.Generator.integers, None, 3).values == (0, 1, 2)
    assert _dist(np.random.Generator.integers, None, -1, 1, endpoint=True).values == (-1, 0, 1)
    assert _dist(np.random.randint, 2, 5).values == (2, 3, 4)
    d = _dist(np.random.Generator.choice, None, ["a", "b"], p=[0.25, 0.75])
    assert d.logpdf("b") == pytest.approx(math.log(0.75)) and d.logpdf("c") == -np.inf
    d = _dist(np.random.Generator.choice, None, 3)
    assert isinstance(d, Categorical) and np.allclose(d.p, 1 / 3)
    d = _dist(np.random.Generator.choice, None, 2, p=[0.2, 0.8], size=4)
    assert d.logpdf(np.array([1, 1, 0, 1])) == pytest.approx(3 * math.log(0.8) + math.log(0.2))
    assert _dist(np.random.Generator.choice, None, 5, size=2, replace=False) is None
    assert _dist(random.shuffle, [1, 2]) is None
    sample = d.sample(np.random.default_rng(0), 5)
    assert sample.shape == (5,)


def test_register_and_unregister_a_user_sampler():
    def coin(p):
        return random.random() < p

    def model():
        return coin(0.25) + coin(0.5)

    registry.register_random(coin, lambda p: dcgraph.dist.Bernoulli(p))
    try:
        assert registry.lookup(coin).key is coin
        # default context: coin is traced into, yet read as one choice (its random() skipped)
        _, tape = dcgraph.track(model)
        assert any(n.kind == "NestedCall" and n.fn is coin for n in tape.walk())
        rvs = random_variables(tape)
        assert [c.name for c in rvs] == ["coin", "coin"]
        assert [float(c.distribution.p) for c in rvs] == [0.25, 0.5]
        # RandomContext: coin is a primitive call
        _, tape = dcgraph.track(model, ctx=RandomContext())
        assert [n.kind for n in tape.walk() if getattr(n, "fn", None) is coin] == ["PrimitiveCall"] * 2
        assert len(random_variables(tape)) == 2
    finally:
        registry.unregister_random(coin)
    assert registry.lookup(coin) is None
    with pytest.raises(TypeError, match="distribution_of_args"):
        registry.register_random(coin, "normal")


def test_random_context_records_stdlib_samplers_as_one_call():
    def f():
        return random.gauss(0.0, 2.0) + random.choice([1, 2, 3])

    _, tape = dcgraph.track(f, ctx=RandomContext())
    kinds = {n.fn_name: n.kind for n in tape.walk() if isinstance(n, dcgraph.PrimitiveCall)}
    assert kinds["gauss"] == "PrimitiveCall" and kinds["choice"] == "PrimitiveCall"
    assert not any(n.fn_name == "random" for n in tape.walk() if isinstance(n, dcgraph.PrimitiveCall))
    _, default = dcgraph.track(f)
    assert any(n.kind == "NestedCall" and n.fn_name == "gauss" for n in default.walk())
    for t in (tape, default):
        rvs = random_variables(t)
        assert [c.name for c in rvs] == ["gauss", "choice"]
        assert rvs[rvs.addresses[0]].distribution.scale == 2.0
