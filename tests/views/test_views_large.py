"""A 100,000-node tape: every view renders in seconds, folds with visible markers, drops nothing."""
import json
import shutil
import time
import xml.etree.ElementTree as ET

import pytest

import dcgraph
from dcgraph.views import from_json, render_tree, to_dot, to_html, to_json, to_svg
from dcgraph.views.fold import count, fold, subtree_size
from views_cases import big_loop

LIMIT = 6.0      # seconds per view; measured 0.3-2.5 s on a 2-core machine
MARKER = "… 19,997 more iterations of the loop at L41 (99,985 nodes)"


@pytest.fixture(scope="module")
def tape():
    _, tape = dcgraph.track(big_loop, 20_000)
    assert subtree_size(tape) == 100_006
    return tape


def timed(f, *args, **kwargs):
    start = time.perf_counter()
    out = f(*args, **kwargs)
    elapsed = time.perf_counter() - start
    assert elapsed < LIMIT, f"{f.__name__} took {elapsed:.1f} s"
    return out


def test_counts_add_up(tape):
    items = fold(tape, depth=3, max_nodes=300)
    shown, folded = count(items)
    assert shown + folded == 100_006 and shown == 21


def test_tree(tape):
    text = timed(render_tree, tape, width=100)
    assert text.startswith("big_loop  100,006 nodes, 99,985 folded\n")
    assert MARKER in text and len(text.splitlines()) == 1 + 21 + 1


def test_dot_and_svg(tape):
    src = timed(to_dot, tape)
    assert MARKER in src and src.count("[label=") == 22
    if shutil.which("dot"):
        svg = timed(to_svg, tape)
        nodes = [g for g in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}g")
                 if "node" in (g.get("class") or "").split()]
        assert len(nodes) == 22


def test_html(tape):
    page = timed(to_html, tape)
    assert MARKER in page and page.count('class="dc-row ') == 21


def test_json_round_trip(tape):
    text = timed(to_json, tape)
    assert len(json.loads(text)["tapes"][0]["nodes"]) == 100_006
    back = timed(from_json, text)
    assert subtree_size(back) == 100_006
    assert MARKER in timed(render_tree, back, width=100)
