"""Gen's inference library: importance sampling, MH (selection, custom proposal, involutive with
a dcgraph Jacobian), HMC, MALA, MAP, elliptical slice; known answers and closed forms, chains
checked within 4 Monte Carlo standard errors (batch means)."""
import math

import numpy as np
import pytest
from scipy import stats

from dcgraph.gen import (UnknownChange, bernoulli, choicemap, gen, generate, normal, select,
                         update)
from dcgraph.gen.inference import (elliptical_slice, hmc, importance_resampling,
                                   importance_sampling, involutive_log_acceptance,
                                   log_abs_det_jacobian, mala, map_optimize, mh)

EXACT_LOG_PY = -2.265512123484645          # gen-known-answers: importance_sampling_exact_target


@gen
def normal_normal():
    x = normal(0.0, 1.0) @ "x"
    return normal(x, 1.0) @ "y"


@gen
def exact_posterior():
    return normal(1.0, math.sqrt(0.5)) @ "x"


@gen
def random_walk(trace, width):
    return normal(trace["x"], width) @ "x"


def mcse(xs, batches=20) -> float:
    """Monte Carlo standard error of the mean by batch means."""
    xs = np.asarray(xs, dtype=float)
    m = len(xs) // batches
    means = xs[:m * batches].reshape(batches, m).mean(axis=1)
    return float(means.std(ddof=1) / math.sqrt(batches))


def test_importance_sampling_log_ml_known_answer():
    traces, lw, lml = importance_sampling(normal_normal, (), {"y": 2.0}, 20_000,
                                          rng=np.random.default_rng(1))
    assert abs(lml - EXACT_LOG_PY) < 0.02
    assert len(traces) == 20_000 and abs(np.logaddexp.reduce(lw)) < 1e-9
    xs = np.array([t["x"] for t in traces])
    assert float(np.exp(lw) @ xs) == pytest.approx(1.0, abs=0.05)     # posterior mean


def test_importance_sampling_with_exact_posterior_proposal_has_constant_weights():
    _, lw, lml = importance_sampling(normal_normal, (), {"y": 2.0}, 50, exact_posterior, (),
                                     rng=np.random.default_rng(0))
    assert lml == pytest.approx(EXACT_LOG_PY, abs=1e-12)
    np.testing.assert_allclose(lw, -math.log(50), atol=1e-12)
    trace, lml = importance_resampling(normal_normal, (), {"y": 2.0}, 20, exact_posterior, (),
                                       rng=np.random.default_rng(0))
    assert trace["y"] == 2.0 and lml == pytest.approx(EXACT_LOG_PY, abs=1e-12)


def test_importance_batches_on_process_executor_equal_in_process_batches():
    import concurrent.futures as cf
    import multiprocessing as mp
    kw = dict(batches=3)
    _, lw0, lml0 = importance_sampling(normal_normal, (), {"y": 2.0}, 30,
                                       rng=np.random.default_rng(5), **kw)
    with cf.ProcessPoolExecutor(2, mp_context=mp.get_context("fork")) as ex:
        traces, lw1, lml1 = importance_sampling(normal_normal, (), {"y": 2.0}, 30,
                                                rng=np.random.default_rng(5), executor=ex, **kw)
    np.testing.assert_array_equal(lw0, lw1)
    assert lml0 == lml1 and traces[0].get_gen_fn() is normal_normal
    _, lw2, _ = importance_sampling(normal_normal, (), {"y": 2.0}, 30, executor="processes",
                                    rng=np.random.default_rng(5), **kw)
    np.testing.assert_array_equal(lw0, lw2)
    with pytest.raises(TypeError, match="'threads'"):
        importance_sampling(normal_normal, (), {"y": 2.0}, 4, executor="threads")


def _chain(step, trace, n, burn=200):
    xs = []
    for i in range(n + burn):
        trace = step(trace)
        if i >= burn:
            xs.append(trace["x"])
    return np.array(xs)


@pytest.mark.parametrize("kind", ["selection", "proposal"])
def test_mh_on_conjugate_model_matches_closed_form(kind):
    rng = np.random.default_rng(11)
    tr, _ = generate(normal_normal, (), {"y": 2.0, "x": 0.0}, rng=rng)
    if kind == "selection":
        step = lambda t: mh(t, select("x"), rng=rng)[0]            # noqa: E731
    else:
        step = lambda t: mh(t, random_walk, (1.0,), rng=rng)[0]    # noqa: E731
    xs = _chain(step, tr, 4000)
    assert abs(xs.mean() - 1.0) < 4 * mcse(xs)
    sq = (xs - 1.0) ** 2
    assert abs(sq.mean() - 0.5) < 4 * mcse(sq)


