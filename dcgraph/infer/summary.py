"""Posterior summaries in the OpenBUGS layout, plus ESS and R-hat."""

from __future__ import annotations

from typing import Iterator, Mapping, NamedTuple

import numpy as np

from . import diagnostics
from .result import ParameterLayout, SampleResult

__all__ = ["summary", "Summary", "SummaryRow"]


class SummaryRow(NamedTuple):
    """Summary of one scalar quantity (``mc_error`` is the MCSE of the mean)."""

    name: str
    mean: float
    sd: float
    mc_error: float
    q2_5: float
    median: float
    q97_5: float
    ess_bulk: float
    ess_tail: float
    rhat: float


_HEADERS = ("node", "mean", "sd", "MC error", "2.5%", "median", "97.5%", "ESS bulk", "ESS tail", "R-hat")


class Summary:
    """Rows of :class:`SummaryRow`; columns as arrays via :meth:`column` or attribute
    access (``s.mean``, ``s.rhat``...); ``s["mu"]`` is the row named ``mu``."""

    def __init__(self, rows, n_chains: int, n_draws: int, divergences: int | None = None):
        self.rows = tuple(rows)
        self.n_chains = n_chains
        self.n_draws = n_draws
        self.divergences = divergences

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

    def to_dict(self) -> dict[str, np.ndarray | list]:
        """Column name -> values (``name`` is a list of strings)."""
        out: dict = {"name": self.names}
        for field in SummaryRow._fields[1:]:
            out[field] = self.column(field)
        return out

    def table(self):
        """The summary as a ``rich.table.Table`` (R-hat > 1.01 in red, bulk ESS < 100 per chain in yellow)."""
        from rich.table import Table

        caption = f"{self.n_chains} chains x {self.n_draws} draws"
        if self.divergences:
            caption += f"; [bold red]{self.divergences} divergent transitions[/]"
        elif self.divergences == 0:
            caption += "; no divergences"
        table = Table(caption=caption, title="Posterior summary")
        for h in _HEADERS:
            table.add_column(h, justify="left" if h == "node" else "right")
        for r in self.rows:
            rhat = _fmt(r.rhat, 3)
            if r.rhat > 1.01:
                rhat = f"[red]{rhat}[/]"
            ess = f"{r.ess_bulk:.0f}" if r.ess_bulk == r.ess_bulk else "nan"
            if r.ess_bulk < 100 * self.n_chains:
                ess = f"[yellow]{ess}[/]"
            ess_tail = f"{r.ess_tail:.0f}" if r.ess_tail == r.ess_tail else "nan"
            table.add_row(
                r.name, _fmt(r.mean), _fmt(r.sd), _fmt(r.mc_error), _fmt(r.q2_5), _fmt(r.median),
                _fmt(r.q97_5), ess, ess_tail, rhat,
            )
        return table

    def __rich__(self):
        return self.table()

    def __str__(self) -> str:
        from rich.console import Console

        console = Console(width=120, record=True, file=_Null(), color_system=None)
        console.print(self.table())
        return console.export_text()

    def __repr__(self) -> str:
        return f"Summary({len(self.rows)} rows, {self.n_chains} chains x {self.n_draws} draws)"


class _Null:
    def write(self, _):
        pass

    def flush(self):
        pass


def _fmt(x: float, digits: int = 4) -> str:
    return "nan" if x != x else f"{x:.{digits}g}"


def _flatten(draws, names):
    """-> (array (chains, draws, k), flat names, divergences or None)."""
    if isinstance(draws, SampleResult):
        return draws.draws, draws.names, draws.divergences
    if isinstance(draws, Mapping):
        arrays, flat = [], []
        for name, arr in draws.items():
            arr = np.asarray(arr, dtype=float)
            if arr.ndim < 2:
                raise ValueError(f"{name!r}: draws must have shape (chains, draws, ...), got {arr.shape}")
            m, n = arr.shape[:2]
            layout = ParameterLayout(str(name), arr.shape[2:], 0, 0)
            arrays.append(arr.reshape(m, n, -1))
            flat.extend(layout.flat_names())
        return np.concatenate(arrays, axis=2), flat, None
    arr = np.asarray(draws, dtype=float)
    if arr.ndim == 1:
        arr = arr[np.newaxis, :, np.newaxis]
        default = ["x"]
    elif arr.ndim == 2:
        arr = arr[:, :, np.newaxis]
        default = ["x"]
    else:
        m, n = arr.shape[:2]
        default = ParameterLayout("theta", arr.shape[2:], 0, 0).flat_names()
        arr = arr.reshape(m, n, -1)
    if names is not None:
        names = [str(n) for n in names]
        if len(names) != arr.shape[2]:
            raise ValueError(f"got {len(names)} names for {arr.shape[2]} quantities")
        return arr, names, None
    return arr, default, None


def summary(draws, names=None, show: bool = True, console=None) -> Summary:
    """Summarise draws: mean, sd, MC error, 2.5%, median, 97.5%, bulk/tail ESS, R-hat.

    ``draws``: a :class:`SampleResult`; a mapping name -> ``(chains, draws, *shape)``;
    or an array ``(chains, draws, *shape)``, ``(chains, draws)`` or ``(draws,)``.
    Prints a rich table (to ``console``, default stdout) unless ``show`` is
    false, and returns the numbers as a :class:`Summary`.
    """
    arr, flat_names, divergences = _flatten(draws, names)
    rows = []
    for j, name in enumerate(flat_names):
        x = arr[:, :, j]
        q = np.quantile(x, (0.025, 0.5, 0.975))
        rows.append(
            SummaryRow(
                name, float(x.mean()), float(x.std(ddof=1)) if x.size > 1 else float("nan"),
                float(diagnostics.mcse_mean(x)), float(q[0]), float(q[1]), float(q[2]),
                float(diagnostics.ess_bulk(x)), float(diagnostics.ess_tail(x)), float(diagnostics.rhat(x)),
            )
        )
    result = Summary(rows, arr.shape[0], arr.shape[1], divergences)
    if show:
        if console is None:
            from rich.console import Console

            console = Console()
        console.print(result.table())
    return result
