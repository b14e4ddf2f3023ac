"""One chain: initial point, warm-up, draws; stopped early by an error, Ctrl-C or a stop request.

:func:`run_chain` never loses what a chain drew: an exception raised by the
log density (or Ctrl-C, or ``should_stop()`` turning true) ends the chain and
the :class:`ChainOutput` it returns holds every draw so far and a
:class:`ChainStatus` saying where and why it stopped.
"""

from __future__ import annotations

import pickle
import time
import traceback
from typing import Any, Callable, NamedTuple

import numpy as np

from .target import InvalidPointError

__all__ = ["run_chain", "ChainOutput", "ChainStatus"]

_MAX_INIT_TRIES = 100


class ChainStatus(NamedTuple):
    """How far one chain got.  ``stopped``: ``None`` (finished), ``"error"`` or
    ``"interrupted"``; ``phase``: ``"init"``, ``"warmup"`` or ``"sampling"``
    when it stopped (``"lost"``: its worker process died); ``error``: the exception (a ``RuntimeError`` with its text
    when it could not be pickled) and ``traceback`` its formatted traceback."""

    chain: int
    warmup_done: int
    draws_done: int
    n_warmup: int
    n_draws: int
    stopped: str | None = None
    phase: str = ""
    error: BaseException | None = None
    traceback: str = ""

    @property
    def complete(self) -> bool:
        return self.stopped is None

    def describe(self) -> str:
        """One line: ``chain 2 stopped in sampling at draw 38 of 500: RuntimeError: ...``."""
        if self.stopped is None:
            return f"chain {self.chain} finished ({self.n_warmup} warm-up, {self.n_draws} draws)"
        if self.phase == "lost":
            where = "with its worker process"
        elif self.phase == "init":
            where = "at its initial point"
        elif self.phase == "warmup":
            where = f"in warm-up at iteration {self.warmup_done + 1} of {self.n_warmup}"
        else:
            where = f"in sampling at draw {self.draws_done + 1} of {self.n_draws}"
        why = "interrupted" if self.stopped == "interrupted" else f"{type(self.error).__name__}: {self.error}"
        return f"chain {self.chain} stopped {where} ({why})"


class ChainOutput(NamedTuple):
    """Everything one chain produced (the draws so far when it stopped early)."""

    draws: np.ndarray
    stats: dict
    warmup_draws: np.ndarray | None
    warmup_stats: dict
    tuned: Any
    elapsed: tuple
    status: ChainStatus


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


def _portable(exc: BaseException) -> BaseException:
    """``exc`` itself when it pickles (to cross a process boundary), else a RuntimeError with its text."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - any pickling failure
        return RuntimeError(f"{type(exc).__name__}: {exc}")


class _Recorder:
    """Positions, statistics and log densities of one phase."""

    def __init__(self, keep: bool):
        self.keep = keep
        self.positions, self.infos, self.lps = [], [], []

    def add(self, state, info):
        if self.keep:
            self.positions.append(state.position)
            self.infos.append(info)
            self.lps.append(state.logdensity)

    def arrays(self, dim):
        n = len(self.positions)
        return np.array(self.positions, dtype=float).reshape(n, dim), _columns(self.infos, self.lps)


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
    chain: int = 0,
    should_stop: Callable[[], bool] | None = None,
    portable_errors: bool = False,
) -> ChainOutput:
    """Run one chain: initialise, warm up, then draw.

    ``report(k)`` is called with the number of iterations completed, about a
    hundred times per chain; ``should_stop()`` is polled as often.  An
    exception (``KeyboardInterrupt`` included) ends the chain and is recorded
    in the output's ``status`` with the draws so far; ``portable_errors``
    replaces exceptions that do not pickle by a ``RuntimeError`` with their text.
    """
    rng = np.random.default_rng(seed_sequence)
    total = n_warmup + n_draws
    every = max(1, total // 100)
    warm, draws = _Recorder(save_warmup), _Recorder(True)
    phase, done, params, state = "init", 0, None, None
    stopped, error, text = None, None, ""
    t0 = t1 = time.perf_counter()
    try:
        if should_stop is not None and should_stop():
            raise KeyboardInterrupt
        state = _initial_state(kernel, target, rng, init, dim)
        dim = state.position.shape[0]
        phase = "warmup"
        tuning = kernel.start_warmup(rng, target, state, n_warmup)
        for _ in range(n_warmup):
            state, tuning, info = kernel.warmup_step(rng, target, state, tuning)
            warm.add(state, info)
            done += 1
            if done % every == 0:
                if report is not None:
                    report(done)
                if should_stop is not None and should_stop():
                    raise KeyboardInterrupt
        params = kernel.finish_warmup(tuning)
        t1 = time.perf_counter()
        phase = "sampling"
        step = kernel.step
        for _ in range(n_draws):
            state, info = step(rng, target, state, params)
            draws.add(state, info)
            done += 1
            if done % every == 0:
                if report is not None:
                    report(done)
                if should_stop is not None and should_stop() and done < total:
                    raise KeyboardInterrupt
        phase = "done"
    except KeyboardInterrupt:
        stopped = "interrupted"
    except Exception as exc:  # noqa: BLE001 - recorded with the draws so far, re-raised by the caller
        stopped, error, text = "error", exc, traceback.format_exc()
        if portable_errors:
            error = _portable(exc)
    t2 = time.perf_counter()
    if phase == "warmup":
        t1 = t2
    if report is not None and stopped is None:
        report(total)
    dim = dim if dim is not None else 0
    warmup_draws, warmup_stats = warm.arrays(dim) if save_warmup else (None, {})
    draw_array, stats = draws.arrays(dim)
    status = ChainStatus(
        chain, len(warm.positions) if save_warmup else min(done, n_warmup), len(draws.positions),
        n_warmup, n_draws, stopped, phase if stopped else "", error, text,
    )
    return ChainOutput(draw_array, stats, warmup_draws, warmup_stats, params, (t1 - t0, t2 - t1), status)
