"""Cost of tracing: ratio of ``track(f)`` to ``f``, measured in the same run.

Columns: ``floor`` is the plain run plus one bare C-level ``list.append`` per value the run
records (the event count of a traced run times the measured cost of an append in a loop of
appends): no recorder that logs values one by one can cost less.
``track`` is the run with probes recording the event log (the tape is built lazily);
``track+tape`` also builds every node; ``settrace`` is the same call under ``sys.settrace``
with opcode events and a do-nothing tracer (the cheapest thing a settrace tracer can do).
Timings are interleaved (plain, track, ...) round by round and the minimum of each is kept:
numpy timings depend on allocation patterns, so separate blocks would mislead.

    .venv/bin/python benchmarks/bench_track.py [--rounds N]
"""
from __future__ import annotations

import argparse
import math
import platform
import sys
import time

import numpy as np

import dcgraph


def sin_loop(x, n):
    s = 0.0
    for i in range(n):
        s += math.sin(x * i)
    return s


def hierarchical_normal(y, mu, tau, sigma):
    """log density of y[i][j] ~ N(theta[i], sigma), theta[i] ~ N(mu, tau); theta = mean(y[i])."""
    lp = 0.0
    for i in range(len(y)):
        row = y[i]
        theta = sum(row) / len(row)
        lp += -0.5 * ((theta - mu) / tau) ** 2 - math.log(tau)
        for j in range(len(row)):
            lp += -0.5 * ((row[j] - theta) / sigma) ** 2 - math.log(sigma)
    return lp


def geom(n, beta, rng):
    return n if rng.random() < beta else geom(n + 1, beta, rng)


def logistic_loss(X, w, y):
    z = X @ w
    return np.sum(np.logaddexp(0.0, z) - y * z)


def _tracer(frame, event, arg):
    frame.f_trace_opcodes = True
    return _tracer


def settrace_call(f, args):
    sys.settrace(_tracer)
    try:
        return f(*args)
    finally:
        sys.settrace(None)


def cases():
    rng = np.random.default_rng(0)
    y = rng.normal(size=(30, 5)).tolist()
    X = rng.normal(size=(20000, 10))
    w = rng.normal(size=10)
    t = (rng.random(20000) < 0.5).astype(float)
    return [
        ("sin loop (200)", sin_loop, lambda: (0.3, 200), 20),
        ("hierarchical normal (30x5)", hierarchical_normal, lambda: (y, 0.1, 1.2, 0.8), 20),
        ("geom (beta=0.2)", geom, lambda: (0, 0.2, np.random.default_rng(3)), 200),
        ("numpy logistic (20000x10)", logistic_loss, lambda: (X, w, t), 20),
    ]


def events_of(f, args, number: int) -> float:
    """Events a traced run of ``f(*args)`` logs, averaged over ``number`` runs on the same
    arguments (as timed: a seeded generator draws on); read off each run as it closes."""
    from dcgraph.tracer import recorder
    seen = []
    close = recorder.Run.close

    def counting_close(run):
        seen.append(len(run.log))
        close(run)

    recorder.Run.close = counting_close
    try:
        for _ in range(number):
            dcgraph.track(f, *args)
    finally:
        recorder.Run.close = close
    return sum(seen) / len(seen)


def append_cost(rounds: int = 7) -> float:
    """Seconds per bare ``list.append`` of a value already at hand (10 per loop iteration,
    less the empty loop)."""
    log, v, n = [], 1.0, 20000
    ap = log.append

    def appends():
        for _ in range(n):
            ap(v); ap(v); ap(v); ap(v); ap(v); ap(v); ap(v); ap(v); ap(v); ap(v)  # noqa: E702
        log.clear()

    def empty():
        for _ in range(n):
            pass
    full = min(best(appends, 1) for _ in range(rounds))
    base = min(best(empty, 1) for _ in range(rounds))
    return max(full - base, 0.0) / (10 * n)


def best(fn, number):
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    opts = parser.parse_args(argv)
    print(f"CPython {platform.python_version()}, numpy {np.__version__}")
    append = append_cost()
    print(f"one C-level list.append: {append * 1e9:.1f} ns")
    print(f"{'case':30s} {'plain':>10s} {'floor':>7s} {'track':>8s} {'track+tape':>11s} "
          f"{'settrace':>9s}")
    for name, f, make_args, number in cases():
        # Each variant gets its own arguments: a seeded generator per variant makes every
        # variant draw the same sequence over the same number of calls.
        a, b, c, d = make_args(), make_args(), make_args(), make_args()
        timings = {"plain": [], "track": [], "tape": [], "settrace": []}
        runs = {
            "plain": lambda: f(*a),
            "track": lambda: dcgraph.track(f, *b),
            "tape": lambda: len(dcgraph.track(f, *c)[1].nodes),
            "settrace": lambda: settrace_call(f, d),
        }
        for _ in range(opts.rounds):
            for key, run in runs.items():
                timings[key].append(best(run, number))
        plain = min(timings["plain"])
        ratio = {k: min(v) / plain for k, v in timings.items()}
        floor = 1 + events_of(f, make_args(), number) * append / plain
        print(f"{name:30s} {plain * 1e6:8.1f}us {floor:6.2f}x {ratio['track']:7.2f}x "
              f"{ratio['tape']:10.1f}x {ratio['settrace']:8.1f}x")


if __name__ == "__main__":
    main()
