"""Running a traced function with its random choices forced or replayed by address.

``run_with_choices(f, args, kwargs, policy)`` traces ``f`` like ``dcgraph.track(ctx=RandomContext())``,
except that every call of a registered random callable made from traced code goes through
``policy``: the hook that normally returns "this callable, or its instrumented copy" returns a
stand-in for it, which the user's frame then calls in place of the real one. The stand-in
computes the choice's address from the live frames (``addresses.site_of_frames``, the same
scheme ``random_variables`` uses on tapes), asks the policy for a value (or draws a real one),
evaluates the log density of the value under the distribution the call's arguments give *at
call time* (so later mutation of an argument does not matter), and records a ``Draw``.

The tape is built as usual: the stand-in is logged under the real callable, so the tape shows
``rng.normal(...)`` returning the forced or replayed value.

The tracer has no public hook for replacing a callable, so this module drives the recorder's
``Run``/``Level`` classes directly (subclasses overriding the hook); see the report in the
module ``conditional`` for the semantics built on top.
"""
from __future__ import annotations

import copy
import sys
import types

from .. import random_primitives as registry
from ..recorder import Level, Run
from ..recorder import _state as _recorder_state
from ..track import _tape
from .addresses import Addresser, site_of_frames
from .randomcontext import RandomContext

__all__ = ["Draw", "ChoicePolicy", "run_with_choices"]


class Draw:
    """One random call as it ran: address, value, distribution and log density at call time."""

    __slots__ = ("address", "value", "distribution", "logp", "replayed", "args")

    def __init__(self, address, value, distribution, logp, replayed, args):
        self.address, self.value, self.distribution = address, value, distribution
        self.logp, self.replayed, self.args = logp, replayed, args

    def __repr__(self):
        return f"<Draw {self.address} = {self.value!r} logp={self.logp}>"


class ChoicePolicy:
    """Values for the random calls of one run: ``forced`` (address -> value) first, then
    ``replay`` (address -> value from an earlier run), else a real draw that is remembered in
    ``fresh`` (shared between runs, so a choice new to the original run gets one value)."""

    def __init__(self, forced=None, replay=None, fresh=None):
        self.forced = dict(forced or {})
        self.replay = replay or {}
        self.fresh = fresh if fresh is not None else {}
        self.draws: list[Draw] = []
        self.addresser = Addresser()
        self.base_frame = None

    def stand_in(self, fn, entry, frame):
        """The callable to run instead of the random callable ``fn`` called from ``frame``."""
        frames = []
        while frame is not None and frame is not self.base_frame:
            frames.append(frame)
            frame = frame.f_back
        frames.reverse()
        address = self.addresser(site_of_frames(frames, fn))
        policy = self

        def random_call(*args, **kwargs):
            return policy.draw(address, fn, entry, args, kwargs)

        return random_call

    def draw(self, address, fn, entry, args, kwargs):
        try:
            dist = entry.distribution(args, kwargs)
        except Exception:              # arguments the registry's function does not accept
            dist = None
        replayed = True
        if address in self.forced:
            value = self.forced[address]
        elif address in self.replay:
            value = self.replay[address]
        elif address in self.fresh:
            value = self.fresh[address]
        else:
            replayed = False
            value = fn(*args, **kwargs)
            if address not in self.fresh:
                self.fresh[address] = _snapshot(value)
        if replayed:
            if registry.works_in_place(entry.key):
                raise RuntimeError(f"the random choice at {address} ({getattr(entry.key, '__name__', entry.key)}) works in "
                                   f"place and cannot be replayed")
            value = _snapshot(value)
        logp = None
        if dist is not None:
            try:
                logp = float(dist.logpdf(value))
            except Exception as exc:
                raise RuntimeError(f"the random choice at {address}: log density of {value!r} "
                                   f"under {dist!r} failed: {exc}") from exc
        snapshot = None
        if dist is None:
            snapshot = _snapshot(tuple(a for a in args if not registry.is_random_state(a))
                                 + tuple(sorted(kwargs.items())))
        self.draws.append(Draw(address, _snapshot(value), dist, logp, replayed, snapshot))
        return value


def _snapshot(value):
    """A private copy of a drawn value or argument tuple (values are handed out again later)."""
    if isinstance(value, (int, float, complex, str, bytes, bool, type(None))):
        return value
    try:
        return copy.deepcopy(value)
    except Exception:
        return value


class _InterceptLevel(Level):
    __slots__ = ()

    def hook(self, f):
        self.append(f)
        run = self.run
        run.next_depth = self.depth + 1
        entry = registry.lookup(f)
        if entry is not None:
            return run.policy.stand_in(f, entry, sys._getframe(1))
        try:
            return self.memo[f]
        except Exception:
            return run.decide(f, self)


class _InterceptRun(Run):
    def __init__(self, ctx, policy: ChoicePolicy):
        super().__init__(ctx)
        self.policy = policy

    def level(self, depth: int) -> Level:
        levels = self.levels
        while len(levels) <= depth:
            levels.append(_InterceptLevel(self, len(levels)))
        return levels[depth]


def run_with_choices(f, args: tuple, kwargs: dict, policy: ChoicePolicy, ctx=None):
    """Trace ``f(*args, **kwargs)`` with its random calls going through ``policy``; return
    ``(result, tape)``. Exceptions propagate like ``track``'s."""
    run = _InterceptRun(ctx if ctx is not None else RandomContext(), policy)
    target = f.__func__ if type(f) is types.MethodType else f
    if type(target) is not types.FunctionType or run.ctx.is_primitive(target, 0):
        raise TypeError(f"conditional: {f!r} is not a Python function that can be traced")
    traced = run.instrumented_function(target)
    if traced is None:
        raise TypeError(f"conditional: {target.__qualname__} cannot be traced: "
                        f"{run.unsupported.get(target.__code__)}")
    call = traced if target is f else types.MethodType(traced, f.__self__)
    state = _recorder_state
    previous = getattr(state, "run", None)
    state.run = run
    policy.base_frame = sys._getframe()
    try:
        result = call(*args, **kwargs)
    finally:
        state.run = previous
        policy.base_frame = None
    return result, _tape(run, f, traced, args, kwargs, None, result, False)
