"""Shared checks for the backward-pass tests (tests/ad)."""
import pytest

import dcgraph
from dcgraph import ad


def check_against_fd(f, *args, tol=1e-6, argnums=None, **kwargs):
    """Reverse mode vs central differences, then ``tape.lint()`` after a full backward pass."""
    report = ad.check_grads(f, *args, argnums=argnums, tol=tol, **kwargs)
    _, tape = dcgraph.track(f, *args, **kwargs)
    ad.backward(tape)
    tape.lint()
    return report


@pytest.fixture
def check():
    return check_against_fd
