"""Generative functions: the abstract interface and ``@gen`` functions in plain Python.

``GenerativeFunction`` lists the generative function interface (GFI) every generative function
implements, ``@gen`` functions and the combinators alike; calling one, ``gf(*args)``, makes an
``Invocation`` whose ``@ addr`` is a traced call at ``addr`` inside another generative function.

``@gen`` makes a ``GenFunction``: each GFI operation runs the Python function under
``dcgraph.track`` with the operation's base handler (``execution``) as the current frame, so the
trace keeps the run's tape. Calls of random primitives the function does not address
(``random.random()``, ``numpy.random``, ``Generator`` methods, a bare ``dist.sample``) are
caught as they are made (the tracing context asks the random-primitive registry) and raise
``GenError`` naming the line.
"""
from __future__ import annotations

import functools
import math
import sys

import numpy as np

import dcgraph

from .choicemap import EMPTY, ChoiceMap
from .execution import UNKNOWN as UNKNOWN_CHANGE
from .execution import Assess, Generate, Regenerate, Simulate, Update
from .runtime import GenError, call, state, user_location
from .trace import DynamicTrace

__all__ = ["GenerativeFunction", "GenFunction", "Invocation", "gen", "default_rng", "seed"]

_RNG: list = []


def default_rng() -> np.random.Generator:
    """The generator used when a GFI call gets no ``rng`` (made on first use; see ``seed``)."""
    if not _RNG:
        _RNG.append(np.random.default_rng())
    return _RNG[0]


def seed(n: int) -> None:
    """Reset the default generator to ``numpy.random.default_rng(n)``."""
    _RNG[:] = [np.random.default_rng(n)]


class GenerativeFunction:
    """The generative function interface (Gen's names, arguments and return values).

    Subclasses implement ``simulate``, ``generate``, ``update``, ``regenerate``, ``assess`` and
    the gradient methods; ``propose`` and ``project`` have generic definitions.
    """

    def simulate(self, args: tuple, rng=None, store=None):
        raise NotImplementedError

    def generate(self, args: tuple, constraints: ChoiceMap, rng=None, store=None):
        """``-> (trace, weight)``"""
        raise NotImplementedError

    def update(self, trace, args: tuple, argdiffs: tuple, constraints: ChoiceMap, rng=None):
        """``-> (new_trace, weight, retdiff, discard)``"""
        raise NotImplementedError

    def regenerate(self, trace, args: tuple, argdiffs: tuple, selection, rng=None):
        """``-> (new_trace, weight, retdiff)``"""
        raise NotImplementedError

    def assess(self, args: tuple, choices: ChoiceMap, store=None):
        """``-> (weight, retval)``"""
        trace, weight = self.generate(args, choices, store=store)
        # equal up to rounding (3.12+ sum() is compensated, a += loop is not)
        if not math.isclose(weight, trace.get_score(), rel_tol=1e-12, abs_tol=1e-12):
            raise GenError(f"assess({self!r}): some choices were not given")
        return weight, trace.get_retval()

    def propose(self, args: tuple, rng=None, store=None):
        """``-> (choices, weight, retval)``: a simulated run's choices and their log density."""
        trace = self.simulate(args, rng=rng, store=store)
        return trace.get_choices(), trace.get_score(), trace.get_retval()

    def project(self, trace, selection) -> float:
        return trace.project(selection)

    def choice_gradients(self, trace, selection, retgrad):
        """``-> (arg_grads, choice_values, choice_gradients)``"""
        raise NotImplementedError

    def accumulate_param_gradients(self, trace, retgrad, scale: float = 1.0):
        """Add ``scale`` times the parameter gradients into the store; ``-> arg_grads``."""
        raise NotImplementedError

    def __call__(self, *args):
        return Invocation(self, args)


class Invocation:
    """``gf(*args)`` inside a generative function; ``@ addr`` makes it a traced call."""

    __slots__ = ("gen_fn", "args")

    def __init__(self, gen_fn, args):
        self.gen_fn, self.args = gen_fn, args

    def __matmul__(self, address):
        return call(self.gen_fn, self.args, address)

    def __repr__(self):
        return f"{self.gen_fn!r}(" + ", ".join(map(repr, self.args)) + ")"


def _random_lookup():
    module = sys.modules.get(dcgraph.register_random.__module__)
    return module.lookup


