"""Views given hostile values, names and files: no crash, no injection, no request sent."""
import io
import json
import re
import subprocess
import sys

import pytest

import dcgraph
from dcgraph.tape.printing import printable
from dcgraph.views.values import abbrev, full_text

ESC = "\x1b]0;owned\x07\x1b[31m"


def views_of(tape):
    """Every text view of ``tape``."""
    out = io.StringIO()
    tape.show(depth=None, file=out, width=200)
    return {"str": str(tape), "show": out.getvalue(), "json": tape.to_json(),
            "html": tape.to_html(), "dot": tape.to_dot()}


def test_script_text_in_values_names_and_source_stays_data(tmp_path):
    source = tmp_path / "hostile.py"
    source.write_text("def f(x):\n    y = x + '<!--<script>'  # </script><!--<script>\n"
                      "    return y\n")
    ns = {}
    exec(compile(source.read_text(), str(source), "exec"), ns)
    f = ns["f"]
    f.__qualname__ = "</script><!--<script>"
    _, tape = dcgraph.track(f, "</script><b>&amp;")
    page = tape.to_html()
    template_scripts = page.count("<script")
    data = re.search(r'<script type="application/json" id="dc-data">(.*?)</script>', page, re.S)
    assert data is not None, "the data block ends early"
    assert "<" not in data.group(1) and ">" not in data.group(1) and "&" not in data.group(1)
    assert json.loads(data.group(1))["title"] == "</script><!--<script>"
    assert "# </script><!--<script>" in json.dumps(json.loads(data.group(1)))   # source line
    assert template_scripts == _asset_scripts()     # no script element added by the data


def _asset_scripts():
    from dcgraph.views.html import asset
    return asset("explorer.html").count("<script")


def test_terminal_escapes_never_reach_the_terminal():
    def f(x):
        return x + ESC

    f.__name__ = f.__qualname__ = "f" + ESC
    _, tape = dcgraph.track(f, ESC)
    for name, text in views_of(tape).items():
        if name == "json":
            assert "\x1b" not in text    # JSON escapes control characters itself
        else:
            assert "\x1b" not in text and "\x07" not in text, name
    assert "\\x1b]0;owned\\x07" in str(tape)
    assert printable("a\u202eb") == "a\\u202eb"


def test_the_abbreviation_hook_is_looked_up_on_the_type():
    calls = []

    class Proxy:                          # answers every attribute, as xmlrpc's ServerProxy
        def __getattr__(self, name):
            calls.append(name)
            return lambda *a: calls.append(("called", name)) or "remote"

    def f(p):
        return p

    _, tape = dcgraph.track(f, Proxy())
    views_of(tape)
    abbrev(Proxy()), full_text(Proxy())
    assert calls == []


class HostileRepr:
    def __init__(self, kind):
        self.kind = kind

    def __repr__(self):
        if self.kind == "raise":
            raise RuntimeError("no")
        return 42                          # not a string


class BadArgs(Exception):
    @property
    def args(self):
        raise RuntimeError("no args")


@pytest.mark.parametrize("value", [HostileRepr("raise"), HostileRepr("int"), BadArgs()])
def test_a_hostile_repr_does_not_crash_a_view(value):
    def f(v):
        return [v]

    _, tape = dcgraph.track(f, value)
    views = views_of(tape)
    assert type(value).__name__ in views["show"]
    dcgraph.Tape.from_json(views["json"]).lint()


def test_huge_ints_are_written_by_their_size():
    def f(n):
        return n * n

    _, tape = dcgraph.track(f, 10**3000)
    views = views_of(tape)
    assert "<int of about 6,001 digits>" in views["str"]
    assert "<int of about" in views["show"]
    assert abbrev(10**5000, 40).startswith("<int of about 5,001 dig")


def test_calls_of_unhashable_callables_are_shown():
    class Unhashable:
        __hash__ = None

        def __eq__(self, other):
            raise AssertionError("compared")

        def __call__(self, x):
            return x + 1

    u = Unhashable()

    def f(x):
        return u(x) * 2

    _, tape = dcgraph.track(f, 1)
    views = views_of(tape)
    assert "Unhashable<@1>(@0) = 2" in views["str"]
    dcgraph.Tape.from_json(views["json"]).lint()


def test_a_deep_tape_prints_and_views():
    def countdown(n):
        return 0 if n == 0 else 1 + countdown(n - 1)

    depth, limit = 991, sys.getrecursionlimit()
    sys.setrecursionlimit(depth + 1200)       # room for the test runner's own frames
    try:
        _, tape = dcgraph.track(countdown, depth)
    finally:
        sys.setrecursionlimit(limit)
    text = str(tape)
    # node numbers depend on the interpreter (3.12 duplicates the return into each branch)
    assert re.fullmatch(r"@\d+: return @\d+ = " + str(depth), text.splitlines()[-1])
    assert max(len(line) - len(line.lstrip()) for line in text.splitlines()) == 4 * depth
    out = io.StringIO()
    tape.show(depth=None, max_nodes=None, file=out)
    again = dcgraph.Tape.from_json(tape.to_json())
    again.lint()
    assert str(again).count("\n") == text.count("\n")


def test_view_of_a_file_with_escapes_prints_one_clean_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "dcgraph-tape", "version": 1, "files": [],
                               "sources": {}, "functions": [], "literals": [],
                               "tapes": [{"name": ESC + "\nline", "raised": False,
                                          "nodes": "x"}]}))
    p = subprocess.run([sys.executable, "-m", "dcgraph", "view", str(bad)], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "\x1b" not in p.stderr
    assert "tapes[0]: must be an object with a list of nodes" in p.stderr
