"""Cost of one traced call level: ``track`` of ``geom`` at depth 1 (``beta=1.0``: every draw
stops it) against ``beta=0.02`` (about 47 levels on the seeded draws), per level as the slope
between them, beside the plain call's. Rounds alternate the four variants; the minimum of each is
kept; the cyclic collector is off while timing. ``--cpu``: the process's CPU time instead of
wall time (steadier when other processes share the machine).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_call_levels.py [--rounds N] [--cpu]
"""
from __future__ import annotations

import argparse
import gc
import sys
import time

import numpy as np

import dcgraph


def geom(n, beta, rng):
    return n if rng.random() < beta else geom(n + 1, beta, rng)


CLOCK = {"clock": time.perf_counter_ns}


def per_call(beta: float, calls: int, traced: bool, clock=CLOCK) -> float:
    """Nanoseconds per call of ``geom(0, beta, rng)`` (under ``track`` when ``traced``)."""
    rng = np.random.default_rng(3)
    now = clock["clock"]
    t0 = now()
    if traced:
        for _ in range(calls):
            dcgraph.track(geom, 0, beta, rng)
    else:
        for _ in range(calls):
            geom(0, beta, rng)
    return (now() - t0) / calls


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--cpu", action="store_true", help="time with the process's CPU time")
    opts = parser.parse_args(argv)
    CLOCK["clock"] = time.process_time_ns if opts.cpu else time.perf_counter_ns
    calls = 300
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))
    rng = np.random.default_rng(3)
    depth = sum(geom(0, 0.02, rng) + 1 for _ in range(calls)) / calls
    best: dict = {}
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(opts.rounds):
            for key in ((1.0, False), (1.0, True), (0.02, False), (0.02, True)):
                best[key] = min(best.get(key, float("inf")), per_call(*key[:1], calls, key[1]))
    finally:
        if enabled:
            gc.enable()
    plain = (best[(0.02, False)] - best[(1.0, False)]) / (depth - 1)
    traced = (best[(0.02, True)] - best[(1.0, True)]) / (depth - 1)
    print(f"mean depth {depth:.1f}: per level plain {plain:.0f} ns, track {traced:.0f} ns "
          f"(+{traced - plain:.0f} ns); depth 1: plain {best[(1.0, False)]:.0f} ns, "
          f"track {best[(1.0, True)]:.0f} ns")


if __name__ == "__main__":
    main()
