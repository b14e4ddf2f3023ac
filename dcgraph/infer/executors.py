"""Where chains run: in this process, in worker processes, or on any ``concurrent.futures.Executor``.

Every runner takes the same jobs ``(chain, seed_sequence, init, dim)`` and
returns one :class:`~dcgraph.infer.chain.ChainOutput` per chain, in chain
order, so a run's draws depend only on its seed.  Ctrl-C stops every chain
and the outputs hold the draws so far; a chain that never started gets an
empty output whose status says so.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import pickle
import queue as queue_module
import signal
import threading
import time
from functools import partial

import numpy as np

from .chain import ChainOutput, ChainStatus, run_chain

__all__ = ["ChainProgress", "run_serial", "run_processes", "run_on_executor", "not_started", "processes_can_run"]

_DRAIN_SECONDS = 10.0  # how long stopped workers get to send their draws so far


class ChainProgress:
    """A rich progress bar with one row per chain, or nothing."""

    def __init__(self, enabled: bool, chains: int, total: int):
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

    def update(self, chain: int, completed: int):
        if self.bar is not None:
            self.bar.update(self.tasks[chain], completed=completed)


def not_started(chain: int, n_draws: int, n_warmup: int, dim: int | None, why: str = "interrupted") -> ChainOutput:
    """The output of a chain that never ran (sampling was stopped before it began)."""
    dim = dim or 0
    status = ChainStatus(chain, 0, 0, n_warmup, n_draws, why, "init")
    return ChainOutput(np.zeros((0, dim)), {}, None, {}, None, (0.0, 0.0), status)


def run_serial(jobs, kernel, target, n_draws, n_warmup, save_warmup, bar: ChainProgress):
    """Chains one after the other in this process; Ctrl-C skips the chains not yet started."""
    outputs = []
    with bar:
        for chain, seed_sequence, init, dim in jobs:
            if outputs and outputs[-1].status.stopped == "interrupted":
                outputs.append(not_started(chain, n_draws, n_warmup, dim))
                continue
            outputs.append(run_chain(
                kernel, target, seed_sequence, n_draws, n_warmup, init, dim, save_warmup,
                report=partial(bar.update, chain), chain=chain,
            ))
    return outputs


def _worker(jobs, messages, stop, kernel, target, n_draws, n_warmup, save_warmup):
    # Ctrl-C reaches the whole process group; the parent turns it into ``stop`` so that
    # a worker never dies half-way through sending its draws.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for chain, seed_sequence, init, dim in jobs:
        if stop.is_set():
            messages.put(("done", chain, not_started(chain, n_draws, n_warmup, dim)))
            continue
        out = run_chain(
            kernel, target, seed_sequence, n_draws, n_warmup, init, dim, save_warmup,
            report=lambda k, c=chain: messages.put(("progress", c, k)),
            chain=chain, should_stop=stop.is_set, portable_errors=True,
        )
        messages.put(("done", chain, out))


def _start_context():
    methods = mp.get_all_start_methods()
    return mp.get_context("fork" if "fork" in methods else "spawn")


def processes_can_run(kernel, target) -> bool:
    """True when worker processes can run these chains: fork is available, or both pickle."""
    if _start_context().get_start_method() == "fork":
        return True
    try:
        pickle.dumps((kernel, target))
        return True
    except Exception:  # noqa: BLE001 - any pickling failure
        return False


def run_processes(jobs, n_proc, kernel, target, n_draws, n_warmup, save_warmup, bar: ChainProgress):
    """Chains in ``n_proc`` worker processes (fork where available).  Ctrl-C in
    this process, or an interrupted chain, asks every worker to stop and
    collects the draws so far."""
    ctx = _start_context()
    if ctx.get_start_method() != "fork":
        try:
            pickle.dumps((kernel, target))
        except Exception as exc:
            raise TypeError(
                "parallel chains on this platform need a picklable target and kernel "
                f"(no fork start method): {exc}; pass parallel=False to run them in this process"
            ) from exc
    messages, stop = ctx.Queue(), ctx.Event()
    groups = [jobs[k::n_proc] for k in range(n_proc)]
    procs = [
        ctx.Process(target=_worker, args=(g, messages, stop, kernel, target, n_draws, n_warmup, save_warmup), daemon=True)
        for g in groups if g
    ]
    for p in procs:
        p.start()
    outputs: dict[int, ChainOutput] = {}
    deadline = None
    try:
        with bar:
            while len(outputs) < len(jobs):
                try:
                    kind, chain, payload = messages.get(timeout=0.5)
                except queue_module.Empty:
                    if deadline is not None and time.monotonic() > deadline:
                        break
                    if not any(p.is_alive() for p in procs):  # finished, or died (a crash loses only its chains)
                        _drain(messages, outputs, bar)
                        break
                    continue
                except KeyboardInterrupt:
                    if deadline is not None:  # a second Ctrl-C: stop waiting
                        break
                    stop.set()
                    deadline = time.monotonic() + _DRAIN_SECONDS
                    continue
                if kind == "progress":
                    bar.update(chain, payload)
                else:
                    outputs[chain] = payload
                    if payload.status.stopped == "interrupted" and not stop.is_set():
                        stop.set()
                        deadline = time.monotonic() + _DRAIN_SECONDS
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
            p.join(timeout=5)
    died = {}
    for group, p in zip([g for g in groups if g], procs):
        if p.exitcode not in (None, 0, -15) or (p.exitcode == -15 and not stop.is_set()):
            died.update({job[0]: p.exitcode for job in group})
    for chain, seed_sequence, init, dim in jobs:
        if chain in outputs:
            continue
        out = not_started(chain, n_draws, n_warmup, dim)
        if chain in died:
            error = RuntimeError(f"the worker process running chain {chain} died with exit code {died[chain]}; "
                                 "its draws are lost")
            out = out._replace(status=out.status._replace(stopped="error", phase="lost", error=error))
        outputs[chain] = out
    return [outputs[c] for c, *_ in jobs]


def _drain(messages, outputs, bar):
    while True:
        try:
            kind, chain, payload = messages.get(timeout=0.2)
        except queue_module.Empty:
            return
        if kind == "progress":
            bar.update(chain, payload)
        else:
            outputs[chain] = payload


def _run_in_thread(kernel, target, seed_sequence, n_draws, n_warmup, init, dim, save_warmup, report, chain, stop,
                   portable_errors):
    """:func:`run_chain` in a pool thread; an interrupted chain stops the others at once."""
    out = run_chain(kernel, target, seed_sequence, n_draws, n_warmup, init, dim, save_warmup, report, chain,
                    stop.is_set, portable_errors)
    if out.status.stopped == "interrupted":
        stop.set()
    return out


def run_on_executor(executor: cf.Executor, jobs, kernel, target, n_draws, n_warmup, save_warmup, bar: ChainProgress):
    """One task per chain on ``executor``.  A thread pool reports progress as it
    goes and stops its chains on Ctrl-C; other executors report each chain when
    it finishes.  Ctrl-C cancels the chains not started and collects the others
    (from other executors: those that finish, or return their draws so far
    after their own Ctrl-C, within ten seconds)."""
    threads = isinstance(executor, cf.ThreadPoolExecutor)
    stop = threading.Event() if threads else None
    futures = {}
    for chain, seed_sequence, init, dim in jobs:
        futures[executor.submit(
            _run_in_thread if threads else run_chain, kernel, target, seed_sequence, n_draws, n_warmup, init, dim,
            save_warmup, partial(bar.update, chain) if threads else None, chain, stop, not threads,
        )] = chain
    outputs: dict[int, ChainOutput] = {}
    with bar:
        try:
            for future in cf.as_completed(futures):
                out = future.result()
                outputs[futures[future]] = out
                bar.update(futures[future], out.status.warmup_done + out.status.draws_done)
                if out.status.stopped == "interrupted" and stop is not None:
                    stop.set()
        except KeyboardInterrupt:
            if stop is not None:
                stop.set()
            running = [f for f in futures if not f.cancel()]  # chains not started are dropped
            done, _ = cf.wait(running, timeout=None if stop is not None else _DRAIN_SECONDS)
            for future in done:
                if future.exception() is None:
                    outputs[futures[future]] = future.result()
    for chain, seed_sequence, init, dim in jobs:
        if chain not in outputs:
            outputs[chain] = not_started(chain, n_draws, n_warmup, dim)
    return [outputs[c] for c, *_ in jobs]
