"""show(): the rich tree, against golden text rendered without colour at a fixed width."""
import io

import numpy as np
import pytest

import dcgraph
from dcgraph.views import render_tree, show
from views_cases import geom, logistic, loop_sum

GEOM_DEPTH_1 = """\
geom  24 nodes, 6 folded
├── → @0 arg u = [0.9, 0.8, 0.1]
├── → @1 arg k = 0
├── → @2 arg p = 0.3
├── · @3 @0[@1] = 0.9   L6  if u[k] < p:
├── ◇ @4 goto §2 since @3 < @2 == False   L6  if u[k] < p:
├── · @5 @1 + 1 = 1   L8  return 1 + geom(u, k + 1, p)
├── ▸ @6 geom(@0, @5, @2) = 2   L8  return 1 + geom(u, k + 1, p)
│   ├── → @0 arg u = [0.9, 0.8, 0.1]
│   ├── → @1 arg k = 1
│   ├── → @2 arg p = 0.3
│   ├── · @3 @0[@1] = 0.8   L6  if u[k] < p:
│   ├── ◇ @4 goto §2 since @3 < @2 == False   L6  if u[k] < p:
│   ├── · @5 @1 + 1 = 2   L8  return 1 + geom(u, k + 1, p)
│   ├── ▸ @6 geom(@0, @5, @2) = 1   L8  return 1 + geom(u, k + 1, p)
│   │   └── … 6 more nodes inside geom
│   ├── · @7 1 + @6 = 2   L8  return 1 + geom(u, k + 1, p)
│   └── ← @8 return @7 = 2   L8  return 1 + geom(u, k + 1, p)
├── · @7 1 + @6 = 3   L8  return 1 + geom(u, k + 1, p)
└── ← @8 return @7 = 3   L8  return 1 + geom(u, k + 1, p)
"""

LOOP_NO_VALUES = """\
loop_sum  41 nodes, 16 folded
├── → @0 arg n
├── · @1 acc = build_list()   L12  acc = []
├── · @2 range(@0)   L14  for i in range(n):
├── · @3 iter(@2)   L14  for i in range(n):
├── » @4 φ s = 0 (from §0)
├── · @5 i = next_item(@3, 0)   L14  for i in range(n):
├── · @6 @5 % 2   L15  if i % 2:
├── ◇ @7 goto §4 since @6 == False   L15  if i % 2:
├── · @8 @1.append(@4)   L18  acc.append(s)
├── » @9 φ s = @4 (from §4)
├── · @10 i = next_item(@3, 1)   L14  for i in range(n):
├── · @11 @10 % 2   L15  if i % 2:
├── ◇ @12 goto §3 since @11 == True   L15  if i % 2:
├── · @13 @10 * @10   L16  s += i * i
├── · @14 s = @9 += @13   L16  s += i * i
├── … 3 more iterations of the loop at L14 (16 nodes)
├── » @31 φ s = @26 (from §4)
├── · @32 i = next_item(@3, 5)   L14  for i in range(n):
├── · @33 @32 % 2   L15  if i % 2:
├── ◇ @34 goto §3 since @33 == True   L15  if i % 2:
├── · @35 @32 * @32   L16  s += i * i
├── · @36 s = @31 += @35   L16  s += i * i
├── » @37 φ s = @36 (from §3)
├── ◇ @38 goto §5 since @3 exhausted   L14  for i in range(n):
├── · @39 build_tuple(@37, @30)   L19  return s, acc
└── ← @40 return @39   L19  return s, acc
"""

LOGISTIC_NARROW = """\
logistic  9 nodes
├── → @0 arg X = ndarray(4, 3) float64 [1.0, 1.0, 1.0, …]
├── → @1 arg w = ndarray(3) float64 [0.5, -1.0, 2.0]
├── · @2 z = @0 @ @1 = ndarray(4) float64 [1.5, 1.5, 1.5, …]   L23  z = X @ w
├── · @3 -@2 = ndarray(4) float64 [-1.5, -1.5, -1.5, …]   L24  p = 1 / (1 + np.…
├── · @4 exp(@3) = ndarray(4) float64 [0.2231, 0.2231, 0.2231, …]   L24  p = 1 …
├── · @5 1 + @4 = ndarray(4) float64 [1.223, 1.223, 1.223, …]   L24  p = 1 / (1…
├── · @6 p = 1 / @5 = ndarray(4) float64 [0.8176, 0.8176, 0.8176, …]   L24  p =…
├── · @7 @6.mean() = 0.8176   L25  return p.mean()
└── ← @8 return @7 = 0.8176   L25  return p.mean()
"""


def test_golden_recursion_folded_below_depth():
    _, tape = dcgraph.track(geom, [0.9, 0.8, 0.1], 0, 0.3)
    assert render_tree(tape, depth=1, width=80) == GEOM_DEPTH_1


def test_golden_loop_folded_without_values():
    _, tape = dcgraph.track(loop_sum, 6)
    assert render_tree(tape, values=False, width=80) == LOOP_NO_VALUES


def test_golden_arrays_abbreviated_and_lines_cut_to_width():
    _, tape = dcgraph.track(logistic, np.ones((4, 3)), np.array([0.5, -1.0, 2.0]))
    assert render_tree(tape, width=80) == LOGISTIC_NARROW


def test_depth_zero_folds_every_call_and_depth_none_expands_all():
    _, tape = dcgraph.track(geom, [0.9, 0.8, 0.1], 0, 0.3)
    top = render_tree(tape, depth=0, width=80)
    assert "… 15 more nodes inside geom" in top and top.count("\n") == 11
    full = render_tree(tape, depth=None, width=80)
    assert "more" not in full and full.count("@0 arg u") == 3


def test_show_prints_plain_text_and_str_stays_the_plain_dump():
    _, tape = dcgraph.track(geom, [0.9, 0.8, 0.1], 0, 0.3)
    buf = io.StringIO()
    show(tape, depth=1, file=buf, width=80, color=False)
    assert buf.getvalue() == GEOM_DEPTH_1
    assert str(tape).startswith("@0: Argument u = [0.9, 0.8, 0.1]\n")


def test_long_strings_are_cut():
    def shout(s):
        return s.upper()
    _, tape = dcgraph.track(shout, "x" * 500)
    line = render_tree(tape, width=200).splitlines()[1]
    assert "'xxxx" in line and "…" in line and len(line) < 120


@pytest.mark.parametrize("bad", [{"depth": -1}, {"max_nodes": 0}])
def test_bad_limits_are_refused(bad):
    _, tape = dcgraph.track(loop_sum, 2)
    with pytest.raises(ValueError, match="must be"):
        render_tree(tape, **bad)
