"""The command line, run as a subprocess: trace, view, demo, and its errors."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
CASES = str(HERE / "views_cases.py")


def run(*args, cwd=HERE):
    return subprocess.run([sys.executable, "-m", "dcgraph", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=60, env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"})


def test_trace_file_target_writes_every_output(tmp_path):
    out = [tmp_path / f for f in ("t.json", "t.svg", "t.html")]
    p = run("trace", f"{CASES}:loop_sum", "5", "--depth", "1", "--json", str(out[0]),
            "--svg", str(out[1]), "--html", str(out[2]))
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("loop_sum  35 nodes, 11 folded\n")
    assert "… 2 more iterations of the loop at L14 (11 nodes)" in p.stdout
    assert json.loads(out[0].read_text())["format"] == "dcgraph-tape"
    assert out[1].read_text().lstrip().startswith("<?xml")
    assert "dc-data" in out[2].read_text()
    view = run("view", str(out[0]), "--depth", "1")
    assert view.returncode == 0 and view.stdout == p.stdout


def test_trace_module_target_with_keywords():
    p = run("trace", "views_cases:geom", "[0.9, 0.1]", "--kw", "k=0", "--kw", "p=0.5")
    assert p.returncode == 0, p.stderr
    assert "▸ @6 geom(@0, @5, @2) = 1" in p.stdout and "← @8 return @7 = 2" in p.stdout


@pytest.mark.parametrize("args, message", [
    (["trace", f"{CASES}:loop_sum", "abc"], "argument 'abc' is not a Python literal"),
    (["trace", f"{CASES}:loop_sum", "--kw", "n"], "--kw 'n' is not NAME=VALUE"),
    (["trace", "no_such_module:f"], "cannot import module 'no_such_module'"),
    (["trace", f"{CASES}:nothing"], "has no 'nothing'"),
    (["trace", "loop_sum"], "is not MODULE:FUNCTION"),
    (["view", "missing.json"], "no such file: missing.json"),
])
def test_usage_errors_are_clear_and_exit_2(args, message):
    p = run(*args)
    assert p.returncode == 2 and message in p.stderr and "Traceback" not in p.stderr


def test_a_raising_function_shows_its_tape_and_exits_1():
    p = run("trace", f"{CASES}:geom", "[0.9]", "0", "0.3")
    assert p.returncode == 1
    assert "× @3 raise = IndexError" in p.stdout and "raised IndexError" in p.stderr


def test_demo_and_the_installed_script():
    p = run("demo")
    assert p.returncode == 0
    assert p.stdout.startswith("geom(n, beta, rng) = n if rng.random() < beta else geom(n + 1, beta, rng)\n"
                               "traced geom(0, 0.3, default_rng(7)) = 3\n")
    assert "@6: [L125] geom(@5, @1, @2) = 3" in p.stdout      # the plain dump
    assert "▸ @6 geom(@5, @1, @2) = 3" in p.stdout           # then the rich tree
    script = Path(sys.executable).with_name("dcgraph")
    if script.exists():
        q = subprocess.run([str(script), "demo"], capture_output=True, text=True, timeout=60,
                           env={"COLUMNS": "100", "PATH": "/usr/bin:/bin"})
        assert q.stdout == p.stdout
