"""The tracer: ``track`` runs a function with its bytecode instrumented (``instrument/``, once per
code object), the probes log raw values at run time (``recorder``), and the log is replayed into a
``Tape`` on first access (``replay``, with array aliasing in ``aliasing`` and operator identities in
``ops``). ``context`` decides which calls are traced into."""
from .context import Context, DepthLimitContext
from .track import track

__all__ = ["track", "Context", "DepthLimitContext"]
