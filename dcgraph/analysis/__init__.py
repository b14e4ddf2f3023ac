"""Analyses of tapes: data/control dependence, the random-variable graph, exact conditionals.

``random_variables(tape)`` gives the graph of the random choices that ran (``rvgraph``);
``conditional(f, args, address)`` the exact conditional of a finite discrete choice given all
the others (``conditional``). Trace with ``ctx=RandomContext()`` for these analyses.
"""
from .conditional import ConditionalResult, conditional, enumerate_conditional
from .finite import FiniteChoice, FiniteSet
from .randomcontext import RandomContext
from .rvgraph import RandomChoice, RandomVariables, random_variables

__all__ = ["RandomContext", "RandomChoice", "RandomVariables", "random_variables", "conditional",
           "enumerate_conditional", "ConditionalResult", "FiniteChoice", "FiniteSet"]