@gen
def flip_model():
    if bernoulli(0.5) @ "x":
        normal(0.0, 1.0) @ "y"
    else:
        normal(1.0, 1.0) @ "z"


@gen
def no_choices(trace):
    return None


def flip_involution(trace, fwd_choices, fwd_ret, args):
    if trace["x"]:
        cons = choicemap({"x": False, "z": trace["y"]})
    else:
        cons = choicemap({"x": True, "y": trace["z"]})
    new, w, _, _ = update(trace, (), (), cons)
    return new, choicemap(), w


def test_involutive_mcmc_known_answer():
    tr, _ = generate(flip_model, (), {"x": True, "y": 0.5})
    new, log_alpha = involutive_log_acceptance(tr, no_choices, (), flip_involution)
    assert log_alpha == pytest.approx(0.0, abs=1e-12)
    assert new.get_choices().to_dict() == {"x": False, "z": 0.5}
    tr2, _ = generate(flip_model, (), {"x": True, "y": 0.2})
    _, log_alpha = involutive_log_acceptance(tr2, no_choices, (), flip_involution)
    assert log_alpha == pytest.approx(stats.norm.logpdf(0.2, 1) - stats.norm.logpdf(0.2, 0))


# -- split/merge: one mean, or two whose average is the mean; Jacobian 2 -----------------
Y = [0.9, 1.4, 0.3, 1.1]


@gen
def split_merge_model():
    if bernoulli(0.5) @ "two":
        m1 = normal(0.0, 1.0) @ "m1"
        m2 = normal(0.0, 1.0) @ "m2"
        mean = 0.5 * (m1 + m2)
    else:
        mean = normal(0.0, 1.0) @ "m"
    for i, _ in enumerate(Y):
        normal(mean, 1.0) @ ("y", i)


@gen
def split_proposal(trace):
    if not trace["two"]:
        normal(0.0, 1.0) @ "u"


def _split(v):
    return np.array([v[0] + v[1], v[0] - v[1]])


def _merge(v):
    return np.array([0.5 * (v[0] + v[1]), 0.5 * (v[0] - v[1])])


def split_merge(trace, fwd, fwd_ret, args):
    if not trace["two"]:
        v = np.array([trace["m"], fwd["u"]])
        m1, m2 = _split(v)
        new, w, _, _ = update(trace, (), (), choicemap({"two": True, "m1": m1, "m2": m2}))
        return new, choicemap(), w + log_abs_det_jacobian(_split, v)
    v = np.array([trace["m1"], trace["m2"]])
    m, u = _merge(v)
    new, w, _, _ = update(trace, (), (), choicemap({"two": False, "m": m}))
    return new, choicemap({"u": u}), w + log_abs_det_jacobian(_merge, v)


def exact_p_two() -> float:
    n = len(Y)
    log_ml = {v: stats.multivariate_normal(np.zeros(n), np.eye(n) + v).logpdf(Y)
              for v in (1.0, 0.5)}                   # prior variance of the mean: 1 or 1/2
    return 1.0 / (1.0 + math.exp(log_ml[1.0] - log_ml[0.5]))


def test_split_merge_recovers_model_posterior():
    assert log_abs_det_jacobian(_split, [0.3, -0.2]) == pytest.approx(math.log(2.0))
    rng = np.random.default_rng(3)
    tr, _ = generate(split_merge_model, (), {("y", i): y for i, y in enumerate(Y)} |
                     {"two": False}, rng=rng)
    ks = []
    for it in range(3000):
        tr, _ = mh(tr, split_proposal, (), split_merge, rng=rng)
        tr, _ = mh(tr, select("m", "m1", "m2"), rng=rng)
        if it >= 200:
            ks.append(float(tr["two"]))
    ks = np.array(ks)
    assert 0.1 < ks.mean() < 0.9
    assert abs(ks.mean() - exact_p_two()) < 4 * mcse(ks)


@gen
def gaussian_target():
    normal(1.0, 2.0) @ "a"
    normal(-1.0, 0.5) @ "b"


