"""Exact conditionals of finite discrete choices by enumeration: ``conditional(f, args, address)``.

Semantics. Let ``a`` be the choice at ``address`` in the original run ``t0`` of ``f(*args)``
and ``S`` its finite support. For every ``v`` in ``S``, ``f`` is run again (traced, so the
control path may differ) with ``a`` forced to ``v`` and every other choice *replayed by
address* from ``t0``. A choice that did not exist in ``t0`` is drawn once from its
distribution in the first run that reaches it and replayed with that value in every later run,
so all runs agree on the value at each address. Then

    P(a = v | rest)  ∝  exp( Σ_{c in run v} [ log p_v(c) - log p_ref(c) ] )

where ``p_v(c)`` is the density of ``c``'s value under the distribution its arguments gave in
run ``v`` and ``p_ref(c)`` that in ``t0`` (or, for a choice new to ``t0``, in the first run that
had it). When the set of choices does not change with ``v`` this is exactly
``p(a = v | all other choices)``. When it does (a gate deciding whether a choice exists), it is
the exact conditional in the *extended* model in which a choice absent from run ``v`` is still
drawn, from its reference distribution ``p_ref``: its terms cancel, so a choice that disappears
contributes nothing and one that appears contributes only through the choices that depend on it.
For ``g ~ Bernoulli(0.3); y ~ Normal(3, 1) if g; x ~ Normal(y if g else 0, 1)`` this gives
``P(g = 1 | x, y) = 0.3 N(x; y, 1) / (0.3 N(x; y, 1) + 0.7 N(x; 0, 1))``, with ``y`` the value in
``t0`` (or drawn from ``Normal(3, 1)`` when ``t0`` had ``g = 0``). It is the conditional a Gibbs
step needs to leave the posterior invariant when ``y`` is resampled from its prior while unused.

Shortcut taken: each run re-executes ``f`` completely (the control path may change, and nothing
cheaper than re-running can tell), and every choice's log density is evaluated at its call, with
the arguments it had then. Only *differences* from the reference enter the sum, so every choice
whose distribution and value are unchanged contributes exactly 0: in effect the sum runs over
``a`` itself and the choices that depend on it (its Markov-blanket children, and choices that
appear or disappear). ``ConditionalResult.changed`` lists them.

Replayed values are copies taken at call time; ``f`` should not mutate its arguments (it is run
``|S| + 1`` times with the same ones). Random calls the tracer cannot see (inside generators or
untraced callbacks) are neither replayed nor scored.
"""
from __future__ import annotations

import numpy as np

from ..dist import Categorical
from ..dist.support import IntegerInterval
from .finite import FiniteSet
from .intercept import ChoicePolicy, Draw, _snapshot, run_with_choices
from .rvgraph import choice_sites, random_variables

__all__ = ["conditional", "enumerate_conditional", "ConditionalResult", "MAX_SUPPORT"]

MAX_SUPPORT = 10_000


class ConditionalResult:
    """What ``enumerate_conditional`` computed (``distribution`` is what ``conditional`` returns).

    ``support`` the enumerated values; ``log_weights`` the unnormalised log weights;
    ``probs`` the normalised probabilities; ``runs`` the ``Draw``s of each run by address;
    ``changed`` the addresses whose term was not 0 for some value.
    """

    def __init__(self, address, support, log_weights, runs, changed, original):
        self.address, self.support = address, list(support)
        self.log_weights = np.asarray(log_weights, dtype=float)
        top = np.max(self.log_weights)
        w = np.exp(self.log_weights - top)
        self.probs = w / w.sum()
        self.runs, self.changed, self.original = runs, changed, original
        self.distribution = _categorical(self.support, self.probs)

    def prob(self, value) -> float:
        """Conditional probability of ``value``."""
        k = FiniteSet(self.support).index(value)
        return 0.0 if k is None else float(self.probs[k])

    def __repr__(self):
        pairs = ", ".join(f"{v!r}: {p:.4g}" for v, p in zip(self.support, self.probs))
        return f"<ConditionalResult {self.address}: {{{pairs}}}>"


