"""The graph of a model as one run traced it: parameters, data, ``|=`` statements, and the data
and control edges between them (``model.graph(*args)``).

The rewritten model is traced at the starting point; the sources of
``dcgraph.analysis.dependence.Dependence`` are the parameter reads (``runtime.constrain``) and the
statements (``runtime.observe``). A statement's left side names its variable: the parameter it
was computed from, or the data it reads (its source text; statements in a loop share a node).
Its data parents are the parameters its distribution was computed from; its control parents
the parameters whose values decided, through branches and loop bounds, that it ran.
"""
from __future__ import annotations

import operator

from ..analysis.dependence import Dependence
from ..tape import PrimitiveCall
from .. import track
from . import runtime
from .distributions import DistExpr

__all__ = ["ModelGraph", "model_graph"]


class Statement:
    """One ``|=`` statement that ran: ``line``, ``variable`` (node name), ``family``,
    ``observed`` (the left side is data), ``data``/``control`` parents (parameter names)."""

    __slots__ = ("line", "variable", "family", "observed", "data", "control")

    def __init__(self, line, variable, family, observed, data, control):
        self.line, self.variable, self.family, self.observed = line, variable, family, observed
        self.data, self.control = data, control

    def __repr__(self):
        kind = "observed" if self.observed else "prior"
        return f"<line {self.line}: {self.variable} |= {self.family} ({kind})>"


class ModelGraph:
    """``params`` (names), ``data`` (labels), ``statements`` (distinct by line and variable),
    ``edges`` ((parent, child, "data" | "control")), ``tape`` (the traced run), ``to_dot()``,
    ``to_svg()``."""

    def __init__(self, name, params, data, statements, tape):
        self.name, self.params, self.data = name, params, data
        self.statements, self.tape = statements, tape

    @property
    def edges(self) -> list:
        out = []
        for s in self.statements:
            for kind in ("data", "control"):
                for p in getattr(s, kind):
                    edge = (p, s.variable, kind)
                    if edge not in out and p != s.variable:
                        out.append(edge)
        return out

    def graph(self):
        """A ``graphviz.Digraph``: parameters as ellipses, data as filled boxes, data edges
        solid (labelled with the distribution), control edges dashed."""
        import graphviz
        g = graphviz.Digraph(self.name, graph_attr={"rankdir": "TB"},
                             node_attr={"fontname": "Helvetica", "fontsize": "10"})
        priors = {s.variable: s.family for s in self.statements if not s.observed}
        for p in self.params:
            g.node(f"p_{p}", f"{p}\n~ {priors.get(p, 'flat')}", shape="ellipse")
        families = {s.variable: s.family for s in self.statements if s.observed}
        for k, d in enumerate(self.data):
            g.node(f"d_{k}", f"{d}\n~ {families.get(d, '?')}", shape="box", style="filled",
                   fillcolor="lightgrey")
        ids = {p: f"p_{p}" for p in self.params} | {d: f"d_{k}" for k, d in enumerate(self.data)}
        for parent, child, kind in self.edges:
            g.edge(ids[parent], ids[child], style="solid" if kind == "data" else "dashed",
                   label="" if kind == "data" else "control")
        return g

    def to_dot(self) -> str:
        return self.graph().source

    def to_svg(self, path=None) -> str:
        """SVG text of ``graph()`` (needs Graphviz's ``dot``); written to ``path`` if given."""
        svg = self.graph().pipe(format="svg").decode("utf-8")
        if path is not None:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(svg)
        return svg

    def __repr__(self):
        lines = [f"<ModelGraph {self.name}: params {', '.join(self.params) or '-'}; "
                 f"data {', '.join(self.data) or '-'}"]
        for s in self.statements:
            parents = [f"{p}(data)" for p in s.data] + [f"{p}(control)" for p in s.control]
            lines.append(f"  line {s.line}: {s.variable} |= {s.family}"
                         + (f"  <- {', '.join(parents)}" if parents else ""))
        return "\n".join(lines) + ">"


def _sources(node):
    if type(node) is PrimitiveCall:
        if node.fn is runtime.constrain:
            return ()
        if node.fn is runtime.observe:
            return (node.args[1],)
    return None


def _container(node):
    """The object an element read ``x[i]`` (or ``x[i][j]``) reads from: a statement on an
    element of data is an observation even when the index depends on a parameter."""
    while type(node) is PrimitiveCall and node.fn is operator.getitem and node.args:
        node = node.args[0]
    return node


def model_graph(bound) -> ModelGraph:
    """The ``ModelGraph`` of a bound model, traced at its starting point."""
    rewritten = bound.model.rewritten
    _, tape = track(rewritten.function, bound.initial_point(), *bound.args, **bound.kwargs)
    dep = Dependence(tape, _sources)
    names = []
    for node in dep.sources:
        names.append(node.args[2].value.name if node.fn is runtime.constrain else None)
    params = list(dict.fromkeys(n for n in names if n is not None))
    data, statements, seen = [], [], {}
    for k, node in enumerate(dep.sources):
        if node.fn is not runtime.observe:
            continue
        line = node.args[2].value
        left = sorted({names[j] for j in dep.data(_container(node.args[0])) if names[j] is not None})
        observed = not left
        variable = rewritten.statements.get(line, f"line {line}") if observed else left[0]
        if observed and variable not in data:
            data.append(variable)
        d = node.args[1].value
        family = d.family if type(d) is DistExpr else type(d).__name__
        parents = [names[j] for j in sorted(dep.parameter_data(node)) if names[j] is not None]
        control = [names[j] for j in sorted(dep.control(node)) if names[j] is not None]
        key = (line, variable)
        if key in seen:                  # the same statement again (a loop): merge parents
            s = seen[key]
            s.data = list(dict.fromkeys(s.data + parents))
            s.control = list(dict.fromkeys(s.control + control))
            continue
        seen[key] = Statement(line, variable, family, observed, list(dict.fromkeys(parents)),
                              list(dict.fromkeys(control)))
        statements.append(seen[key])
    return ModelGraph(bound.model.fn.__qualname__, params, data, statements, tape)
