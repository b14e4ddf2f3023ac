"""Particle filtering: Gen.jl's HMM log ML known answer, a 3-state HMM against the forward
algorithm (log ML within 3 standard errors, filtering marginals), resampling schemes."""
import math

import numpy as np
import pytest

from dcgraph.gen import UnknownChange, categorical, gen, select
from dcgraph.gen.combinators import Unfold
from dcgraph.gen.inference import (effective_sample_size, initialize_particle_filter,
                                   log_ml_estimate, maybe_resample, mh, particle_filter_step,
                                   rejuvenate, resample_indices)

# gen-known-answers pf_hmm_logml (Gen.jl's 1-based states/observations made 0-based)
PRIOR = [0.2, 0.3, 0.5]
EMIT = [[0.1, 0.2, 0.7], [0.2, 0.7, 0.1], [0.7, 0.2, 0.1]]
TRANS = [[0.4, 0.4, 0.2], [0.2, 0.3, 0.5], [0.9, 0.05, 0.05]]
GEN_OBS = [0, 0, 1, 2]
GEN_LOG_ML = -4.87645083351704


@gen
def hmm_step(t, prev):
    z = categorical(TRANS[prev]) @ "z"
    categorical(EMIT[z]) @ "x"
    return z


CHAIN = Unfold(hmm_step)


@gen
def hmm(steps):
    z = categorical(PRIOR) @ "z_init"
    categorical(EMIT[z]) @ "x_init"
    return CHAIN(steps, z) @ "chain"


def forward(obs):
    """Exact log p(obs) and the filtering marginals p(z_t | x_1..t)."""
    alpha = np.array(PRIOR) * np.array(EMIT)[:, obs[0]]
    log_ml, marginals = 0.0, []
    for t in range(len(obs)):
        if t:
            alpha = (alpha @ np.array(TRANS)) * np.array(EMIT)[:, obs[t]]
        c = alpha.sum()
        log_ml += math.log(c)
        alpha = alpha / c
        marginals.append(alpha)
    return log_ml, marginals


def run_filter(obs, n, seed, method="multinomial", threshold=None, rejuvenation=False):
    state = initialize_particle_filter(hmm, (0,), {"x_init": obs[0]}, n,
                                       rng=np.random.default_rng(seed))
    for t in range(1, len(obs)):
        maybe_resample(state, ess_threshold=n if threshold is None else threshold,
                       method=method)
        if rejuvenation:
            rejuvenate(state, lambda tr: mh(tr, select(("chain", t - 1, "z") if t > 1 else
                                                       "z_init"), rng=state.rng))
        particle_filter_step(state, (t,), (UnknownChange,), {("chain", t, "x"): obs[t]})
    return state


def test_forward_algorithm_matches_gen_known_answers():
    assert forward(GEN_OBS)[0] == pytest.approx(GEN_LOG_ML, abs=1e-12)


def test_particle_filter_gen_hmm_log_ml_small():
    assert abs(log_ml_estimate(run_filter(GEN_OBS, 1000, 1)) - GEN_LOG_ML) < 0.1


@pytest.mark.slow
def test_particle_filter_gen_hmm_log_ml_20000_particles():
    assert abs(log_ml_estimate(run_filter(GEN_OBS, 20_000, 1)) - GEN_LOG_ML) < 0.02


OBS10 = [0, 2, 2, 1, 0, 0, 1, 2, 0, 1]


@pytest.mark.parametrize("method", ["multinomial", "stratified", "residual"])
def test_particle_filter_vs_forward_algorithm(method):
    exact, marginals = forward(OBS10)
    runs = [run_filter(OBS10, 100, seed, method, threshold=50) for seed in range(4)]
    zs = np.array([math.exp(log_ml_estimate(s) - exact) for s in runs])   # unbiased for 1
    se = zs.std(ddof=1) / math.sqrt(len(zs))
    assert abs(zs.mean() - 1.0) < 3 * se + 1e-12
    counts = np.zeros(3)
    for s in runs:
        w = np.exp(s.log_weights - np.logaddexp.reduce(s.log_weights))
        for tr, wi in zip(s.traces, w):
            counts[tr[("chain", 9, "z")]] += wi
    np.testing.assert_allclose(counts / len(runs), marginals[-1], atol=0.08)


def test_rejuvenation_keeps_the_filter_consistent():
    exact, marginals = forward(GEN_OBS)
    s = run_filter(GEN_OBS, 300, 2, "stratified", rejuvenation=True)
    assert abs(log_ml_estimate(s) - exact) < 0.2


