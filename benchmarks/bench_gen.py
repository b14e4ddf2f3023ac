"""Gen layer speed: simulate / generate / update per second on a 20-choice model and a
1,000-step HMM (plain Python loop), the incremental-update speedup, and Pyro (trace + replay /
condition handlers) on the same models when it is installed (extra ``bench``; GenJAX likewise).

    python benchmarks/bench_gen.py [--rounds 5] [--steps 1000] [--clock cpu|wall]

Each figure is the minimum over rounds of the mean time per operation; all variants run
interleaved in the same process. ``update (full)`` runs the function again (what ``update``
does when the incremental path gives up); ``update (incremental)`` re-executes only the forward
slice of the changed choice on the recorded tape (steady state: the trace's tape already built;
the first update of a fresh trace also builds the tape, shown separately).
"""
from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from dcgraph.gen import (NoChange, categorical, choicemap, gen, generate, normal, simulate,
                         update)

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


def genjax_available() -> bool:
    try:
        import genjax  # noqa: F401
        return True
    except ImportError:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
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
    print(f"# genjax: {'installed but not benchmarked' if genjax_available() else 'not installed'}")
    print(f"{'model':<12} {'operation':<22} {'dcgraph.gen':>16} {'per second':>12} "
          f"{'pyro':>12} {'ours vs pyro':>13}")
    for model, cases in ours.items():
        for op in cases:
            t = best[(model, op, "dcgraph.gen")]
            p = best.get((model, op, "pyro"))
            ptxt = f"{p * 1e3:10.3f}ms" if p else f"{'-':>12}"
            ratio = f"{p / t:12.2f}x" if p else f"{'-':>13}"
            print(f"{model:<12} {op:<22} {t * 1e3:14.3f}ms {1 / t:12.1f} {ptxt} {ratio}")
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


if __name__ == "__main__":
    main()
