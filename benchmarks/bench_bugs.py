"""BUGS compiler speed: compile time of each Volume 1 example, and for Rats one log density with
its gradient (``BUGSModel.logdensity_and_grad``, the traced generated code through the compiled
replay) against a hand-written numpy log density with a hand-written gradient, in the same run.

    python benchmarks/bench_bugs.py [--rounds 5] [--calls 2000] [--clock cpu|wall]
    python benchmarks/bench_bugs.py --sample [--chains 4 --draws 1000 --warmup 1000] [--pymc-python P]
    python benchmarks/bench_bugs.py --auto [--chains 4 --draws 1000 --warmup 1000 --rounds 1]

``--auto`` runs Pumps and Seeds with ``sampler="auto"`` (conjugate, slice and NUTS updates) and
with ``sampler="nuts"`` in the same run: sampling wall and CPU time, min bulk ESS over the
monitored nodes and ESS per second of each.

``--sample`` instead runs NUTS on Rats with dcgraph (``dcgraph.bugs.fit.sample(sampler="nuts")``)
and with NumPyro and PyMC on the same model written by hand (PyMC from this interpreter or from
``--pymc-python PATH``, its own venv, in a subprocess; skipped when neither has it), in the same
run, chains one after another in this process: compile and sampling wall time, min bulk ESS over
all parameters (``dcgraph.infer.ess_bulk`` for every library) and ESS per second of sampling,
gradient evaluations with warm-up (NumPyro's not counted: "-") and leapfrog steps per draw after
warm-up, and the posterior means of the top-level nodes side by side.

Compile time is the minimum over rounds of ``dcgraph.bugs.compile`` (parse, unroll, sequentialise,
generate; data read from the file each time) after one warm-up compile of another model. The Rats
figures are the minimum over rounds of the mean time per call.
"""
from __future__ import annotations

import argparse
import pathlib
import platform
import time

import numpy as np

import dcgraph.bugs as B

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "shared" / "bugs-examples"
HALF_LOG_2PI = 0.5 * np.log(2 * np.pi)


def rats_by_hand(Y, x, xbar):
    """Rats log density (with log-Jacobians) and gradient, written out with numpy."""
    N, T = Y.shape
    xc = x - xbar

    def f(theta):
        u_tc, ac, u_at = theta[0], theta[1], theta[2]
        alpha = theta[3:3 + N]
        bc, u_bt = theta[3 + N], theta[4 + N]
        beta = theta[5 + N:5 + 2 * N]
        tc, at, bt = np.exp(u_tc), np.exp(u_at), np.exp(u_bt)
        lp, g = 0.0, np.zeros_like(theta)
        for k, (u, t) in ((0, (u_tc, tc)), (2, (u_at, at)), (4 + N, (u_bt, bt))):
            lp += 0.001 * np.log(0.001) + (0.001 - 1.0) * u - 0.001 * t - 6.907178885383853 + u
            g[k] += (0.001 - 1.0) - 0.001 * t + 1.0
        for k, c in ((1, ac), (3 + N, bc)):
            lp += 0.5 * np.log(1e-6) - HALF_LOG_2PI - 0.5e-6 * c * c
            g[k] -= 1e-6 * c
        ra, rb = alpha - ac, beta - bc
        lp += N * (0.5 * np.log(at) - HALF_LOG_2PI) - 0.5 * at * ra @ ra
        lp += N * (0.5 * np.log(bt) - HALF_LOG_2PI) - 0.5 * bt * rb @ rb
        g[3:3 + N] = -at * ra
        g[5 + N:5 + 2 * N] = -bt * rb
        g[1] += at * ra.sum()
        g[3 + N] += bt * rb.sum()
        g[2] += 0.5 * N - 0.5 * at * ra @ ra
        g[4 + N] += 0.5 * N - 0.5 * bt * rb @ rb
        r = Y - alpha[:, None] - beta[:, None] * xc[None, :]
        rr = (r * r).sum()
        lp += N * T * (0.5 * np.log(tc) - HALF_LOG_2PI) - 0.5 * tc * rr
        g[0] += 0.5 * N * T - 0.5 * tc * rr
        g[3:3 + N] += tc * r.sum(axis=1)
        g[5 + N:5 + 2 * N] += tc * (r * xc[None, :]).sum(axis=1)
        return lp, g
    return f


