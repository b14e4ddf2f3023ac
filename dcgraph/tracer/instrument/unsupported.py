"""The one error of instrumentation."""

__all__ = ["Unsupported"]


class Unsupported(Exception):
    """This code object cannot be instrumented (the call is then recorded as primitive)."""
