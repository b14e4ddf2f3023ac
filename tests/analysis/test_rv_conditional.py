"""conditional(f, args, address): exact conditionals by enumeration, checked against formulas."""
import math
import random

import numpy as np
import pytest
from scipy.stats import norm

import dcgraph
from dcgraph.analysis import RandomContext, conditional, enumerate_conditional, random_variables
from dcgraph.dist import Bernoulli, Categorical

from rv_models import MU, TRANS, hmm  # noqa: E402,F401


def _hmm_run(seed):
    (z, x), tape = dcgraph.track(hmm, np.random.default_rng(seed), ctx=RandomContext())
    rvs = random_variables(tape)
    return z, x, rvs.addresses[0::2], rvs.addresses[1::2], rvs, tape


def _hmm_formula(z, x, t):
    """P(z[t] = k | all other z and x), by the explicit product of the factors that hold z[t]."""
    w = []
    for k in (0, 1):
        prior = 0.5 if t == 0 else TRANS[z[t - 1]][k]
        nxt = TRANS[k][z[t + 1]] if t + 1 < len(z) else 1.0
        w.append(prior * nxt * norm.pdf(x[t], MU[k], 1.0))
    return np.array(w) / sum(w)


def test_hmm_conditional_of_z3_equals_the_hand_computation():
    z, x, zs, xs, rvs, _ = _hmm_run(3)
    result = enumerate_conditional(hmm, (np.random.default_rng(3),), zs[3])
    want = _hmm_formula(z, x, 3)
    np.testing.assert_allclose(result.probs, want, rtol=1e-12)
    assert isinstance(result.distribution, Categorical)
    np.testing.assert_allclose(result.distribution.p, want, rtol=1e-12)
    # only z[3] and the choices that depend on it changed their log density
    assert result.changed == {zs[3], zs[4], xs[3]}
    assert result.changed <= set(rvs.markov_blanket(zs[3])) | {zs[3]}
    # both values kept the control path: every run has the same addresses
    assert all(list(run) == rvs.addresses for run in result.runs)


@pytest.mark.parametrize("t", [0, 1, 5])
def test_hmm_conditional_at_every_position(t):
    z, x, zs, _, _, tape = _hmm_run(8)
    got = conditional(hmm, (np.random.default_rng(8),), zs[t])
    np.testing.assert_allclose(got.p, _hmm_formula(z, x, t), rtol=1e-12)
    # conditioning on a given tape (args only feed the re-runs) gives the same answer
    again = conditional(hmm, (np.random.default_rng(12345),), zs[t], tape=tape)
    np.testing.assert_allclose(again.p, got.p, rtol=1e-12)


# -- a gate that decides whether a choice exists ----------------------------------------------
def mixture(rng):
    g = Bernoulli(0.3).sample(rng)
    if g:
        mu = rng.normal(3.0, 1.0)
    else:
        mu = 0.0
    x = rng.normal(mu, 1.0)
    return g, mu, x


def _gate_formula(x, y):
    """P(g = 1 | x, y) with y's prior terms cancelling (see conditional's docstring)."""
    on, off = 0.3 * norm.pdf(x, y, 1.0), 0.7 * norm.pdf(x, 0.0, 1.0)
    return np.array([off, on]) / (on + off)


@pytest.mark.parametrize("seed, gate", [(2, 1), (3, 1), (0, 0), (1, 0)])
def test_gated_mixture_conditional_of_the_gate(seed, gate):
    (g, mu, x), tape = dcgraph.track(mixture, np.random.default_rng(seed), ctx=RandomContext())
    rvs = random_variables(tape)
    assert int(g) == gate
    g_addr, x_addr = rvs.addresses[0], rvs.addresses[-1]
    result = enumerate_conditional(mixture, (np.random.default_rng(seed),), g_addr)
    y_addr = next(a for a in result.runs[1] if a not in (g_addr, x_addr))
    assert set(result.runs[0]) == {g_addr, x_addr}           # g = 0: the second choice is gone
    assert set(result.runs[1]) == {g_addr, y_addr, x_addr}
    if gate:
        # present in the original run: a control edge from the gate, its value replayed
        assert rvs.parents(y_addr) == [g_addr] and rvs.parents(y_addr, "control") == [g_addr]
        assert result.runs[1][y_addr].value == rvs[y_addr].value
        y = mu
    else:
        # absent from the original run: drawn once from its prior in the run that has it
        assert y_addr not in rvs and not result.runs[1][y_addr].replayed
        y = result.runs[1][y_addr].value
    assert rvs.parents(x_addr, "data") == ([g_addr, y_addr] if gate else [g_addr])
    assert result.runs[0][x_addr].value == result.runs[1][x_addr].value == x
    np.testing.assert_allclose(result.probs, _gate_formula(x, y), rtol=1e-12)
    assert result.changed == {g_addr, y_addr, x_addr}


