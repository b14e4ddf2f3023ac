"""Fused runs (``tracer/fused_runs.py``) build exactly the tapes the step-by-step replay builds.

Each case's log is replayed twice, once with fused runs and once with every instruction
replayed by its own handler, and the two tapes are compared node by node, every slot (inputs
and other node references by position, values by identity or, for values the replay makes
itself, by type and text)."""
from __future__ import annotations

import contextlib
import math
import re
import sys

import numpy as np
import pytest

import dcgraph
from dcgraph.tape import Node, Tape
from dcgraph.tracer import fused_runs
from dcgraph.tracer.track import RootTape
from dcgraph.tracer.instrument import rewrite
from dcgraph.tracer.instrument.versions import semantics

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import await_corners  # noqa: E402
import corners  # noqa: E402
import generator_corners  # noqa: E402
import yield_from_corners  # noqa: E402


def sin_loop(n):
    t = 0.0
    for i in range(n):
        t += math.sin(i * 0.1)
    return t


def raises_inside_runs(xs, k):
    """Operators, subscripts and calls raising in the middle of fused runs, caught."""
    out = []
    for j in range(k):
        try:
            a = xs[j] * 2 + xs[j + 1]           # IndexError at the last j
            out.append(a / (j - 1))             # ZeroDivisionError at j == 1
        except (IndexError, ZeroDivisionError) as exc:
            out.append(type(exc).__name__)
        finally:
            out.append(j)
    return out


def raises_out_of_a_run(x):
    y = x + 1
    return y * (1 / (x - x))                    # leaves the frame


def calls_and_containers(a, b):
    v = [a, b]
    v += [a * b]                                # in place on a list: a new version
    w = np.zeros(3)
    w[1] = a
    w += 1.0                                    # in place on an array
    d = {"k": a}
    d["k"] += b
    s = sorted(v, key=abs, reverse=True)
    c = a < b < 9 and b in v and a is not None
    return max(v) + w.sum() + d["k"] + s[0] + divmod(int(b), 2)[0] + (1 if c else 0), v


class Point:
    def __init__(self, x):
        self.x = x

    def scaled(self, k):
        return Point(self.x * k)

    def __add__(self, other):
        return Point(self.x + other.x)


def user_operators(n):
    p = Point(1.0)
    for i in range(n):
        p = p + p.scaled(0.5)
    return p.x


def raising_in_callee(n):
    total = 0
    for i in range(n):
        try:
            total += 1 / (i - 2)
        except ZeroDivisionError:
            total -= 1
    return total


OWN = [(sin_loop, (30,)), (raises_inside_runs, ([1, 2, 3], 4)), (raises_out_of_a_run, (2.0,)),
       (calls_and_containers, (2.0, 3.0)), (user_operators, (3,)), (raising_in_callee, (5,))]
CASES = OWN + corners.ALL + generator_corners.ALL + yield_from_corners.ALL + await_corners.ALL


@contextlib.contextmanager
def unfused():
    """Replay with every instruction by its own handler (the per-code steps made again)."""
    fused_runs.ENABLED = False
    _forget_steps()
    try:
        yield
    finally:
        fused_runs.ENABLED = True
        _forget_steps()


_KEPT: dict = {}   # (id(info), mode) -> (info, its steps in that mode): each made once


def _forget_steps():
    """Each code's steps as made under the current settings (kept per mode: the steps of
    asyncio's code take a while to fuse)."""
    mode = (fused_runs.ENABLED, fused_runs.HOT)
    for info in list(rewrite._cache.values()):
        blocks = info.replay_blocks
        if blocks is not None:
            _KEPT.setdefault((id(info), blocks.mode), (info, blocks))
        kept = _KEPT.get((id(info), mode))
        info.replay_blocks = kept[1] if kept is not None and kept[0] is info else None


_ADDRESS = re.compile(r"0x[0-9a-f]+")


def _slots(node) -> list:
    return [s for k in type(node).__mro__ for s in getattr(k, "__slots__", ())]


class _Compare:
    def __init__(self):
        self.where = ""

    def tapes(self, a: Tape, b: Tape, path=()):
        assert len(a._nodes) == len(b._nodes), (path, a.name)
        if path:                    # (a root's outcome is set by ``track``, not the build)
            assert a.result is b.result or self.text(a.result) == self.text(b.result), path
            assert a.raised == b.raised, path
        for k, (x, y) in enumerate(zip(a._nodes, b._nodes)):
            self.where = f"{path} @{k} {x!r}"
            assert type(x) is type(y), self.where
            for slot in _slots(x):
                if slot == "tape":
                    continue
                self.same(getattr(x, slot, None), getattr(y, slot, None), slot)
            child = getattr(x, "child", None)
            if child is not None:
                self.tapes(child, y.child, path + (k,))

    def same(self, x, y, slot):
        where = f"{self.where} .{slot}"
        if x is y:
            return
        if isinstance(x, Node):
            assert isinstance(y, Node) and type(x) is type(y), where
            if x.tape is None:                       # a literal: equal name and value
                assert y.tape is None and x.name == y.name, where
                self.same(x.value, y.value, slot + ".value")
            else:
                assert x.order_key() == y.order_key(), where
        elif isinstance(x, Tape):
            assert isinstance(y, Tape) and x.name == y.name, where
        elif type(x) in (tuple, list):
            assert type(y) is type(x) and len(x) == len(y), where
            for u, v in zip(x, y):
                self.same(u, v, slot)
        elif type(x) is dict:
            assert type(y) is dict and list(x) == list(y), where
            for k in x:
                self.same(x[k], y[k], f"{slot}[{k!r}]")
        else:
            assert type(x) is type(y) and self.text(x) == self.text(y), where

    @staticmethod
    def text(v) -> str:
        try:
            return _ADDRESS.sub("0x", repr(v))
        except Exception as exc:
            return f"<repr failed: {type(exc).__name__}>"


