"""The multi-chain driver: :func:`sample`.

Each chain ``c`` draws all its randomness from
``SeedSequence(seed).spawn(chains)[c]``, so a run is reproducible from its
seed whether its chains run in this process, in worker processes or on any
``concurrent.futures.Executor``.  Nothing a chain drew is lost: Ctrl-C
returns the draws so far (marked incomplete), and an exception in the log
density raises :class:`SamplingError` carrying them.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import warnings

import numpy as np

from .chain import ChainOutput, ChainStatus, run_chain
from .executors import ChainProgress, processes_can_run, run_on_executor, run_processes, run_serial
from .result import SampleResult, parse_layout
from .target import as_target, with_autodiff

__all__ = ["sample", "run_chain", "ChainOutput", "ChainStatus", "DivergenceWarning", "SamplingError",
           "IncompleteSamplingWarning"]


class DivergenceWarning(RuntimeWarning):
    """Some post-warm-up transitions diverged: the draws may be biased."""


class IncompleteSamplingWarning(RuntimeWarning):
    """Sampling was interrupted: the result holds the draws so far."""


class SamplingError(RuntimeError):
    """The log density raised in one or more chains (or a chain's worker process died).

    ``result``: the :class:`SampleResult` of the draws so far of every chain
    (``result.complete`` is false); ``statuses``: one
    :class:`~dcgraph.infer.chain.ChainStatus` per chain.  The first failing
    chain's exception is the ``__cause__``.
    """

    def __init__(self, message: str, result: SampleResult, statuses):
        super().__init__(message)
        self.result = result
        self.statuses = tuple(statuses)


def _progress_enabled(progress) -> bool:
    if progress is not None:
        return bool(progress)
    from rich.console import Console

    return Console(stderr=True).is_terminal


def _n_processes(parallel, chains: int) -> int:
    """``parallel``: None (processes when there are several chains and CPUs), False, True or a count."""
    cpus = os.cpu_count() or 1
    if parallel is None or parallel is True:
        return min(chains, cpus)
    if parallel is False:
        return 1
    return min(chains, int(parallel))


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
    parallel: bool | int | None = None,
    executor: cf.Executor | None = None,
    progress: bool | None = None,
    save_warmup: bool = False,
    index_base: int = 1,
) -> SampleResult:
    """Run ``chains`` chains of ``kernel`` (default :class:`NUTS`) on ``target``.

    ``target``: a callable log density (NUTS and HMC differentiate it with
    :func:`dcgraph.value_and_grad`), an object with ``logdensity`` /
    ``logdensity_and_grad`` methods, or a :class:`Target`.  ``init``: a
    ``(d,)`` point for all chains, a ``(chains, d)`` array, a callable
    ``rng -> point``, or ``None`` for uniform draws on (-2, 2)^d (then the
    dimension comes from ``dim`` or ``target.dim``).

    Where chains run: ``executor`` (any ``concurrent.futures.Executor``, e.g. a
    ``dask.distributed`` client's ``get_executor()``); otherwise ``parallel``:
    ``None`` (default) for one process per chain up to the CPU count (in
    this process when there is one CPU, or when the platform cannot fork and
    the target does not pickle), ``False`` for this process, or a number of
    processes.  The draws depend only on ``seed``.  ``progress``: ``None``
    shows a bar per chain only on a terminal.  ``names`` and ``index_base``:
    see :func:`~dcgraph.infer.result.parse_layout`.

    Ctrl-C stops every chain and returns the draws so far (``result.complete``
    is false, with an :class:`IncompleteSamplingWarning`).  An exception in the
    log density ends its chain, the other chains run on, and
    :class:`SamplingError` is raised with the draws of every chain; when no
    chain completed an iteration the first exception is raised as it is.
    Warns with :class:`DivergenceWarning` when transitions diverged.
    """
    from .nuts import NUTS

    kernel = NUTS() if kernel is None else kernel
    target = as_target(target, dim=dim)
    if getattr(kernel, "needs_gradient", False) and not target.has_grad:
        target = with_autodiff(target)
    draws, warmup, chains = int(draws), int(warmup), int(chains)
    if draws < 1 or warmup < 0 or chains < 1:
        raise ValueError(f"need draws >= 1, warmup >= 0, chains >= 1; got {draws}, {warmup}, {chains}")
    if executor is not None and not isinstance(executor, cf.Executor):
        raise TypeError(f"executor must be a concurrent.futures.Executor, got {type(executor).__name__}")
    inits, dim = _chain_inits(init, chains, dim if dim is not None else target.dim)
    seed_sequence = np.random.SeedSequence(seed)
    jobs = [(c, s, inits[c], dim) for c, s in enumerate(seed_sequence.spawn(chains))]
    bar = ChainProgress(_progress_enabled(progress), chains, warmup + draws)
    args = (jobs, kernel, target, draws, warmup, save_warmup, bar)
    n_proc = _n_processes(parallel, chains)
    if parallel is None and n_proc > 1 and not processes_can_run(kernel, target):
        n_proc = 1  # the default quietly stays in this process where chains cannot be sent to workers
    if executor is not None:
        outputs = run_on_executor(executor, *args)
    elif n_proc > 1:
        outputs = run_processes(jobs, n_proc, *args[1:])
    else:
        outputs = run_serial(*args)
    statuses = [o.status for o in outputs]
    failed = [s for s in statuses if s.stopped == "error"]
    if failed and not any(s.draws_done or s.warmup_done for s in statuses):
        first = failed[0]
        if first.traceback and first.error.__traceback__ is None:  # raised in another process
            first.error.add_note(f"in {first.describe()}:\n{first.traceback}")
        raise first.error
    result = _assemble(outputs, names, dim, seed_sequence.entropy, type(kernel).__name__, warmup, save_warmup,
                       index_base)
    if failed:
        lines = [s.describe() for s in failed]
        error = SamplingError(
            f"sampling failed in {len(failed)} of {chains} chains: " + "; ".join(lines)
            + ". The draws so far of every chain are in this exception's .result", result, statuses,
        )
        for s in failed:
            if s.traceback:
                error.add_note(f"{s.describe()}:\n{s.traceback}")
        raise error from failed[0].error
    if not result.complete:
        warnings.warn(
            "sampling interrupted; the result holds the draws so far: "
            + "; ".join(s.describe() for s in statuses if s.stopped),
            IncompleteSamplingWarning, stacklevel=2,
        )
    if result.divergences:
        warnings.warn(
            f"{result.divergences} of {result.n_chains * result.n_draws} transitions after warm-up diverged; "
            "the draws may be biased (try a higher target_accept or reparameterise)",
            DivergenceWarning,
            stacklevel=2,
        )
    return result


def _assemble(outputs: list[ChainOutput], names, dim, seed, kernel_name, warmup, save_warmup, index_base) -> SampleResult:
    """One :class:`SampleResult`; when chains stopped early, the chains with draws,
    cut to the shortest of them (``result.chain_draws`` keeps every draw)."""
    dim = next((o.draws.shape[1] for o in outputs if o.draws.shape[0]), dim or 0)
    kept = [o for o in outputs if o.draws.shape[0]]
    n = min((o.draws.shape[0] for o in kept), default=0)
    keys = [k for k in (kept[0].stats if kept else {}) if all(k in o.stats for o in kept)]
    stats = {k: np.stack([o.stats[k][:n] for o in kept]) if kept else np.zeros((0, 0)) for k in keys}
    warmup_draws, warmup_stats = None, {}
    if save_warmup:
        have = [o for o in (kept or outputs) if o.warmup_draws is not None]
        m = min((o.warmup_draws.shape[0] for o in have), default=0)
        warmup_draws = np.stack([o.warmup_draws[:m] for o in have]) if have else np.zeros((0, 0, dim))
        wkeys = [k for k in (have[0].warmup_stats if have else {}) if all(k in o.warmup_stats for o in have)]
        warmup_stats = {k: np.stack([o.warmup_stats[k][:m] for o in have]) for k in wkeys}
    return SampleResult(
        np.stack([o.draws[:n] for o in kept]) if kept else np.zeros((0, 0, dim)),
        stats,
        parse_layout(names, dim, index_base),
        seed=seed,
        tuned=[o.tuned for o in outputs],
        elapsed=np.array([o.elapsed for o in outputs]),
        warmup_draws=warmup_draws,
        warmup_stats=warmup_stats,
        kernel=kernel_name,
        warmup=warmup,
        statuses=[o.status for o in outputs],
        chain_draws=[o.draws for o in outputs],
        chain_ids=[o.status.chain for o in kept],
    )


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
