"""Steady-state cost of the compiled ``dcgraph.grad`` beside ``f``, as a sampler calls it.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/bench_grad_steady.py [--rounds N] [--batch N]

``bench_grad.py`` interleaves every method of a case (traced gradients, jax, torch) in each
round, so each batch of compiled calls starts with CPU caches that those methods filled; the
array code of vectorised paths pays more for that than scalar code (about 100 us on the first
call after 64 MB were touched, against 55 us for the scalar path). Here ``f`` and the compiled
``grad`` alternate with nothing else in between (``warm``), and, for comparison, each batch
follows one traced call of the same function (``after a trace``). Figures: the minimum over
rounds of the mean per call of a batch, in process CPU time.
"""
from __future__ import annotations

import argparse
import time

import bench_grad as bg
from dcgraph import ad


def steady(case: str, rounds: int, batch: int) -> dict:
    f, args = bg.PLAIN[case], bg.make_data()[case]
    g, traced = ad.grad(f), ad.grad(f)
    traced.compiled.enabled = False
    for _ in range(3):
        g(*args)
    if g.compiled.stats["compiles"] != 1 or g.compiled.reason is not None:
        raise RuntimeError(f"{case}: the compiled path is not in use: {g.compiled.reason}")
    best = {"f": float("inf"), "grad, warm": float("inf"), "grad, after a trace": float("inf")}
    for _ in range(rounds):
        for name, fn in (("f", f), ("grad, warm", g), ("grad, after a trace", g)):
            if name == "grad, after a trace":
                traced(*args)
            t0 = time.process_time()
            for _ in range(batch):
                fn(*args)
            best[name] = min(best[name], (time.process_time() - t0) / batch)
    if g.compiled.stats["guard_failures"]:
        raise RuntimeError(f"{case}: the compiled path was left: {g.compiled.stats}")
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--cases", default="sin,sin_list,rats")
    opts = parser.parse_args()
    for case in opts.cases.split(","):
        best = steady(case, opts.rounds, opts.batch)
        base = best.pop("f")
        parts = ", ".join(f"{name} {t * 1e6:.1f} us ({t / base:.2f}x)" for name, t in best.items())
        print(f"{case}: f {base * 1e6:.1f} us; {parts}")


if __name__ == "__main__":
    main()