def best(fn, calls, rounds, clock):
    times = []
    for _ in range(rounds):
        t = clock()
        for _ in range(calls):
            fn()
        times.append((clock() - t) / calls)
    return min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--clock", choices=["cpu", "wall"], default="cpu")
    a = ap.parse_args()
    clock = time.process_time if a.clock == "cpu" else time.perf_counter
    print(f"python {platform.python_version()}, numpy {np.__version__}, clock {a.clock}")
    B.compile(EXAMPLES / "pumps" / "model.txt", EXAMPLES / "pumps" / "data.txt")   # warm-up
    print(f"{'example':14s} {'nodes':>6s} {'params':>6s} {'compile (s)':>12s}")
    for d in sorted(p for p in EXAMPLES.iterdir() if p.is_dir()):
        times = []
        for _ in range(max(1, a.rounds // 2)):
            t = clock()
            m = B.compile(d / "model.txt", d / "data.txt")
            times.append(clock() - t)
        print(f"{d.name:14s} {len(m.graph.nodes):6d} {m.dim:6d} {min(times):12.3f}")
    d = EXAMPLES / "rats"
    model = B.compile(d / "model.txt", d / "data.txt", d / "inits.txt")
    data = B.read_data(d / "data.txt")
    by_hand = rats_by_hand(np.asarray(data["Y"], float), np.asarray(data["x"], float),
                           float(data["xbar"]))
    theta = model.initial_values(0)
    v1, g1 = model.logdensity_and_grad(theta)
    v2, g2 = by_hand(theta)
    assert np.isclose(v1, v2, rtol=1e-10) and np.allclose(g1, g2, rtol=1e-8), "disagree"
    t_model = best(lambda: model.logdensity_and_grad(theta), a.calls, a.rounds, clock)
    t_hand = best(lambda: by_hand(theta), a.calls, a.rounds, clock)
    t_value = best(lambda: model.logdensity(theta), a.calls, a.rounds, clock)
    print(f"rats logdensity_and_grad   {t_model * 1e6:9.1f} us")
    print(f"rats by hand (value+grad)  {t_hand * 1e6:9.1f} us   ratio {t_model / t_hand:.2f}x")
    print(f"rats logdensity (value)    {t_value * 1e6:9.1f} us")


RATS_NODES = ("alpha.c", "beta.c", "tau.c", "alpha.tau", "beta.tau")


def _rats_data():
    d = EXAMPLES / "rats"
    data = B.read_data(d / "data.txt")
    return d, np.asarray(data["Y"], float), np.asarray(data["x"], float), float(data["xbar"])


def sample_dcgraph(chains, draws, warmup, seed):
    from dcgraph.bugs.fit import sample
    from dcgraph.infer import ess_bulk
    d, *_ = _rats_data()
    t = time.perf_counter()
    model = B.compile(d / "model.txt", d / "data.txt", [d / "inits.txt", d / "inits1.txt"])
    t_compile = time.perf_counter() - t
    calls, vg = [0], model.logdensity_and_grad

    def counted(theta):                   # counts gradient evaluations, warm-up included
        calls[0] += 1
        return vg(theta)
    model.logdensity_and_grad = counted
    t = time.perf_counter()
    fit = sample(model, chains=chains, draws=draws, warmup=warmup, seed=seed, sampler="nuts",
                 progress=False)
    t_sample = time.perf_counter() - t
    means = {k: float(np.mean(fit[k])) for k in RATS_NODES}
    steps = (calls[0], float(np.mean(fit.unconstrained.stats["n_leapfrog"])))
    return t_compile, t_sample, float(np.min(ess_bulk(fit.draws))), means, steps


def sample_numpyro(chains, draws, warmup, seed):
    import jax
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import MCMC, NUTS
    from dcgraph.infer import ess_bulk
    jax.config.update("jax_enable_x64", True)
    _, Y, x, xbar = _rats_data()
    N, T = Y.shape

    def rats(Y):
        tau_c = numpyro.sample("tau.c", dist.Gamma(0.001, 0.001))
        alpha_c = numpyro.sample("alpha.c", dist.Normal(0.0, 1000.0))
        alpha_tau = numpyro.sample("alpha.tau", dist.Gamma(0.001, 0.001))
        beta_c = numpyro.sample("beta.c", dist.Normal(0.0, 1000.0))
        beta_tau = numpyro.sample("beta.tau", dist.Gamma(0.001, 0.001))
        with numpyro.plate("rat", N):
            alpha = numpyro.sample("alpha", dist.Normal(alpha_c, 1.0 / jax.numpy.sqrt(alpha_tau)))
            beta = numpyro.sample("beta", dist.Normal(beta_c, 1.0 / jax.numpy.sqrt(beta_tau)))
        mu = alpha[:, None] + beta[:, None] * (x - xbar)[None, :]
        numpyro.sample("Y", dist.Normal(mu, 1.0 / jax.numpy.sqrt(tau_c)), obs=Y)

    mcmc = MCMC(NUTS(rats), num_warmup=warmup, num_samples=draws, num_chains=chains,
                chain_method="sequential", progress_bar=False)
    t = time.perf_counter()
    mcmc.run(jax.random.PRNGKey(seed + 1), Y)            # JIT compile + sampling
    t_first = time.perf_counter() - t
    t = time.perf_counter()
    mcmc.run(jax.random.PRNGKey(seed), Y, extra_fields=("num_steps",))   # compiled code cached
    t_sample = time.perf_counter() - t
    s = mcmc.get_samples(group_by_chain=True)
    flat = np.concatenate([np.asarray(s[k]).reshape(chains, draws, -1) for k in sorted(s)], axis=-1)
    means = {k: float(np.mean(s[k])) for k in RATS_NODES}
    steps = (None, float(np.mean(mcmc.get_extra_fields()["num_steps"])))
    return max(t_first - t_sample, 0.0), t_sample, float(np.min(ess_bulk(flat))), means, steps


# Run by the interpreter that has PyMC (this venv or ``--pymc-python``): Rats with PyMC's NUTS,
# chains one after another; prints the timings and writes the draws (chain, draw, coordinate).
# Compile time: building the model and a 10-iteration run (pytensor's C compilation, cached);
# sampling time: the full run (with its graph rewriting, which every PyMC run pays).
PYMC_RATS = """
import json, sys, time
import numpy as np
import pymc as pm
chains, draws, warmup, seed, data, out = json.loads(sys.argv[1])
Y, x, xbar = np.asarray(data["Y"]), np.asarray(data["x"]), data["xbar"]
t = time.perf_counter()
with pm.Model() as rats:
    tau_c = pm.Gamma("tau.c", 0.001, 0.001)
    alpha_c = pm.Normal("alpha.c", 0.0, 1000.0)
    alpha_tau = pm.Gamma("alpha.tau", 0.001, 0.001)
    beta_c = pm.Normal("beta.c", 0.0, 1000.0)
    beta_tau = pm.Gamma("beta.tau", 0.001, 0.001)
    alpha = pm.Normal("alpha", alpha_c, 1.0 / pm.math.sqrt(alpha_tau), shape=Y.shape[0])
    beta = pm.Normal("beta", beta_c, 1.0 / pm.math.sqrt(beta_tau), shape=Y.shape[0])
    mu = alpha[:, None] + beta[:, None] * (x - xbar)[None, :]
    pm.Normal("Y", mu, 1.0 / pm.math.sqrt(tau_c), observed=Y)
    pm.sample(draws=5, tune=5, chains=1, random_seed=seed + 1, progressbar=False,
              compute_convergence_checks=False)      # C compilation, cached for the run below
t_compile = time.perf_counter() - t
t = time.perf_counter()
with rats:
    idata = pm.sample(draws=draws, tune=warmup, chains=chains, cores=1, random_seed=seed,
                      progressbar=False, compute_convergence_checks=False,
                      discard_tuned_samples=False)
t_sample = time.perf_counter() - t
steps = [float(idata.warmup_sample_stats["n_steps"].sum() + idata.sample_stats["n_steps"].sum()),
         float(idata.sample_stats["n_steps"].mean())]
post = idata.posterior
names = sorted(post.data_vars)
flat = np.concatenate([post[k].values.reshape(chains, draws, -1) for k in names], axis=-1)
np.save(out, flat)
means = {k: float(post[k].mean()) for k in names if post[k].ndim == 2}
print(json.dumps([t_compile, t_sample, means, pm.__version__, steps]))
"""


def sample_pymc(chains, draws, warmup, seed, python):
    """Rats with PyMC in ``python`` (a subprocess: PyMC lives in its own venv)."""
    import json
    import subprocess
    import tempfile
    from dcgraph.infer import ess_bulk
    _, Y, x, xbar = _rats_data()
    with tempfile.TemporaryDirectory() as tmp:
        out = str(pathlib.Path(tmp) / "draws.npy")
        args = json.dumps([chains, draws, warmup, seed,
                           {"Y": Y.tolist(), "x": x.tolist(), "xbar": xbar}, out])
        run = subprocess.run([python, "-c", PYMC_RATS, args], capture_output=True, text=True,
                             check=True)
        t_compile, t_sample, means, version, steps = json.loads(run.stdout.strip().splitlines()[-1])
        flat = np.load(out)
    print(f"(PyMC {version} from {python})")
    return t_compile, t_sample, float(np.min(ess_bulk(flat))), means, (int(steps[0]), steps[1])


def _pymc_python(a):
    """The interpreter to run PyMC with, or None (the comparison is skipped, saying why)."""
    import subprocess
    import sys
    for python in filter(None, (sys.executable, a.pymc_python)):
        if subprocess.run([python, "-c", "import pymc"], capture_output=True).returncode == 0:
            return python
    where = f" nor in {a.pymc_python}" if a.pymc_python else " (pass --pymc-python PATH)"
    print(f"(pymc is not installed in this environment{where}: skipped)")
    return None


def sample_peers(a):
    print(f"Rats NUTS, {a.chains} chains x {a.draws} draws after {a.warmup} warm-up, sequential chains")
    rows = [("dcgraph", sample_dcgraph)]
    rows.append(("numpyro", sample_numpyro))
    python = _pymc_python(a)
    if python is not None:
        rows.append(("pymc", lambda *args: sample_pymc(*args, python)))
    print(f"{'library':10s} {'compile s':>10s} {'sample s':>9s} {'min ESS':>8s} {'ESS/s':>8s} "
          f"{'gradients':>9s} {'steps/draw':>10s}  " + " ".join(f"{k:>10s}" for k in RATS_NODES))
    for label, run in rows:
        t_compile, t_sample, ess, means, (grads, per_draw) = run(a.chains, a.draws, a.warmup, a.seed)
        print(f"{label:10s} {t_compile:10.2f} {t_sample:9.2f} {ess:8.0f} {ess / t_sample:8.1f} "
              f"{grads if grads is not None else '-':>9} {per_draw:10.2f}  "
              + " ".join(f"{means[k]:10.4g}" for k in RATS_NODES), flush=True)


def auto_against_nuts(a):
    """Pumps and Seeds: the auto assignment against NUTS for every continuous node, in the same
    run, ``--rounds`` times alternating; wall and CPU time of sampling (``time.process_time``,
    this process: the chains run in it), min bulk ESS over every monitored node, ESS per second
    of each, and the sampler assignment."""
    from dcgraph.bugs.fit import sample
    from dcgraph.infer import ess_bulk
    print(f"{a.chains} chains x {a.draws} draws after {a.warmup} warm-up, sequential chains")
    print(f"{'example':8s} {'sampler':8s} {'wall s':>8s} {'CPU s':>8s} {'min ESS':>8s} "
          f"{'ESS/wall-s':>10s} {'ESS/CPU-s':>10s}")
    for name in ("pumps", "seeds"):
        d = EXAMPLES / name
        model = B.compile(d / "model.txt", d / "data.txt", d / "inits.txt")
        for _ in range(a.rounds):
            for sampler in ("auto", "nuts"):
                t, c = time.perf_counter(), time.process_time()
                fit = sample(model, chains=a.chains, draws=a.draws, warmup=a.warmup, seed=a.seed,
                             sampler=sampler, progress=False)
                t_sample, c_sample = time.perf_counter() - t, time.process_time() - c
                ess = float(np.min(ess_bulk(fit.draws)))
                print(f"{name:8s} {sampler:8s} {t_sample:8.2f} {c_sample:8.2f} {ess:8.0f} "
                      f"{ess / t_sample:10.1f} {ess / c_sample:10.1f}", flush=True)
        print(model.samplers())


if __name__ == "__main__":
    import sys
    if "--sample" in sys.argv or "--auto" in sys.argv:
        ap = argparse.ArgumentParser()
        ap.add_argument("--sample", action="store_true")
        ap.add_argument("--auto", action="store_true")
        ap.add_argument("--pymc-python", default=None,
                        help="a Python with PyMC installed (its own venv) for the Rats comparison")
        ap.add_argument("--chains", type=int, default=4)
        ap.add_argument("--draws", type=int, default=1000)
        ap.add_argument("--warmup", type=int, default=1000)
        ap.add_argument("--seed", type=int, default=0)
        ap.add_argument("--rounds", type=int, default=1, help="--auto: repetitions (take the minimum)")
        args = ap.parse_args()
        auto_against_nuts(args) if args.auto else sample_peers(args)
    else:
        main()
