"""Fixtures shared by the tracer's tests."""
from __future__ import annotations

import sys

import pytest


@pytest.fixture
def logs(monkeypatch):
    """The event logs the replay reads (one per tape built), in order."""
    seen = []
    track_module = sys.modules["dcgraph.tracer.track"]
    replay = track_module.Replay

    def reading(log, *rest):
        seen.append(list(log))
        return replay(log, *rest)

    monkeypatch.setattr(track_module, "Replay", reading)
    return seen
