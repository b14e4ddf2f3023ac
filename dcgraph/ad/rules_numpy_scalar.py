"""VJP rules for the methods of numpy scalars (``np.float64(1.5).sum()``).

A numpy scalar (``numpy.generic``) has the methods of an array, and users call them on what a
reduction returned (``dist.logpdf(x).sum()``). Each method takes the rule of the ``ndarray``
method of the same name: the rules work on values, and a numpy scalar is a 0-d value to them.
"""
from __future__ import annotations

import numpy as np

from .registry import RULES, Rule

__all__ = ["SAME_AS_ARRAY"]

# numpy.generic methods whose rule is ndarray's (mutating methods, e.g. ``fill``, are left out:
# a scalar is immutable and they raise)
SAME_AS_ARRAY = ("all", "any", "argmax", "argmin", "argsort", "astype", "clip", "copy", "cumsum",
                 "flatten", "item", "max", "mean", "min", "nonzero", "prod", "ravel", "repeat",
                 "reshape", "squeeze", "std", "sum", "swapaxes", "take", "tolist", "trace",
                 "transpose", "var")


def same_rule_as(fn, model) -> None:
    """Register for ``fn`` a copy of the rule registered for ``model``."""
    source = RULES[model]
    rule = RULES[fn] = Rule(fn)
    for field in Rule.__slots__:
        if field != "key":
            setattr(rule, field, getattr(source, field))


for _name in SAME_AS_ARRAY:
    same_rule_as(getattr(np.generic, _name), getattr(np.ndarray, _name))
