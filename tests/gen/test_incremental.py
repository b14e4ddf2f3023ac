"""Incremental update/regenerate from the tape against full re-execution, on every test model."""
import sys

import numpy as np
import pytest

from dcgraph.gen import NoChange, UnknownChange, choicemap, gen, normal, select, simulate
from dcgraph.gen.incremental import try_regenerate, try_update

from gen_models import branchy, foo, foo_store, hmm, loopy, normal_normal, project_model, top, walk


def same(a, b):
    """Full-run and incremental results: identical choices, values, scores, weights."""
    assert a[0].get_choices() == b[0].get_choices()
    assert a[0].get_score() == b[0].get_score()
    assert a[1] == b[1]
    r0, r1 = a[0].get_retval(), b[0].get_retval()
    assert r0 == r1 or (r0 != r0 and r1 != r1)
    if len(a) == 4:
        assert a[3] == b[3]


def check_update(tr, args, argdiffs, constraints, expect_incremental=True):
    gf = tr.get_gen_fn()
    inc = try_update(tr, args, argdiffs, constraints)
    full = gf.full_update(tr, args, constraints)
    if expect_incremental:
        assert inc is not None, "the incremental path gave up"
        same(inc, full)
        assert inc[0].values or not constraints.items()
    else:
        assert inc is None
    return inc or full


def check_regenerate(tr, args, argdiffs, selection, expect_incremental=True, seed=0):
    gf = tr.get_gen_fn()
    inc = try_regenerate(tr, args, argdiffs, selection, np.random.default_rng(seed))
    full = gf.full_regenerate(tr, args, selection, np.random.default_rng(seed))
    if expect_incremental:
        assert inc is not None, "the incremental path gave up"
        same(inc, full)
    else:
        assert inc is None
    return inc or full


def test_update_small_models():
    rng = np.random.default_rng(1)
    tr = simulate(normal_normal, (), rng=rng)
    check_update(tr, (), (), choicemap({"x": 0.25}))
    check_update(tr, (), (), choicemap({"x": 0.25, "y": -1.0}))
    tr = simulate(loopy, (), rng=rng)
    nxt = check_update(tr, (), (), choicemap({"a": 1.0}))
    check_update(nxt[0], (), (), choicemap({("data", 3): 2.0, "a": -1.0}))
    tr = simulate(project_model, (), rng=rng)
    check_update(tr, (), (), choicemap({("z", "x"): 0.5}))


def test_update_sub_calls_three_levels():
    tr = simulate(top, (0.3,), rng=np.random.default_rng(2))
    check_update(tr, (0.3,), (NoChange,), choicemap({"m": {"l": {"v": 0.2}}}))
    check_update(tr, (0.9,), (UnknownChange,), choicemap({"obs": 1.0}))
    tr = simulate(foo, (1.0,), rng=np.random.default_rng(3), store=foo_store())
    check_update(tr, (1.0,), (NoChange,), choicemap({"a": 0.5}))
    check_update(tr, (2.0,), (UnknownChange,), choicemap({"bar": {"z": 0.1}}))


def test_update_hmm_loop():
    tr = simulate(hmm, (30,), rng=np.random.default_rng(4))
    for t in (0, 7, 29):
        tr = check_update(tr, (30,), (NoChange,), choicemap({("z", t): 1 - tr[("z", t)]}))[0]
    check_update(tr, (30,), (NoChange,), choicemap({("x", 5): 0.0}))
    # a different number of steps changes the loop exit: the function runs again
    check_update(tr, (31,), (UnknownChange,), choicemap(), expect_incremental=False)


def test_update_branches_and_helpers():
    rng = np.random.default_rng(5)
    tr = simulate(walk, (6, 0.1), rng=rng)
    xs = {t: tr[("x", t)] for t in range(1, 6)}
    # moving x2 slightly keeps every branch: incremental; flipping its sign: full re-run
    t = 2
    check_update(tr, (6, 0.1), (NoChange, NoChange), choicemap({("x", t): xs[t] * 1.01}))
    check_update(tr, (6, 0.1), (NoChange, NoChange), choicemap({("x", t): -xs[t]}),
                 expect_incremental=False)
    tr = simulate(branchy, (0.4,), rng=rng)
    key = "y" if tr["x"] else "z"
    check_update(tr, (0.4,), (NoChange,), choicemap({key: 0.3}))
    check_update(tr, (0.4,), (NoChange,), choicemap({"x": 1 - tr["x"]}), expect_incremental=False)
    check_update(tr, (0.7,), (UnknownChange,), choicemap())


def test_update_unvisited_constraint_falls_back():
    tr = simulate(normal_normal, (), rng=np.random.default_rng(6))
    assert try_update(tr, (), (), choicemap({"nope": 1.0})) is None


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_regenerate_matches_full_run(seed):
    tr = simulate(hmm, (25,), rng=np.random.default_rng(seed))
    tr = check_regenerate(tr, (25,), (NoChange,), select(("z", 3), ("z", 11)), seed=seed)[0]
    check_regenerate(tr, (25,), (NoChange,), select(("x", 4)), seed=seed)
    tr = simulate(top, (0.1,), rng=np.random.default_rng(seed))
    check_regenerate(tr, (0.1,), (NoChange,), select(("m", "r")), seed=seed)
    check_regenerate(tr, (0.5,), (UnknownChange,), select("obs"), seed=seed)
    tr = simulate(loopy, (), rng=np.random.default_rng(seed))
    check_regenerate(tr, (), (), select("data"), seed=seed)
    check_regenerate(tr, (), (), select("a"), seed=seed)


def test_chain_of_incremental_updates_then_gradients():
    from dcgraph.gen import choice_gradients
    tr = simulate(loopy, (), rng=np.random.default_rng(7))
    for a in (0.1, 0.2, 0.3):
        tr = try_update(tr, (), (), choicemap({"a": a}))[0]
    assert tr.values
    tr.tape.lint()          # re-run with the trace's own choices
    _, vals, grads = choice_gradients(tr, select("a"))
    expected = -0.3 + sum(tr[("data", i)] - 0.3 for i in range(1, 6))
    assert vals["a"] == 0.3
    assert grads["a"] == pytest.approx(expected, abs=1e-12)
    tr.tape.lint()


def perturbed(value):
    if isinstance(value, (bool, np.bool_)):
        return not value
    if isinstance(value, (int, np.integer)):
        return 1 - value if value in (0, 1) else value + 1
    return value * 0.9 + 0.05


EVERY_MODEL = [
    (normal_normal, ()), (loopy, ()), (project_model, ()), (branchy, (0.4,)), (top, (0.2,)),
    (hmm, (12,)), (walk, (5, 0.2)), (foo, (1.0,)),
]


@pytest.mark.parametrize("gf, args", EVERY_MODEL, ids=lambda v: getattr(v, "__name__", ""))
def test_every_model_every_choice_incremental_equals_full(gf, args):
    """Each choice of each model changed alone (update) and drawn again (regenerate): when the
    incremental path does not give up, it gives exactly what running the function again gives."""
    store = foo_store()
    used = 0
    for seed in range(3):
        tr = simulate(gf, args, rng=np.random.default_rng(seed), store=store)
        for addr, value in tr.get_choices().items():
            cm = choicemap()
            cm.set_value(addr, perturbed(value))
            inc = try_update(tr, args, (NoChange,) * len(args), cm)
            if inc is not None:
                used += 1
                same(inc, gf.full_update(tr, args, cm))
            inc = try_regenerate(tr, args, (NoChange,) * len(args), select(addr),
                                 np.random.default_rng(seed))
            if inc is not None:
                used += 1
                same(inc, gf.full_regenerate(tr, args, select(addr), np.random.default_rng(seed)))
    assert used > 0


def test_policy_skips_fresh_tapes_of_functions_whose_passes_give_up():
    from dcgraph.gen import gen, normal, update

    @gen
    def flips(p):
        x = normal(0.0, 1.0) @ "x"
        if x > 0:
            return normal(1.0, 1.0) @ "a"
        return normal(-1.0, 1.0) @ "b"

    rng = np.random.default_rng(8)
    for _ in range(12):
        tr = simulate(flips, (0.5,), rng=rng)
        new, w, _, _ = update(tr, (0.5,), (NoChange,), choicemap({"x": -tr["x"]}), rng=rng)
        assert ("a" in new.get_choices()) != ("a" in tr.get_choices())
    assert flips.stats["gave_up"] >= 4 and flips.stats["incremental"] == 0
    assert flips.stats["skipped"] == 12 - flips.stats["gave_up"]
    assert flips.stats["last_reason"] == "branch flips"


def noisy(mu, t):
    """A traced helper (not a generative function) that makes a choice of the caller."""
    return normal(mu, 1.0) @ ("h", t)


@gen
def helpers_and_comprehension(mu):
    hs = [noisy(mu, t) for t in range(3)]
    total = normal(sum(hs), 1.0) @ "total"
    return total + hs[0]


def test_choices_inside_helpers_and_comprehensions():
    from dcgraph.gen import choice_gradients, generate
    cm = choicemap({("h", 0): 0.1, ("h", 1): 0.2, ("h", 2): 0.3, "total": 1.0})
    tr, w = generate(helpers_and_comprehension, (0.5,), cm)
    assert tr.get_choices() == cm
    tr.tape.lint()
    _, _, grads = choice_gradients(tr, select(("h", 1), "total"), 1.0)
    # d/dh1 [logN(h1; mu, 1) + logN(total; sum h, 1)] = -(h1 - mu) + (total - sum h)
    assert grads[("h", 1)] == pytest.approx(-(0.2 - 0.5) + (1.0 - 0.6), abs=1e-12)
    assert grads["total"] == pytest.approx(-(1.0 - 0.6) + 1.0, abs=1e-12)
    # the list the comprehension built is mutated (appended to): the pass gives up, and the
    # full run gives the answer; the total's own value is a leaf of the slice: incremental
    assert try_update(tr, (0.5,), (NoChange,), choicemap({("h", 1): 0.0})) is None
    check_update(tr, (0.5,), (NoChange,), choicemap({"total": 0.0}))
    # 3.11 runs the comprehension as a closure (the pass gives up); 3.12+ inline it (PEP 709)
    check_update(tr, (0.7,), (UnknownChange,), choicemap(),
                 expect_incremental=sys.version_info >= (3, 12))


def test_regenerate_with_complement_and_all_selections():
    from dcgraph.gen import all_selection, complement
    tr = simulate(top, (0.2,), rng=np.random.default_rng(9))
    check_regenerate(tr, (0.2,), (NoChange,), complement(select(("m", "l"), "obs")), seed=3)
    check_regenerate(tr, (0.2,), (NoChange,), all_selection, seed=4)
    tr = simulate(hmm, (10,), rng=np.random.default_rng(9))
    check_regenerate(tr, (10,), (NoChange,), complement(select("x")), seed=5)
