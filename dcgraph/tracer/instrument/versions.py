"""Which interpreters the tracer supports, and the per-version opcode modules of the running one.

This is the only place that reads the interpreter's version. Each supported ``(major, minor)``
maps to the pair of modules that hold that version's opcode knowledge: probe placement
(``pyXYZ``) and replay semantics (``semanticsXYZ``). Everything else is shared.
"""
from __future__ import annotations

import importlib
import sys

__all__ = ["SUPPORTED", "UnsupportedPython", "check_supported", "opcode_table", "semantics"]

# (major, minor) -> (probe-placement module, replay-semantics module), relative to this package
SUPPORTED = {
    (3, 11): ("py311", "semantics311"),
    (3, 12): ("py312", "semantics312"),
    (3, 13): ("py313", "semantics313"),
}


class UnsupportedPython(RuntimeError):
    """The running interpreter's bytecode is not one the tracer knows."""


def _describe(version) -> str:
    return ".".join(str(part) for part in tuple(version)[:3])


def check_supported() -> tuple[int, int]:
    """The running ``(major, minor)``; raises ``UnsupportedPython`` naming the running version
    and the supported ones when the tracer cannot instrument this interpreter's bytecode."""
    impl = sys.implementation.name
    version = sys.version_info
    key = (version[0], version[1])
    if impl == "cpython" and key in SUPPORTED:
        return key
    version = tuple(version)
    supported = ", ".join(f"{major}.{minor}" for major, minor in sorted(SUPPORTED))
    running = f"{'CPython' if impl == 'cpython' else impl} {_describe(version)}"
    raise UnsupportedPython(
        f"dcgraph's tracer rewrites CPython bytecode and supports CPython {supported}; this is "
        f"{running}. Tracing here would record nothing, so it refuses: run under a supported "
        f"interpreter.")


def _modules(version=None) -> tuple[str, str]:
    key = tuple(sys.version_info[:2]) if version is None else tuple(version)
    # An unsupported interpreter still imports dcgraph (``track`` refuses to run there); the
    # newest tables stand in so that importing never fails.
    return SUPPORTED.get(key) or SUPPORTED[max(SUPPORTED)]


def opcode_table(version=None):
    """The probe-placement module (``py311`` ...) of ``version`` (default: the running one)."""
    return importlib.import_module("." + _modules(version)[0], __package__)


def semantics(version=None):
    """The replay-semantics module (``semantics311`` ...) of ``version`` (default: running)."""
    return importlib.import_module("." + _modules(version)[1], __package__)
