"""The picture of a BUGS graph, like PyMC's ``model_to_graphviz``: one node per variable.

Stochastic variables are ellipses, logical ones dashed boxes, observed ones shaded (partly observed:
shaded and dashed); data-only variables are not drawn. Variables sharing a shape sit in one plate
labelled by the sizes (``30 × 5``); scalars stand outside. An edge ``a -> b`` means some element of
``b`` reads some element of ``a``. Labels are BUGS names and distribution names, quoted by graphviz.
"""
from __future__ import annotations

from pathlib import Path

__all__ = ["graph_dot", "graph_svg"]


def _variables(g):
    info = {}
    for node in g.nodes:
        v = info.setdefault(node.var, {"stochastic": 0, "logical": 0, "observed": 0, "dists": set(),
                                       "parents": set()})
        if node.stochastic:
            v["stochastic"] += 1
            v["observed"] += bool(node.observed)
            v["dists"].add(node.instance.statement.ast.dist.name)
        else:
            v["logical"] += 1
        for p in node.inputs:
            parent = g.nodes[p].var
            if parent != node.var:
                v["parents"].add(parent)
    return info


def graph_dot(g):
    """A ``graphviz.Digraph`` of the model's variables."""
    import graphviz
    dot = graphviz.Digraph("bugs", graph_attr={"rankdir": "TB"},
                           node_attr={"fontname": "Helvetica", "fontsize": "10"})
    info = _variables(g)
    plates = {}
    for k, name in enumerate(sorted(info)):
        shape = g.shapes.get(name, ())
        plates.setdefault(tuple(shape), []).append((k, name))
    ids = {}
    for shape, members in sorted(plates.items()):
        target = dot if not shape else graphviz.Digraph(f"cluster_{len(ids)}")
        if shape:
            target.attr(label=" × ".join(str(s) for s in shape), labeljust="r", labelloc="b",
                        style="rounded")
        for k, name in members:
            v = info[name]
            ids[name] = f"v{k}"
            if v["stochastic"]:
                label = f"{name}\n~\n{' | '.join(sorted(v['dists']))}"
                attrs = {"shape": "ellipse"}
                if v["observed"]:
                    attrs.update(style="filled" if v["observed"] == v["stochastic"] else
                                 "filled,dashed", fillcolor="lightgrey")
            else:
                label, attrs = f"{name}\n<-", {"shape": "box", "style": "dashed"}
            target.node(ids[name], graphviz.nohtml(label), **attrs)
        if shape:
            dot.subgraph(target)
    for name, v in sorted(info.items()):
        for parent in sorted(v["parents"]):
            dot.edge(ids[parent], ids[name])
    return dot


def graph_svg(g, path=None) -> str:
    """SVG text of ``graph_dot(g)`` (needs Graphviz's ``dot``); also written to ``path``."""
    from ..views.dot import svg_from_dot
    svg = svg_from_dot(graph_dot(g).source)
    if path is not None:
        Path(path).write_text(svg, encoding="utf-8")
    return svg
