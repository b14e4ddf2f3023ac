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

The stand-in comes from ``Context.substitute``, the tracer's hook for replacing a callable at
a call. ``conditional`` builds its semantics on top.
"""
from __future__ import annotations

import copy
import sys
import types

from . import random_primitives as registry
from ..tracer.track import track, traced_call
from .addresses import Addresser, site_of_frames
from .randomcontext import RandomContext

__all__ = ["Draw", "ChoicePolicy", "run_with_choices"]

_TRACK_CODE = traced_call.__code__  # the frame calling the program (``track``'s callee): it and
                                    # the frames above it belong to the caller of ``track``


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

    def stand_in(self, fn, entry, frame):
        """The callable to run instead of the random callable ``fn`` called from ``frame``."""
        frames = []
        while frame is not None and frame.f_code is not _TRACK_CODE:
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


class _InterceptContext(RandomContext):
    """RandomContext whose registered random calls run the policy's stand-in."""

    def __init__(self, policy: ChoicePolicy, base: RandomContext | None):
        super().__init__()
        self.policy, self.base = policy, base

    def is_primitive(self, fn, depth):
        if self.base is not None:
            return self.base.is_primitive(fn, depth)
        return super().is_primitive(fn, depth)

    def annotates(self):
        return self.base.annotates() if self.base is not None else super().annotates()

    def annotate(self, node):
        if self.base is not None:
            self.base.annotate(node)

    def substitute(self, fn, depth):
        entry = registry.lookup(fn)
        if entry is None:
            return None
        return self.policy.stand_in(fn, entry, sys._getframe(2))


def run_with_choices(f, args: tuple, kwargs: dict, policy: ChoicePolicy, ctx=None):
    """Trace ``f(*args, **kwargs)`` with its random calls going through ``policy``; return
    ``(result, tape)``. Exceptions propagate like ``track``'s."""
    target = f.__func__ if type(f) is types.MethodType else f
    context = _InterceptContext(policy, ctx)
    if type(target) is not types.FunctionType or context.is_primitive(target, 0):
        raise TypeError(f"conditional: {f!r} is not a Python function that can be traced")
    result, tape = track(f, *args, ctx=context, **kwargs)
    if target.__code__ in tape.untraced:
        raise TypeError(f"conditional: {target.__qualname__} cannot be traced: "
                        f"{tape.untraced[target.__code__]}")
    return result, tape
