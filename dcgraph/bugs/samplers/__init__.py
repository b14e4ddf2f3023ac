"""Samplers for compiled BUGS models: the joint target over continuous and discrete
parameters (``target``), node-level evaluation of Markov blankets (``blanket``), conjugate
updates chosen from the graph (``conjugate``), exact enumeration for discrete nodes
(``discrete``), slice updates of univariate nodes on their blankets (``slice``), the
node-by-node Gibbs kernel (``nodes``) and the per-node sampler assignment
(``assign``), printable like NIMBLE's ``configureMCMC``."""
from .assign import Assignment, assign
from .discrete import EnumerationSampler
from .target import BUGSTarget

__all__ = ["Assignment", "assign", "EnumerationSampler", "BUGSTarget"]
