"""Graphviz: DOT source without the program, SVG with it; clusters, kinds, edges, highlight."""
import shutil
import xml.etree.ElementTree as ET

import pytest

import dcgraph
from dcgraph.views import GraphvizNotFound, repr_svg, to_dot, to_svg
from dcgraph.views.fold import count, fold
from views_cases import caller_mutates, geom, loop_sum

SVG = "{http://www.w3.org/2000/svg}"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="Graphviz's dot is not installed (apt-get install graphviz)")


def groups(svg_text, cls):
    root = ET.fromstring(svg_text)
    return [g for g in root.iter(f"{SVG}g") if cls in (g.get("class") or "").split()]


def title(g):
    return g.find(f"{SVG}title").text


@needs_dot
def test_svg_is_xml_with_one_cluster_per_call_and_every_shown_node():
    _, tape = dcgraph.track(geom, [0.9, 0.8, 0.1], 0, 0.3)
    svg = to_svg(tape, depth=None)
    clusters = groups(svg, "cluster")
    assert len(clusters) == 2
    assert all("← called at L8 views_cases.py" in "".join(c.itertext()) for c in clusters)
    shown, folded = count(fold(tape, depth=None, max_nodes=300))
    assert len(groups(svg, "node")) == shown == 24 and folded == 0


@needs_dot
def test_folded_svg_has_markers_and_writes_to_path(tmp_path):
    _, tape = dcgraph.track(loop_sum, 30)
    returned = to_svg(tape, tmp_path / "loop.svg")        # returned and written, as to_html
    svg = (tmp_path / "loop.svg").read_text()
    assert returned == svg
    items = fold(tape, depth=3, max_nodes=300)
    shown, folded = count(items)
    nodes = groups(svg, "node")
    markers = [g for g in nodes if "more iterations" in "".join(g.itertext())]
    assert len(markers) == 1 and len(nodes) == shown + 1 and "fold" in markers[0].get("class")
    assert f"({folded} nodes)" in "".join(markers[0].itertext())


def test_dot_shapes_edges_and_clusters_without_running_dot():
    _, tape = dcgraph.track(caller_mutates, 4)
    src = to_dot(tape)
    assert src.count("subgraph cluster_") == 1 and "push  ← called at L35" in src
    assert "shape=invhouse" in src and "shape=box3d" in src and "shape=house" in src
    _, tape = dcgraph.track(loop_sum, 2)
    src = to_dot(tape)
    assert "shape=diamond" in src and "shape=ellipse" in src
    dashed = [line for line in src.splitlines() if "style=dashed" in line and "->" in line]
    branches = [n for n in tape.nodes if n.kind == "Branch"]
    assert len(dashed) == len(branches) == 3      # each to the node that ran next


def test_edges_cross_clusters_for_callee_mutation():
    _, tape = dcgraph.track(caller_mutates, 4)
    src = to_dot(tape)
    # entries: 0 n, 1 [], 2 push(...), 3-7 push's tape, then items[0] read
    assert "n5 -> n8" in src         # push's items.append(x) -> caller's items[0]


def test_highlight_by_meta_key_nodes_or_predicate():
    _, tape = dcgraph.track(geom, [0.9, 0.1], 0, 0.3)
    tape.nodes[3].meta["random"] = True
    by_key = to_dot(tape, highlight="random")
    assert by_key.count("class=highlight") == 1
    by_nodes = to_dot(tape, highlight=tape.slice(tape.nodes[-1]))
    assert by_nodes.count("class=highlight") == len([n for n in tape.slice(tape.nodes[-1])
                                                      if n.tape is not None])
    coloured = to_dot(tape, highlight={"random": "#ff0000"})
    assert 'fillcolor="#ff0000"' in coloured
    assert to_dot(tape, highlight=lambda n: n.kind == "Return").count("class=highlight") == 2
    with pytest.raises(TypeError, match="highlight must be"):
        to_dot(tape, highlight=3)


def test_without_dot_to_dot_works_and_to_svg_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    _, tape = dcgraph.track(loop_sum, 2)
    assert to_dot(tape).startswith("digraph")
    with pytest.raises(GraphvizNotFound, match="apt-get install graphviz"):
        to_svg(tape)
    assert repr_svg(tape) is None
