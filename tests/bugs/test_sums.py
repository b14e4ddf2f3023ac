"""The sum rewrite of generated log-density terms (scalars out of ``np.sum``) and the
``np.repeat`` gather: same values, fewer array operations, and the generated Rats code shows it."""
import ast
import pathlib

import numpy as np
import pytest

import dcgraph.bugs as B
from dcgraph.bugs.emit import _repeats
from dcgraph.bugs.linear import merge_linear
from dcgraph.bugs.sums import scalar_names, sum_over

EXAMPLES = pathlib.Path(__file__).resolve().parents[3] / "shared" / "bugs-examples"


def test_scalar_names_follow_the_assignments():
    body = ast.parse("a = theta[0]\nb = np.exp(a) * 2.0\nv = theta[1:4]\nw = b - v\n"
                     "c = np.sum(v)\nd = k0[1]\nb = v\n").body
    assert scalar_names(body) == {"a"}                 # b reassigned to an array; sums unknown
    body = ast.parse("a = theta[0]\nfor t in r:\n    a = F[t]\n").body
    assert scalar_names(body) == set()                 # assigned in a loop: forgotten


@pytest.mark.parametrize("text,expected", [
    ("0.5 * a - 0.5 * b * np.square(v - a)", "15.0 * a - 0.5 * b * np.sum(np.square(v - a))"),
    ("-(a * v) / b + 2.0", "-(a * np.sum(v)) / b + 60.0"),
    ("np.log(v) * a", "np.sum(np.log(v)) * a"),
    ("v * v", "np.sum(v * v)"),
    ("np.log(a / np.pi) + v", "np.sum(np.log(a / np.pi) + v)"),   # np.pi unknown: kept in one sum
    ("a - np.log(b / np.pi) * v", "30.0 * a - np.sum(np.log(b / np.pi) * v)"),
])
def test_sum_over_moves_scalars_out(text, expected):
    e = ast.parse(text, mode="eval").body
    out = sum_over(e, 30, {"a", "b"})
    assert ast.unparse(out) == expected
    env = {"np": np, "a": 0.7, "b": 1.9, "v": np.linspace(0.1, 3.0, 30)}
    direct = np.sum(np.broadcast_to(eval(text, env), (30,)))
    assert eval(ast.unparse(out), env) == pytest.approx(direct, rel=1e-13)


def test_repeats_pattern():
    assert _repeats(np.repeat(np.arange(3, 9), 5)) == 5
    assert _repeats(np.array([0, 0, 1, 1, 3, 3])) == 1          # not consecutive
    assert _repeats(np.array([0, 0, 0, 1, 1])) == 1              # uneven runs
    assert _repeats(np.array([2, 2, 2])) == 1                    # one run: a broadcast, not a repeat
    assert _repeats(np.tile(np.arange(4), 3)) == 1


def test_rats_generated_code_sums_once_per_statement():
    d = EXAMPLES / "rats"
    m = B.compile(d / "model.txt", d / "data.txt", d / "inits.txt")
    src = m.source().split("def logjoint")[0]
    assert "np.repeat(p2, 5)" in src and "[k0]" not in src
    assert "lp = lp + (75.0 * t1 - 0.5 * p4 * np.sum(np.square(" in src
    assert m.logjoint(m.constrained(m.initial_values(0))) == pytest.approx(-174029.38703951868, rel=1e-9)


def _merged(src, term):
    body = ast.parse(src).body
    out = merge_linear(body, ast.parse(term, mode="eval").body)
    return None if out is None else (ast.unparse(out[0]), out[1], [ast.unparse(s) for s in body])


def test_linear_terms_merge_into_the_later_statement():
    got = _merged("t4 = theta[2]\nlp = lp + t4\nt5 = np.exp(t4)", "-0.999 * t4 - 0.001 * t5")
    assert got[1] is False and got[2] == ["t4 = theta[2]", "t5 = np.exp(t4)"]
    assert eval(got[0], {"t4": 2.0, "t5": 3.0}) == pytest.approx(2.0 - 0.999 * 2.0 - 0.003)
    got = _merged("t1 = theta[0]\nlp = t1\nt2 = np.exp(t1)", "-0.999 * t1 - 0.001 * t2")
    assert got[1] is True and got[2] == ["t1 = theta[0]", "t2 = np.exp(t1)"]
    assert _merged("lp = lp + t4\nt5 = np.exp(t4)", "np.log(t5) - t4") is None          # not linear
    assert _merged("lp = lp + t4\nt5 = lp * 2.0", "-t4") is None                         # lp read between
    assert _merged("lp = lp + t4\nt5 = np.exp(t4)", "-t5") is None                       # no common name
    assert _merged("lp = lp * t4", "-t4") is None
