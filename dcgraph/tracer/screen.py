"""Keeping the tracer's own work out of a user's ``sys.settrace``/``sys.setprofile``.

While ``track`` runs ``f``, a trace or profile function the user installed (a debugger, a
profiler, coverage) would also see the tracer's runtime: the call hook, frame entry, the
probes' ``list.append``. ``Screen`` installs, only when such a function is set, a filter in
front of it that drops events of the tracer's own frames (``dcgraph/tracer/``), of the
probes' appends to the run's log and of 3.11's entry count (``current_run.ENTRY_COUNT``),
and restores the user's function afterwards (unless the program replaced it meanwhile).
Nothing is installed, and nothing costs, when none is set; C-level tracers and profilers
(cProfile, coverage's C tracer) are left as they are.
"""
from __future__ import annotations

import os
import sys
import types

from .current_run import ENTRY_COUNT

__all__ = ["Screen", "screen"]

RUNTIME_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _own(frame) -> bool:
    return frame.f_code.co_filename.startswith(RUNTIME_DIR)


def _under_own(frame, entry) -> bool:
    """Is ``frame`` the runtime's, or called from one of its frames (the instrumentation,
    through the bytecode library, is called from the hook) other than ``entry``, the frame
    of ``track`` that calls the program?"""
    if frame.f_code.co_filename.startswith(RUNTIME_DIR):
        return True
    frame = frame.f_back
    while frame is not None:
        if frame.f_code.co_filename.startswith(RUNTIME_DIR):
            return frame is not entry
        frame = frame.f_back
    return False


class Screen:
    """The filters installed for one traced run (see the module docstring)."""

    __slots__ = ("tracer", "profiler", "trace", "profile")

    def __init__(self, log: list, tracer, profiler, entry):
        self.tracer, self.profiler = tracer, profiler
        self.trace = self.profile = None
        if tracer is not None:
            def trace(frame, event, arg):
                if _under_own(frame, entry):
                    return None          # no 'call' for it, and no local tracing of it
                return tracer(frame, event, arg)
            self.trace = trace
            sys.settrace(trace)
        if profiler is not None:
            inside = [0]                 # runtime frames open: everything under them is hidden

            def profile(frame, event, arg):
                if _own(frame):
                    if event == "call":
                        inside[0] += 1
                    elif event == "return":
                        inside[0] -= 1
                    return
                if inside[0] > 0 or (event[0] == "c" and (
                        getattr(arg, "__self__", None) is log or arg is ENTRY_COUNT)):
                    return               # called by the runtime, a probe's append, or a
                                         # frame's entry count (3.11's prologue)
                profiler(frame, event, arg)
            self.profile = profile
            sys.setprofile(profile)

    def restore(self) -> None:
        """Put the user's functions back (a function the program set meanwhile stays)."""
        if self.trace is not None and sys.gettrace() is self.trace:
            sys.settrace(self.tracer)
        if self.profile is not None and sys.getprofile() is self.profile:
            sys.setprofile(self.profiler)


def _python_level(fn):
    """``fn`` when it is a Python function or bound method, else None: a C-level tracer or
    profiler (cProfile's ``Profile``, coverage's ``CTracer``) is not called through Python, and
    ``sys.settrace``/``setprofile`` could not put it back as it was, so it is left alone."""
    return fn if isinstance(fn, (types.FunctionType, types.MethodType)) else None


def screen(log: list) -> Screen | None:
    """A ``Screen`` for the run logging into ``log`` (called by ``track``, whose frame calls
    the program), or None when no Python-level function is set."""
    tracer, profiler = sys.gettrace(), sys.getprofile()
    if tracer is None and profiler is None:      # the common case, decided in two C calls
        return None
    tracer, profiler = _python_level(tracer), _python_level(profiler)
    if tracer is None and profiler is None:
        return None
    return Screen(log, tracer, profiler, sys._getframe(1))
