"""Compiled replay: a recorded path of a function as guarded straight-line Python code.

A tape records the path one call took. Later calls that take the same path can skip tracing:
``compile_path(tape, args, kwargs)`` writes a function that recomputes every node of that path
in order (nested calls inlined, loops unrolled, lists rebuilt, caught ``raise``s skipped to
their handler) and checks, where the recorded run branched, that these arguments branch the
same way; when one does not it raises ``GuardFailed`` and the caller traces again. Nothing
observable runs twice before a guard fails (``effects``): paths with random draws, I/O or
other effects are refused. ``why_not(tape)`` (or the message of ``NotCompilable``) says why a
tape cannot be compiled, naming the node and source line.

The forward code is the base; a consumer adds a backward pass by subclassing ``PathCode``
(``dcgraph.ad`` does, for ``grad``). API::

    cp = compile_path(tape, args, kwargs)      # forward only: cp(args, kwargs) == f(...)
    cp = compile_path(tape, args, kwargs, backward=GradientCode, wrt=..., seed=...)
    cp.source                                  # the generated code, readable
    why_not(tape)                              # None, or the reason (a str)
    structure_key(args, kwargs)                # what callers cache paths by

Modules: ``support`` (what compiles, reasons, node facts), ``effects`` (what may not run
twice), ``plan`` (where inputs are read, argument structure), ``forward`` (the code
generator), ``known_scalars`` (types and ints it knows without a guard), ``inline`` (calls
registered layers write as code: ``definline``), ``vectorise`` (runs of isomorphic unrolled
iterations as numpy array code, with ``vector_forms``, ``vector_run``, ``vector_sums``),
``path`` (``compile_path``, ``CompiledPath``).
"""
from .forward import PathCode
from .path import CompiledPath, compile_path
from .plan import structure_key
from .support import GuardFailed, NotCompilable, check_supported, why_not

__all__ = ["compile_path", "CompiledPath", "PathCode", "GuardFailed", "NotCompilable",
           "check_supported", "why_not", "structure_key"]