def conditional(f, args=(), address=None, *, kwargs=None, tape=None, ctx=None) -> Categorical:
    """The exact conditional of the finite discrete choice at ``address`` given all the other
    choices of a run of ``f(*args, **kwargs)`` (semantics: see the module docstring).

    Returns a ``dcgraph.dist.Categorical``: over the values themselves when they are integers
    ``>= 0`` (zero mass on integers outside the support), otherwise over the positions of
    ``enumerate_conditional(...).support``. Pass ``tape`` (from ``dcgraph.track(f, *args,
    ctx=RandomContext())``) to condition on the choices of that run instead of a fresh one, and
    ``ctx`` (a ``Context``; default ``RandomContext()``) for the runs, e.g. one whose metadata
    hooks name choices (``address`` may then be such a name). Errors name the address: unknown
    address (KeyError), no distribution, not discrete, not scalar, infinite support (ValueError).
    """
    return enumerate_conditional(f, args, address, kwargs=kwargs, tape=tape, ctx=ctx).distribution


def enumerate_conditional(f, args=(), address=None, *, kwargs=None, tape=None,
                          ctx=None) -> ConditionalResult:
    """As ``conditional``, returning the enumeration's details (``ConditionalResult``)."""
    if not isinstance(address, str):
        raise TypeError(f"conditional: address must be a string, got {address!r}")
    args, kwargs = tuple(args), dict(kwargs or {})
    original, site = _original_run(f, args, kwargs, tape, address, ctx)
    target = original[site]
    support = _support(target, address)
    replay = {a: d.value for a, d in original.items() if a != site}
    fresh: dict = {}
    runs: list[dict] = []
    for v in support:
        policy = ChoicePolicy({site: _like(v, target.value)}, replay, fresh)
        try:
            _, run_tape = run_with_choices(f, args, kwargs, policy, ctx)
        except Exception as exc:
            raise RuntimeError(f"conditional: running {_name(f)} with {address} = {v!r} raised "
                               f"{type(exc).__name__}: {exc}") from exc
        draws = {d.address: d for d in policy.draws}
        _check_run(policy.draws, run_tape, site, address, v)
        runs.append(draws)
    reference = dict(original)
    for draws in runs:
        for a, d in draws.items():
            reference.setdefault(a, d)
    log_weights, changed = [], set()
    for v, draws in zip(support, runs):
        w = 0.0
        for a, d in draws.items():
            term = _difference(d, reference[a], address)
            if term != 0.0:
                changed.add(a)
            w += term
        log_weights.append(w)
        changed |= set(reference) - set(draws)
    if np.isnan(log_weights).any() or max(log_weights) == -np.inf:
        raise ValueError(f"conditional: no value of {address} has positive probability given the "
                         f"other choices (log weights {log_weights})")
    return ConditionalResult(address, support, log_weights, runs, changed, original)


# -- steps -----------------------------------------------------------------------------------
def _original_run(f, args, kwargs, tape, address, ctx):
    """Draws of the original run by structural address, and the structural address of the
    target (``address`` may be a name a layer gave)."""
    if tape is None:
        policy = ChoicePolicy()
        _, tape = run_with_choices(f, args, kwargs, policy, ctx)
        _check_sites(policy.draws, tape)
        draws = {d.address: d for d in policy.draws}
        rvs = random_variables(tape)
    else:
        rvs = random_variables(tape)
        draws = {}
        for c in rvs:
            lp = None
            if c.distribution is not None:
                lp = float(c.distribution.logpdf(c.value))
            args_snapshot = _snapshot(tuple(p.value for p in c.params))
            draws[c.site] = Draw(c.site, _snapshot(c.value), c.distribution, lp, True, args_snapshot)
    try:
        choice = rvs[address]
    except KeyError as exc:
        raise KeyError(f"conditional: {exc.args[0]}") from None
    return draws, choice.site


