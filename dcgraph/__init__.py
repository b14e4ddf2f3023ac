"""dcgraph: dynamic computation graphs for Python functions.

``result, tape = dcgraph.track(f, *args)`` runs ``f`` with its bytecode instrumented and returns
what it returned and a nested control-flow tape of what it did.
"""
from .context import Context, DepthLimitContext
from .tape import (NODE_KINDS, Argument, Branch, Constant, LintError, NestedCall, Node, Phi,
                   PrimitiveCall, Raise, Return, Tape)
from .track import track
from .analysis import RandomContext, conditional, random_variables
from .random_primitives import register_random

__all__ = ["track", "Tape", "Context", "DepthLimitContext", "random_variables", "conditional",
           "register_random", "RandomContext", "Node", "Argument", "Constant",
           "PrimitiveCall", "NestedCall", "Branch", "Phi", "Return", "Raise", "LintError",
           "NODE_KINDS"]
__version__ = "0.1.0"
