"""Sampling BUGS models with ``dcgraph.bugs.fit.sample``: CPU time, gradient evaluations,
ESS per second, and the ratio of the run's CPU time to the CPU time of its gradient
evaluations alone (1.0 = the sampler and monitors add nothing to the model's own cost).

    python benchmarks/bench_bugs_sampling.py [--draws 500] [--warmup 500] [--chains 4] [examples...]
"""
from __future__ import annotations

import argparse
import pathlib
import time

import numpy as np

import dcgraph.bugs as B
from dcgraph.bugs.fit import sample
from dcgraph.infer import ess_bulk

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "shared" / "bugs-examples"


def grad_cost(model, repeats=200):
    """CPU seconds per ``logdensity_and_grad`` call at the first chain's initial values."""
    theta = model.initial_values(0)
    model.logdensity_and_grad(theta)
    t = time.process_time()
    for _ in range(repeats):
        model.logdensity_and_grad(theta)
    return (time.process_time() - t) / repeats


def bench(name, draws, warmup, chains, seed=0):
    d = EXAMPLES / name
    model = B.compile(d / "model.txt", d / "data.txt", [d / "inits.txt", d / "inits1.txt"])
    per_grad = grad_cost(model)
    t = time.process_time()
    result = sample(model, chains=chains, draws=draws, warmup=warmup, seed=seed, progress=False)
    cpu = time.process_time() - t
    grads = int(sum(np.sum(result.unconstrained.stats[k]) for k in result.unconstrained.stats
                    if k.endswith("n_leapfrog")))
    warm_grads = grads * (1 + warmup / draws)          # warm-up steps are not recorded: estimate
    ess = float(np.min(ess_bulk(result.draws)))
    return {"example": name, "dim": model.dim, "cpu_s": cpu, "ms_per_grad": 1e3 * per_grad,
            "grads": grads, "min_ess_bulk": ess, "ess_per_cpu_s": ess / cpu,
            "cpu_over_grad_cost": cpu / (warm_grads * per_grad)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("examples", nargs="*", default=["surgical", "pumps", "seeds", "rats"])
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--chains", type=int, default=4)
    args = ap.parse_args()
    cols = ["example", "dim", "cpu_s", "ms_per_grad", "grads", "min_ess_bulk", "ess_per_cpu_s",
            "cpu_over_grad_cost"]
    print(" ".join(f"{c:>18}" for c in cols))
    for name in args.examples:
        row = bench(name, args.draws, args.warmup, args.chains)
        print(" ".join(f"{row[c]:>18.4g}" if not isinstance(row[c], str) else f"{row[c]:>18}"
                       for c in cols), flush=True)


if __name__ == "__main__":
    import warnings
    warnings.simplefilter("ignore", RuntimeWarning)
    main()
