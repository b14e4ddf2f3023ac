"""Learning: Gen's SGD known answer, optimisers, per-thread accumulators (threads=1 vs 4 agree
to 1e-10), and a linear-Gaussian model converging to its closed-form ML parameters."""
import numpy as np
import pytest

from dcgraph.gen import (ParameterStore, accumulate_param_gradients, gen, generate, normal,
                         param, simulate)
from dcgraph.gen.optimizers import ADAM, FixedStepGradientDescent, GradientDescent, apply_update
from dcgraph.gen.train import minibatch_gradients, train


@gen
def foo():
    return param("theta")


@pytest.mark.parametrize("opt", [FixedStepGradientDescent(0.001), GradientDescent(0.001, 1000)])
def test_sgd_step_known_answer(opt):
    store = ParameterStore()
    store.init_param(foo, "theta", 0.0)
    tr = simulate(foo, (), store=store)
    accumulate_param_gradients(tr, 1.0)
    assert store.get_param_grad(foo, "theta") == 1.0
    apply_update(store, opt)
    assert store.get_param(foo, "theta") == pytest.approx(0.001, abs=1e-15)
    assert store.get_param_grad(foo, "theta") == 0.0


def test_decaying_step_and_adam_follow_their_formulas():
    store = ParameterStore()
    store.init_param(foo, "theta", 0.0)
    opt = GradientDescent(0.1, 3.0)
    for t in range(1, 4):
        store.accumulate(foo, "theta", 2.0)
        before = store.get_param(foo, "theta")
        apply_update(store, opt)
        assert store.get_param(foo, "theta") - before == pytest.approx(0.1 * 4 / (3 + t) * 2)
    store.set_param(foo, "theta", np.zeros(2))
    store.grads[(foo, "theta")] = np.zeros(2)
    adam = ADAM(0.01)
    store.accumulate(foo, "theta", np.array([3.0, -0.5]))
    apply_update(store, adam)                    # first Adam step moves by lr * sign(grad)
    np.testing.assert_allclose(store.get_param(foo, "theta"), [0.01, -0.01], rtol=1e-6)


@gen
def linear(x):
    a, b, log_s = param("a"), param("b"), param("log_sigma")
    return normal(a * x + b, np.exp(log_s)) @ "y"


def _data():
    rng = np.random.default_rng(0)
    xs = rng.uniform(-2, 2, size=64)
    ys = 1.5 * xs - 0.7 + 0.4 * rng.standard_normal(64)
    return xs, ys


def _store(a=0.0, b=0.0, log_s=0.0):
    store = ParameterStore()
    for name, v in (("a", a), ("b", b), ("log_sigma", log_s)):
        store.init_param(linear, name, v)
    return store


def test_threads_1_and_4_give_the_same_gradients():
    xs, ys = _data()

    def data(rng):
        i = int(rng.integers(len(xs)))
        return (float(xs[i]),), {"y": float(ys[i])}

    seeds = list(range(100, 164))
    grads = []
    for threads in (1, 4):
        store = _store(0.3, -0.2, 0.1)
        minibatch_gradients(linear, data, store, seeds, threads)
        grads.append([store.get_param_grad(linear, n) for n in ("a", "b", "log_sigma")])
    np.testing.assert_allclose(grads[0], grads[1], rtol=0, atol=1e-10)
    assert all(abs(g) > 1e-3 for g in grads[0])
    # and they are the gradient of the mean log likelihood (closed form)
    a, b, s = 0.3, -0.2, np.exp(0.1)
    picks = [int(np.random.default_rng(sd).integers(len(xs))) for sd in seeds]
    r = ys[picks] - a * xs[picks] - b
    np.testing.assert_allclose(grads[0], [np.mean(r * xs[picks]) / s**2, np.mean(r) / s**2,
                                          np.mean(r**2 / s**2 - 1)], rtol=1e-9)


def test_linear_gaussian_converges_to_closed_form_ml():
    xs, ys = _data()
    X = np.column_stack([xs, np.ones_like(xs)])
    (a_ml, b_ml), *_ = np.linalg.lstsq(X, ys, rcond=None)
    s_ml = np.sqrt(np.mean((ys - X @ [a_ml, b_ml]) ** 2))
    idx = iter(range(10**9))

    def data(rng):                          # sweeps the data set in order
        i = next(idx) % len(xs)
        return (float(xs[i]),), {"y": float(ys[i])}

    store = _store()
    hist = train(linear, data, store, ADAM(0.1), num_minibatch=120, minibatch=32, threads=1,
                 rng=np.random.default_rng(1))
    assert hist[-1] > hist[0]
    assert store.get_param(linear, "a") == pytest.approx(a_ml, abs=0.01)
    assert store.get_param(linear, "b") == pytest.approx(b_ml, abs=0.01)
    assert np.exp(store.get_param(linear, "log_sigma")) == pytest.approx(s_ml, abs=0.01)
    tr, w = generate(linear, (1.0,), {"y": 0.0}, store=store)
    assert tr.get_score() == w


def test_amortised_proposal_example_raises_the_effective_sample_size():
    import pathlib
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples"))
    import gen_amortized_proposal as ex

    from dcgraph.gen.inference import effective_sample_size, importance_sampling
    rng = np.random.default_rng(0)
    store = ParameterStore()
    ex.init_network(store, rng)
    hist = train(ex.proposal, ex.simulated_example, store, ADAM(0.01), num_minibatch=60,
                 minibatch=16, threads=2, rng=rng)
    assert np.mean(hist[-10:]) > np.mean(hist[:10]) + 5
    (ys,), _ = ex.simulated_example(np.random.default_rng(123))
    obs = {("y", i): float(y) for i, y in enumerate(ys)}
    ess = [effective_sample_size(importance_sampling(ex.regression, (), obs, 300, q, qa,
                                                     rng=np.random.default_rng(1),
                                                     store=store)[1])
           for q, qa in ((None, ()), (ex.proposal, (ys,)))]
    assert ess[1] > 3 * ess[0]
