"""Fixed cost of one ``dcgraph.track`` call: ``track(f, ...)`` less ``f(...)``, in ns.

``f0`` returns its argument (one traced level: the cost is ``track``'s own plus one frame's
prologue and return); the other rows take the paths a call can take besides: a keyword
argument, a bound method, a summary run, an argument the operator scan walks (a list), and
``geom`` (about five levels, as in ``bench_track``). Each variant is timed in blocks of
``--number`` calls, the variants alternated round by round; the minimum per call is kept,
less the loop's own cost (an empty lambda).

``--against DIR``: also time the ``dcgraph`` package of another tree (``DIR/dcgraph``, copied to
a temporary directory as ``dcgraph_against``: the tracer's imports are relative) in the same
process, interleaved with this one (an A/B less exposed to the load of a shared machine than
alternated processes).

    PYTHONPATH=. .venv/bin/python benchmarks/bench_track_entry.py [--rounds N] [--number N]
        [--against DIR]
"""
from __future__ import annotations

import argparse
import atexit
import importlib
import platform
import shutil
import sys
import tempfile

import numpy as np

import dcgraph
from bench_track import best as block    # seconds per call of fn, over a block of calls


def f0(x):
    return x


def geom(n, beta, rng):
    return n if rng.random() < beta else geom(n + 1, beta, rng)


class Box:
    def get(self, x):
        return x


def variants(tracks: dict):
    """name -> {"plain": call, label: traced call for each ``tracks`` label}."""
    box, items = Box(), [1.0, 2.0]
    rngs = {label: np.random.default_rng(3) for label in ("plain", *tracks)}
    cases = {
        "f0(1)": (lambda: f0(1), lambda track, rng: lambda: track(f0, 1)),
        "f0(x=1)": (lambda: f0(x=1), lambda track, rng: lambda: track(f0, x=1)),
        "box.get(1)": (lambda: box.get(1), lambda track, rng: lambda: track(box.get, 1)),
        "f0(1) summary": (lambda: f0(1),
                          lambda track, rng: lambda: track(f0, 1, values="summary")),
        "f0([1.0, 2.0])": (lambda: f0(items), lambda track, rng: lambda: track(f0, items)),
        "geom(0, 0.2)": (lambda: geom(0, 0.2, rngs["plain"]),
                         lambda track, rng: lambda: track(geom, 0, 0.2, rng)),
    }
    return {name: {"plain": plain, **{label: traced(track, rngs[label])
                                      for label, track in tracks.items()}}
            for name, (plain, traced) in cases.items()}


def against(tree: str):
    """``track`` of the ``dcgraph`` package in ``tree``, imported as ``dcgraph_against``."""
    where = tempfile.mkdtemp(prefix="bench_track_entry_")
    atexit.register(shutil.rmtree, where, True)
    shutil.copytree(f"{tree}/dcgraph", f"{where}/dcgraph_against", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    sys.path.insert(0, where)
    return importlib.import_module("dcgraph_against").track


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--against", metavar="DIR", help="another tree to time alongside")
    opts = parser.parse_args(argv)
    print(f"CPython {platform.python_version()}")
    tracks = {"track": dcgraph.track}
    if opts.against:
        tracks["against"] = against(opts.against)
    cases = variants(tracks)
    empty = lambda: None  # noqa: E731
    best: dict = {}
    for _ in range(opts.rounds):
        best["empty"] = min(best.get("empty", 1.0), block(empty, opts.number))
        for name, calls in cases.items():
            for label, fn in calls.items():
                key = (name, label)
                best[key] = min(best.get(key, 1.0), block(fn, opts.number))
    loop = best["empty"]
    print(f"{'case':16s} {'plain':>9s}" + "".join(
        f" {label:>9s} {label + ' - plain':>17s} {'ratio':>6s}" for label in tracks))
    for name in cases:
        plain = best[name, "plain"] - loop
        line = f"{name:16s} {plain * 1e9:7.0f}ns"
        for label in tracks:
            traced = best[name, label] - loop
            line += f" {traced * 1e9:7.0f}ns {(traced - plain) * 1e9:15.0f}ns " \
                    f"{traced / plain:5.2f}x"
        print(line)


if __name__ == "__main__":
    main()
