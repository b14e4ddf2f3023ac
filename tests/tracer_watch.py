"""Watching the tracer from tests: the calls its hook is asked to decide, and its runs as
they close. (Shared by the test directories: ``pythonpath`` in pyproject.toml.)"""
from __future__ import annotations

import gc
from contextlib import contextmanager

from dcgraph.tracer import recorder
from dcgraph.tracer.run import Run

__all__ = ["hook_calls", "at_close", "collector_off", "run_of"]


@contextmanager
def hook_calls(record=lambda fn, site: fn):
    """Inside the ``with``, each call of the hook (``Level.hook``) appends ``record(fn, site)``
    (default: the callable ``fn``) to the list it gives; the hook is restored on leaving."""
    seen = []
    hook = recorder.Level.hook

    def counting(level, fn, site=None):
        seen.append(record(fn, site))
        return hook(level, fn, site)

    recorder.Level.hook = counting
    try:
        yield seen
    finally:
        recorder.Level.hook = hook


def at_close(monkeypatch, record=lambda run: run) -> list:
    """From now on until the test ends (``monkeypatch``), each run as it closes appends
    ``record(run)`` (taken before ``Run.close`` runs; default the run itself) to the list
    returned."""
    seen = []
    close = Run.close

    def recording(run):
        seen.append(record(run))
        close(run)

    monkeypatch.setattr(Run, "close", recording)
    return seen


@contextmanager
def collector_off():
    """Inside the ``with``, no cycle collection (after one, so that older garbage is gone):
    what goes is freed by reference counting. The collector's state is restored on leaving."""
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def run_of(tape) -> Run:
    """The run of a root tape not built yet (``RootTape._outcome``, dropped by its build)."""
    return tape._outcome[0]
