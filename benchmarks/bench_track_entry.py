"""Fixed cost of one ``dcgraph.track`` call: ``track(f, ...)`` less ``f(...)``, in ns.

``f0`` returns its argument (one traced level: the cost is ``track``'s own plus one frame's
prologue and return); the other rows take the paths a call can take besides: a keyword
argument, a bound method, a summary run, an argument the operator scan walks (a list), and
``geom`` (about five levels, as in ``bench_track``). Each variant is timed in blocks of
``--number`` calls, the variants alternated round by round; the minimum per call is kept,
less the loop's own cost (an empty lambda).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_track_entry.py [--rounds N] [--number N]
"""
from __future__ import annotations

import argparse
import platform
import time

import numpy as np

import dcgraph


def f0(x):
    return x


def geom(n, beta, rng):
    return n if rng.random() < beta else geom(n + 1, beta, rng)


class Box:
    def get(self, x):
        return x


def variants():
    """name -> (plain call, traced call)."""
    track, box, items = dcgraph.track, Box(), [1.0, 2.0]
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    return {
        "f0(1)": (lambda: f0(1), lambda: track(f0, 1)),
        "f0(x=1)": (lambda: f0(x=1), lambda: track(f0, x=1)),
        "box.get(1)": (lambda: box.get(1), lambda: track(box.get, 1)),
        "f0(1) summary": (lambda: f0(1), lambda: track(f0, 1, values="summary")),
        "f0([1.0, 2.0])": (lambda: f0(items), lambda: track(f0, items)),
        "geom(0, 0.2)": (lambda: geom(0, 0.2, rng_a), lambda: track(geom, 0, 0.2, rng_b)),
    }


def block(fn, number: int) -> float:
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--number", type=int, default=20000)
    opts = parser.parse_args(argv)
    print(f"CPython {platform.python_version()}")
    cases = variants()
    empty = lambda: None  # noqa: E731
    best: dict = {}
    for _ in range(opts.rounds):
        best["empty"] = min(best.get("empty", 1.0), block(empty, opts.number))
        for name, (plain, traced) in cases.items():
            for key, fn in ((name, plain), (name + " track", traced)):
                best[key] = min(best.get(key, 1.0), block(fn, opts.number))
    loop = best["empty"]
    print(f"{'case':16s} {'plain':>9s} {'track':>9s} {'track - plain':>14s} {'ratio':>7s}")
    for name in cases:
        plain, traced = best[name] - loop, best[name + " track"] - loop
        print(f"{name:16s} {plain * 1e9:7.0f}ns {traced * 1e9:7.0f}ns "
              f"{(traced - plain) * 1e9:12.0f}ns {traced / plain:6.2f}x")


if __name__ == "__main__":
    main()
