"""NUTS speed and efficiency: wall time, ESS per gradient, gradient evaluations per second,
per-leapfrog overhead.

Target: the 100-dimensional standard normal.  Compares with NumPyro and
BlackJAX on the same target when they are installed (extra ``bench``), and
skips them cleanly otherwise.  ESS per gradient is the minimum bulk ESS over
the 100 coordinates divided by the leapfrog steps after warm-up; it varies
a lot from seed to seed (NumPyro: 0.054-0.148 over seeds 0-7), so it is
reported for every seed and averaged.

    python benchmarks/bench_nuts.py [--draws 1000] [--warmup 1000] [--chains 2] [--seeds 4]

``--rats``: the Rats log density in vectorised numpy (65 parameters: 30 alphas, 30 betas, two
means, three log scales; flat priors; the BUGS example's data), with dcgraph's own gradient
(``dcgraph.value_and_grad`` of the numpy code, no hand-written gradient) beside NumPyro on the
same potential; wall time for both, chains one after another in one process.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np

from dcgraph.infer import NUTS, HMCState, Metric, Target, ess_bulk, nuts_step, sample

DIM = 100


def std_normal(q):
    return -0.5 * q.dot(q), -q


def bench_dcgraph(draws, warmup, chains, seed, metric_estimate="gradient", parallel=False, jitter=0.0):
    """One run.  In one process (``parallel=False``) the sampling phase's CPU time is
    measured; with worker processes only the wall time means anything."""
    target = Target(logdensity_and_grad=std_normal, dim=DIM)
    t0, c0 = time.perf_counter(), time.process_time()
    result = sample(target, NUTS(metric_estimate=metric_estimate, step_size_jitter=jitter), draws=draws, warmup=warmup, chains=chains,
                    seed=seed, progress=False, parallel=parallel)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    total_grads = int(result.n_grad_evals)  # sampling phase only
    # CPU seconds of the sampling phase: the wall-clock share scaled by CPU/wall of the run,
    # so that other processes competing for the cores do not count against the sampler.
    sampling_time = float(result.elapsed[:, 1].sum()) * min(1.0, cpu / wall)
    ess = float(np.min(ess_bulk(result.draws)))
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "sampling_s": sampling_time,
        "grads_per_s": total_grads / sampling_time,
        "min_ess_bulk": ess,
        "ess_per_s": ess / sampling_time,
        "ess_per_grad": ess / total_grads,
        "mean_leapfrog": float(result.stats["n_leapfrog"].mean()),
        "step_size": float(np.mean([p.step_size for p in result.tuned])),
    }


def overhead_per_leapfrog(dim, transitions=500, repeats=5, seed=0):
    """CPU time per leapfrog step, the target's CPU time per call, and their difference
    (the sampler's own overhead); best of ``repeats``."""
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(dim)
    state = HMCState(q, *std_normal(q))
    metric = Metric.from_inverse_mass(np.full(dim, 1.3))  # a non-unit diagonal, as after warm-up
    step = 0.9 / np.sqrt(1.3) * dim ** -0.25
    per_step = per_call = np.inf
    for _ in range(repeats):
        n_leapfrog = 0
        t0 = time.process_time()
        for _ in range(transitions):
            state, info = nuts_step(rng, std_normal, state, step, metric)
            n_leapfrog += info.n_leapfrog
        per_step = min(per_step, (time.process_time() - t0) / n_leapfrog)
        calls = 50_000
        t0 = time.process_time()
        for _ in range(calls):
            std_normal(q)
        per_call = min(per_call, (time.process_time() - t0) / calls)
    return per_step * 1e6, per_call * 1e6, (per_step - per_call) * 1e6


def bench_numpyro(draws, warmup, chains, seeds):
    """Per seed: wall time (the first run includes compilation) and ESS per gradient."""
    try:
        import jax
        import jax.numpy as jnp
        from numpyro.infer import MCMC
        from numpyro.infer import NUTS as NumPyroNUTS
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    def potential(q):
        return 0.5 * jnp.dot(q, q)

    out = []
    mcmc = MCMC(NumPyroNUTS(potential_fn=potential), num_warmup=warmup, num_samples=draws,
                num_chains=chains, chain_method="vectorized", progress_bar=False)
    for seed in seeds:
        t0 = time.perf_counter()
        mcmc.run(jax.random.PRNGKey(seed), init_params=jnp.zeros((chains, DIM)) + 0.1, extra_fields=("num_steps",))
        x = np.asarray(mcmc.get_samples(group_by_chain=True))
        wall = time.perf_counter() - t0
        steps = np.asarray(mcmc.get_extra_fields()["num_steps"])
        ess = float(np.min(ess_bulk(x)))
        out.append({"seed": seed, "wall_s": wall, "min_ess_bulk": ess, "ess_per_grad": ess / int(steps.sum()),
                    "mean_leapfrog": float(steps.mean())})
    return out


def bench_blackjax(draws, warmup, seed):
    try:
        import blackjax
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    def logdensity(q):
        return -0.5 * jnp.dot(q, q)

    t0 = time.perf_counter()
    key = jax.random.PRNGKey(seed)
    adapt = blackjax.window_adaptation(blackjax.nuts, logdensity)
    (state, params), _ = adapt.run(key, jnp.zeros(DIM) + 0.1, num_steps=warmup)
    kernel = jax.jit(blackjax.nuts(logdensity, **params).step)
    keys = jax.random.split(key, draws)
    xs, steps = [], 0
    for k in keys:
        state, info = kernel(k, state)
        xs.append(state.position)
        steps += int(info.num_integration_steps)
    wall = time.perf_counter() - t0
    ess = float(np.min(ess_bulk(np.asarray(xs)[None])))
    return {"wall_s": wall, "min_ess_bulk": ess, "ess_per_s_wall": ess / wall, "ess_per_grad": ess / steps}


def rats_problem():
    """(numpy log density over one 65-vector, its data, a start point)."""
    from pathlib import Path

    from dcgraph import bugs
    d = Path(__file__).resolve().parents[1] / ".." / "shared" / "bugs-examples" / "rats"
    data = bugs.read_data(d / "data.txt")
    Y = np.asarray(data["Y"], float)
    xv = np.asarray(data["x"], float) - float(data["xbar"])

    def rats_vec(th):
        alpha, beta, mu_a, mu_b = th[0:30], th[30:60], th[60], th[61]
        log_sa, log_sb, log_sy = th[62], th[63], th[64]
        za = (alpha - mu_a) / np.exp(log_sa)
        zb = (beta - mu_b) / np.exp(log_sb)
        r = (Y - alpha[:, None] - beta[:, None] * xv) / np.exp(log_sy)
        return (-0.5 * np.sum(za * za) - 30 * log_sa - 0.5 * np.sum(zb * zb) - 30 * log_sb
                - 0.5 * np.sum(r * r) - 150 * log_sy)

    start = np.concatenate([Y.mean(axis=1), np.full(30, 6.0), [240.0, 6.0, 2.7, -0.7, 1.8]])
    return rats_vec, (Y, xv), start


def bench_rats(draws, warmup, chains, seeds):
    """NUTS on Rats: dcgraph with its own compiled gradient, and NumPyro; wall times."""
    from dcgraph import ad
    logp, (Y, xv), start = rats_problem()
    vg = ad.value_and_grad(logp)
    rows = []
    for seed in seeds:
        target = Target(logdensity_and_grad=vg, dim=65)
        t0 = time.perf_counter()
        result = sample(target, NUTS(), draws=draws, warmup=warmup, chains=chains, seed=seed,
                        progress=False, parallel=False, init=np.tile(start, (chains, 1)))
        wall = time.perf_counter() - t0
        ess = float(np.min(ess_bulk(result.draws)))
        rows.append(("dcgraph", seed, wall, ess, int(result.n_grad_evals)))
    assert vg.compiled.reason is None, vg.compiled.reason
    try:
        import jax
        import jax.numpy as jnp
        from numpyro.infer import MCMC
        from numpyro.infer import NUTS as NumPyroNUTS
    except ImportError:
        jax = None
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
        Yj, xj = jnp.asarray(Y), jnp.asarray(xv)

        def potential(th):
            alpha, beta, mu_a, mu_b = th[0:30], th[30:60], th[60], th[61]
            log_sa, log_sb, log_sy = th[62], th[63], th[64]
            za = (alpha - mu_a) / jnp.exp(log_sa)
            zb = (beta - mu_b) / jnp.exp(log_sb)
            r = (Yj - alpha[:, None] - beta[:, None] * xj) / jnp.exp(log_sy)
            return -(-0.5 * jnp.sum(za * za) - 30 * log_sa - 0.5 * jnp.sum(zb * zb)
                     - 30 * log_sb - 0.5 * jnp.sum(r * r) - 150 * log_sy)

        mcmc = MCMC(NumPyroNUTS(potential_fn=potential), num_warmup=warmup, num_samples=draws,
                    num_chains=chains, chain_method="sequential", progress_bar=False)
        for seed in seeds:
            t0 = time.perf_counter()
            mcmc.run(jax.random.PRNGKey(seed), init_params=jnp.tile(jnp.asarray(start), (chains, 1)),
                     extra_fields=("num_steps",))
            x = np.asarray(mcmc.get_samples(group_by_chain=True))
            wall = time.perf_counter() - t0
            steps = int(np.asarray(mcmc.get_extra_fields()["num_steps"]).sum())
            rows.append(("numpyro", seed, wall, float(np.min(ess_bulk(x))), steps))
    print(f"NUTS on Rats (65 parameters), {chains} chains x ({warmup} warm-up + {draws} draws), "
          "wall time (NumPyro's first run includes compiling):")
    for name, seed, wall, ess, grads in rows:
        print(f"  {name:8s} seed {seed}  wall {wall:6.2f} s  min bulk ESS {ess:7.0f}  "
              f"ESS/s {ess / wall:7.1f}  gradients {grads}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=4, help="seeds 0 .. N-1")
    parser.add_argument("--rats", action="store_true", help="NUTS on Rats only (see above)")
    args = parser.parse_args(argv)
    seeds = range(args.seeds)
    if args.rats:
        bench_rats(args.draws, args.warmup, args.chains, seeds)
        return

    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}")
    print(f"target: {DIM}-d standard normal; {args.chains} chains x ({args.warmup} warm-up + {args.draws} draws), "
          f"seeds 0-{args.seeds - 1}\n")

    figures = {}
    for key, estimate, jitter, label in (
        ("gradient", "gradient", 0.0, "gradient-scaled diagonal metric (default)"),
        ("variance", "variance", 0.0, "Stan's variance diagonal metric"),
        ("jitter", "gradient", 0.5, "gradient-scaled metric, step_size_jitter=0.5"),
    ):
        runs = [bench_dcgraph(args.draws, args.warmup, args.chains, seed, estimate, jitter=jitter) for seed in seeds]
        figures[key] = np.mean([r["ess_per_grad"] for r in runs])
        print(f"dcgraph.infer NUTS, {label}, chains in one process:")
        print("  ESS / gradient per seed         " + ", ".join(f"{r['ess_per_grad']:.3f}" for r in runs)
              + f"  (mean {figures[key]:.3f})")
        print(f"  mean leapfrog steps, step size  {np.mean([r['mean_leapfrog'] for r in runs]):.2f}, "
              f"{np.mean([r['step_size'] for r in runs]):.3f}")
        print(f"  gradient evaluations / s        {np.mean([r['grads_per_s'] for r in runs]):,.0f}  (sampling phase, CPU time)")
        print(f"  min bulk ESS / s                {np.mean([r['ess_per_s'] for r in runs]):,.0f}  (sampling phase, CPU time)")
        print(f"  wall time per run (incl. warm-up) {np.mean([r['wall_s'] for r in runs]):.2f} s")
    walls = [bench_dcgraph(args.draws, args.warmup, args.chains, seed, parallel=None)["wall_s"] for seed in seeds]
    print(f"  wall time per run, chains in worker processes (the default): {np.mean(walls):.2f} s")

    print("\nper-leapfrog CPU cost (fixed step, diagonal metric, best of 5 x 500 transitions):")
    for dim in (10, 100, 1000):
        total, target, overhead = overhead_per_leapfrog(dim)
        print(f"  d={dim:<5d} total {total:6.2f} us, target {target:5.2f} us, sampler overhead {overhead:6.2f} us")

    print()
    np_res = bench_numpyro(args.draws, args.warmup, args.chains, seeds)
    if np_res is None:
        print("NumPyro: skipped (not installed; pip install 'dcgraph[bench]')")
    else:
        mean = np.mean([v["ess_per_grad"] for v in np_res])
        print("NumPyro NUTS (jax, float64, chain_method=vectorized, warm-up + sampling wall time):")
        print("  ESS / gradient per seed         " + ", ".join(f"{v['ess_per_grad']:.3f}" for v in np_res)
              + f"  (mean {mean:.3f})")
        print(f"  mean leapfrog steps             {np.mean([v['mean_leapfrog'] for v in np_res]):.2f}")
        print(f"  wall time, first run (compiles) {np_res[0]['wall_s']:.2f} s; later runs "
              f"{np.mean([v['wall_s'] for v in np_res[1:]]) if len(np_res) > 1 else float('nan'):.2f} s")
        print(f"  ratio dcgraph / NumPyro, mean ESS per gradient: {figures['gradient'] / mean:.2f} "
              f"(Stan's metric estimate: {figures['variance'] / mean:.2f}; with jitter 0.5: {figures['jitter'] / mean:.2f})")
    bj = bench_blackjax(args.draws, args.warmup, 0)
    if bj is None:
        print("BlackJAX: skipped (not installed)")
    else:
        print(f"BlackJAX NUTS, 1 chain: wall {bj['wall_s']:.2f} s, min bulk ESS {bj['min_ess_bulk']:,.0f}, "
              f"ESS / s (wall) {bj['ess_per_s_wall']:,.0f}, ESS / gradient {bj['ess_per_grad']:.3f}")


if __name__ == "__main__":
    main()
