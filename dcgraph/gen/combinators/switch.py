"""``Switch(gf_0, gf_1, ...)``: the branch chosen by the first argument (Gen's Switch).

``Switch(a, b)(k, *args)`` runs branch ``k`` (0-based, like ``categorical``; Gen.jl's index is
1-based) on ``args``; its choices are not namespaced by the branch. ``update``/``regenerate``
with the same branch update it; a new branch discards all of the old branch's choices and
generates (``update``: with the constraints) or simulates (``regenerate``, weight 0) the new one.
"""
from __future__ import annotations

import numpy as np

from ..execution import UNKNOWN
from ..generative import GenerativeFunction, default_rng
from ..runtime import GenError
from ..trace import Trace

__all__ = ["Switch", "SwitchTrace"]


class SwitchTrace(Trace):
    """The trace of a ``Switch``: the branch index and the branch's trace."""

    __slots__ = ("gen_fn", "args", "index", "branch")

    def __init__(self, gen_fn, args, index, branch):
        self.gen_fn, self.args, self.index, self.branch = gen_fn, args, index, branch

    def get_retval(self):
        return self.branch.get_retval()

    def get_choices(self):
        return self.branch.get_choices()

    def get_score(self):
        return self.branch.get_score()

    def project(self, selection):
        return self.branch.project(selection)

    def __getitem__(self, addr):
        return self.branch[addr]

    @property
    def store(self):
        return getattr(self.branch, "store", None)


class Switch(GenerativeFunction):
    """Gen's ``Switch`` combinator over the generative functions ``branches``."""

    _made: dict = {}

    def __new__(cls, *branches):
        """One combinator per tuple of branches (the same generative function on every run)."""
        if not branches or not all(isinstance(b, GenerativeFunction) for b in branches):
            raise TypeError("Switch needs one or more generative functions")
        made = cls._made.get(branches)
        if made is None:
            made = cls._made[branches] = super().__new__(cls)
            made.branches = branches
        return made

    def __reduce__(self):
        return Switch, self.branches

    def __repr__(self):
        return "Switch(" + ", ".join(map(repr, self.branches)) + ")"

    def _index(self, args) -> int:
        if not args:
            raise GenError(f"{self!r} takes (index, *args)")
        k = args[0]
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) \
                or not 0 <= k < len(self.branches):
            raise GenError(f"{self!r}: branch index {k!r} is not an int in "
                           f"0..{len(self.branches) - 1}")
        return int(k)

    def simulate(self, args, rng=None, store=None):
        k = self._index(args)
        return SwitchTrace(self, args, k, self.branches[k].simulate(args[1:], rng=rng,
                                                                    store=store))

    def generate(self, args, constraints, rng=None, store=None):
        k = self._index(args)
        sub, w = self.branches[k].generate(args[1:], constraints, rng=rng, store=store)
        return SwitchTrace(self, args, k, sub), w

    def assess(self, args, choices, store=None):
        return self.branches[self._index(args)].assess(args[1:], choices, store=store)

    def update(self, trace, args, argdiffs, constraints, rng=None):
        k, rng = self._index(args), rng or default_rng()
        if k == trace.index:
            sub, w, rd, disc = self.branches[k].update(trace.branch, args[1:],
                                                        tuple(argdiffs[1:]), constraints, rng)
            return SwitchTrace(self, args, k, sub), w, rd, disc
        sub, w = self.branches[k].generate(args[1:], constraints, rng=rng, store=trace.store)
        new = SwitchTrace(self, args, k, sub)
        return new, w - trace.get_score(), UNKNOWN, trace.get_choices()

    def regenerate(self, trace, args, argdiffs, selection, rng=None):
        k, rng = self._index(args), rng or default_rng()
        if k == trace.index:
            sub, w, rd = self.branches[k].regenerate(trace.branch, args[1:],
                                                     tuple(argdiffs[1:]), selection, rng)
            return SwitchTrace(self, args, k, sub), w, rd
        sub = self.branches[k].simulate(args[1:], rng=rng, store=trace.store)
        return SwitchTrace(self, args, k, sub), 0.0, UNKNOWN

    def choice_gradients(self, trace, selection, retgrad):
        ag, v, g = self.branches[trace.index].choice_gradients(trace.branch, selection, retgrad)
        return (None, *ag), v, g

    def accumulate_param_gradients(self, trace, retgrad, scale=1.0):
        ag = self.branches[trace.index].accumulate_param_gradients(trace.branch, retgrad, scale)
        return (None, *ag)



