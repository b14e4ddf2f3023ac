"""Cost of one traced call level: ``track`` of ``geom`` at depth 1 (``beta=1.0``: every draw
stops it) against ``beta=0.02`` (about 47 levels on the seeded draws), per level as the slope
between them, beside the plain call's. Rounds alternate the four variants; the minimum of each is
kept; the cyclic collector is off while timing. ``--cpu``: the process's CPU time instead of
wall time (steadier when other processes share the machine). ``--first``: also ``track`` of
``geom`` at exactly 1, 2, 3 and 4 levels (seeded draws, ``beta=0.5``): the first recursive
level of a run (decided by the call hook, which fills the call site) against the later ones
(taken at the site).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_call_levels.py [--rounds N] [--cpu] [--first]
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


def first_levels(rounds: int, calls: int = 300, clock=CLOCK) -> dict:
    """depth -> nanoseconds per ``track(geom, 0, 0.5, rng)`` whose draws stop it at exactly
    that depth (each round restores every generator's state first)."""
    seeds = {}
    for depth in (1, 2, 3, 4):
        seeds[depth] = next(s for s in range(10_000)
                            if geom(0, 0.5, np.random.default_rng(s)) == depth - 1)
    gens = {d: [np.random.default_rng(s) for _ in range(calls)] for d, s in seeds.items()}
    states = {d: [g.bit_generator.state for g in gs] for d, gs in gens.items()}
    now, best = clock["clock"], {}
    for _ in range(rounds):
        for depth, gs in gens.items():
            for g, state in zip(gs, states[depth]):
                g.bit_generator.state = state
            t0 = now()
            for g in gs:
                dcgraph.track(geom, 0, 0.5, g)
            best[depth] = min(best.get(depth, float("inf")), (now() - t0) / calls)
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--cpu", action="store_true", help="time with the process's CPU time")
    parser.add_argument("--first", action="store_true",
                        help="also the first recursive level of a run against the later ones")
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
        first = first_levels(opts.rounds) if opts.first else None
    finally:
        if enabled:
            gc.enable()
    plain = (best[(0.02, False)] - best[(1.0, False)]) / (depth - 1)
    traced = (best[(0.02, True)] - best[(1.0, True)]) / (depth - 1)
    print(f"mean depth {depth:.1f}: per level plain {plain:.0f} ns, track {traced:.0f} ns "
          f"(+{traced - plain:.0f} ns); depth 1: plain {best[(1.0, False)]:.0f} ns, "
          f"track {best[(1.0, True)]:.0f} ns")
    if first is not None:
        print("track at exactly 1..4 levels: " + ", ".join(f"{v:.0f}" for v in first.values())
              + f" ns; first recursive level {first[2] - first[1]:.0f} ns, later ones "
              f"{(first[4] - first[2]) / 2:.0f} ns")


if __name__ == "__main__":
    main()
