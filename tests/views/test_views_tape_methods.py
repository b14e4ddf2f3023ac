"""The Tape methods delegate to the views (wiring test; the views have their own tests)."""
import io
import xml.etree.ElementTree as ET

import pytest

import dcgraph


def poly(x, n):
    s = 0.0
    for k in range(n):
        s = s * x + k
    return s


@pytest.fixture(scope="module")
def tape():
    _, t = dcgraph.track(poly, 2.0, 3)
    return t


def test_show_prints_a_tree(tape):
    out = io.StringIO()
    tape.show(file=out, width=100, color=False)
    text = out.getvalue()
    assert "arg x = 2" in text and "return" in text


def test_dot_and_svg(tape):
    dot = tape.to_dot()
    assert dot.lstrip().startswith("digraph")
    svg = tape.to_svg()
    assert ET.fromstring(svg).tag.endswith("svg")
    assert tape._repr_svg_().lstrip().startswith(("<?xml", "<svg"))


def test_json_round_trip_keeps_the_dump(tape):
    again = dcgraph.Tape.from_json(tape.to_json())
    again.lint()
    assert str(again) == str(tape)


def test_html_is_self_contained(tape, tmp_path):
    path = tmp_path / "t.html"
    html = tape.to_html(str(path))
    assert path.exists() and "<script" in html
    for attr in ("src=", "href="):     # nothing loaded from the network (xmlns are only names)
        assert f'{attr}"http' not in html and f"{attr}'http" not in html
    assert "<svg" in tape._repr_html_() or "<ul" in tape._repr_html_()
