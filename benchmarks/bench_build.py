"""Cost of building and linting tapes, per node, and of a first-call ``grad`` (issue #15 part 2).

Run:  .venv/bin/python benchmarks/bench_build.py [--rounds N] [--big]

Cases: a loop of ``t += math.sin(i * 0.1)`` (50,000 iterations, 250,006 nodes; with ``--big``
also 200,000 iterations, 1,000,006 nodes): the build (``tape.nodes``, the replay of the run's
log, with the cyclic collector as ``track`` leaves it: paused during the build, one young
collection when it is enabled again), the same build with the collector disabled throughout
(the replay alone), ``tape.lint()``, and the bytes the build allocates per node
(``tracemalloc``). Then the Rats-style scalar log density of ``bench_grad`` (30 x 5 loops, 3,225
nodes): a fresh ``dcgraph.grad(f)`` called once (trace, build, backward sweep) against the plain
call, and its build alone. Times are process CPU time, the minimum over rounds (numpy imported).
To compare two trees, run each with ``PYTHONPATH=<tree>`` in turn, alternating.
"""
from __future__ import annotations

import argparse
import gc
import math
import os
import sys
import time
import tracemalloc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy  # noqa: E402,F401  (a realistic heap: numpy imported)

import dcgraph  # noqa: E402
from dcgraph import ad  # noqa: E402

import bench_grad  # noqa: E402

clock = time.process_time


def sin_terms(n):
    t = 0.0
    for i in range(n):
        t += math.sin(i * 0.1)
    return t


def build_and_lint(n: int, rounds: int) -> dict:
    """Per node: build (collector as track leaves it), build with it off, lint."""
    best = {"build": math.inf, "build, collector off": math.inf, "lint": math.inf}
    nodes = 0
    for _ in range(rounds):
        _, tape = dcgraph.track(sin_terms, n)
        t0 = clock()
        tape.nodes
        t1 = clock()
        tape.lint()
        t2 = clock()
        nodes = sum(1 for _ in tape.walk())
        best["build"] = min(best["build"], (t1 - t0) / nodes)
        best["lint"] = min(best["lint"], (t2 - t1) / nodes)
        del tape
        gc.collect()
        _, tape = dcgraph.track(sin_terms, n)
        gc.disable()
        try:
            t0 = clock()
            tape.nodes
            t1 = clock()
        finally:
            gc.enable()
        best["build, collector off"] = min(best["build, collector off"], (t1 - t0) / nodes)
        del tape
        gc.collect()
    return {"nodes": nodes, **{k: v * 1e6 for k, v in best.items()}}


def bytes_per_node(n: int) -> tuple[float, float]:
    _, tape = dcgraph.track(sin_terms, n)
    gc.collect()
    tracemalloc.start()
    try:
        tape.nodes
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    nodes = sum(1 for _ in tape.walk())
    return kept / nodes, peak / nodes


def first_grad(rounds: int) -> dict:
    f, args = bench_grad.rats_logp, bench_grad.make_data()["rats"]
    for _ in range(3):
        ad.grad(f)(*args)            # instrumentation and rule caches warm
    plain = grad = build = math.inf
    for _ in range(rounds):
        t0 = clock()
        for _ in range(20):
            f(*args)
        plain = min(plain, (clock() - t0) / 20)
        t0 = clock()
        ad.grad(f)(*args)
        grad = min(grad, clock() - t0)
        _, tape = dcgraph.track(f, *args)
        t0 = clock()
        tape.nodes
        build = min(build, clock() - t0)
    nodes = sum(1 for _ in tape.walk())
    return {"plain us": plain * 1e6, "first grad / plain": grad / plain,
            "build / plain": build / plain, "build us/node": build / nodes * 1e6}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--big", action="store_true", help="also the 200,000-iteration loop")
    opts = p.parse_args(argv)
    print(f"CPython {sys.version.split()[0]}, dcgraph from {os.path.dirname(dcgraph.__file__)}")
    for n in (50_000, 200_000) if opts.big else (50_000,):
        r = build_and_lint(n, opts.rounds if n == 50_000 else 1)
        print(f"sin loop x {n}: {r['nodes']} nodes, build {r['build']:.2f} us/node "
              f"(collector off: {r['build, collector off']:.2f}), lint {r['lint']:.2f} us/node")
    kept, peak = bytes_per_node(50_000)
    print(f"bytes per node (tracemalloc, sin loop x 50000): {kept:.0f} kept, {peak:.0f} peak")
    g = first_grad(opts.rounds * 5)
    print(f"Rats 30 x 5, first-call grad: plain {g['plain us']:.1f} us, grad "
          f"{g['first grad / plain']:.0f}x plain, of which build {g['build / plain']:.0f}x "
          f"({g['build us/node']:.2f} us/node)")


if __name__ == "__main__":
    main()