class GenContext(dcgraph.Context):
    """Tracing context of ``@gen`` bodies: a random primitive called directly is an error."""

    def __init__(self):
        super().__init__()
        self.lookup = _random_lookup()

    def substitute(self, fn, depth):
        rp = self.lookup(fn)
        if rp is not None:
            name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", repr(fn))
            raise GenError(f"undeclared randomness: {name} called inside a generative function "
                           f"at {user_location(2)}; make it a choice: dist(...) @ 'addr'")
        return None


_CONTEXT: list = []


def _context() -> GenContext:
    if not _CONTEXT:
        _CONTEXT.append(GenContext())
    return _CONTEXT[0]


def _store(store):
    if store is not None:
        return store
    from .params import default_store
    return default_store


class GenFunction(GenerativeFunction):
    """A generative function written as a Python function (see ``gen``)."""

    def __init__(self, fn):
        self.fn = fn
        functools.update_wrapper(self, fn)
        #: Outcomes of update/regenerate: incremental passes, passes that gave up (and the
        #: last reason), passes not tried on fresh traces (see ``incremental.worth_trying``).
        self.stats = {"incremental": 0, "gave_up": 0, "skipped": 0, "last_reason": None}

    def __repr__(self):
        return f"<gen {getattr(self.fn, '__qualname__', self.fn)}>"

    def __reduce__(self):
        """Pickled by reference (module and name), so a trace sent to another process still
        belongs to that process's generative function; local functions cannot be pickled."""
        return _by_name, (self.__module__, self.__qualname__)

    def _run(self, ex, args) -> DynamicTrace:
        saved = state.frame
        state.frame = ex
        try:
            retval, tape = dcgraph.track(self.fn, *args, ctx=_context())
        finally:
            state.frame = saved
        ex.finish()
        return DynamicTrace(self, args, retval, ex.entries, ex.score, ex.store, tape)

    def simulate(self, args, rng=None, store=None):
        return self._run(Simulate(self, rng or default_rng(), _store(store)), tuple(args))

    def generate(self, args, constraints=EMPTY, rng=None, store=None):
        ex = Generate(self, rng or default_rng(), _store(store), constraints)
        trace = self._run(ex, tuple(args))
        return trace, ex.weight

    def assess(self, args, choices, store=None):
        ex = Assess(self, None, _store(store), choices)
        saved = state.frame
        state.frame = ex
        try:
            retval, _ = dcgraph.track(self.fn, *args, ctx=_context())
        finally:
            state.frame = saved
        ex.finish()
        return ex.weight, retval

    def update(self, trace, args, argdiffs, constraints, rng=None):
        from .incremental import try_update, worth_trying
        rng = rng or default_rng()
        if worth_trying(trace):
            done = try_update(trace, args, argdiffs, constraints, rng)
            if done is not None:
                return done
        return self.full_update(trace, args, constraints, rng)

    def full_update(self, trace, args, constraints, rng=None):
        """``update`` by running the function again (what the incremental path must match)."""
        ex = Update(self, rng or default_rng(), trace.store, trace, constraints)
        new = self._run(ex, tuple(args))
        return new, ex.weight, UNKNOWN_CHANGE, ex.discard

    def regenerate(self, trace, args, argdiffs, selection, rng=None):
        from .incremental import try_regenerate, worth_trying
        rng = rng or default_rng()
        if worth_trying(trace):
            done = try_regenerate(trace, args, argdiffs, selection, rng)
            if done is not None:
                return done
        return self.full_regenerate(trace, args, selection, rng)

    def full_regenerate(self, trace, args, selection, rng=None):
        ex = Regenerate(self, rng or default_rng(), trace.store, trace, selection)
        new = self._run(ex, tuple(args))
        return new, ex.weight, UNKNOWN_CHANGE

    def choice_gradients(self, trace, selection, retgrad):
        from .gradients import trace_gradients
        return trace_gradients(trace, selection, retgrad, 1.0, False)

    def accumulate_param_gradients(self, trace, retgrad, scale=1.0):
        from .gradients import trace_gradients
        return trace_gradients(trace, None, retgrad, scale, True)[0]


def _by_name(module: str, qualname: str):
    import importlib
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def gen(fn) -> GenFunction:
    """Decorator: the Python function ``fn`` as a generative function. Inside it,
    ``dist(...) @ addr`` is a random choice, ``other_gf(...) @ addr`` a traced call and
    ``param(name)`` a trainable parameter."""
    if isinstance(fn, GenerativeFunction):
        raise TypeError(f"@gen applied twice to {fn!r}")
    if not callable(fn):
        raise TypeError(f"@gen needs a function, got {type(fn).__name__}")
    return GenFunction(fn)

