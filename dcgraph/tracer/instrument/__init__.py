"""Bytecode instrumentation: static analysis, probe insertion, per-version opcode tables."""
from .analysis import Unsupported
from .rewrite import CodeInfo, instrument

__all__ = ["CodeInfo", "instrument", "Unsupported"]
