"""Rendering a posterior summary: plain text, a terminal's width, rich, HTML.

No number or name is ever cut: text outside a terminal is rendered at the
table's natural width; on a terminal narrower than the table the columns
are split over several tables, each repeating the ``node`` column.
"""

from __future__ import annotations

import html
import math

__all__ = ["HEADERS", "format_number", "cells", "notes", "render_text", "rich_tables", "to_html"]

#: OpenBUGS's columns, then the rank-normalised diagnostics under ArviZ's names.
HEADERS = ("node", "mean", "sd", "MC_error", "val2.5pc", "median", "val97.5pc", "start", "sample",
           "ess_bulk", "ess_tail", "r_hat", "flags")

_RHAT_LIMIT = 1.01
_ESS_PER_CHAIN = 100  # Vehtari et al. (2021): bulk and tail ESS of at least 100 per chain


def format_number(x: float) -> str:
    """Four significant digits in fixed point, never dropping an integer digit
    (``2.000``, ``0.07158``, ``123457``, ``123456789``); exponent notation below
    1e-4 and from 1e15; ``nan``, ``inf``."""
    if x != x:
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0.0"
    magnitude = math.floor(math.log10(abs(x)))
    if -4 <= magnitude < 15:
        return f"{x:.{max(0, 3 - magnitude)}f}"
    return f"{x:.3e}"


def row_flags(row, n_chains: int) -> list[str]:
    """``r_hat`` when R-hat > 1.01, ``ess`` when bulk or tail ESS < 100 per chain."""
    flags = []
    if row.rhat > _RHAT_LIMIT or row.rhat != row.rhat:
        flags.append("r_hat")
    limit = _ESS_PER_CHAIN * n_chains
    if not (row.ess_bulk >= limit and row.ess_tail >= limit):
        flags.append("ess")
    return flags


def cells(summary) -> list[list[str]]:
    """The table's text, one list per row, in :data:`HEADERS` order."""
    out = []
    for r in summary.rows:
        out.append([
            r.name, format_number(r.mean), format_number(r.sd), format_number(r.mc_error),
            format_number(r.q2_5), format_number(r.median), format_number(r.q97_5), str(r.start), str(r.sample),
            _count(r.ess_bulk), _count(r.ess_tail), "nan" if r.rhat != r.rhat else f"{r.rhat:.3f}",
            " ".join(row_flags(r, summary.n_chains)),
        ])
    return out


def _count(x: float) -> str:
    return "nan" if x != x else f"{x:.0f}"


def notes(summary) -> list[str]:
    """Lines under the table: the run, then a warning per problem found."""
    lines = [f"{summary.n_chains} chains x {summary.n_draws} draws" + ("; no divergences" if summary.divergences == 0 else "")]
    if summary.divergences:
        lines.append(f"! {summary.divergences} transitions after warm-up diverged: the draws may be biased "
                     "(raise target_accept or reparameterise)")
    rhat = [r.name for r in summary.rows if "r_hat" in row_flags(r, summary.n_chains)]
    if rhat:
        lines.append(f"! R-hat above {_RHAT_LIMIT} for {_names(rhat)}: the chains disagree; run longer")
    ess = [r.name for r in summary.rows if "ess" in row_flags(r, summary.n_chains)]
    if ess:
        lines.append(f"! bulk or tail ESS below {_ESS_PER_CHAIN} per chain for {_names(ess)}")
    for line in summary.incomplete:
        lines.append(f"! incomplete: {line}")
    return lines


def _names(names: list[str], most: int = 8) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


def _widths(table: list[list[str]]) -> list[int]:
    return [max(len(h), *(len(row[k]) for row in table)) if table else len(h) for k, h in enumerate(HEADERS)]


def _column_groups(widths: list[int], width: int | None) -> list[list[int]]:
    """Column indices per table: all in one, or split so that each table (with the
    node column) fits ``width``; a column wider than that stands alone."""
    others = list(range(1, len(HEADERS)))
    if width is None:
        return [others]
    node = widths[0] + 2
    groups, current, used = [], [], node + 1
    for k in others:
        need = widths[k] + 3
        if current and used + need > width:
            groups.append(current)
            current, used = [], node + 1
        current.append(k)
        used += need
    groups.append(current)
    return groups


def render_text(summary, width: int | None = None) -> str:
    """Plain text: one table at its natural width (``width=None``) or tables split to fit ``width``."""
    table = cells(summary)
    widths = _widths(table)
    blocks = []
    for group in _column_groups(widths, width):
        columns = [0, *group]
        rule = "-" * (sum(widths[k] for k in columns) + 2 * (len(columns) - 1))
        lines = [_line(HEADERS, widths, columns), rule]
        lines += [_line(row, widths, columns) for row in table]
        blocks.append("\n".join(line.rstrip() for line in lines))
    return "\n\n".join(blocks) + "\n" + "\n".join(notes(summary)) + "\n"


def _line(row, widths, columns) -> str:
    return "  ".join(row[k].ljust(widths[k]) if k in (0, len(HEADERS) - 1) else row[k].rjust(widths[k]) for k in columns)


def rich_tables(summary, width: int | None = None):
    """``rich.table.Table`` objects (split to fit ``width``), then the notes as ``rich.text.Text``:
    R-hat above 1.01 in red, small ESS in yellow."""
    from rich.table import Table
    from rich.text import Text

    table = cells(summary)
    widths = _widths(table)
    out = []
    for group in _column_groups(widths, None if width is None else width - 2):
        t = Table(title="Posterior summary" if not out else None, box=None if width is None else _box())
        for k in (0, *group):
            t.add_column(HEADERS[k], justify="left" if k in (0, len(HEADERS) - 1) else "right",
                         no_wrap=True, min_width=widths[k])
        for r, row in zip(summary.rows, table):
            styled = []
            for k in (0, *group):
                style = ""
                if HEADERS[k] == "r_hat" and "r_hat" in row_flags(r, summary.n_chains):
                    style = "red"
                elif HEADERS[k] in ("ess_bulk", "ess_tail", "flags") and row[k] and "ess" in row_flags(r, summary.n_chains):
                    style = "yellow"
                styled.append(Text(row[k], style=style))
            t.add_row(*styled)
        out.append(t)
    for line in notes(summary):
        out.append(Text(line, style="bold red" if line.startswith("!") else "dim"))
    return out


def _box():
    from rich import box

    return box.SIMPLE_HEAD


def to_html(summary) -> str:
    """A self-contained HTML table (names escaped) with the notes under it."""
    table = cells(summary)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in HEADERS)
    body = []
    for r, row in zip(summary.rows, table):
        flags = row_flags(r, summary.n_chains)
        tds = []
        for k, text in enumerate(row):
            warn = ("r_hat" in flags and HEADERS[k] == "r_hat") or ("ess" in flags and HEADERS[k].startswith("ess"))
            style = ' style="color:#b00"' if warn else ""
            align = "left" if k in (0, len(HEADERS) - 1) else "right"
            tds.append(f'<td style="text-align:{align}"><span{style}>{html.escape(text)}</span></td>')
        body.append("<tr>" + "".join(tds) + "</tr>")
    foot = "".join(f"<div>{html.escape(line)}</div>" for line in notes(summary))
    return (f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
            f"<div style=\"font-size:smaller\">{foot}</div>")
