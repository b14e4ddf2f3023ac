"""Generated numpy programs: every gradient matches central differences or is refused, and
``Tape.slice`` misses no input (issue 16, part 1).

A hypothesis strategy writes ``f(x, y)`` over float arrays ``x`` (5) and ``y`` (3): a 1-d
work array ``a`` (6), a 3x3 ``m`` and a scratch ``b``, changed by a random mix of fancy and
boolean index writes with repeated indices, augmented assignment through fancy indices and
views, writes through slices and strided views, ``np.add.at``/``np.subtract.at``, ``out=``
(ufuncs and ``np.cumsum``), ``a.flat[k] = ``, ``np.fill_diagonal``, ``np.put``, ``np.place``,
``np.putmask``, ``np.copyto`` (with and without ``where=``, into a row), positional ``out``
(ufuncs, ``np.cumsum``, ``np.dot`` into a view), reads through ``.flat`` and rebinding
arithmetic; it
returns a weighted sum. For each program:

* the traced value equals the untraced one;
* ``dcgraph.grad`` wrt ``x`` and ``y`` equals central differences, or raises
  ``MissingRuleError``/``StaleValueError`` (a refusal): never a silent mismatch;
* an argument the returned node's slice does not reach does not change the output when it
  is perturbed.

200 programs by default, 2,000 under ``-m slow``; deterministic (``derandomize``); the
generated source is in the failure message.
"""
from __future__ import annotations

import linecache

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import dcgraph
from dcgraph import ad

NX, NY, NA = 5, 3, 6
REFUSALS = (ad.MissingRuleError, ad.StaleValueError)


# -- the grammar -----------------------------------------------------------------------------
def _scalar(d) -> str:
    """A real scalar depending on the arguments (or a constant)."""
    k = d.draw(st.integers(0, NX - 1))
    return d.draw(st.sampled_from([
        f"x[{k}]", f"x[{k}] * x[{(k + 1) % NX}]", f"y[{k % NY}]", "1.5",
        f"np.sin(x[{k}])", f"a[{d.draw(st.integers(0, NA - 1))}] * x[{k}]",
        f"m.flat[{d.draw(st.integers(0, 8))}]"]))


def _fancy(d, n: int) -> list:
    """A fancy index into a length-n axis, repeats likely."""
    size = d.draw(st.integers(1, 4))
    return [d.draw(st.integers(-n, n - 1)) for _ in range(size)]


def _values(d, size: int) -> str:
    """A scalar or an array of ``size`` values."""
    if d.draw(st.booleans()):
        return _scalar(d)
    idx = [d.draw(st.integers(0, NX - 1)) for _ in range(size)]
    scale = d.draw(st.sampled_from(["", " * 2.0", " * y[0]"]))
    return f"x[{idx}]{scale}"


def _mask(d, n: int) -> str:
    return repr([d.draw(st.booleans()) for _ in range(n)])


def _statement(d) -> str:
    kind = d.draw(st.integers(0, 26))
    if kind == 0:
        idx = _fancy(d, NA)
        return f"a[{idx}] = {_values(d, len(idx))}"
    if kind == 1:
        idx = _fancy(d, NA)
        op = d.draw(st.sampled_from(["+=", "-=", "*="]))
        return f"a[{idx}] {op} {_values(d, len(idx))}"
    if kind == 2:
        idx = _fancy(d, NA)
        return f"a[{idx}] = a[{idx}] + {_scalar(d)}"
    if kind == 3:
        mask = [d.draw(st.booleans()) for _ in range(NA)]
        return f"a[np.array({mask!r})] = {_values(d, sum(mask)) if sum(mask) else _scalar(d)}"
    if kind == 4:
        lo = d.draw(st.integers(0, 3))
        op = d.draw(st.sampled_from(["+=", "*="]))
        return f"v = a[{lo}:{lo + 3}]\nv {op} {_scalar(d)}"
    if kind == 5:
        idx = _fancy(d, 3)
        return f"v = a[::2]\nv[{idx}] = {_values(d, len(idx))}"
    if kind == 6:
        ufunc = d.draw(st.sampled_from(["add", "subtract", "multiply"]))
        idx = _fancy(d, NA)
        return f"np.{ufunc}.at(a, {idx}, {_values(d, len(idx))})"
    if kind == 7:
        ufunc = d.draw(st.sampled_from(["multiply", "add"]))
        return f"np.{ufunc}(a, {_scalar(d)}, out=a)"
    if kind == 8:
        return "b = np.empty(6)\nnp.cumsum(a, out=b)\na = b * 0.5"
    if kind == 9:
        k = d.draw(st.integers(0, 8))
        return f"m.flat[{k}] = {_scalar(d)}"
    if kind == 10:
        return f"np.fill_diagonal(m, {_values(d, 3)})"
    if kind == 11:
        idx = _fancy(d, NA)
        mode = d.draw(st.sampled_from(["raise", "wrap", "clip"]))
        return f"np.put(a, {idx}, {_values(d, len(idx))}, mode={mode!r})"
    if kind == 12:
        return f"np.place(a, np.array({_mask(d, NA)}), x[:{d.draw(st.integers(1, NX))}])"
    if kind == 13:
        return f"np.putmask(a, np.array({_mask(d, NA)}), {_values(d, NA)})"
    if kind == 14:
        return f"np.copyto(a, {_values(d, NA)})"
    if kind == 15:
        return f"np.copyto(a, {_values(d, NA)}, where=np.array({_mask(d, NA)}))"
    if kind == 16:
        i, j = d.draw(st.integers(-3, 2)), d.draw(st.integers(0, 2))
        return f"m[{i}, {j}] = {_scalar(d)}"
    if kind == 17:
        j = d.draw(st.integers(0, 2))
        return f"m[:, {j}] += a[:3] * {_scalar(d)}"
    if kind == 18:
        return f"a = a * {_scalar(d)} + np.sin(a)"
    if kind == 19:
        rows = _fancy(d, 3)
        return f"m[{rows}] = a[{d.draw(st.integers(0, 3))}:][:3] * {_scalar(d)}"
    if kind == 20:
        idx = _fancy(d, NA)
        return f"w = a[{idx}]\nw += {_scalar(d)}\na[{idx}] = w"
    if kind == 21:
        return f"a.flat[{_fancy(d, NA)}] = {_scalar(d)}"
    if kind == 22:
        return f"np.multiply(a, {_scalar(d)}, a)"          # a ufunc's positional out
    if kind == 23:
        return "b = np.empty(6)\nnp.cumsum(a, 0, None, b)\na = b * 0.25"
    if kind == 24:
        return "np.dot(M33, a[:3].copy(), a[:3])"            # out is a view of a
    if kind == 25:
        return f"np.copyto(m[1], {_values(d, 3)})"            # a row of m, written in place
    return f"a[{d.draw(st.integers(-NA, NA - 1))}] {d.draw(st.sampled_from(['=', '+=']))} " \
           f"{_scalar(d)}"