def _support(target: Draw, address: str) -> list:
    dist = target.distribution
    if dist is None:
        raise ValueError(f"conditional: the choice at {address} has no known distribution")
    if not getattr(dist, "is_discrete", False):
        raise ValueError(f"conditional: the choice at {address} is not discrete ({dist!r})")
    if np.ndim(target.value) != 0 or tuple(getattr(dist, "batch_shape", ())) != ():
        raise ValueError(f"conditional: the choice at {address} is not a scalar "
                         f"(value {target.value!r}); only scalar choices can be enumerated")
    sup = dist.support
    if isinstance(sup, FiniteSet):
        values = list(sup.values)
    elif isinstance(sup, IntegerInterval) or (getattr(sup, "is_discrete", False)
                                              and np.ndim(sup.lower) == 0):
        lo, hi = float(sup.lower), float(sup.upper)
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise ValueError(f"conditional: the choice at {address} has an infinite support "
                             f"({sup!r}) and cannot be enumerated")
        values = list(range(int(lo), int(hi) + 1))
    else:
        raise ValueError(f"conditional: cannot enumerate the support {sup!r} of the choice at "
                         f"{address}")
    if len(values) > MAX_SUPPORT:
        raise ValueError(f"conditional: the support of the choice at {address} has {len(values)} "
                         f"values (more than MAX_SUPPORT = {MAX_SUPPORT})")
    return values


def _like(v, template):
    """``v`` with the type the random call returned originally (np.int64, 0-d array, int)."""
    if isinstance(template, np.ndarray):
        return np.asarray(v, dtype=template.dtype)
    if isinstance(template, np.generic):
        return type(template)(v)
    if type(template) in (int, float, bool) and isinstance(v, (int, np.integer)):
        return type(template)(v)
    return v


def _difference(d: Draw, ref: Draw, address: str) -> float:
    """``log p_v(c) - log p_ref(c)`` for one choice (0 when ``d`` is the reference)."""
    if d is ref:
        return 0.0
    if d.logp is not None and ref.logp is not None:
        if d.logp == ref.logp:
            return 0.0
        return d.logp - ref.logp
    if _same(d.args, ref.args) and _same(d.value, ref.value):
        return 0.0
    raise ValueError(f"conditional({address}): the choice at {d.address} has no known "
                     f"distribution and its arguments change with {address}")


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    try:
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return bool(np.array_equal(a, b))
        if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
            return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
        return bool(a == b)
    except Exception:
        return False


def _check_sites(draws: list[Draw], tape) -> None:
    """The addresses computed from live frames must be those ``random_variables`` computes from
    the tape: otherwise replay by address would silently mix choices up."""
    live = [d.address for d in draws]
    recorded = choice_sites(tape)
    if live != recorded:
        for k, (x, y) in enumerate(zip(live, recorded)):
            if x != y:
                raise RuntimeError(f"conditional: choice {k} is at {x} while running but at {y} "
                                   f"on the tape")
        raise RuntimeError(f"conditional: {len(live)} random calls ran but the tape shows "
                           f"{len(recorded)}")


def _check_run(draws: list[Draw], tape, site: str, address: str, v) -> None:
    _check_sites(draws, tape)
    if sum(1 for d in draws if d.address == site) != 1:
        raise RuntimeError(f"conditional: forcing {address} = {v!r} did not reach that choice")


def _categorical(support: list, probs: np.ndarray) -> Categorical:
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 0 for v in support):
        p = np.zeros(int(max(support)) + 1)
        for v, q in zip(support, probs):
            p[int(v)] = q
        return Categorical(p / p.sum())
    return Categorical(probs / probs.sum())


def _name(f) -> str:
    return getattr(f, "__qualname__", None) or repr(f)
