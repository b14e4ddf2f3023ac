"""Instrumenting long functions: correct, and the static pass near-linear (counted work, not
time: each block is visited a bounded number of times)."""
import pytest

import dcgraph
from dcgraph.tracer.instrument import instrument, phis

from big_functions import big_source, big_try_source


def _compiled(source, name="big"):
    ns = {}
    exec(compile(source, f"<{name}>", "exec"), ns)
    return ns["big"]


@pytest.mark.parametrize("make", [big_source, big_try_source])
def test_a_long_function_traces_as_it_runs(make):
    f = _compiled(make(600, 150, seed=3))
    result, tape = dcgraph.track(f, 0.25)
    assert result == f(0.25)
    assert dict(tape.untraced) == {}
    tape.lint()


def test_block_visits_are_bounded_per_block(monkeypatch):
    visits = []
    original = phis._Worklist.pop

    def counted(self):
        visits.append(1)
        return original(self)

    monkeypatch.setattr(phis._Worklist, "pop", counted)
    for lines, names in ((400, 100), (1600, 400)):
        visits.clear()
        info = instrument(_compiled(big_try_source(lines, names, seed=1)).__code__)
        assert info.error is None
        blocks = len(info.structure.blocks)
        assert len(visits) <= 4 * blocks, (lines, len(visits), blocks)