def _tape(fn, args, **options) -> Tape:
    try:
        return dcgraph.track(fn, *args, **options)[1]
    except Exception as exc:        # the tape rides on the exception
        return exc.tape


def _two_builds(fn, args, **options):
    tape = _tape(fn, args, **options)
    outcome = tape._outcome         # what the lazy build replays (``RootTape``)
    assert outcome is not None, "the tape was built already"
    fused = len(tape.nodes)
    with unfused():
        again = RootTape()
        again.code, again.fn, again._outcome = tape.code, tape.fn, outcome
        again.nodes
    return tape, again, fused


@pytest.fixture(params=[0, 3], ids=["fused at once", "fused after 3 entries"])
def hot(request, monkeypatch):
    """Blocks fused before their first entry, or after a few (a replay then mixes both)."""
    monkeypatch.setattr(fused_runs, "HOT", request.param)
    _forget_steps()
    yield request.param
    _forget_steps()


@pytest.fixture
def fused_at_once(monkeypatch):
    monkeypatch.setattr(fused_runs, "HOT", 0)
    _forget_steps()
    yield
    _forget_steps()


def _equal_builds(fn, args):
    tape, again, _ = _two_builds(fn, args)
    tape.lint()
    again.lint()
    _Compare().tapes(tape, again)


@pytest.mark.parametrize("fn,args", CASES, ids=[f"{f.__name__}{a!r}"[:50] for f, a in CASES])
def test_fused_replay_equals_the_step_by_step_replay(fn, args, fused_at_once):
    _equal_builds(fn, args)


MIXED = OWN + corners.ALL


@pytest.mark.parametrize("fn,args", MIXED, ids=[f"{f.__name__}{a!r}"[:50] for f, a in MIXED])
def test_a_replay_fusing_blocks_as_they_warm_up_equals_the_step_by_step_one(fn, args,
                                                                           monkeypatch):
    monkeypatch.setattr(fused_runs, "HOT", 3)    # loops fuse their blocks while replayed
    _forget_steps()
    try:
        _equal_builds(fn, args)
    finally:
        monkeypatch.undo()
        _forget_steps()


def test_the_sin_loop_is_replayed_by_fused_runs():
    _forget_steps()
    _, tape = dcgraph.track(sin_loop, fused_runs.HOT + 2)
    tape.nodes
    infos = [info for info in rewrite._cache.values()
             if info.code is sin_loop.__code__ and info.replay_blocks is not None]
    assert infos
    fused = [step for block in infos[0].replay_blocks for step in block
             if getattr(step[0], "__code__", None) is not None
             and step[0].__code__.co_filename == "<dcgraph fused run>"]
    assert len(fused) >= 2          # the body: loads, multiply, call; then add and store


def test_the_comparison_sees_a_wrong_template(monkeypatch, hot):
    """A template that forgets to name the stored node makes the two tapes differ."""
    store = semantics().HANDLERS["STORE_FAST"]

    def unnamed_store(g, c, op, i):
        node, _ = g.pop()
        g.emit(f"L[{g.bind(op.arg)}] = {node}")
        return True

    monkeypatch.setitem(fused_runs.TEMPLATES, store, unnamed_store)
    _forget_all()
    try:
        tape, again, _ = _two_builds(sin_loop, (4,))
        with pytest.raises(AssertionError, match="names"):
            _Compare().tapes(tape, again)
    finally:
        monkeypatch.undo()
        _forget_all()


def _forget_all():
    _KEPT.clear()
    for info in list(rewrite._cache.values()):
        info.replay_blocks = None


@pytest.mark.parametrize("fn,args", OWN, ids=[f.__name__ for f, _ in OWN])
def test_summary_runs_fused_equal_unfused(fn, args, hot):
    """``values="summary"`` logs drop references while read: two runs, one build each."""
    fused = _tape(fn, args, values="summary")
    fused.nodes
    with unfused():
        plain = _tape(fn, args, values="summary")
        plain.nodes
    fused.lint()
    plain.lint()
    _Compare().tapes(fused, plain)
