"""The explorer file, the notebook view, and the gallery script."""
import json
import re
import subprocess
import sys
from pathlib import Path

import dcgraph
from dcgraph.views import repr_html, to_html
from dcgraph.views.fold import count, fold
from views_cases import caller_mutates, geom, loop_sum

ROOT = Path(__file__).resolve().parents[2]


def page_data(page):
    m = re.search(r'<script type="application/json" id="dc-data">(.*?)</script>', page, re.S)
    return json.loads(m.group(1).replace("<\\/", "</"))


def test_explorer_is_one_self_contained_file(tmp_path):
    _, tape = dcgraph.track(geom, [0.9, 0.8, 0.1], 0, 0.3)
    page = to_html(tape, tmp_path / "geom.html")
    assert (tmp_path / "geom.html").read_text() == page
    assert not re.search(r'<(script|img|link|iframe)[^>]+(src|href)=', page)
    assert not re.search(r'(url\(|@import|fetch\(|XMLHttpRequest)', page)
    assert "<svg" in page and 'class="dc-tree"' in page and "{{" not in page
    data = page_data(page)
    assert len(data["items"]) == count(fold(tape, depth=3, max_nodes=400))[0] == 24
    assert page.count('<g id="n') == 24


def test_explorer_data_matches_slice_and_users():
    _, tape = dcgraph.track(caller_mutates, 4)
    data = page_data(to_html(tape, depth=None, max_nodes=None))
    entries = [n for n in tape.walk()]
    ids = {id(n): i for i, n in enumerate(entries)}
    target = tape.nodes[-2]
    seen, stack = {ids[id(target)]}, [ids[id(target)]]
    while stack:
        for d in data["items"][stack.pop()]["deps"]:
            if d not in seen:
                seen.add(d)
                stack.append(d)
    assert seen == {ids[id(n)] for n in tape.slice(target) if n.tape is not None}
    users = {it["id"] for it in data["items"] if ids[id(target)] in it["inputs"]}
    assert users == {ids[id(n)] for n in tape.users(target)}
    assert data["items"][ids[id(target)]]["hover"].endswith("return items[0] + k")


def test_folded_explorer_keeps_counts_and_marker_text():
    _, tape = dcgraph.track(loop_sum, 50)
    data = page_data(to_html(tape))
    folds = [it for it in data["items"] if it["kind"] == "Fold"]
    assert len(folds) == 1 and folds[0]["label"].startswith("… 47 more iterations")
    assert data["shown"] + data["folded"] == len(list(tape.walk()))


def test_notebook_repr_html_has_tree_and_graph():
    _, tape = dcgraph.track(geom, [0.9, 0.1], 0, 0.3)
    html = repr_html(tape)
    assert html.startswith('<div class="dcgraph-view"><style>') and "<svg" in html
    assert "<script" not in html and html.count("<details") == 1


def test_gallery_renders_every_example_with_an_index(tmp_path):
    p = subprocess.run([sys.executable, str(ROOT / "viz" / "make_gallery.py"), "--out",
                        str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    names = sorted(f.stem for f in (ROOT / "examples").glob("*.py"))
    assert {"geometric", "loops", "numpy_logistic"} <= set(names)
    index = (tmp_path / "index.html").read_text()
    for name in names:
        for ext in ("svg", "html", "json"):
            assert (tmp_path / f"{name}.{ext}").stat().st_size > 1000
            assert f'href="{name}.{ext}"' in index


def test_explorer_without_graphviz_keeps_the_tree_and_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    _, tape = dcgraph.track(geom, [0.9, 0.1], 0, 0.3)
    page = to_html(tape)
    assert 'class="dc-nograph"' in page and "apt-get install graphviz" in page
    assert "<svg" not in page and page.count('class="dc-row ') == 15