@pytest.mark.parametrize("move", ["hmc", "mala"])
def test_gradient_moves_on_gaussian_target(move):
    rng = np.random.default_rng(4)
    tr, _ = generate(gaussian_target, (), {"a": 0.0, "b": 0.0}, rng=rng)
    sel = select("a", "b")
    draws = []
    for it in range(1500):
        if move == "hmc":
            tr, _ = hmc(tr, sel, L=4, eps=0.3, rng=rng)
        else:
            tr, _ = mala(tr, sel, 0.1, rng=rng)
        if it >= 200:
            draws.append((tr["a"], tr["b"]))
    d = np.array(draws)
    for j, (mu, sd) in enumerate([(1.0, 2.0), (-1.0, 0.5)]):
        assert abs(d[:, j].mean() - mu) < 4 * mcse(d[:, j])
        sq = (d[:, j] - mu) ** 2
        assert abs(sq.mean() - sd ** 2) < 4 * mcse(sq)


def test_map_optimize_reaches_posterior_mode():
    tr, _ = generate(normal_normal, (), {"y": 2.0, "x": -3.0})
    for _ in range(60):
        tr = map_optimize(tr, select("x"), max_step_size=1.0)
    assert tr["x"] == pytest.approx(1.0, abs=1e-6)


def test_elliptical_slice_matches_conjugate_posterior():
    rng = np.random.default_rng(8)
    tr, _ = generate(normal_normal, (), {"y": 2.0, "x": 0.0}, rng=rng)
    xs = _chain(lambda t: elliptical_slice(t, "x", 0.0, 1.0, rng=rng), tr, 3000, burn=100)
    assert abs(xs.mean() - 1.0) < 4 * mcse(xs)
    sq = (xs - 1.0) ** 2
    assert abs(sq.mean() - 0.5) < 4 * mcse(sq)


def test_update_with_unknown_change_keeps_choices():
    tr, _ = generate(normal_normal, (), {"y": 2.0, "x": 0.5})
    new, w, _, _ = update(tr, (), (UnknownChange,) * 0, {})
    assert new["x"] == 0.5 and w == 0.0


def test_importance_batches_on_a_dask_cluster():
    distributed = pytest.importorskip("dask.distributed")
    _, lw0, lml0 = importance_sampling(normal_normal, (), {"y": 2.0}, 12, batches=2,
                                       rng=np.random.default_rng(9))
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2,
                            dashboard_address=None) as client:
        _, lw1, lml1 = importance_sampling(normal_normal, (), {"y": 2.0}, 12, batches=2,
                                           executor=client.get_executor(),
                                           rng=np.random.default_rng(9))
    np.testing.assert_array_equal(lw0, lw1)
    assert lml0 == lml1


def mh_x(trace, rng):
    return mh(trace, select("x"), rng=rng)[0]


def test_chains_on_a_process_executor_equal_serial_chains():
    import concurrent.futures as cf
    import multiprocessing as mp

    from dcgraph.gen.inference import run_chains
    serial = run_chains(normal_normal, (), {"y": 2.0}, mh_x, 3, 50,
                        rng=np.random.default_rng(2))
    with cf.ProcessPoolExecutor(2, mp_context=mp.get_context("fork")) as ex:
        par = run_chains(normal_normal, (), {"y": 2.0}, mh_x, 3, 50, executor=ex,
                         rng=np.random.default_rng(2))
    assert serial == par and len(par) == 3 and len(par[0]) == 50
    assert all(d["y"] == 2.0 for chain in par for d in chain)
    assert serial[0] != serial[1]


def test_vectorized_importance_sampling_equals_the_scalar_path():
    from dcgraph.gen import GenError
    from dcgraph.gen.inference import importance_sampling_vectorized
    choices, lw, lml = importance_sampling_vectorized(normal_normal, (), {"y": 2.0}, 20_000,
                                                      rng=np.random.default_rng(1))
    _, lw_s, lml_s = importance_sampling(normal_normal, (), {"y": 2.0}, 20_000,
                                         rng=np.random.default_rng(1))
    assert abs(lml - EXACT_LOG_PY) < 0.02
    assert lml == pytest.approx(lml_s, abs=1e-9)          # same draws from the same stream
    np.testing.assert_allclose(lw, lw_s, atol=1e-9)
    assert choices["x"].shape == (20_000,)

    @gen
    def branchy():
        if normal(0.0, 1.0) @ "x" > 0:
            normal(1.0, 1.0) @ "y"

    with pytest.raises(GenError, match="control flow may depend on its random choices"):
        importance_sampling_vectorized(branchy, (), {}, 10)
