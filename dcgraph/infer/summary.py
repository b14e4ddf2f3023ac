"""Posterior summaries in the OpenBUGS layout, plus ESS and R-hat."""

from __future__ import annotations

import math
from typing import Iterator, Mapping, NamedTuple

import numpy as np

from . import diagnostics, summary_table
from .result import ParameterLayout, SampleResult

__all__ = ["summary", "Summary", "SummaryRow"]


class SummaryRow(NamedTuple):
    """Summary of one scalar quantity, in OpenBUGS's column order (``mc_error`` is the
    MCSE of the mean; ``start`` the first iteration kept, ``sample`` the number of draws
    over all chains), then bulk/tail ESS and rank-normalised split R-hat."""

    name: str
    mean: float
    sd: float
    mc_error: float
    q2_5: float
    median: float
    q97_5: float
    start: int
    sample: int
    ess_bulk: float
    ess_tail: float
    rhat: float


class Summary:
    """Rows of :class:`SummaryRow`; columns as arrays via :meth:`column` or attribute
    access (``s.mean``, ``s.rhat``...); ``s["mu"]`` is the row named ``mu``.

    Nothing is printed: ``str(s)`` (and ``repr``) is the table as plain text, at
    its natural width, or split to the terminal's width when standard output is
    a terminal; ``rich`` renders it with colours; notebooks show
    :meth:`_repr_html_`.  Rows with R-hat > 1.01 or bulk/tail ESS < 100 per
    chain are flagged, and divergences and an incomplete run are noted under it.
    """

    def __init__(self, rows, n_chains: int, n_draws: int, divergences: int | None = None, incomplete=()):
        self.rows = tuple(rows)
        self.n_chains = n_chains
        self.n_draws = n_draws
        self.divergences = divergences
        self.incomplete = tuple(incomplete)

    @property
    def names(self) -> list[str]:
        return [r.name for r in self.rows]

    def column(self, field: str) -> np.ndarray:
        """One numeric column as an array, in row order."""
        if field not in SummaryRow._fields or field == "name":
            raise KeyError(f"no numeric column {field!r}; columns are {SummaryRow._fields[1:]}")
        return np.array([getattr(r, field) for r in self.rows], dtype=float)

    def __getattr__(self, field: str) -> np.ndarray:
        if field in SummaryRow._fields[1:]:
            return self.column(field)
        raise AttributeError(field)

    def __getitem__(self, name: str) -> SummaryRow:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(f"no row {name!r}")

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[SummaryRow]:
        return iter(self.rows)

    @property
    def flagged(self) -> dict[str, list[str]]:
        """Row name -> its flags (``"r_hat"``, ``"ess"``), for the flagged rows only."""
        out = {}
        for r in self.rows:
            flags = summary_table.row_flags(r, self.n_chains)
            if flags:
                out[r.name] = flags
        return out

    def to_dict(self) -> dict[str, np.ndarray | list]:
        """Column name -> values (``name`` is a list of strings)."""
        out: dict = {"name": self.names}
        for field in SummaryRow._fields[1:]:
            out[field] = self.column(field)
        return out

    def render(self, width: int | None = None) -> str:
        """Plain text at the natural width (``None``), or split into tables that fit ``width``."""
        return summary_table.render_text(self, width)

    def table(self, width: int | None = None):
        """The summary as rich renderables (tables, then notes), split to fit ``width``."""
        from rich.console import Group

        return Group(*summary_table.rich_tables(self, width))

    def __rich_console__(self, console, options):
        yield self.table(options.max_width)

    def __str__(self) -> str:
        import shutil
        import sys

        width = shutil.get_terminal_size().columns if getattr(sys.stdout, "isatty", lambda: False)() else None
        return self.render(width)

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return summary_table.to_html(self)


def _flatten(draws, names, index_base):
    """-> (array (chains, draws, k), flat names, divergences or None, start, incomplete notes)."""
    if isinstance(draws, SampleResult):
        stopped = [st.describe() for st in draws.statuses if st.stopped]
        return draws.draws, draws.names, draws.divergences, draws.warmup + 1, stopped
    if isinstance(draws, Mapping):
        arrays, flat = [], []
        for name, arr in draws.items():
            arr = np.asarray(arr, dtype=float)
            if arr.ndim < 2:
                raise ValueError(f"{name!r}: draws must have shape (chains, draws, ...), got {arr.shape}")
            m, n = arr.shape[:2]
            layout = ParameterLayout(str(name), arr.shape[2:], 0, 0, index_base)
            arrays.append(arr.reshape(m, n, math.prod(arr.shape[2:])))
            flat.extend(layout.flat_names())
        return np.concatenate(arrays, axis=2), flat, None, 1, []
    arr = np.asarray(draws, dtype=float)
    if arr.ndim == 1:
        arr = arr[np.newaxis, :, np.newaxis]
        default = ["x"]
    elif arr.ndim == 2:
        arr = arr[:, :, np.newaxis]
        default = ["x"]
    else:
        m, n = arr.shape[:2]
        default = ParameterLayout("theta", arr.shape[2:], 0, 0, index_base).flat_names()
        arr = arr.reshape(m, n, math.prod(arr.shape[2:]))
    if names is not None:
        names = [str(n) for n in names]
        if len(names) != arr.shape[2]:
            raise ValueError(f"got {len(names)} names for {arr.shape[2]} quantities")
        return arr, names, None, 1, []
    return arr, default, None, 1, []


def summary(draws, names=None, *, index_base: int = 1, show: bool = False, console=None) -> Summary:
    """Summarise draws in OpenBUGS's columns (mean, sd, MC_error, val2.5pc, median,
    val97.5pc, start, sample) plus bulk/tail ESS and R-hat; returns a :class:`Summary`.

    ``draws``: a :class:`SampleResult`; a mapping name -> ``(chains, draws, *shape)``;
    or an array ``(chains, draws, *shape)``, ``(chains, draws)`` or ``(draws,)``.
    Vector quantities expand as ``alpha[1]``, ``alpha[2]``... (``index_base``
    for mappings and arrays; a :class:`SampleResult` keeps its own).  Prints
    nothing unless ``show`` is true (then to ``console``, default stdout).
    """
    arr, flat_names, divergences, start, incomplete = _flatten(draws, names, index_base)
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"no draws to summarise (shape {arr.shape}); "
                         + ("; ".join(incomplete) if incomplete else "sampling produced none"))
    rows = []
    total = arr.shape[0] * arr.shape[1]
    for j, name in enumerate(flat_names):
        x = arr[:, :, j]
        q = np.quantile(x, (0.025, 0.5, 0.975))
        rows.append(
            SummaryRow(
                name, float(x.mean()), float(x.std(ddof=1)) if x.size > 1 else float("nan"),
                float(diagnostics.mcse_mean(x)), float(q[0]), float(q[1]), float(q[2]), int(start), total,
                float(diagnostics.ess_bulk(x)), float(diagnostics.ess_tail(x)), float(diagnostics.rhat(x)),
            )
        )
    result = Summary(rows, arr.shape[0], arr.shape[1], divergences, incomplete)
    if show:
        if console is None:
            from rich.console import Console

            console = Console()
        console.print(result)
    return result
