"""HTML pieces: the call tree as nested lists, and the notebook view (``Tape._repr_html_``).

The tree is static markup (``<details>`` for nested calls, one ``<span data-id>`` per entry
with the full value and source line as its tooltip), so it works where scripts are not run;
the explorer (``explorer.py``) adds behaviour on top. Styles and scripts live in
``viz/explorer/`` and are inlined by ``asset``.
"""
from __future__ import annotations

import html as _html
from pathlib import Path

from ..tape import Node, PrimitiveCall, Tape
from .dot import GraphvizNotFound, dot_source, graph_items, svg_from_dot
from .fold import Fold, Row, count
from .graph import DisplayGraph
from .labels import KIND_MARK, fn_label, has_value, op_text, value_sep
from .values import abbrev, full_text
from ..tape.printing import final_state_note, printable

__all__ = ["tree_html", "repr_html", "hover_text", "asset", "strip_xml_prolog", "ASSET_DIRS"]

_HERE = Path(__file__).resolve().parent
# packaged copy first (if a build ships one), then the source checkout's viz/explorer
ASSET_DIRS = (_HERE / "explorer", _HERE.parents[1] / "viz" / "explorer")


def asset(name: str) -> str:
    """The text of an explorer asset (``explorer.js``, ``tree.css``, ...)."""
    for d in ASSET_DIRS:
        f = d / name
        if f.is_file():
            return f.read_text(encoding="utf-8")
    raise FileNotFoundError(f"dcgraph: explorer asset {name!r} not found in "
                            f"{', '.join(map(str, ASSET_DIRS))}; the HTML views need the "
                            "viz/explorer/ folder of a dcgraph source checkout")


def hover_text(n: Node) -> str:
    """Full value, location and source line of a node, for tooltips."""
    where = printable(f"{n.loc.filename}:{n.line}") if n.line is not None else "(no source line)"
    source = printable(n.loc.source) if n.line is not None else ""
    return f"{full_text(n.value, 2000)}\n{where}" + (f"\n{source}" if source else "")


def _row(graph: DisplayGraph, item: Row) -> str:
    n, e = item.node, graph.entry(item)
    fn = fn_label(n) if isinstance(n, PrimitiveCall) else ""
    value = (f'<span class="dc-sep">{_html.escape(value_sep(n))}</span>'
             f'<span class="dc-value">{_html.escape(abbrev(n.value, 48) + final_state_note(n))}</span>'
             if has_value(n) else "")
    line = f' <span class="dc-loc">L{n.line}</span>' if n.line is not None else ""
    names = printable(" ".join(n.names))
    return (f'<span class="dc-row dc-{n.kind}" data-id="{e.id}" data-fn="{_html.escape(fn)}" '
            f'data-names="{_html.escape(names)}" '
            f'title="{_html.escape(hover_text(n))}">{KIND_MARK[n.kind]} '
            f'<span class="dc-idx">@{n.index}</span> {_html.escape(op_text(n))}{value}{line}</span>')


def tree_html(graph: DisplayGraph, open_levels: int = 2) -> str:
    """Nested ``<ul class="dc-tree">`` of the graph's items; calls above ``open_levels`` open."""
    out: list[str] = []

    def emit(items: list, level: int):
        out.append('<ul class="dc-tree">')
        for item in items:
            if isinstance(item, Fold):
                e = graph.entry(item)
                out.append(f'<li><span class="dc-fold" data-id="{e.id}" data-fn="">'
                           f'{_html.escape(item.label)}</span></li>')
            elif item.children:
                attr = " open" if level < open_levels else ""
                out.append(f"<li><details{attr}><summary>{_row(graph, item)}</summary>")
                emit(item.children, level + 1)
                out.append("</details></li>")
            else:
                out.append(f"<li>{_row(graph, item)}</li>")
        out.append("</ul>")

    emit(graph.items, 0)
    return "\n".join(out)


def repr_html(tape: Tape, depth: int | None = 2, max_nodes: int | None = 300) -> str:
    """For notebooks: the graph as SVG (when Graphviz is installed) above the call tree."""
    graph = DisplayGraph(tape, graph_items(tape, depth, max_nodes))
    shown, folded = count(graph.items)
    try:
        svg = strip_xml_prolog(svg_from_dot(dot_source(graph)))
    except GraphvizNotFound as exc:
        svg = f'<p class="dc-nograph">{_html.escape(str(exc))}</p>'
    head = f"{_html.escape(printable(tape.name))}: {shown:,} nodes shown" + (
        f", {folded:,} folded" if folded else "")
    return (f'<div class="dcgraph-view"><style>{asset("tree.css")}</style>'
            f'<div class="dc-head">{head}</div><div class="dc-graph">{svg}</div>'
            f"{tree_html(graph)}</div>")


def strip_xml_prolog(svg: str) -> str:
    """SVG text from ``<svg`` on, ready to inline in HTML."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg
