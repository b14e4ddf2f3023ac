"""``tape.to_html(path)``: the offline explorer, one self-contained HTML file.

The page shows the call tree beside the Graphviz graph. Clicking a node marks its backward
slice (``dc-slice``, as ``Tape.slice``, through fold markers) and its direct users
(``dc-user``, as ``Tape.users``); a search box filters the tree by function name; hovering
shows the full value and source line. Everything (styles, script, SVG, data) is inlined from
``viz/explorer/``: the file makes no network request.
"""
from __future__ import annotations

import html as _html
import json
import os
import re
from pathlib import Path

from ..tape import PrimitiveCall, Tape
from .dot import GraphvizNotFound, dot_source, graph_items, svg_from_dot
from .fold import Fold, count
from .graph import DisplayGraph, Entry
from .html import asset, hover_text, strip_xml_prolog, tree_html
from .labels import fn_label, op_text
from ..tape.printing import printable

__all__ = ["to_html", "explorer_data", "script_json"]


def _entry_data(graph: DisplayGraph, e: Entry) -> dict:
    d = {"id": e.id, "inputs": graph.inputs(e), "deps": graph.deps(e), "call": e.call}
    if isinstance(e.item, Fold):
        d.update(kind="Fold", label=e.item.label, fn="", names=[], hover=e.item.label,
                 folded=e.item.count)
    else:
        n = e.item.node
        d.update(kind=n.kind, label=f"@{n.index} {op_text(n)}", hover=hover_text(n),
                 fn=fn_label(n) if isinstance(n, PrimitiveCall) else "",
                 names=[printable(x) for x in n.names],
                 where=printable(f"{n.loc.filename}:{n.line}") if n.line is not None else "")
    return d


def explorer_data(graph: DisplayGraph) -> dict:
    """What the page's script reads: one record per entry, ``deps``/``inputs`` as entry ids."""
    shown, folded = count(graph.items)
    return {"title": printable(graph.tape.name), "shown": shown, "folded": folded,
            "items": [_entry_data(graph, e) for e in graph.entries]}


def script_json(data) -> str:
    """JSON safe inside ``<script>``: ``<``, ``>`` and ``&`` written as ``\\u`` escapes, so no
    text from a value, name or source line (``</script>``, ``<!--<script>``) ends or changes
    the script element."""
    text = json.dumps(data)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _fill(template: str, fields: dict) -> str:
    """Replace each ``{{NAME}}`` once, in one pass (inserted text is never rescanned)."""
    return re.sub(r"\{\{([A-Z]+)\}\}", lambda m: fields[m.group(1)], template)


def to_html(tape: Tape, path: str | os.PathLike | None = None, depth: int | None = 3,
            max_nodes: int | None = 400, highlight=None, title: str | None = None) -> str:
    """The explorer page for ``tape`` (folded as ``dot.graph_items``); also written to ``path``."""
    graph = DisplayGraph(tape, graph_items(tape, depth, max_nodes))
    try:
        svg = strip_xml_prolog(svg_from_dot(dot_source(graph, highlight)))
    except GraphvizNotFound as exc:
        svg = f'<p class="dc-nograph">{_html.escape(str(exc))}</p>'
    data = script_json(explorer_data(graph))
    page = _fill(asset("explorer.html"), {
        "TITLE": _html.escape(printable(title or f"dcgraph: {tape.name}")),
        "CSS": asset("tree.css") + "\n" + asset("explorer.css"),
        "TREE": tree_html(graph), "SVG": svg, "DATA": data, "JS": asset("explorer.js")})
    if path is not None:
        Path(path).write_text(page, encoding="utf-8")
    return page
