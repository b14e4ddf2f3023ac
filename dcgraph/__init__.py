"""dcgraph: dynamic computation graphs for Python functions.

``result, tape = dcgraph.track(f, *args)`` runs ``f`` with its bytecode instrumented and returns
what it returned and a nested control-flow tape of what it did. The consumers of tapes (random
variables, gradients, ...) are imported on first use, so ``import dcgraph`` stays light.
"""
from importlib import import_module

from .tracer.context import Context, DepthLimitContext
from .tape import (NODE_KINDS, Argument, Branch, Constant, LintError, NestedCall, Node, Phi,
                   PrimitiveCall, Raise, Return, Tape, Yield)
from .tracer.track import track

_LAZY = {
    "UnsupportedPython": "dcgraph.tracer.instrument.versions",
    "random_variables": "dcgraph.analysis",
    "conditional": "dcgraph.analysis",
    "RandomContext": "dcgraph.analysis",
    "register_random": "dcgraph.analysis.random_primitives",
    "grad": "dcgraph.ad",
    "value_and_grad": "dcgraph.ad",
    "vjp": "dcgraph.ad",
    "check_grads": "dcgraph.ad",
    "hessian": "dcgraph.ad",
    "hvp": "dcgraph.ad",
}

__all__ = ["track", "Tape", "Context", "DepthLimitContext", "Node", "Argument", "Constant",
           "PrimitiveCall", "NestedCall", "Branch", "Phi", "Return", "Yield", "Raise",
           "LintError",
           "NODE_KINDS", *_LAZY]
__version__ = "0.1.0"


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dcgraph' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
