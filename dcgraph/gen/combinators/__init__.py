"""Gen's combinators: ``Map``, ``Unfold``, ``Switch``, ``Recurse`` (each implements the
whole generative function interface)."""
from .map import Map
from .recurse import Production, Recurse, RecurseTrace
from .switch import Switch, SwitchTrace
from .unfold import Unfold
from .vector import VectorDiff, VectorTrace

__all__ = ["Map", "Recurse", "Production", "RecurseTrace", "Unfold", "Switch", "SwitchTrace",
           "VectorDiff", "VectorTrace"]
