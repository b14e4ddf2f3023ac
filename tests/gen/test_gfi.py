"""The generative function interface against known answers (Gen.jl's tests, closed forms)."""
import math

import numpy as np
import pytest

from dcgraph.gen import (NoChange, UnknownChange, assess, bernoulli, choicemap, gen, generate,
                         project, propose, regenerate, select, simulate, update)

from gen_models import branchy, loopy, normal_normal, project_model, top

LOG2PI = math.log(2 * math.pi)


def lognormal(x, mu, sd):
    return -0.5 * LOG2PI - math.log(sd) - 0.5 * ((x - mu) / sd) ** 2


def test_normal_normal_generate_weight_is_likelihood():
    rng = np.random.default_rng(0)
    for _ in range(5):
        tr, w = generate(normal_normal, (), {"y": 2.0}, rng=rng)
        x = tr["x"]
        assert w == pytest.approx(lognormal(2.0, x, 1.0), abs=1e-12)
        assert tr.get_score() == pytest.approx(lognormal(x, 0, 1) + w, abs=1e-12)
        assert tr.get_retval() == 2.0


def test_normal_normal_update_weight_and_discard():
    tr, w = generate(normal_normal, (), {"x": 0.0, "y": 0.0})
    new, w, retdiff, discard = update(tr, (), (NoChange,), {"x": 1.0})
    assert w == -1.0
    assert discard == choicemap({"x": 0.0})
    assert new["x"] == 1.0 and new["y"] == 0.0 and tr["x"] == 0.0
    assert retdiff is UnknownChange


def test_loopy_update_known_answer():
    cm = choicemap({"a": 0.0, **{("data", i): 0.0 for i in range(1, 6)}})
    tr, _ = generate(loopy, (), cm)
    assert tr.get_score() == pytest.approx(-5.513631199228036, abs=1e-12)
    new, w, retdiff, discard = update(tr, (), (), choicemap({"a": 1.0}))
    assert new.get_score() == pytest.approx(-8.513631199228035, abs=1e-12)
    assert w == pytest.approx(-3.0, abs=1e-12)
    assert discard.to_dict() == {"a": 0.0}
    assert repr(retdiff) == "UnknownChange()"


def test_project_known_answer():
    tr = simulate(project_model, ())
    assert project(tr, select()) == 0.0
    assert project(tr, select("y")) == pytest.approx(lognormal(tr["y"], 0, 2), abs=1e-12)
    assert project(tr, select(("z", "x"), "y")) == pytest.approx(tr.get_score(), abs=1e-12)


def test_assess_and_propose():
    w, retval = assess(normal_normal, (), {"x": 0.5, "y": 2.0})
    assert w == pytest.approx(lognormal(0.5, 0, 1) + lognormal(2.0, 0.5, 1), abs=1e-12)
    assert retval == 2.0
    choices, w, retval = propose(normal_normal, (), rng=np.random.default_rng(1))
    assert w == pytest.approx(lognormal(choices["x"], 0, 1) + lognormal(choices["y"],
                                                                          choices["x"], 1))
    assert retval == choices["y"]


def test_generate_fully_constrained_weight_is_score():
    tr, w = generate(top, (0.3,), {"m": {"l": {"v": 0.1}, "r": {"v": 1.5}}, "obs": 2.0})
    expected = lognormal(0.1, 0.3, 1) + lognormal(1.5, 1.3, 1) + lognormal(2.0, 1.6, 1)
    assert w == pytest.approx(expected, abs=1e-12)
    assert tr.get_score() == pytest.approx(expected, abs=1e-12)
    assert tr[("m", "l", "v")] == 0.1
    assert tr.get_choices().get_submap(("m", "r")).to_dict() == {"v": 1.5}
    assert tr["m"] == pytest.approx(1.6)
    assert tr.get_choices().to_dict() == {"m": {"l": {"v": 0.1}, "r": {"v": 1.5}}, "obs": 2.0}


def test_update_through_three_levels():
    tr, _ = generate(top, (0.3,), {"m": {"l": {"v": 0.1}, "r": {"v": 1.5}}, "obs": 2.0})
    new, w, _, discard = update(tr, (0.3,), (NoChange,), {"m": {"l": {"v": 0.2}}})
    expected = (lognormal(0.2, 0.3, 1) - lognormal(0.1, 0.3, 1)
                + lognormal(2.0, 1.7, 1) - lognormal(2.0, 1.6, 1))
    assert w == pytest.approx(expected, abs=1e-12)
    assert discard.to_dict() == {"m": {"l": {"v": 0.1}}}
    assert new.get_score() == pytest.approx(tr.get_score() + expected, abs=1e-12)


