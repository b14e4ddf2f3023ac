"""Samplers for compiled BUGS models: the joint target over continuous and discrete
parameters (``target``), exact enumeration for discrete nodes (``discrete``) and the
per-node sampler assignment (``assign``), printable like NIMBLE's ``configureMCMC``."""
from .assign import Assignment, assign
from .discrete import EnumerationSampler
from .target import BUGSTarget

__all__ = ["Assignment", "assign", "EnumerationSampler", "BUGSTarget"]