@st.composite
def programs(draw):
    d = _Draw(draw)
    start = d.draw(st.sampled_from(["np.zeros(6)", "np.ones(6) * x[0]", "np.linspace(0, 1, 6)",
                                    "np.concatenate([x, y[:1]])"]))
    body = [f"a = {start}", "m = np.arange(9.0).reshape(3, 3) * 0.1"]
    for _ in range(d.draw(st.integers(1, 6))):
        body += _statement(d).split("\n")
    body.append("return (a * W6).sum() + (m * W33).sum()")
    return "def f(x, y):\n" + "".join(f"    {line}\n" for line in body)


class _Draw:
    def __init__(self, draw):
        self.draw = draw


# -- running one program ---------------------------------------------------------------------
_counter = [0]


def _compile(source: str):
    _counter[0] += 1
    filename = f"<generated numpy program {_counter[0]}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np, "W6": np.linspace(1.0, 2.0, 6),
                 "W33": np.arange(1.0, 10.0).reshape(3, 3) / 7,
                 "M33": np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.4], [0.0, 0.6, 0.9]])}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["f"]


def _central(f, x, y, which: int, h=1e-6):
    args = [x, y]
    base = args[which]
    out = np.zeros_like(base)
    for i in range(base.size):
        up, down = base.copy(), base.copy()
        up[i] += h
        down[i] -= h
        au, ad_ = list(args), list(args)
        au[which], ad_[which] = up, down
        out[i] = (f(*au) - f(*ad_)) / (2 * h)
    return out


def _arguments(seed: int):
    rng = np.random.default_rng(seed)
    return rng.uniform(0.5, 1.5, NX), rng.uniform(0.5, 1.5, NY)


def check_program(source: str, outcome: dict) -> None:
    f = _compile(source)
    x, y = _arguments(len(source))
    try:
        expected = f(x.copy(), y.copy())
    except (IndexError, ValueError, TypeError):
        outcome["invalid"] += 1          # numpy itself rejects the program (shapes, bounds)
        return
    value, tape = dcgraph.track(f, x.copy(), y.copy())
    assert repr(value) == repr(expected), f"traced value differs\n{source}"
    tape.lint()
    try:
        gx, gy = dcgraph.grad(f, argnums=(0, 1))(x.copy(), y.copy())
    except REFUSALS:
        outcome["refused"] += 1
    else:
        for which, g in ((0, gx), (1, gy)):
            fd = _central(f, x, y, which)
            scale = max(1.0, float(np.max(np.abs(fd))))
            assert np.allclose(g, fd, rtol=1e-5, atol=1e-5 * scale), (
                f"silent gradient mismatch wrt {'xy'[which]}: {g} vs {fd}\n{source}")
        outcome["matched"] += 1
    reached = set(tape.slice(tape.returned))
    for which, arg in enumerate(tape.arguments):
        if arg in reached:
            continue
        args = [x.copy(), y.copy()]
        args[which] = args[which] * 1.37 + 0.11
        assert repr(f(*args)) == repr(expected), (
            f"the slice misses argument {arg.name}, which changes the output\n{source}")
        outcome["sliced_out"] += 1


def _run(n: int):
    outcome = {"matched": 0, "refused": 0, "invalid": 0, "sliced_out": 0}

    @settings(max_examples=n, derandomize=True, deadline=None, database=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(programs())
    def run(source):
        check_program(source, outcome)

    run()
    return outcome


def test_generated_numpy_programs():
    outcome = _run(200)
    assert outcome["matched"] > 100, outcome       # most programs are differentiated
    assert outcome["refused"] < outcome["matched"], outcome


@pytest.mark.slow
def test_generated_numpy_programs_2000():
    outcome = _run(2000)
    assert outcome["matched"] > 1000, outcome
