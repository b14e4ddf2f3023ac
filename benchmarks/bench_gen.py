"""Gen layer speed: simulate / generate / update per second on a 20-choice model and a
1,000-step HMM (plain Python loop), the incremental-update speedup, and Pyro (trace + replay /
condition handlers) on the same models when it is installed (extra ``bench``; GenJAX likewise).
Then the inference library: importance-sampling throughput (vs Pyro), particle-filter steps
per second, and combinator update costs at lengths 10 and 1,000 (they should not grow).

    python benchmarks/bench_gen.py [--rounds 5] [--steps 1000] [--clock cpu|wall]
                                   [--genjax-python PATH]

GenJAX needs jax < 0.6 and numpy < 2, so it usually lives in its own venv: ``--genjax-python``
names that interpreter (default: this one); ``benchmarks/peers_genjax.py`` runs there as a
subprocess (jit-compiled, steady state; compile times printed separately) before our timings.

Each figure is the minimum over rounds of the mean time per operation; all variants run
interleaved in the same process. ``update (full)`` runs the function again (what ``update``
does when the incremental path gives up); ``update (incremental)`` re-executes only the forward
slice of the changed choice on the recorded tape (steady state: the trace's tape already built;
the first update of a fresh trace also builds the tape, shown separately).
"""
from __future__ import annotations

import argparse
import platform
import sys
import time

import numpy as np

from dcgraph.gen import (NoChange, UnknownChange, categorical, choicemap, gen, generate, normal,
                         simulate, update)

TRANS = np.array([[0.9, 0.1], [0.2, 0.8]])
MEANS = np.array([-1.0, 1.0])
INIT = np.array([0.5, 0.5])


@gen
def twenty(ys):
    mu = normal(0.0, 1.0) @ "mu"
    for i in range(len(ys)):
        normal(mu, 1.0) @ ("y", i)
    return mu


@gen
def hmm(n):
    z = categorical(INIT) @ ("z", 0)
    normal(MEANS[z], 1.0) @ ("x", 0)
    for t in range(1, n):
        z = categorical(TRANS[z]) @ ("z", t)
        normal(MEANS[z], 1.0) @ ("x", t)
    return z


def timed(fn, reps: int, clock) -> float:
    t0 = clock()
    for _ in range(reps):
        fn()
    return (clock() - t0) / reps


# -- Pyro peer (optional) -----------------------------------------------------------------------
def pyro_cases(ys, xs, steps):
    try:
        import pyro
        import pyro.distributions as pdist
        import torch
        from pyro import poutine
    except ImportError:
        return None
    torch.set_num_threads(1)
    pyro.enable_validation(False)
    t_ys, t_xs = torch.tensor(ys), torch.tensor(xs)
    trans, means, init = torch.tensor(TRANS), torch.tensor(MEANS), torch.tensor(INIT)

    def twenty_p(obs):
        mu = pyro.sample("mu", pdist.Normal(0.0, 1.0))
        for i in range(len(ys)):
            pyro.sample(f"y{i}", pdist.Normal(mu, 1.0), obs=None if obs is None else obs[i])
        return mu

    def hmm_p(obs):
        z = pyro.sample("z0", pdist.Categorical(init))
        pyro.sample("x0", pdist.Normal(means[z], 1.0), obs=None if obs is None else obs[0])
        for t in range(1, steps):
            z = pyro.sample(f"z{t}", pdist.Categorical(trans[z]))
            pyro.sample(f"x{t}", pdist.Normal(means[z], 1.0), obs=None if obs is None else obs[t])
        return z

    def ops(model, obs, site, value):
        def sim():
            poutine.trace(model).get_trace(None).log_prob_sum()

        def gen_():
            poutine.trace(model).get_trace(obs).log_prob_sum()

        base = poutine.trace(model).get_trace(obs)
        base_lp = base.log_prob_sum()

        def upd():
            new = poutine.trace(poutine.condition(poutine.replay(model, trace=base),
                                                  data={site: value})).get_trace(obs)
            return new.log_prob_sum() - base_lp
        return {"simulate": sim, "generate": gen_, "update (full)": upd}

    return {"20-choice": ops(twenty_p, t_ys, "mu", torch.tensor(0.3)),
            f"HMM {steps}": ops(hmm_p, t_xs, f"z{steps // 2}", torch.tensor(1))}


def chain_updates(trace, steps, rng, clock, n=1000) -> float:
    """Mean time per update along a chain of single-step updates (MCMC-like use)."""
    cur = trace
    picks = rng.integers(steps, size=n)
    t0 = clock()
    for t in picks:
        t = int(t)
        cur = update(cur, (steps,), (NoChange,), choicemap({("z", t): 1 - cur[("z", t)]}))[0]
    return (clock() - t0) / n