def test_regenerate_branch_appears_and_disappears():
    p = 0.3
    tr, _ = generate(branchy, (p,), {"x": 1, "y": 0.7})
    assert tr.get_score() == pytest.approx(math.log(p) + lognormal(0.7, 0, 1))
    rng = np.random.default_rng(3)
    # flip x by update: y disappears (discarded), z appears (sampled, not in the weight)
    new, w, _, discard = update(tr, (p,), (NoChange,), {"x": 0}, rng=rng)
    assert "z" in new.get_choices() and "y" not in new.get_choices()
    assert w == pytest.approx(math.log(1 - p) - math.log(p) - lognormal(0.7, 0, 1), abs=1e-12)
    assert discard.to_dict() == {"x": 1, "y": 0.7}
    # regenerate x: the weight counts neither the resampled x, y (removed) nor z (new)
    for _ in range(20):
        new, w, _ = regenerate(tr, (p,), (NoChange,), select("x"), rng=rng)
        if new["x"] == 1:
            assert new["y"] == 0.7 and w == 0.0
        else:
            assert w == 0.0 and new.get_score() == pytest.approx(
                math.log(1 - p) + lognormal(new["z"], 1, 1))
    # regenerate y (unselected x is kept): the weight is 0; an argument change re-weights x
    new, w, _ = regenerate(tr, (p,), (NoChange,), select("y"), rng=rng)
    assert w == 0.0 and new["x"] == 1 and new["y"] != 0.7
    new, w, _ = regenerate(tr, (0.6,), (UnknownChange,), select("y"), rng=rng)
    assert w == pytest.approx(math.log(0.6) - math.log(p), abs=1e-12)
    assert project(tr, select("x")) == pytest.approx(math.log(p))
    assert project(tr, select("z")) == 0.0


def test_normal_normal_log_marginal_likelihood():
    """log p(y=2) = log N(2; 0, sqrt 2) = -2.2655121...: exactly from log p(x, y) - log p(x | y)
    at any x (posterior N(1, 1/2)), and by importance sampling with generate's weights."""
    exact = -2.265512123484645
    for x in (-1.0, 0.0, 0.7, 3.0):
        w, _ = assess(normal_normal, (), {"x": x, "y": 2.0})
        assert w - lognormal(x, 1.0, math.sqrt(0.5)) == pytest.approx(exact, abs=1e-12)
    rng = np.random.default_rng(11)
    ws = np.array([generate(normal_normal, (), {"y": 2.0}, rng=rng)[1] for _ in range(4000)])
    log_ml = np.logaddexp.reduce(ws) - math.log(len(ws))
    assert log_ml == pytest.approx(exact, abs=0.03)


def test_assess_and_propose_through_three_levels():
    choices = {"m": {"l": {"v": 0.1}, "r": {"v": 1.5}}, "obs": 2.0}
    w, retval = assess(top, (0.3,), choices)
    expected = lognormal(0.1, 0.3, 1) + lognormal(1.5, 1.3, 1) + lognormal(2.0, 1.6, 1)
    assert w == pytest.approx(expected, abs=1e-12) and retval == 2.0
    with pytest.raises(Exception, match=r"assess\(<gen leaf>\): the choice at address 'v'"):
        assess(top, (0.3,), {"m": {"l": {"v": 0.1}}, "obs": 2.0})
    choices, w, retval = propose(top, (0.3,), rng=np.random.default_rng(4))
    assert w == pytest.approx(assess(top, (0.3,), choices)[0], abs=1e-12)
    assert retval == choices["obs"]


@gen
def geometric_count(p):
    """A recursive generative function: failures before the first success."""
    if bernoulli(p) @ "stop":
        return 0
    return 1 + (geometric_count(p) @ "next")


def test_recursive_generative_function():
    cm = choicemap({"stop": 0, ("next", "stop"): 0, ("next", "next", "stop"): 1})
    tr, w = generate(geometric_count, (0.3,), cm)
    assert tr.get_retval() == 2
    assert w == pytest.approx(2 * math.log(0.7) + math.log(0.3), abs=1e-12)
    new, w, _, discard = update(tr, (0.3,), (NoChange,), choicemap({("next", "stop"): 1}))
    assert new.get_retval() == 1 and new.get_choices().to_dict() == {"stop": 0,
                                                                     "next": {"stop": 1}}
    assert w == pytest.approx(math.log(0.3) - math.log(0.7) - math.log(0.3), abs=1e-12)
    assert discard.to_dict() == {"next": {"stop": 0, "next": {"stop": 1}}}
    rng = np.random.default_rng(0)
    ws = [simulate(geometric_count, (0.5,), rng=rng).get_retval() for _ in range(2000)]
    assert np.mean(ws) == pytest.approx(1.0, abs=0.15)     # mean (1 - p) / p, sd sqrt(2)
