"""Two pieces of ``track``'s fixed cost timed alone, in ns: the recursion-limit raise and
restore of a lone run (``headroom.widened`` + ``narrowed``) and the remembered root's check
(``roots.known``). ``timeit``, the minimum over rounds of blocks.

``--against DIR``: also time the ``dcgraph`` package of another tree (copied to a temporary
directory as ``dcgraph_against``), interleaved in the same process.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_track_pieces.py [--rounds N] [--against DIR]
"""
from __future__ import annotations

import argparse
import importlib
import platform
import timeit

from bench_track_entry import against as imported


def f0(x):
    return x


class Run:
    """A stand-in run (keyed by identity)."""


def pieces(package: str) -> dict:
    """name -> (statement, namespace) for the package ``package``."""
    track = importlib.import_module(f"{package}.tracer.track")
    headroom = importlib.import_module(f"{package}.tracer.headroom")
    roots = importlib.import_module(f"{package}.tracer.roots")
    importlib.import_module(package).track(f0, 1)           # remembered as a root
    return {"widened + narrowed": ("w(run, 3); n(run)", dict(w=headroom.widened,
                                                              n=headroom.narrowed, run=Run())),
            "known(f0, ctx)": ("k(f0, ctx)", dict(k=roots.known, f0=f0,
                                                  ctx=track._DEFAULT_CONTEXT))}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--number", type=int, default=200_000)
    parser.add_argument("--against", metavar="DIR", help="another tree to time alongside")
    opts = parser.parse_args(argv)
    print(f"CPython {platform.python_version()}")
    trees = {"this": pieces("dcgraph")}
    if opts.against:
        imported(opts.against)
        trees["against"] = pieces("dcgraph_against")
    best: dict = {}
    for _ in range(opts.rounds):
        for label, named in trees.items():
            for name, (stmt, space) in named.items():
                t = min(timeit.repeat(stmt, globals=space, number=opts.number, repeat=3))
                best[name, label] = min(best.get((name, label), 1.0), t / opts.number)
    print(f"{'piece':20s}" + "".join(f" {label:>9s}" for label in trees))
    for name in trees["this"]:
        print(f"{name:20s}" + "".join(f" {best[name, label] * 1e9:7.1f}ns" for label in trees))


if __name__ == "__main__":
    main()
