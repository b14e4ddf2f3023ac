"""Expression models (issue #10): log density + gradient against hand-written numpy, and NUTS
ESS per second against NumPyro on the same model (when NumPyro is installed).

Models: the regression of the issue (1,000 x 10 data, normal priors, a uniform prior on the
noise scale) and a scalar-loop hierarchical model (eight schools, one ``param()`` per school in
a Python loop). The hand-written versions compute the same unconstrained log density (with the
log-Jacobian) and its gradient with numpy (for the hierarchical model also as a scalar Python
loop, the way the model is written); the ratio is model time / hand-written time (target:
within 1.5x). NUTS: minimum bulk ESS per second of sampling (warm-up and NumPyro's JIT compilation excluded).

    python benchmarks/bench_models.py [--repeats 2000] [--draws 1000] [--warmup 500] [--no-nuts]
                                      [--clock wall|cpu]
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

from dcgraph.infer import ess_bulk
from dcgraph.models import model, normal, param, uniform


@model
def regression(X, y):
    w = param(shape=X.shape[1])
    b = param()
    s = param(lower=0.0)
    w |= normal(0.0, 10.0)
    b |= normal(0.0, 10.0)
    s |= uniform(0.0, 5.0)
    y |= normal(X @ w + b, s)


def regression_by_hand(theta, X, y):
    k = X.shape[1]
    w, b, u = theta[:k], theta[k], theta[k + 1]
    s = math.exp(u)
    if not s < 5.0:
        return -math.inf, np.zeros_like(theta)
    r = (y - X @ w - b) / s
    c = 0.5 * math.log(2 * math.pi)
    lp = (-0.5 * (w @ w) / 100.0 - k * (math.log(10.0) + c) - 0.5 * b * b / 100.0
          - math.log(10.0) - c - math.log(5.0) + u - 0.5 * (r @ r) - len(y) * (u + c))
    g = np.empty_like(theta)
    g[:k] = -w / 100.0 + X.T @ r / s
    g[k] = -b / 100.0 + r.sum() / s
    g[k + 1] = 1.0 + (r @ r) - len(y)
    return lp, g


@model
def schools(y, sigma):
    mu = param()
    tau = param(lower=0.0)
    mu |= normal(0.0, 5.0)
    tau |= normal(0.0, 5.0)
    for j in range(len(y)):
        theta = param()
        theta |= normal(mu, tau)
        y[j] |= normal(theta, sigma[j])


def schools_by_hand(t, y, sigma):
    mu, u, th = t[0], t[1], t[2:]
    tau = math.exp(u)
    c = 0.5 * math.log(2 * math.pi)
    z = (th - mu) / tau
    e = (y - th) / sigma
    lp = (-0.5 * mu * mu / 25 - math.log(5.0) - c - 0.5 * tau * tau / 25 - math.log(5.0) - c + u
          - 0.5 * (z @ z) - len(y) * (u + c) - 0.5 * (e @ e) - np.log(sigma).sum() - len(y) * c)
    g = np.empty_like(t)
    g[0] = -mu / 25 + z.sum() / tau
    g[1] = -tau * tau / 25 + 1.0 + (z @ z) - len(y)
    g[2:] = -z / tau + e / sigma
    return lp, g


def schools_by_hand_loop(t, y, sigma):
    """The same, written as the model is: a Python loop over schools, scalar math."""
    mu, u = float(t[0]), float(t[1])
    tau = math.exp(u)
    c = 0.5 * math.log(2 * math.pi)
    lp = -0.5 * mu * mu / 25 - math.log(5.0) - c - 0.5 * tau * tau / 25 - math.log(5.0) - c + u
    g = np.empty_like(t)
    g_mu, g_u = -mu / 25, -tau * tau / 25 + 1.0
    for j in range(len(y)):
        th, s = float(t[2 + j]), float(sigma[j])
        z, e = (th - mu) / tau, (float(y[j]) - th) / s
        lp += -0.5 * z * z - u - c - 0.5 * e * e - math.log(s) - c
        g_mu += z / tau
        g_u += z * z - 1.0
        g[2 + j] = -z / tau + e / s
    g[0], g[1] = g_mu, g_u
    return lp, g


CLOCK = {"wall": time.perf_counter, "cpu": time.process_time}
clock = time.perf_counter


def per_call(fn, repeats):
    fn()
    best = math.inf
    for _ in range(3):
        t0 = clock()
        for _ in range(repeats):
            fn()
        best = min(best, (clock() - t0) / repeats)
    return best


def compare(name, bound, by_hand, args, repeats, rng):
    theta = rng.normal(scale=0.3, size=bound.dim)
    v1, g1 = bound.logdensity_and_grad(theta)
    v2, g2 = by_hand(theta, *args)
    assert abs(v1 - v2) < 1e-8 * max(1.0, abs(v2)) and np.allclose(g1, g2, rtol=1e-8, atol=1e-8), \
        (name, v1, v2)
    for _ in range(3):
        bound.logdensity_and_grad(theta)                # reach the compiled path
    t_model = per_call(lambda: bound.logdensity_and_grad(theta), repeats)
    t_hand = per_call(lambda: by_hand(theta, *args), repeats)
    print(f"{name:28s} model {t_model * 1e6:8.1f} us   by hand {t_hand * 1e6:8.1f} us   "
          f"ratio {t_model / t_hand:5.2f}x   ({bound.gradient_cache.stats['hits']} compiled hits)")


def nuts_dcgraph(X, y, draws, warmup, seed=0):
    fit = regression.sample(X, y, chains=1, draws=draws, warmup=warmup, seed=seed, progress=False)
    ess = float(np.min(ess_bulk(fit.draws)))
    return ess, float(fit.elapsed[:, 1].sum())


def nuts_numpyro(X, y, draws, warmup, seed=0):
    try:
        import jax
        import numpyro
        import numpyro.distributions as nd
        from numpyro.infer import MCMC, NUTS
    except ImportError:
        return None
    jax.config.update("jax_platform_name", "cpu")

    def reg(X, y):
        w = numpyro.sample("w", nd.Normal(0.0, 10.0).expand([X.shape[1]]).to_event(1))
        b = numpyro.sample("b", nd.Normal(0.0, 10.0))
        s = numpyro.sample("s", nd.Uniform(0.0, 5.0))
        numpyro.sample("y", nd.Normal(X @ w + b, s), obs=y)

    mcmc = MCMC(NUTS(reg), num_warmup=warmup, num_samples=draws, progress_bar=False)
    mcmc.warmup(jax.random.PRNGKey(seed), X, y)            # compiles and adapts (not timed)
    mcmc.run(mcmc.post_warmup_state.rng_key, X, y)         # compiles the sampling loop
    t0 = time.perf_counter()
    mcmc.run(mcmc.post_warmup_state.rng_key, X, y)         # timed: sampling only
    jax.block_until_ready(mcmc.get_samples()["w"])
    elapsed = time.perf_counter() - t0
    s = mcmc.get_samples()
    draws_ = np.concatenate([np.asarray(s["w"]), np.asarray(s["b"])[:, None],
                             np.asarray(s["s"])[:, None]], axis=1)[None]
    return float(np.min(ess_bulk(draws_))), elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=2000)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--no-nuts", action="store_true")
    ap.add_argument("--clock", choices=sorted(CLOCK), default="wall",
                    help="per-call timer: wall (perf_counter) or cpu (process_time: steadier on "
                         "a loaded machine; run with OPENBLAS_NUM_THREADS=1)")
    a = ap.parse_args()
    global clock
    clock = CLOCK[a.clock]
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 10))
    y = X @ rng.normal(size=10) + 1.0 + 0.5 * rng.normal(size=1000)
    print("log density + gradient (best of 3 x repeats, compiled path)")
    compare("regression 1000x10", regression(X, y), regression_by_hand, (X, y), a.repeats, rng)
    ys = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
    sig = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])
    compare("hierarchical J=8 vs numpy", schools(ys, sig), schools_by_hand, (ys, sig),
            a.repeats, rng)
    compare("hierarchical J=8 vs loop", schools(ys, sig), schools_by_hand_loop, (ys, sig),
            a.repeats, rng)
    if a.no_nuts:
        return
    print(f"NUTS on the regression, 1 chain, {a.warmup} warm-up + {a.draws} draws "
          f"(min bulk ESS / sampling seconds)")
    ess, secs = nuts_dcgraph(X, y, a.draws, a.warmup)
    print(f"  dcgraph.models  ESS {ess:7.1f}  in {secs:6.2f} s  -> {ess / secs:8.1f} ESS/s")
    peer = nuts_numpyro(X, y, a.draws, a.warmup)
    if peer is None:
        print("  numpyro         not installed (pip install numpyro): skipped")
    else:
        print(f"  numpyro         ESS {peer[0]:7.1f}  in {peer[1]:6.2f} s  -> {peer[0] / peer[1]:8.1f} ESS/s"
              f"   (dcgraph / numpyro = {(ess / secs) / (peer[0] / peer[1]):.3f})")


if __name__ == "__main__":
    main()
