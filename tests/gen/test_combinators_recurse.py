"""Recurse on Gen.jl's "simple pcfg" test (its rules made 0-based): generate weight, update of a
non-structure choice and of a structure choice (weights, scores, strings, discards). Gradients
(choices, arguments, parameters) of small trees with continuous choices against central
differences of ``assess``."""
import math

import numpy as np
import pytest

from dcgraph.gen import (ParameterStore, accumulate_param_gradients, all_selection, assess,
                         bernoulli, categorical, choice_gradients, gen, generate, normal, param,
                         regenerate, select, simulate, update)
from dcgraph.gen.combinators import Production, Recurse

L = math.log


@gen
def pcfg_production(_):
    rule = categorical([0.24, 0.26, 0.23, 0.27]) @ "rule"
    return Production(rule, [None] if rule in (0, 1) else [])


@gen
def pcfg_aggregation(rule, child_outputs):
    prefix = "." if bernoulli(0.4) @ "prefix" else "-"
    if rule == 0:
        return f"({prefix}a{child_outputs[0]}a)"
    if rule == 1:
        return f"({prefix}b{child_outputs[0]}b)"
    return f"({prefix}aa)" if rule == 2 else f"({prefix}bb)"


PCFG = Recurse(pcfg_production, pcfg_aggregation, 1)
CONS = {(1, "production", "rule"): 1, (1, "aggregation", "prefix"): True,
        (2, "production", "rule"): 0, (2, "aggregation", "prefix"): True,
        (3, "production", "rule"): 1, (3, "aggregation", "prefix"): True,
        (4, "production", "rule"): 3, (4, "aggregation", "prefix"): False}


def test_pcfg_generate_known_answer():
    tr, w = generate(PCFG, (None, 1), CONS)
    assert w == pytest.approx(L(.26) + L(.24) + L(.26) + L(.27) + 3 * L(.4) + L(.6))
    assert tr.get_score() == pytest.approx(w)
    assert tr.get_retval() == "(.b(.a(.b(-bb)b)a)b)"
    assert tr.get_choices()[(4, "production", "rule")] == 3


def test_pcfg_update_non_structure_choice():
    tr, _ = generate(PCFG, (None, 1), CONS)
    new, w, _, discard = update(tr, {(3, "aggregation", "prefix"): False})
    assert w == pytest.approx(L(.6) - L(.4))
    assert new.get_score() == pytest.approx(L(.26) + L(.24) + L(.26) + L(.27) + 2 * L(.4)
                                            + 2 * L(.6))
    assert new.get_retval() == "(.b(.a(-b(-bb)b)a)b)"
    assert discard.to_dict() == {3: {"aggregation": {"prefix": True}}}


def test_pcfg_update_structure_choice():
    tr, _ = generate(PCFG, (None, 1), CONS)
    new, w, _, discard = update(tr, {(3, "production", "rule"): 2})
    assert w == pytest.approx(L(.23) - L(.26) - L(.27) - L(.6))
    assert new.get_score() == pytest.approx(L(.26) + L(.24) + L(.23) + 3 * L(.4))
    assert new.get_retval() == "(.b(.a(.aa)a)b)"
    assert new.get_choices()[(3, "aggregation", "prefix")] is True
    assert discard.to_dict() == {3: {"production": {"rule": 1}},
                                 4: {"production": {"rule": 3},
                                     "aggregation": {"prefix": False}}}


def test_pcfg_simulate_string_probabilities_and_regenerate():
    rng = np.random.default_rng(0)
    strings = [simulate(PCFG, (None, 1), rng=rng).get_retval() for _ in range(3000)]
    p = 0.23 * 0.4                                   # gen-known-answers pcfg_recurse: "(.aa)"
    assert L(p) == pytest.approx(-2.385966701933097, abs=1e-12)
    frac = np.mean([s == "(.aa)" for s in strings])
    assert abs(frac - p) < 4 * math.sqrt(p * (1 - p) / 3000)
    tr, _ = generate(PCFG, (None, 1), CONS)
    new, w, _ = regenerate(tr, select((4, "aggregation")))
    assert w == 0.0
    leaf = "." if new.get_choices()[(4, "aggregation", "prefix")] else "-"
    assert new.get_retval() == f"(.b(.a(.b({leaf}bb)b)a)b)"
    assert new.get_score() == pytest.approx(
        tr.get_score() - tr.aggregation[4].get_score() + new.aggregation[4].get_score())


