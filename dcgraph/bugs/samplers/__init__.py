"""Samplers for compiled BUGS models: the joint target over continuous and discrete
parameters (``target``), node-level evaluation of Markov blankets (``blanket``; a statement's
nodes evaluated in one call, ``groups``), conjugate updates chosen from the graph
(``conjugate``; vectorised over exchangeable nodes of one statement, ``conjugate_groups``),
exact enumeration for discrete nodes (``discrete``), slice updates of univariate nodes on their
blankets (``slice``; with a conjugate partner integrated out, ``collapsed``), the node-by-node
Gibbs kernel (``nodes``) and the per-node sampler assignment (``assign``), printable like
NIMBLE's ``configureMCMC``."""
from .assign import Assignment, assign
from .discrete import EnumerationSampler
from .target import BUGSTarget

__all__ = ["Assignment", "assign", "EnumerationSampler", "BUGSTarget"]
