"""The tape: the closed set of node kinds (``nodes``) and ``Tape`` (``tape``), with its
invariants (``lint``), slices (``slicing``), text form (``printing``) and the view methods it
offers (``views``)."""
from .nodes import (NODE_KINDS, Argument, Branch, Constant, Location, NestedCall, Node, Phi,
                    PrimitiveCall, Raise, Return, Yield)
from .tape import LintError, Tape

__all__ = ["NODE_KINDS", "Argument", "Branch", "Constant", "LintError", "Location", "NestedCall",
           "Node", "Phi", "PrimitiveCall", "Raise", "Return", "Tape", "Yield"]
