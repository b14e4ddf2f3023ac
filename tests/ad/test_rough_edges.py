"""The rough edges a newcomer hits (issue 16, part 4): one test each."""
from __future__ import annotations

import functools
import subprocess
import sys

import numpy as np
import pytest

import dcgraph
from dcgraph import ad
from dcgraph.analysis import RandomContext


def test_invalid_argnums_says_what_is_allowed():
    for bad in ("c", 1.0, (0, "c"), (), True):
        with pytest.raises(TypeError, match="argnums must be an int or a tuple of ints"):
            dcgraph.grad(lambda x, y: x * y, argnums=bad)(1.0, 2.0)
    assert dcgraph.grad(lambda x, y: x * y, argnums=[0, 1])(1.0, 2.0) == (2.0, 1.0)


def _square(x):
    return x * x


_wrong = functools.partial(_square)       # not a Python function: recorded as a primitive


def _wrong_vjp(g, ans, x):
    return g * 3.0 * x          # deliberately wrong: the true adjoint is 2x


def test_check_grads_failure_shows_both_gradients():
    ad.defvjp(_wrong, _wrong_vjp)
    try:
        def f(v):
            return _wrong(v[0]) + _wrong(v[1])
        with pytest.raises(ad.GradientCheckError) as info:
            dcgraph.check_grads(f, [1.0, 2.0])
        text = str(info.value)
        assert "reverse mode" in text and "finite diff." in text
        rows = sorted(line.split() for line in text.splitlines()[2:])
        assert rows == [["arg", "0[0]", "3", "2", "5.00e-01"],      # reverse 3x, true 2x
                        ["arg", "0[1]", "6", "4", "5.00e-01"]]
    finally:
        from dcgraph.ad.registry import RULES
        RULES.pop(_wrong, None)


def test_floats_stay_recognisable_in_views():
    from dcgraph.views.values import abbrev, array_head
    assert array_head(np.array([2.0, 0.5, -1.0])) == "[2.0, 0.5, -1.0]"
    assert array_head(np.array([1e20, np.inf, np.nan])) == "[1e+20, inf, nan]"
    assert array_head(np.array([2, 3])) == "[2, 3]"
    assert abbrev(2.0) == "2.0"


def _builds():
    zs = []
    zs.append(1)
    z = np.zeros((2, 2))
    z[0, 0] = 2.0
    return zs, z


def test_values_of_containers_mutated_later_are_marked_final():
    _, tape = dcgraph.track(_builds)
    lines = str(tape).splitlines()
    line = _builds.__code__.co_firstlineno + 1
    assert lines[0] == f"@0: [L{line}] zs = build_list() = [1] (final state, after @1)"
    assert lines[1] == f"@1: [L{line + 1}] @0.append(1) ⇒ [1]"
    assert lines[2].startswith(f"@2: [L{line + 2}] z = zeros((2, 2)) = ")
    assert lines[2].endswith("(final state, after @3)")
    assert "final state" not in lines[3]


def test_python_m_dcgraph_alone_runs_the_demo():
    out = subprocess.run([sys.executable, "-m", "dcgraph"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("geom(n, beta, rng) = n if rng.random() < beta")
    assert "@0: Argument n = 0" in out.stdout


def _geom(n, rng):
    return n if rng.random() < 0.3 else _geom(n + 1, rng)


def test_random_variables_svg_draws_direct_control_edges_only():
    _, tape = dcgraph.track(_geom, 0, np.random.default_rng(6), ctx=RandomContext())
    rvs = dcgraph.random_variables(tape)
    n = len(rvs)
    assert n >= 4
    assert len(rvs.edges("control")) == n * (n - 1) // 2     # the analysis keeps them all
    dot = rvs.to_dot()
    drawn = [line.strip().split(" [")[0] for line in dot.splitlines() if "->" in line]
    assert drawn == [f"c{k} -> c{k + 1}" for k in range(n - 1)]   # the chain


def test_to_svg_returns_the_text_like_to_html(tmp_path):
    import shutil
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot program is not installed (make system-deps)")
    _, tape = dcgraph.track(_builds)
    svg = tape.to_svg(tmp_path / "t.svg")
    assert svg.startswith("<?xml") or "<svg" in svg
    assert (tmp_path / "t.svg").read_text() == svg
    html = tape.to_html(tmp_path / "t.html")
    assert isinstance(html, str) and (tmp_path / "t.html").read_text() == html
