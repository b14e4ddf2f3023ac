"""Graphviz views: ``to_dot`` (DOT source, needs no program) and ``to_svg`` (runs ``dot``).

Nested calls are clusters labelled with the callee and its call site; data edges are solid,
control edges (from a Branch to what ran next) dashed; the shape of a node tells its kind; a
fold marker is a grey folder "… n more". ``highlight`` picks nodes to draw in a strong colour:
a ``meta`` key (nodes whose ``meta[key]`` is true), a ``{meta key: colour}`` mapping, a
predicate ``node -> bool``, or a collection of nodes (e.g. ``tape.slice(n)``).
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import graphviz

from ..tape import Node, Tape
from .fold import Fold, Row, count, fold
from .graph import DisplayGraph
from ..tape.printing import final_state_note, printable
from .labels import has_value, op_text, value_sep
from .values import abbrev

__all__ = ["to_dot", "to_svg", "repr_svg", "dot_source", "graph_items", "GraphvizNotFound",
           "SHAPES", "MAX_CLUSTER_DEPTH"]

SHAPES = {"Argument": "invhouse", "Constant": "note", "PrimitiveCall": "box",
          "NestedCall": "box3d", "Branch": "diamond", "Phi": "ellipse", "Return": "house",
          "Raise": "octagon", "Fold": "folder"}
FILLS = {"Argument": "#d9f2d0", "Constant": "#dff1f6", "PrimitiveCall": "#ffffff",
         "NestedCall": "#dbe4ff", "Branch": "#f6dcf4", "Phi": "#fff2c2", "Return": "#d9f2d0",
         "Raise": "#ffd4d4", "Fold": "#ececec"}
HIGHLIGHT = "#ffb300"
MAX_CLUSTER_DEPTH = 20   # dot's cluster layout slows down steeply past ~30 nested clusters
INSTALL_HINT = ("Graphviz's `dot` program was not found on PATH; install Graphviz "
                "(Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz; "
                "conda: conda install graphviz). to_dot() works without it.")


class GraphvizNotFound(RuntimeError):
    """Rendering needs Graphviz's ``dot`` program, which is not installed."""


def _highlighter(highlight) -> Callable[[Node], str | None]:
    """Normalise ``highlight`` (see the module docstring) to ``node -> colour or None``."""
    if highlight is None:
        return lambda n: None
    if isinstance(highlight, str):
        return lambda n: HIGHLIGHT if n.has_meta and n.meta.get(highlight) else None
    if isinstance(highlight, Mapping):
        def by_key(n):
            if n.has_meta:
                for key, colour in highlight.items():
                    if n.meta.get(key):
                        return colour
            return None
        return by_key
    if callable(highlight):
        return lambda n: HIGHLIGHT if highlight(n) else None
    if isinstance(highlight, Iterable):
        chosen = {id(n) for n in highlight}
        return lambda n: HIGHLIGHT if id(n) in chosen else None
    raise TypeError("highlight must be a meta key, a {meta key: colour} mapping, a predicate "
                    f"or a collection of nodes, not {type(highlight).__name__}")


def _text(*lines: str) -> graphviz.quoting.NoHtml:
    """A DOT label of several lines, never read as an HTML label or an escape sequence."""
    return graphviz.nohtml("\\n".join(printable(line).replace("\\", "\\\\") for line in lines))


def _node_attrs(n: Node, values: bool, colour: str | None) -> dict:
    lines = f"@{n.index} {op_text(n)}".split(" since ")    # a Branch: its test below
    if len(lines) == 2:
        lines[1] = "since " + lines[1]
    if values and has_value(n):
        lines.append(value_sep(n).strip() + " " + abbrev(n.value, 30) + final_state_note(n))
    if n.line is not None:
        lines.append(f"L{n.line}")
    attrs = {"label": _text(*lines), "shape": SHAPES[n.kind], "fillcolor": FILLS[n.kind]}
    if colour is not None:
        attrs.update(fillcolor=colour, penwidth="2.5", **{"class": "highlight"})
    return attrs


