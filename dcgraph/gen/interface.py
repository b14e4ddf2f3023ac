"""The generative function interface as functions (Gen's names, arguments and return values).

``simulate(gf, args) -> trace``; ``generate(gf, args, constraints) -> (trace, weight)``;
``update(trace, args, argdiffs, constraints) -> (new_trace, weight, retdiff, discard)``;
``regenerate(trace, args, argdiffs, selection) -> (new_trace, weight, retdiff)``;
``assess(gf, args, choices) -> (weight, retval)``; ``propose(gf, args) -> (choices, weight,
retval)``; ``project(trace, selection) -> weight``; ``choice_gradients(trace, selection,
retgrad) -> (arg_grads, choice_values, choice_gradients)``;
``accumulate_param_gradients(trace, retgrad, scale) -> arg_grads``.

Constraints and choices may be ``ChoiceMap``s or nested dicts; selections ``Selection``s or
iterables of addresses. ``rng`` (a numpy ``Generator``) and ``store`` (a ``ParameterStore``)
are keyword-only; traces remember their store.
"""
from __future__ import annotations

from .choicemap import EMPTY, ChoiceMap
from .execution import NO_CHANGE, UNKNOWN
from .selection import EMPTY_SELECTION, Selection, select

__all__ = ["simulate", "generate", "update", "regenerate", "assess", "propose", "project",
           "choice_gradients", "accumulate_param_gradients", "NoChange", "UnknownChange",
           "get_args", "get_retval", "get_choices", "get_score", "get_gen_fn"]

NoChange = NO_CHANGE
UnknownChange = UNKNOWN


def _choices(c) -> ChoiceMap:
    if c is None:
        return EMPTY
    if isinstance(c, ChoiceMap):
        return c
    if isinstance(c, dict):
        return ChoiceMap.from_dict(c)
    raise TypeError(f"expected a ChoiceMap or a dict of choices, got {type(c).__name__}")


def _selection(s) -> Selection:
    if s is None:
        return EMPTY_SELECTION
    if isinstance(s, Selection):
        return s
    return select(*s)


def _args(args) -> tuple:
    if not isinstance(args, tuple):
        raise TypeError(f"arguments must be a tuple, got {type(args).__name__}: write (x,) "
                        f"for one argument")
    return args


def simulate(gen_fn, args=(), *, rng=None, store=None):
    return gen_fn.simulate(_args(args), rng=rng, store=store)


def generate(gen_fn, args=(), constraints=None, *, rng=None, store=None):
    return gen_fn.generate(_args(args), _choices(constraints), rng=rng, store=store)


def update(trace, args=None, argdiffs=None, constraints=None, *, rng=None):
    """``update(trace, args, argdiffs, constraints)``; ``update(trace, constraints)`` keeps the
    arguments."""
    if isinstance(args, (ChoiceMap, dict)) and argdiffs is None and constraints is None:
        args, constraints = None, args
    if args is None:
        args = trace.get_args()
        argdiffs = (NO_CHANGE,) * len(args)
    elif argdiffs is None:
        argdiffs = (UNKNOWN,) * len(args)
    return trace.get_gen_fn().update(trace, _args(args), tuple(argdiffs), _choices(constraints),
                                     rng=rng)


def regenerate(trace, args=None, argdiffs=None, selection=None, *, rng=None):
    """``regenerate(trace, args, argdiffs, selection)``; ``regenerate(trace, selection)`` keeps
    the arguments."""
    if (isinstance(args, Selection) or isinstance(args, list)) and selection is None:
        args, selection = None, args
    if args is None:
        args = trace.get_args()
        argdiffs = (NO_CHANGE,) * len(args)
    elif argdiffs is None:
        argdiffs = (UNKNOWN,) * len(args)
    return trace.get_gen_fn().regenerate(trace, _args(args), tuple(argdiffs),
                                         _selection(selection), rng=rng)


def assess(gen_fn, args, choices, *, store=None):
    return gen_fn.assess(_args(args), _choices(choices), store=store)


def propose(gen_fn, args=(), *, rng=None, store=None):
    return gen_fn.propose(_args(args), rng=rng, store=store)


def project(trace, selection) -> float:
    return trace.get_gen_fn().project(trace, _selection(selection))


def choice_gradients(trace, selection=None, retgrad=None):
    return trace.get_gen_fn().choice_gradients(trace, _selection(selection), retgrad)


def accumulate_param_gradients(trace, retgrad=None, scale: float = 1.0):
    return trace.get_gen_fn().accumulate_param_gradients(trace, retgrad, scale)


def get_args(trace):
    return trace.get_args()


def get_retval(trace):
    return trace.get_retval()


def get_choices(trace):
    return trace.get_choices()


def get_score(trace):
    return trace.get_score()


def get_gen_fn(trace):
    return trace.get_gen_fn()

