"""Recurse on Gen.jl's "simple pcfg" test (its rules made 0-based): generate weight, update of a
non-structure choice and of a structure choice (weights, scores, strings, discards)."""
import math

import numpy as np
import pytest

from dcgraph.gen import bernoulli, categorical, gen, generate, regenerate, select, simulate, update
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