def test_resampling_schemes_are_unbiased():
    rng = np.random.default_rng(0)
    w = np.array([0.05, 0.5, 0.2, 0.25])
    for method in ("multinomial", "stratified", "residual"):
        counts = np.zeros(4)
        for _ in range(2000):
            counts += np.bincount(resample_indices(w, 10, method, rng), minlength=4)
        np.testing.assert_allclose(counts / 2000, 10 * w, atol=0.1)
    idx = resample_indices(w, 10, "residual", rng)
    assert np.sum(idx == 1) >= 5 and np.sum(idx == 3) >= 2
    with pytest.raises(ValueError, match="unknown resampling method 'systematicx'"):
        resample_indices(w, 10, "systematicx", rng)
    assert effective_sample_size(np.log([1.0, 1.0, 1.0, 1.0])) == pytest.approx(4.0)


def test_particle_initialisation_on_an_executor_equals_in_process_batches():
    import concurrent.futures as cf
    import multiprocessing as mp
    kw = dict(batches=2)
    a = initialize_particle_filter(hmm, (0,), {"x_init": 1}, 20, rng=np.random.default_rng(4),
                                   **kw)
    with cf.ProcessPoolExecutor(2, mp_context=mp.get_context("fork")) as ex:
        b = initialize_particle_filter(hmm, (0,), {"x_init": 1}, 20, executor=ex,
                                       rng=np.random.default_rng(4), **kw)
    np.testing.assert_array_equal(a.log_weights, b.log_weights)
    assert [t["z_init"] for t in a.traces] == [t["z_init"] for t in b.traces]
    particle_filter_step(b, (1,), (UnknownChange,), {("chain", 1, "x"): 0})
    assert len(b.traces[0].get_retval()) == 1


@gen
def init_proposal(x):
    """The exact posterior of z_init given x_init."""
    p = np.array(PRIOR) * np.array(EMIT)[:, x]
    categorical(p / p.sum()) @ "z_init"


@gen
def step_proposal(trace, t, x):
    """The locally optimal proposal p(z_t | z_{t-1}, x_t)."""
    prev = trace["z_init"] if t == 1 else trace[("chain", t - 1, "z")]
    p = np.array(TRANS)[prev] * np.array(EMIT)[:, x]
    categorical(p / p.sum()) @ ("chain", t, "z")


def test_particle_filter_with_custom_proposals():
    n = 800
    state = initialize_particle_filter(hmm, (0,), {"x_init": GEN_OBS[0]}, n, init_proposal,
                                       (GEN_OBS[0],), rng=np.random.default_rng(7))
    # with the exact first-step posterior every initial weight is log p(x_init)
    np.testing.assert_allclose(state.log_weights, math.log(np.dot(PRIOR, np.array(EMIT)[:, 0])),
                               atol=1e-12)
    for t in range(1, len(GEN_OBS)):
        maybe_resample(state, ess_threshold=n)
        particle_filter_step(state, (t,), (UnknownChange,), {("chain", t, "x"): GEN_OBS[t]},
                             step_proposal, (t, GEN_OBS[t]))
    assert abs(log_ml_estimate(state) - GEN_LOG_ML) < 0.1      # sd about 0.03 here


@gen
def hmm_loop(obs):
    """The same HMM as a loop whose control flow does not depend on the choices."""
    z = categorical(PRIOR) @ "z_init"
    categorical(np.array(EMIT)[z]) @ "x_init"
    for t in range(1, len(obs)):
        z = categorical(np.array(TRANS)[z]) @ ("z", t)
        categorical(np.array(EMIT)[z]) @ ("x", t)


def test_vectorized_importance_sampling_on_the_hmm():
    from dcgraph.gen.inference import importance_sampling_vectorized
    obs = {"x_init": GEN_OBS[0], **{("x", t): GEN_OBS[t] for t in range(1, len(GEN_OBS))}}
    choices, lw, lml = importance_sampling_vectorized(hmm_loop, (GEN_OBS,), obs, 20_000,
                                                      rng=np.random.default_rng(3))
    assert abs(lml - GEN_LOG_ML) < 0.05
    w = np.exp(lw)
    post_last = [w[choices[("z", 3)] == k].sum() for k in range(3)]
    _, marginals = forward(GEN_OBS)
    assert choices[("z", 3)].shape == (20_000,)
    # smoothing at the last step equals filtering there
    np.testing.assert_allclose(post_last, marginals[-1], atol=0.03)
