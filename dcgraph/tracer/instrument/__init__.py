"""Bytecode instrumentation: static analysis, probe insertion, per-version opcode tables
(``py311``/``py312``/``py313`` and their ``semantics3xx``; ``versions`` picks one)."""
from .analysis import Unsupported
from .rewrite import CodeInfo, instrument

__all__ = ["CodeInfo", "instrument", "Unsupported"]