def _cluster_label(call: Row) -> graphviz.quoting.NoHtml:
    n = call.node
    where = f"L{n.line} {os.path.basename(n.loc.filename)}" if n.loc is not None else "?"
    return _text(f"{n.child.name}  ← called at {where}")


def dot_source(graph: DisplayGraph, highlight=None, values: bool = True) -> str:
    """The DOT text of a display graph."""
    colour_of = _highlighter(highlight)
    shown, folded = count(graph.items)
    title = f"{graph.tape.name}: {shown:,} nodes shown" + (f", {folded:,} folded" if folded else "")
    dot = graphviz.Digraph(
        name="dcgraph",
        graph_attr={"label": _text(title), "labelloc": "t", "fontname": "Helvetica",
                    "fontsize": "12", "rankdir": "TB", "nodesep": "0.25", "ranksep": "0.35"},
        node_attr={"fontname": "Helvetica", "fontsize": "10", "style": "filled",
                   "height": "0.3", "margin": "0.08,0.03"},
        edge_attr={"arrowsize": "0.6", "color": "#555555"})

    def add(container, items):
        for item in items:
            e = graph.entry(item)
            name = f"n{e.id}"
            if isinstance(item, Fold):
                container.node(name, label=_text(item.label), shape=SHAPES["Fold"],
                               fillcolor=FILLS["Fold"], style="filled,dashed",
                               fontcolor="#555555", id=name, **{"class": "fold"})
                continue
            container.node(name, id=name, **_node_attrs(item.node, values, colour_of(item.node)))
            if item.children:
                with container.subgraph(name=f"cluster_{e.id}") as sub:
                    sub.attr(label=_cluster_label(item), style="rounded,filled",
                             fillcolor="#f5f7fb", color="#9aa5b8", fontsize="10")
                    add(sub, item.children)

    add(dot, graph.items)
    for a, b in graph.data_edges():
        dot.edge(f"n{a}", f"n{b}")
    for a, b in graph.control_edges():
        dot.edge(f"n{a}", f"n{b}", style="dashed", color="#aa44aa")
    return dot.source


def graph_items(tape: Tape, depth: int | None, max_nodes: int | None) -> list:
    """``fold.fold`` for the graph views: ``depth`` (None too) at most ``MAX_CLUSTER_DEPTH``."""
    capped = MAX_CLUSTER_DEPTH if depth is None else min(depth, MAX_CLUSTER_DEPTH)
    return fold(tape, depth=capped, max_nodes=max_nodes)


def to_dot(tape: Tape, depth: int | None = 3, max_nodes: int | None = 300, highlight=None,
           values: bool = True) -> str:
    """DOT source of the tape folded to ``depth`` call levels (at most ``MAX_CLUSTER_DEPTH``)
    and ``max_nodes`` shown nodes."""
    return dot_source(DisplayGraph(tape, graph_items(tape, depth, max_nodes)), highlight, values)


def svg_from_dot(source: str) -> str:
    """Run ``dot -Tsvg``; GraphvizNotFound (saying how to install it) when it is missing."""
    try:
        return graphviz.Source(source).pipe(format="svg", encoding="utf-8")
    except graphviz.ExecutableNotFound:
        raise GraphvizNotFound(INSTALL_HINT) from None


def to_svg(tape: Tape, path: str | os.PathLike | None = None, depth: int | None = 3,
           max_nodes: int | None = 300, highlight=None, values: bool = True) -> str:
    """The SVG text of ``to_dot(...)``; also written to ``path`` (as ``to_html`` does)."""
    svg = svg_from_dot(to_dot(tape, depth, max_nodes, highlight, values))
    if path is not None:
        Path(path).write_text(svg, encoding="utf-8")
    return svg


def repr_svg(tape: Tape) -> str | None:
    """For ``Tape._repr_svg_``: the SVG, or None (no SVG repr) when Graphviz is missing."""
    try:
        return to_svg(tape)
    except GraphvizNotFound:
        return None