class GateNames(RandomContext):
    def on_PrimitiveCall(self, node):
        if node.fn_name == "sample":
            node.meta["address"] = "gate"


def test_a_name_given_by_a_context_hook_addresses_the_choice():
    (g, mu, x), _ = dcgraph.track(mixture, np.random.default_rng(3), ctx=RandomContext())
    got = conditional(mixture, (np.random.default_rng(3),), "gate", ctx=GateNames())
    np.testing.assert_allclose(got.p, _gate_formula(x, mu), rtol=1e-12)
    with pytest.raises(KeyError, match="'gate'"):
        conditional(mixture, (np.random.default_rng(3),), "gate")


# -- choices appearing with the forced value, stdlib random, value supports -----------------------
class Chain:
    def __init__(self, rng):
        self.rng = rng

    def step(self, prev):
        return self.rng.choice(
            2,
            p=[0.9, 0.1] if prev == 0 else [0.3, 0.7])


def varying(rng):
    chain = Chain(rng)
    zs = [chain.step(0)]
    zs.append(chain.step(zs[-1]))
    k = rng.integers(1, 4)
    xs = [rng.normal() for _ in range(k)]
    y = rng.normal(sum(xs), 1.0)
    return zs, k, xs, y


def test_a_count_that_adds_and_removes_choices():
    (zs, k, xs, y), tape = dcgraph.track(varying, np.random.default_rng(1), ctx=RandomContext())
    rvs = random_variables(tape)
    k_addr = next(a for a in rvs.addresses if a.endswith("integers"))
    result = enumerate_conditional(varying, (np.random.default_rng(1),), k_addr)
    assert result.support == [1, 2, 3]
    # every address has one value in all the runs that reach it
    values = {}
    for run in result.runs:
        for a, d in run.items():
            if a != k_addr:
                assert values.setdefault(a, d.value) == d.value
    # the draws of the comprehension's line (3.11 adds a <listcomp> level; 3.12+ inline it)
    x_line = f"/L{varying.__code__.co_firstlineno + 5}/normal"
    x_addrs = sorted((a for a in values if x_line in a), key=lambda a: (len(a), a))
    assert len(x_addrs) == 3
    x_values = [values[a] for a in x_addrs]
    w = np.array([norm.pdf(y, sum(x_values[:j]), 1.0) for j in (1, 2, 3)])
    np.testing.assert_allclose(result.probs, w / w.sum(), rtol=1e-12)
    got = conditional(varying, (np.random.default_rng(1),), k_addr)
    np.testing.assert_allclose(got.p, np.r_[0.0, w / w.sum()], rtol=1e-12)   # over the values


def test_a_method_called_across_lines_is_found_again():
    (zs, k, xs, y), tape = dcgraph.track(varying, np.random.default_rng(4), ctx=RandomContext())
    rvs = random_variables(tape)
    z0, z1 = rvs.addresses[:2]
    assert z0.endswith("/step/L" + str(Chain.step.__code__.co_firstlineno + 1) + "/choice")
    got = conditional(varying, (np.random.default_rng(4),), z0)
    trans = ((0.9, 0.1), (0.3, 0.7))
    w = np.array([trans[0][j] * trans[j][zs[1]] for j in (0, 1)])
    np.testing.assert_allclose(got.p, w / w.sum(), rtol=1e-12)