GENJAX_REPS = {"20-choice|simulate": 200, "20-choice|generate": 200, "20-choice|update": 200,
               "HMM|simulate": 20, "HMM|generate": 20, "HMM|update": 200, "IS|vmap 2000": 200,
               "HMM|simulate, score only": 20, "HMM|generate, score only": 20,
               "IS|vmap 20000": 50, "IS|one particle per call": 2000}


def genjax_results(python: str, ys, xs, rounds: int, clock: str):
    """Run ``peers_genjax.py`` under ``python``: its result dict, or a string saying why not."""
    import json
    import os
    import subprocess
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers_genjax.py")
    try:
        probe = subprocess.run([python, "-c", "import genjax"], capture_output=True, text=True)
    except OSError as e:
        return f"--genjax-python {python}: {e.strerror}"
    if probe.returncode != 0:
        return (f"not installed for {python} (it needs jax<0.6, numpy<2: make a venv, pip install "
                f"genjax, pass --genjax-python VENV/bin/python)")
    req = {"ys": list(map(float, ys)), "xs": list(map(float, xs)), "rounds": rounds,
           "clock": clock, "reps": GENJAX_REPS}
    run = subprocess.run([python, script], input=json.dumps(req), capture_output=True, text=True,
                         timeout=1800)
    if run.returncode != 0:
        return f"peers_genjax.py failed under {python}: {run.stderr.strip().splitlines()[-1:]}"
    return json.loads(run.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    ap.add_argument("--genjax-python", default=sys.executable,
                    help="interpreter with genjax installed (default: this one)")
    a = ap.parse_args()
    clock = time.process_time if a.clock == "cpu" else time.perf_counter
    rng = np.random.default_rng(0)
    steps, mid = a.steps, a.steps // 2
    ys = rng.normal(0.5, 1.0, 19)
    base20 = simulate(twenty, (ys,), rng=rng)
    obs20 = choicemap({("y", i): float(v) for i, v in enumerate(ys)})
    tr20, _ = generate(twenty, (ys,), obs20, rng=rng)
    hmm_tr = simulate(hmm, (steps,), rng=rng)
    xs = np.array([hmm_tr[("x", t)] for t in range(steps)])
    obs_h = choicemap({("x", t): float(v) for t, v in enumerate(xs)})
    trh, _ = generate(hmm, (steps,), obs_h, rng=rng)
    flip = choicemap({("z", mid): 1 - trh[("z", mid)]})
    move = choicemap({"mu": 0.3})
    t0 = time.perf_counter()
    update(trh, (steps,), (NoChange,), flip)        # builds and indexes the tape once
    first_inc = time.perf_counter() - t0
    del base20

    ours = {
        "20-choice": {
            "simulate": (lambda: simulate(twenty, (ys,), rng=rng), 200),
            "generate": (lambda: generate(twenty, (ys,), obs20, rng=rng), 200),
            "update (full)": (lambda: twenty.full_update(tr20, (ys,), move), 200),
            "update (incremental)": (lambda: update(tr20, (ys,), (NoChange,), move), 2000),
        },
        f"HMM {steps}": {
            "simulate": (lambda: simulate(hmm, (steps,), rng=rng), 3),
            "generate": (lambda: generate(hmm, (steps,), obs_h, rng=rng), 3),
            "update (full)": (lambda: hmm.full_update(trh, (steps,), flip), 3),
            "update (incremental)": (lambda: update(trh, (steps,), (NoChange,), flip), 300),
        },
    }
    update(tr20, (ys,), (NoChange,), move)
    peers = pyro_cases(list(map(float, ys)), list(map(float, xs)), steps)
    gj = genjax_results(a.genjax_python, ys, xs, a.rounds, a.clock)
    gjt = gj["timings"] if isinstance(gj, dict) else {}
    gj_op = {"simulate": "simulate", "generate": "generate", "update (incremental)": "update"}
    best: dict = {}
    for _ in range(a.rounds):
        for model, cases in ours.items():
            for op, (fn, reps) in cases.items():
                t = timed(fn, reps, clock)
                key = (model, op, "dcgraph.gen")
                best[key] = min(best.get(key, t), t)
                if peers is not None and op in peers[model]:
                    t = timed(peers[model][op], max(1, reps // 2), clock)
                    key = (model, op, "pyro")
                    best[key] = min(best.get(key, t), t)
    print(f"# bench_gen: python {platform.python_version()}, numpy {np.__version__}, "
          f"rounds {a.rounds}, clock {a.clock}")
    if peers is None:
        print("# pyro not installed: pip install pyro-ppl (extra 'bench')")
    if isinstance(gj, dict):
        print(f"# genjax {gj['versions']['genjax']}, jax {gj['versions']['jax']} "
              f"({a.genjax_python}), jit-compiled, steady state, trace returned to Python; its "
              f"one `update` is compared with our default (incremental) update; checks "
              f"{gj['check']}")
    else:
        print(f"# genjax: {gj}")
    print(f"{'model':<12} {'operation':<22} {'dcgraph.gen':>16} {'per second':>12} "
          f"{'pyro':>12} {'ours vs pyro':>13} {'genjax':>12} {'ours vs genjax':>15}")
    for model, cases in ours.items():
        for op in cases:
            t = best[(model, op, "dcgraph.gen")]
            p = best.get((model, op, "pyro"))
            ptxt = f"{p * 1e3:10.3f}ms" if p else f"{'-':>12}"
            ratio = f"{p / t:12.2f}x" if p else f"{'-':>13}"
            g = gjt.get(f"{model.split()[0]}|{gj_op.get(op)}", {}).get("seconds")
            gtxt = f"{g * 1e3:10.3f}ms {g / t:14.3g}x" if g else f"{'-':>12} {'-':>15}"
            print(f"{model:<12} {op:<22} {t * 1e3:14.3f}ms {1 / t:12.1f} {ptxt} {ratio} {gtxt}")
        full = best[(model, "update (full)", "dcgraph.gen")]
        inc = best[(model, "update (incremental)", "dcgraph.gen")]
        print(f"{model:<12} incremental speedup: {full / inc:.1f}x over full re-execution")
    leaf = choicemap({("y", 7): 0.25})
    update(tr20, (ys,), (NoChange,), leaf)
    full_leaf = min(timed(lambda: twenty.full_update(tr20, (ys,), leaf), 200, clock)
                    for _ in range(a.rounds))
    inc_leaf = min(timed(lambda: update(tr20, (ys,), (NoChange,), leaf), 2000, clock)
                   for _ in range(a.rounds))
    print(f"20-choice    changing one leaf y_7 instead of mu: full {full_leaf * 1e3:.3f}ms, "
          f"incremental {inc_leaf * 1e3:.3f}ms: {full_leaf / inc_leaf:.1f}x")
    print(f"first incremental update of a fresh HMM {steps} trace (builds the tape): "
          f"{first_inc * 1e3:.1f}ms")
    print(f"chain of 1000 updates, each flipping a random z_t of the previous trace: "
          f"{chain_updates(trh, steps, rng, clock) * 1e3:.3f}ms per update "
          f"(changed values kept aside: the chain's values grow)")
    if gjt:
        print("genjax returning only the score/weight (trace kept inside XLA), ms: " + ", ".join(
            f"{k.replace(', score only', '')} {v['seconds'] * 1e3:.3f}" for k, v in gjt.items()
            if k.endswith("score only")))
        print("genjax compile times (first call, s): " + ", ".join(
            f"{k} {v['compile']:.2f}" for k, v in gjt.items()))
    inference_section(a.rounds, clock, gjt)


# -- issue 14: inference throughput and combinator update costs ----------------------------
@gen
def normal_normal():
    x = normal(0.0, 1.0) @ "x"
    return normal(x, 1.0) @ "y"


@gen
def unfold_step(t, prev):
    return normal(0.9 * prev, 1.0) @ "x"


@gen
def map_point(mu):
    return normal(mu, 1.0) @ "y"


def pyro_importance(n: int):
    """Pyro's importance sampling of the same model (prior proposal), or None."""
    try:
        import pyro
        import pyro.distributions as pdist
        import torch
        from pyro import poutine
    except ImportError:
        return None
    torch.set_num_threads(1)
    y = torch.tensor(2.0)

    def model():
        x = pyro.sample("x", pdist.Normal(0.0, 1.0))
        pyro.sample("y", pdist.Normal(x, 1.0), obs=y)

    def run():
        lw = [poutine.trace(model).get_trace().log_prob_sum() for _ in range(n)]
        return torch.logsumexp(torch.stack(lw), 0)
    return run


def inference_section(rounds: int, clock, gjt: dict) -> None:
    from dcgraph.gen.combinators import Map, Unfold
    from dcgraph.gen.inference import (importance_sampling, initialize_particle_filter,
                                       maybe_resample, particle_filter_step)
    rng = np.random.default_rng(1)
    n = 2000
    ours = min(timed(lambda: importance_sampling(normal_normal, (), {"y": 2.0}, n, rng=rng), 1,
                     clock) for _ in range(rounds))
    peer = pyro_importance(n)
    pyro_t = min(timed(peer, 1, clock) for _ in range(rounds)) if peer else None
    print(f"\nimportance sampling, normal-normal, {n} particles: dcgraph.gen "
          f"{n / ours:,.0f} particles/s" + (f", pyro {n / pyro_t:,.0f} particles/s: "
                                             f"{pyro_t / ours:.2f}x" if pyro_t else
                                             ", pyro not installed") +
          ("; genjax vmap {:,.0f} particles/s: {:.3g}x, genjax one jitted particle per call "
           "{:,.0f} particles/s: {:.3g}x".format(
               n / gjt["IS|vmap 2000"]["seconds"], gjt["IS|vmap 2000"]["seconds"] / ours,
               1 / gjt["IS|one particle per call"]["seconds"],
               gjt["IS|one particle per call"]["seconds"] * n / ours)
           if gjt else "; genjax not run"))
    from dcgraph.gen.inference import importance_sampling_vectorized
    big = 20_000
    vec = min(timed(lambda: importance_sampling_vectorized(normal_normal, (), {"y": 2.0}, big,
                                                           rng=rng), 1, clock)
              for _ in range(rounds))
    print(f"vectorised importance sampling (one run, numpy arrays), {big} particles: "
          f"{big / vec:,.0f} particles/s, {ours / n * big / vec:.0f}x the per-particle path" +
          (f"; genjax vmap {big / gjt['IS|vmap 20000']['seconds']:,.0f} particles/s: "
           f"{gjt['IS|vmap 20000']['seconds'] / vec:.2f}x" if gjt else ""))
    # particle filter on Gen.jl's HMM (Unfold): one step extends every particle by one kernel
    particles, horizon = 500, 20
    obs = [int(v) for v in rng.integers(3, size=horizon + 1)]

    def pf():
        st = initialize_particle_filter(pf_hmm, (0,), {"x_init": obs[0]}, particles, rng=rng)
        for t in range(1, horizon + 1):
            maybe_resample(st)
            particle_filter_step(st, (t,), (UnknownChange,), {("chain", t, "x"): obs[t]})
    t_pf = min(timed(pf, 1, clock) for _ in range(rounds))
    print(f"particle filter, Gen's 3-state HMM, {particles} particles x {horizon} steps: "
          f"{particles * horizon / t_pf:,.0f} particle-steps/s, {horizon / t_pf:.1f} filter "
          f"steps/s")
    # combinator update costs: O(1) kernel calls whatever the length
    print(f"{'combinator update':<44} {'n=10':>10} {'n=1000':>10}")
    for label, make in (("Unfold: constrain the last step", _unfold_last),
                        ("Unfold: extend by one step", _unfold_extend),
                        ("Map: change one element's argument", _map_one)):
        times = []
        for size in (10, 1000):
            fn = make(Unfold(unfold_step), Map(map_point), size, rng)
            times.append(min(timed(fn, 200, clock) for _ in range(rounds)))
        print(f"{label:<44} {times[0] * 1e3:8.3f}ms {times[1] * 1e3:8.3f}ms")


PF_PRIOR = [0.2, 0.3, 0.5]
PF_EMIT = [[0.1, 0.2, 0.7], [0.2, 0.7, 0.1], [0.7, 0.2, 0.1]]
PF_TRANS = [[0.4, 0.4, 0.2], [0.2, 0.3, 0.5], [0.9, 0.05, 0.05]]


@gen
def pf_step(t, prev):
    z = categorical(PF_TRANS[prev]) @ "z"
    categorical(PF_EMIT[z]) @ "x"
    return z


@gen
def pf_hmm(steps):
    from dcgraph.gen.combinators import Unfold
    z = categorical(PF_PRIOR) @ "z_init"
    categorical(PF_EMIT[z]) @ "x_init"
    return Unfold(pf_step)(steps, z) @ "chain"


def _unfold_last(uf, _, n, rng):
    tr = simulate(uf, (n, 0.0), rng=rng)
    c = choicemap({(n, "x"): 0.5})
    return lambda: uf.update(tr, (n, 0.0), (NoChange, NoChange), c, rng)


def _unfold_extend(uf, _, n, rng):
    tr = simulate(uf, (n, 0.0), rng=rng)
    c = choicemap({(n + 1, "x"): 0.5})
    return lambda: uf.update(tr, (n + 1, 0.0), (UnknownChange, NoChange), c, rng)


def _map_one(_, mp, n, rng):
    from dcgraph.gen.combinators import VectorDiff
    mus = [0.0] * n
    tr = simulate(mp, (mus,), rng=rng)
    new = list(mus)
    new[n // 2] = 1.0
    diff = (VectorDiff(n, n, {n // 2 + 1: UnknownChange}),)
    return lambda: mp.update(tr, (new,), diff, choicemap(), rng)


if __name__ == "__main__":
    main()
