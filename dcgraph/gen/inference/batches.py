"""Running independent batches (importance samples, particles, chains) on an ``executor``.

``run_batches(executor, fn, sizes, rng, *args)`` calls ``fn(size, seed, *args)`` once per batch
with a seed drawn from ``rng`` (so results do not depend on where batches run): in this
process when ``executor`` is None, in a local process pool made for the call with
``"processes"``, else as tasks of any ``concurrent.futures.Executor`` (a dask.distributed
client's ``get_executor()``, say). ``fn`` and its
arguments must pickle for processes: generative functions defined at module level do.
"""
from __future__ import annotations

import concurrent.futures as cf

import numpy as np

__all__ = ["run_batches", "split"]


def split(n: int, parts: int) -> list:
    """``n`` items in ``parts`` nearly equal batch sizes (no empty batches)."""
    parts = max(1, min(parts, n))
    base, extra = divmod(n, parts)
    return [base + (i < extra) for i in range(parts)]


def run_batches(executor, fn, sizes: list, rng: np.random.Generator, *args) -> list:
    seeds = [int(s) for s in rng.integers(0, 2**63 - 1, size=len(sizes))]
    if executor is None:
        return [fn(size, seed, *args) for size, seed in zip(sizes, seeds)]
    if executor == "processes":
        import multiprocessing as mp
        import os
        method = "fork" if "fork" in mp.get_all_start_methods() else None
        with cf.ProcessPoolExecutor(min(len(sizes), os.cpu_count() or 1),
                                    mp_context=mp.get_context(method)) as pool:
            return _submit(pool, fn, sizes, seeds, args)
    if not isinstance(executor, cf.Executor):
        raise TypeError(f"executor must be None, 'processes' or a concurrent.futures.Executor, "
                        f"got {executor!r}")
    return _submit(executor, fn, sizes, seeds, args)


def _submit(executor, fn, sizes, seeds, args) -> list:
    futures = [executor.submit(fn, size, seed, *args) for size, seed in zip(sizes, seeds)]
    return [f.result() for f in futures]