def dice():
    k = random.randint(1, 3)
    return random.gauss(1.5 * k, 1.0)


def test_stdlib_random_choice_with_a_shifted_support():
    random.seed(4)
    result = enumerate_conditional(dice, (), random_variables(
        dcgraph.track(dice, ctx=RandomContext())[1]).addresses[0])
    y = next(d.value for a, d in result.original.items() if a.endswith("gauss"))
    w = np.array([norm.pdf(y, 1.5 * j, 1.0) for j in (1, 2, 3)])
    np.testing.assert_allclose(result.probs, w / w.sum(), rtol=1e-12)
    assert result.distribution.p.shape == (4,) and result.distribution.p[0] == 0.0
    np.testing.assert_allclose(result.distribution.p[1:], w / w.sum(), rtol=1e-12)


def words(rng):
    w = random.choice(["lo", "hi"])
    return rng.normal(5.0 if w == "hi" else 0.0, 2.0)


def test_non_integer_supports_give_a_categorical_over_positions():
    random.seed(1)
    (x), tape = dcgraph.track(words, np.random.default_rng(0), ctx=RandomContext())
    rvs = random_variables(tape)
    result = enumerate_conditional(words, (np.random.default_rng(0),), rvs.addresses[0], tape=tape)
    assert result.support == ["lo", "hi"]
    w = np.array([norm.pdf(x, 0.0, 2.0), norm.pdf(x, 5.0, 2.0)])
    np.testing.assert_allclose(result.distribution.p, w / w.sum(), rtol=1e-12)
    assert result.prob("hi") == pytest.approx(w[1] / w.sum(), rel=1e-12)


# -- errors name the address ------------------------------------------------------------------
def several(rng):
    a = rng.normal()
    n = rng.poisson(2.0)
    v = rng.choice(2, size=3)
    k = rng.integers(0, 2)
    t = random.triangular(0.0, 1.0 + k)
    return a, n, v, t


def test_errors_name_the_address():
    _, tape = dcgraph.track(several, np.random.default_rng(0), ctx=RandomContext())
    a, n, v, k, t = random_variables(tape).addresses
    args = (np.random.default_rng(0),)
    with pytest.raises(KeyError, match="several/L1/nowhere"):
        conditional(several, args, "several/L1/nowhere")
    with pytest.raises(ValueError, match=f"{a} is not discrete"):
        conditional(several, args, a)
    with pytest.raises(ValueError, match=f"{n} has an infinite support"):
        conditional(several, args, n)
    with pytest.raises(ValueError, match=f"{v} is not a scalar"):
        conditional(several, args, v)
    with pytest.raises(ValueError, match=f"{t} has no known distribution"):
        conditional(several, args, t)
    with pytest.raises(ValueError, match=f"the choice at {t} has no known distribution and its "
                                         f"arguments change with {k}"):
        conditional(several, args, k)


def shuffled(rng):
    k = rng.integers(0, 2)
    items = [1, 2, 3]
    rng.shuffle(items)
    return rng.normal(items[0] + k, 1.0)


def test_in_place_random_calls_cannot_be_replayed():
    _, tape = dcgraph.track(shuffled, np.random.default_rng(0), ctx=RandomContext())
    k = random_variables(tape).addresses[0]
    with pytest.raises(RuntimeError, match="works in place"):
        conditional(shuffled, (np.random.default_rng(0),), k)


def test_unchanged_choices_without_a_distribution_cancel():
    def f(rng):
        k = rng.integers(0, 2)
        noise = random.triangular(0.0, 1.0)
        return rng.normal(k + noise, 1.0)

    random.seed(0)
    (y), tape = dcgraph.track(f, np.random.default_rng(0), ctx=RandomContext())
    rvs = random_variables(tape)
    noise = rvs[rvs.addresses[1]].value
    got = conditional(f, (np.random.default_rng(0),), rvs.addresses[0], tape=tape)
    w = np.array([norm.pdf(y, j + noise, 1.0) for j in (0, 1)])
    np.testing.assert_allclose(got.p, w / w.sum(), rtol=1e-12)
    assert math.isclose(got.p.sum(), 1.0)
