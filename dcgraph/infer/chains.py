"""The multi-chain driver: initial points, warm-up, sampling, processes, progress.

Each chain ``c`` draws all its randomness from
``SeedSequence(seed).spawn(chains)[c]``, so a run is reproducible from its
seed whether its chains run in this process or in worker processes.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import queue as queue_module
import time
import traceback
import warnings
from typing import Any, Callable, NamedTuple

import numpy as np

from .result import SampleResult, parse_layout
from .target import InvalidPointError, as_target

__all__ = ["sample", "run_chain", "ChainOutput", "DivergenceWarning"]

_MAX_INIT_TRIES = 100


class DivergenceWarning(RuntimeWarning):
    """Some post-warm-up transitions diverged: the draws may be biased."""


class ChainOutput(NamedTuple):
    """Everything one chain produced."""

    draws: np.ndarray
    stats: dict
    warmup_draws: np.ndarray | None
    warmup_stats: dict
    tuned: Any
    elapsed: tuple


def _columns(infos: list, logdensities: list) -> dict[str, np.ndarray]:
    """Per-transition info records -> statistic name -> 1-D array."""
    out = {}
    if infos:
        first = infos[0]
        if hasattr(first, "_fields"):
            for name, column in zip(first._fields, zip(*infos)):
                out[name] = np.asarray(column)
        else:
            for name in first:
                out[name] = np.asarray([info[name] for info in infos])
    out["logdensity"] = np.asarray(logdensities, dtype=float)
    return out


def _initial_state(kernel, target, rng, init, dim):
    """Initialise the chain; random inits are uniform on (-2, 2)^d, retried up to 100 times."""
    if init is not None:
        position = init(rng) if callable(init) else init
        position = np.array(position, dtype=float)
        if position.shape != (dim,):
            raise ValueError(f"initial point has shape {position.shape}, expected ({dim},)")
        return kernel.init(target, position)
    last = None
    for _ in range(_MAX_INIT_TRIES):
        try:
            return kernel.init(target, rng.uniform(-2.0, 2.0, size=dim))
        except InvalidPointError as exc:
            last = exc
    raise InvalidPointError(
        f"no valid initial point in {_MAX_INIT_TRIES} random tries on (-2, 2)^{dim}; last problem: {last}. "
        "Pass init= with a point where the log density and gradient are finite."
    )


def run_chain(
    kernel,
    target,
    seed_sequence: np.random.SeedSequence,
    n_draws: int,
    n_warmup: int,
    init=None,
    dim: int | None = None,
    save_warmup: bool = False,
    report: Callable[[int], None] | None = None,
) -> ChainOutput:
    """Run one chain: initialise, warm up, then draw.  ``report(k)`` is called with
    the number of iterations completed, about a hundred times per chain."""
    rng = np.random.default_rng(seed_sequence)
    state = _initial_state(kernel, target, rng, init, dim)
    total = n_warmup + n_draws
    every = max(1, total // 100)
    done = 0
    t0 = time.perf_counter()
    tuning = kernel.start_warmup(rng, target, state, n_warmup)
    positions, infos, lps = [], [], []
    for _ in range(n_warmup):
        state, tuning, info = kernel.warmup_step(rng, target, state, tuning)
        if save_warmup:
            positions.append(state.position)
            infos.append(info)
            lps.append(state.logdensity)
        done += 1
        if report is not None and done % every == 0:
            report(done)
    params = kernel.finish_warmup(tuning)
    dim = state.position.shape[0]
    warm = (np.array(positions, dtype=float).reshape(len(positions), dim), _columns(infos, lps)) if save_warmup else (None, {})
    t1 = time.perf_counter()
    positions, infos, lps = [], [], []
    step = kernel.step
    for _ in range(n_draws):
        state, info = step(rng, target, state, params)
        positions.append(state.position)
        infos.append(info)
        lps.append(state.logdensity)
        done += 1
        if report is not None and done % every == 0:
            report(done)
    t2 = time.perf_counter()
    if report is not None:
        report(total)
    draws = np.array(positions, dtype=float).reshape(n_draws, dim)
    return ChainOutput(draws, _columns(infos, lps), warm[0], warm[1], params, (t1 - t0, t2 - t1))


def _worker(jobs, messages, kernel, target, n_draws, n_warmup, save_warmup):
    for chain, seed_sequence, init, dim in jobs:
        try:
            out = run_chain(
                kernel, target, seed_sequence, n_draws, n_warmup, init, dim, save_warmup,
                report=lambda k, c=chain: messages.put(("progress", c, k)),
            )
            messages.put(("done", chain, out))
        except BaseException as exc:  # noqa: BLE001 - forwarded to the parent
            text = traceback.format_exc()
            try:
                pickle.dumps(exc)
            except Exception:  # noqa: BLE001
                exc = RuntimeError(str(exc))
            messages.put(("error", chain, (exc, text)))
            return


class _Progress:
    """A rich progress bar with one row per chain, or nothing."""

    def __init__(self, enabled, chains, total):
        self.bar = None
        if enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self.bar = Progress(
                TextColumn("chain {task.fields[chain]}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
            )
            self.tasks = [self.bar.add_task("", total=total, chain=c) for c in range(chains)]

    def __enter__(self):
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.stop()

    def update(self, chain, completed):
        if self.bar is not None:
            self.bar.update(self.tasks[chain], completed=completed)


def _progress_enabled(progress) -> bool:
    if progress is not None:
        return bool(progress)
    from rich.console import Console

    return Console(stderr=True).is_terminal


def _run_processes(jobs, n_proc, kernel, target, n_draws, n_warmup, save_warmup, bar):
    methods = mp.get_all_start_methods()
    ctx = mp.get_context("fork" if "fork" in methods else "spawn")
    if ctx.get_start_method() != "fork":
        try:
            pickle.dumps((kernel, target))
        except Exception as exc:
            raise TypeError(
                "parallel chains on this platform need a picklable target and kernel "
                f"(no fork start method): {exc}"
            ) from exc
    messages = ctx.Queue()
    groups = [jobs[k::n_proc] for k in range(n_proc)]
    procs = [
        ctx.Process(target=_worker, args=(g, messages, kernel, target, n_draws, n_warmup, save_warmup), daemon=True)
        for g in groups if g
    ]
    for p in procs:
        p.start()
    outputs = {}
    try:
        with bar:
            while len(outputs) < len(jobs):
                try:
                    kind, chain, payload = messages.get(timeout=0.5)
                except queue_module.Empty:
                    dead = [p for p in procs if p.exitcode not in (None, 0)]
                    if dead:
                        raise RuntimeError(f"a chain worker process died with exit code {dead[0].exitcode}") from None
                    continue
                if kind == "progress":
                    bar.update(chain, payload)
                elif kind == "done":
                    outputs[chain] = payload
                else:
                    exc, text = payload
                    exc.add_note(f"in chain {chain} (worker process):\n{text}")
                    raise exc
    finally:
        for p in procs:
            if p.is_alive() and len(outputs) < len(jobs):
                p.terminate()
            p.join(timeout=5)
    return [outputs[c] for c in range(len(jobs))]


def sample(
    target,
    kernel=None,
    *,
    draws: int = 1000,
    warmup: int = 1000,
    chains: int = 4,
    seed: int | None = None,
    init=None,
    dim: int | None = None,
    names=None,
    parallel: bool | int = False,
    progress: bool | None = None,
    save_warmup: bool = False,
) -> SampleResult:
    """Run ``chains`` chains of ``kernel`` (default :class:`NUTS`) on ``target``.

    ``target``: a callable log density, an object with ``logdensity`` /
    ``logdensity_and_grad`` methods, or a :class:`Target`.  ``init``: a
    ``(d,)`` point for all chains, a ``(chains, d)`` array, a callable
    ``rng -> point``, or ``None`` for uniform draws on (-2, 2)^d (then the
    dimension comes from ``dim`` or ``target.dim``).  ``parallel``: ``True``
    for one process per chain (up to the CPU count), or a number of
    processes.  ``progress``: ``None`` shows a bar only on a terminal.
    ``names``: see :func:`~dcgraph.infer.result.parse_layout`.
    Warns with :class:`DivergenceWarning` when transitions diverged.
    """
    from .nuts import NUTS

    kernel = NUTS() if kernel is None else kernel
    target = as_target(target, dim=dim)
    if getattr(kernel, "needs_gradient", False) and not target.has_grad:
        raise TypeError(f"{type(kernel).__name__} needs a gradient: give the target a logdensity_and_grad")
    draws, warmup, chains = int(draws), int(warmup), int(chains)
    if draws < 1 or warmup < 0 or chains < 1:
        raise ValueError(f"need draws >= 1, warmup >= 0, chains >= 1; got {draws}, {warmup}, {chains}")
    inits, dim = _chain_inits(init, chains, dim if dim is not None else target.dim)
    seed_sequence = np.random.SeedSequence(seed)
    jobs = [(c, s, inits[c], dim) for c, s in enumerate(seed_sequence.spawn(chains))]
    bar = _Progress(_progress_enabled(progress), chains, warmup + draws)
    n_proc = 0 if not parallel else min(chains, os.cpu_count() or 1) if parallel is True else int(parallel)
    if n_proc > 1 and chains > 1:
        outputs = _run_processes(jobs, min(n_proc, chains), kernel, target, draws, warmup, save_warmup, bar)
    else:
        outputs = []
        with bar:
            for c, s, point, d in jobs:
                outputs.append(run_chain(kernel, target, s, draws, warmup, point, d, save_warmup,
                                         report=lambda k, c=c: bar.update(c, k)))
    stats = {k: np.stack([o.stats[k] for o in outputs]) for k in outputs[0].stats}
    result = SampleResult(
        np.stack([o.draws for o in outputs]),
        stats,
        parse_layout(names, outputs[0].draws.shape[1]),
        seed=seed_sequence.entropy,
        tuned=[o.tuned for o in outputs],
        elapsed=np.array([o.elapsed for o in outputs]),
        warmup_draws=np.stack([o.warmup_draws for o in outputs]) if save_warmup else None,
        warmup_stats={k: np.stack([o.warmup_stats[k] for o in outputs]) for k in outputs[0].warmup_stats},
        kernel=type(kernel).__name__,
    )
    if result.divergences:
        warnings.warn(
            f"{result.divergences} of {chains * draws} transitions after warm-up diverged; "
            "the draws may be biased (try a higher target_accept or reparameterise)",
            DivergenceWarning,
            stacklevel=2,
        )
    return result


def _chain_inits(init, chains, dim):
    """Per-chain initial points (or None / callables) and the dimension."""
    if init is None or callable(init):
        if dim is None:
            if callable(init):
                raise ValueError("with a callable init, pass dim= (or give the target a dim attribute)")
            raise ValueError("cannot tell the dimension: pass init= (a starting point) or dim=")
        return [init] * chains, int(dim)
    arr = np.asarray(init, dtype=float)
    if arr.ndim == 1:
        if dim is not None and arr.shape[0] != dim:
            raise ValueError(f"init has {arr.shape[0]} coordinates, dim is {dim}")
        return [arr] * chains, arr.shape[0]
    if arr.ndim == 2 and arr.shape[0] == chains:
        return list(arr), arr.shape[1]
    raise ValueError(f"init must have shape (d,) or ({chains}, d), got {arr.shape}")
