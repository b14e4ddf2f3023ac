"""choice_gradients and accumulate_param_gradients: Gen's known answers and finite differences."""
import numpy as np
import pytest

from dcgraph.gen import (ParameterStore, accumulate_param_gradients, assess, choice_gradients,
                         choicemap, gen, generate, normal, param, select, simulate)

from gen_models import bar, foo, foo_store, top

FOO_CHOICES = {"a": 2.0, "b": 3.0, "bar": {"z": 4.0}, "out": 5.0}


def foo_score(mu_a, choices, theta1=0.0, theta2=0.0, retgrad=2.0):
    """The differentiated quantity: score + retval * retgrad, by assess."""
    w, retval = assess(foo, (mu_a,), choicemap(choices), store=foo_store(theta1, theta2))
    return w + retgrad * retval


def fd(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def test_known_answer_choice_gradients_with_parameters():
    store = foo_store()
    tr, _ = generate(foo, (1.0,), FOO_CHOICES, store=store)
    assert tr.get_score() == pytest.approx(-487.17575413281867, abs=1e-9)
    arg_grads, values, grads = choice_gradients(tr, select(("bar", "z"), "a", "out"), 2.0)
    assert arg_grads == (pytest.approx(1.0, abs=1e-12),)
    assert values.to_dict() == {"a": 2.0, "bar": {"z": 4.0}, "out": 5.0}
    assert grads["a"] == pytest.approx(-742.0, abs=1e-9)
    assert grads[("bar", "z")] == pytest.approx(-188.0, abs=1e-9)
    assert grads["out"] == pytest.approx(33.0, abs=1e-9)
    assert "b" not in grads
    # against central finite differences of assess
    assert arg_grads[0] == pytest.approx(fd(lambda m: foo_score(m, FOO_CHOICES), 1.0), rel=1e-6)
    for addr in ("a", ("bar", "z"), "out"):
        def f(v, addr=addr):
            cm = choicemap(FOO_CHOICES)
            cm.set_value(addr, v)
            return foo_score(1.0, {a: x for a, x in cm.items()})
        assert grads[addr] == pytest.approx(fd(f, choicemap(FOO_CHOICES)[addr]), rel=1e-6)


def test_known_answer_accumulate_param_gradients():
    store = foo_store()
    tr, _ = generate(foo, (1.0,), FOO_CHOICES, store=store)
    arg_grads = accumulate_param_gradients(tr, 2.0, 1.0)
    assert arg_grads == (pytest.approx(1.0, abs=1e-12),)
    assert store.get_param_grad(bar, "theta1") == 2.0
    assert store.get_param_grad(foo, "theta2") == 6.0
    accumulate_param_gradients(tr, 2.0, 0.5)         # accumulates, scaled
    assert store.get_param_grad(bar, "theta1") == 3.0
    assert store.get_param_grad(foo, "theta2") == 9.0
    for name, gf, kw in (("theta1", bar, "theta1"), ("theta2", foo, "theta2")):
        num = fd(lambda t: foo_score(1.0, FOO_CHOICES, **{kw: t}), 0.0)
        assert store.get_param_grad(gf, name) == pytest.approx(1.5 * num, rel=1e-6)
    store.zero_param_grads()
    assert store.get_param_grad(foo, "theta2") == 0.0


@gen
def vector_model(w0):
    w = param("w")
    x = normal(w * w0, np.array([1.0, 2.0])) @ "x"
    return float(np.sum(x * w))


def test_array_parameters_and_choices_against_finite_differences():
    store = ParameterStore()
    store.init_param(vector_model, "w", np.array([0.5, -1.0]))
    x = np.array([0.3, 0.7])
    tr, _ = generate(vector_model, (np.array([1.0, 2.0]),), {"x": x}, store=store)
    arg_grads, _, grads = choice_gradients(tr, select("x"), 1.0)

    def total(w0, xv, w):
        st = ParameterStore()
        st.init_param(vector_model, "w", w)
        lp, ret = assess(vector_model, (w0,), {"x": xv}, store=st)
        return lp + ret

    w0, w = np.array([1.0, 2.0]), np.array([0.5, -1.0])
    for i in range(2):
        e = np.eye(2)[i] * 1e-6
        assert grads["x"][i] == pytest.approx((total(w0, x + e, w) - total(w0, x - e, w)) / 2e-6,
                                              rel=1e-6)
        assert arg_grads[0][i] == pytest.approx(
            (total(w0 + e, x, w) - total(w0 - e, x, w)) / 2e-6, rel=1e-6)
    accumulate_param_gradients(tr, 1.0)
    g = store.get_param_grad(vector_model, "w")
    for i in range(2):
        e = np.eye(2)[i] * 1e-6
        assert g[i] == pytest.approx((total(w0, x, w + e) - total(w0, x, w - e)) / 2e-6, rel=1e-6)


def test_gradients_through_three_levels_of_calls():
    tr = simulate(top, (0.3,), rng=np.random.default_rng(0))
    arg_grads, values, grads = choice_gradients(tr, select(("m", "l", "v"), "obs"))
    choices = {a: v for a, v in tr.get_choices().items()}

    def score(mu, addr=None, v=None):
        c = dict(choices)
        if addr is not None:
            c[addr] = v
        return assess(top, (mu,), choicemap({tuple(a): x for a, x in c.items()}))[0]

    assert arg_grads[0] == pytest.approx(fd(lambda m: score(m), 0.3), rel=1e-6)
    for addr in (("m", "l", "v"), ("obs",)):
        a = [k for k in choices if tuple(k) == addr][0]
        assert grads[addr] == pytest.approx(fd(lambda v: score(0.3, a, v), choices[a]), rel=1e-6)
    assert values.to_dict() == {"m": {"l": {"v": tr[("m", "l", "v")]}}, "obs": tr["obs"]}
    tr.tape.lint()