# --- gradients: a binary tree with continuous choices, checked against central differences ---

@gen
def branch_production(x):
    v = normal(x, 1.0) @ "v"
    return Production(0.5 * v, [v + 1.0, 2.0 * v] if x < 1.0 else [])


@gen
def branch_aggregation(value, child_outputs):
    y = normal(value + sum(child_outputs), 0.7) @ "y"
    return y * value


BRANCH = Recurse(branch_production, branch_aggregation, 2)
# node 1 (x=0.3) -> nodes 2 (x=1.4, leaf) and 3 (x=0.8) -> nodes 6 (x=1.6) and 7 (x=1.2)
BRANCH_CHOICES = {(1, "production", "v"): 0.4, (2, "production", "v"): 1.1,
                  (3, "production", "v"): 0.6, (6, "production", "v"): 1.3,
                  (7, "production", "v"): -0.2, (1, "aggregation", "y"): 2.5,
                  (2, "aggregation", "y"): 0.9, (3, "aggregation", "y"): 1.7,
                  (6, "aggregation", "y"): 0.3, (7, "aggregation", "y"): -0.4}
RETGRAD, H = 1.3, 1e-6


def objective(x0, choices, gen_fn=BRANCH, store=None):
    """Gen's differentiated quantity: score + retval * retgrad."""
    w, retval = assess(gen_fn, (x0, 1), choices, store=store)
    return w + RETGRAD * retval


def central(f, x):
    return (f(x + H) - f(x - H)) / (2 * H)


def test_branch_tree_shape():
    tr, w = generate(BRANCH, (0.3, 1), BRANCH_CHOICES)
    assert sorted(tr.production) == [1, 2, 3, 6, 7]
    assert {a: tr.get_choices()[a] for a in BRANCH_CHOICES} == BRANCH_CHOICES
    assert tr.get_retval() == pytest.approx(2.5 * 0.5 * 0.4)      # y_1 * value_1
    assert w == pytest.approx(tr.get_score())
    assert objective(0.3, BRANCH_CHOICES) == pytest.approx(w + RETGRAD * tr.get_retval())


def test_recurse_choice_gradients_match_central_differences():
    tr, _ = generate(BRANCH, (0.3, 1), BRANCH_CHOICES)
    (g_x, g_idx), values, grads = choice_gradients(tr, all_selection, RETGRAD)
    assert g_idx is None
    for addr, value in BRANCH_CHOICES.items():
        assert values[addr] == value
        fd = central(lambda c: objective(0.3, {**BRANCH_CHOICES, addr: c}), value)
        assert grads[addr] == pytest.approx(fd, rel=1e-6, abs=1e-6), addr
    assert g_x == pytest.approx(central(lambda x: objective(x, BRANCH_CHOICES), 0.3), rel=1e-6)


def test_recurse_choice_gradients_selection_and_no_retgrad():
    tr, _ = generate(BRANCH, (0.3, 1), BRANCH_CHOICES)
    sel = select((3, "production", "v"), (7, "aggregation"))
    (g_x, _), values, grads = choice_gradients(tr, sel, None)
    assert values.to_dict() == {3: {"production": {"v": 0.6}}, 7: {"aggregation": {"y": -0.4}}}

    def score(x0, choices):
        return assess(BRANCH, (x0, 1), choices)[0]

    for addr in ((3, "production", "v"), (7, "aggregation", "y")):
        fd = central(lambda c: score(0.3, {**BRANCH_CHOICES, addr: c}), BRANCH_CHOICES[addr])
        assert grads[addr] == pytest.approx(fd, rel=1e-6, abs=1e-6)
    assert g_x == pytest.approx(central(lambda x: score(x, BRANCH_CHOICES), 0.3), rel=1e-6)


