"""``RandomContext``: trace for random-variable analysis (registered random calls stay primitive).

The default context traces into Python-level random functions (``random.gauss``,
``random.choice``, ``random.randint``, user-registered samplers), so the tape shows their
insides: ``random.gauss`` becomes a nested call with two ``random()`` draws. Under
``RandomContext`` every registered random callable is recorded as one primitive call, which is
what the analysis and ``conditional`` want:

    result, tape = dcgraph.track(model, rng, ctx=RandomContext())
    rvs = dcgraph.random_variables(tape)

``random_variables`` still reads a tape traced with the default context correctly (a nested
call of a registered function is one choice, its insides are skipped).
"""
from __future__ import annotations

from . import random_primitives as registry
from ..tracer.context import Context

__all__ = ["RandomContext"]


class RandomContext(Context):
    """The default policy, except that registered random functions are primitive."""

    def is_primitive(self, fn, depth: int) -> bool:
        try:
            if fn in registry.RANDOM_PRIMITIVES:
                return True
        except TypeError:
            pass
        return super().is_primitive(fn, depth)

    def may_write(self, fn) -> bool:
        """A registered random function is a draw: it does not write into its arguments."""
        try:
            if fn in registry.RANDOM_PRIMITIVES:
                return False
        except TypeError:
            pass
        return super().may_write(fn)
