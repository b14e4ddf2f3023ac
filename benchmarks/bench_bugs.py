"""BUGS compiler speed: compile time of each Volume 1 example, and for Rats one log density with
its gradient (``BUGSModel.logdensity_and_grad``, the traced generated code through the compiled
replay) against a hand-written numpy log density with a hand-written gradient, in the same run.

    python benchmarks/bench_bugs.py [--rounds 5] [--calls 2000] [--clock cpu|wall]

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


if __name__ == "__main__":
    main()
