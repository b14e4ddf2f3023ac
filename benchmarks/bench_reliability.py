"""Scaling of the tracer's fixed work: instrumenting long functions, building and linting
large tapes. Prints per-unit costs and the ratio between sizes (2.0 for linear growth when
the size doubles; the issue measured 99 s for the first ``track`` of a 1,600-line function).

    .venv/bin/python benchmarks/bench_reliability.py
"""
from __future__ import annotations

import gc
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "reliability"))

import dcgraph  # noqa: E402
from dcgraph.tracer.instrument import instrument  # noqa: E402
from big_functions import big_try_source  # noqa: E402


def instrument_time(lines: int, names: int) -> float:
    ns: dict = {}
    exec(compile(big_try_source(lines, names, seed=1), "<big>", "exec"), ns)
    t0 = time.perf_counter()
    info = instrument(ns["big"].__code__)
    assert info.error is None, info.error
    return time.perf_counter() - t0


def loop(n):
    total = 0.0
    for k in range(n):
        total = total + k * 0.5
    return total


def build_and_lint(n: int) -> tuple[float, float, int]:
    _, tape = dcgraph.track(loop, n)
    gc.collect()
    t0 = time.perf_counter()
    len(tape)
    t1 = time.perf_counter()
    tape.lint()
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, sum(1 for _ in tape.walk())


def main() -> None:
    print("first instrumentation of a generated function (try block, 1 local per 4 lines)")
    prev = None
    for lines in (200, 400, 800, 1600):
        t = min(instrument_time(lines, lines // 4) for _ in range(3))
        ratio = f"  x{t / prev:.2f} for 2x lines" if prev else ""
        print(f"  {lines:5d} lines: {t:7.3f} s  {t / lines * 1e3:6.2f} ms/line{ratio}")
        prev = t
    print("tape build and lint of a scalar loop (4 nodes per iteration)")
    prev = None
    for n in (25_000, 50_000, 100_000, 200_000):
        build, lint, nodes = min(build_and_lint(n) for _ in range(2))
        ratio = f"  lint x{lint / prev:.2f} for 2x nodes" if prev else ""
        print(f"  {nodes:8,d} nodes: build {build / nodes * 1e6:5.2f} us/node, "
              f"lint {lint / nodes * 1e6:5.2f} us/node{ratio}")
        prev = lint


if __name__ == "__main__":
    main()