def test_production_adjoint_reaches_the_production_kernel():
    """A production kernel's retgrad is Production(d value, [d child args])."""
    tr, _ = generate(branch_production, (0.3,), {"v": 0.4})
    (g_x,), values, grads = choice_gradients(tr, select("v"), Production(2.0, [3.0, -1.0]))

    def f(v, x=0.3):
        w, prod = assess(branch_production, (x,), {"v": v})
        return w + 2.0 * prod.value + 3.0 * prod.children[0] - 1.0 * prod.children[1]

    assert grads["v"] == pytest.approx(central(f, 0.4), rel=1e-6)
    assert g_x == pytest.approx(central(lambda x: f(0.4, x), 0.3), rel=1e-6)


@gen
def scaled_production(x):
    v = normal(x * param("a"), 1.0) @ "v"
    return Production(v, [v + 1.0] if x < 1.0 else [])


@gen
def scaled_aggregation(value, child_outputs):
    y = normal(param("b") * value + sum(child_outputs), 0.5) @ "y"
    return y


SCALED = Recurse(scaled_production, scaled_aggregation, 1)
SCALED_CHOICES = {(1, "production", "v"): 0.5, (2, "production", "v"): 1.2,
                  (1, "aggregation", "y"): 1.9, (2, "aggregation", "y"): 0.8}


def scaled_store(a, b):
    store = ParameterStore()
    store.init_param(scaled_production, "a", a)
    store.init_param(scaled_aggregation, "b", b)
    return store


def test_recurse_accumulate_param_gradients_match_central_differences():
    store = scaled_store(0.7, 1.5)
    tr, _ = generate(SCALED, (0.4, 1), SCALED_CHOICES, store=store)
    assert sorted(tr.production) == [1, 2]
    arg_grads = accumulate_param_gradients(tr, RETGRAD, 2.0)
    fd_a = central(lambda a: objective(0.4, SCALED_CHOICES, SCALED, scaled_store(a, 1.5)), 0.7)
    fd_b = central(lambda b: objective(0.4, SCALED_CHOICES, SCALED, scaled_store(0.7, b)), 1.5)
    assert store.get_param_grad(scaled_production, "a") == pytest.approx(2.0 * fd_a, rel=1e-6)
    assert store.get_param_grad(scaled_aggregation, "b") == pytest.approx(2.0 * fd_b, rel=1e-6)
    fd_x = central(lambda x: objective(x, SCALED_CHOICES, SCALED, store), 0.4)
    assert arg_grads[0] == pytest.approx(fd_x, rel=1e-6)        # unscaled, as in Gen
    assert arg_grads[1] is None
    assert choice_gradients(tr, None, RETGRAD)[0][0] == pytest.approx(arg_grads[0])


@gen
def calls_recurse(x0):
    out = BRANCH(x0, 1) @ "tree"
    normal(out, 1.0) @ "obs"
    return out


def test_recurse_gradients_through_a_call_site():
    choices = {("tree", *k): v for k, v in BRANCH_CHOICES.items()}
    choices["obs"] = 0.2
    tr, _ = generate(calls_recurse, (0.3,), choices)
    (g_x,), values, grads = choice_gradients(tr, select(("tree", 3, "production", "v")), None)

    def score(x0, cm):
        return assess(calls_recurse, (x0,), cm)[0]

    addr = ("tree", 3, "production", "v")
    assert grads[addr] == pytest.approx(
        central(lambda c: score(0.3, {**choices, addr: c}), 0.6), rel=1e-6)
    assert g_x == pytest.approx(central(lambda x: score(x, choices), 0.3), rel=1e-6)
