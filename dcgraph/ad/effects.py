"""Moved to ``dcgraph.compiled.effects`` (compiled replay decides what may run twice)."""
from ..compiled.effects import effect_of  # noqa: F401

__all__ = ["effect_of"]
