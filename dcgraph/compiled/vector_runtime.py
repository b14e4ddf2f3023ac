"""The helpers vectorised array code calls, as one table (``RUNTIME``: generated name -> object).

``bind(ns)`` adds them to a compiled path's namespace once. Names begin with ``_vx_``; the
ufuncs of ``vector_forms.FUNCTIONS`` are ``_vx_<ufunc name>``.
"""
from __future__ import annotations

import itertools

import numpy as np

from .vector_forms import FUNCTIONS

__all__ = ["bind", "RUNTIME"]


def _map_exact(fn, x):
    """``fn`` (a ``math`` function) on every element: the bits of the scalar calls."""
    if x.ndim == 1:
        return np.fromiter(map(fn, x.tolist()), float, len(x))
    return np.fromiter(map(fn, x.ravel().tolist()), float, x.size).reshape(x.shape)


def _all_of_type(items, t) -> bool:
    return {*map(type, items)} == {t}


def _no_zero(x) -> bool:
    return bool(np.all(x != 0))


def _all_of_length(rows, m: int) -> bool:
    return {*map(len, rows)} == {m}


def _all_longer(rows, k: int) -> bool:
    return min(map(len, rows)) > k


RUNTIME = {"_vx_map": _map_exact, "_vx_alltype": _all_of_type, "_vx_array": np.array,
           "_vx_acc": np.add.accumulate, "_vx_cat": np.concatenate, "_vx_nozero": _no_zero,
           "_vx_full": np.full, "_vx_empty": np.empty, "_vx_bcast": np.broadcast_to,
           "_vx_chain": itertools.chain.from_iterable, "_vx_lengths": _all_of_length,
           "_vx_longer": _all_longer,
           **{f"_vx_{ufunc.__name__}": ufunc for ufunc, _ in FUNCTIONS.values()}}


def bind(ns: dict) -> None:
    """Add the helpers to the namespace ``ns`` (once)."""
    if "_vx_map" not in ns:
        ns.update(RUNTIME)
