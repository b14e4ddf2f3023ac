"""The tape: the closed set of node kinds and ``Tape`` (``nodes``), with its invariants (``lint``),
slices (``slicing``), text form (``printing``) and the view methods it offers (``views``)."""
from .nodes import (NODE_KINDS, Argument, Branch, Constant, LintError, Location, NestedCall, Node,
                    Phi, PrimitiveCall, Raise, Return, Tape, Yield)

__all__ = ["NODE_KINDS", "Argument", "Branch", "Constant", "LintError", "Location", "NestedCall",
           "Node", "Phi", "PrimitiveCall", "Raise", "Return", "Tape", "Yield"]
