"""Which calls are random, and the distribution of each: the random-primitive registry.

``RANDOM_PRIMITIVES`` maps a callable to a function that takes the call's argument values and
returns the distribution of the call's result (a ``dcgraph.dist`` distribution, a
``FiniteChoice``, or None when the distribution is not known: the call is still a random choice).
The distribution function receives exactly the arguments the underlying function receives:
methods get their object first (``_normal(rng, loc=0.0, scale=1.0, size=None)`` for
``numpy.random.Generator.normal``), so one function serves ``rng.normal(...)``,
``np.random.normal(...)`` (a bound method of numpy's hidden ``RandomState``) and
``random.gauss(...)`` (a bound method of the ``random`` module's hidden ``Random``).

Keys are the functions found on the type: ``random.Random.gauss``, ``np.random.Generator.normal``,
``np.random.RandomState.normal``, ``dcgraph.dist.Distribution.sample``. ``lookup`` normalises bound
methods and bound builtins to those keys. Users add their own with ``register_random``.

Arguments whose value is a random *state* (``random.Random``, ``np.random.Generator``,
``np.random.RandomState``, a bit generator) are not parameters of the choice: see
``is_random_state``.
"""
from __future__ import annotations

import random
import types
from typing import Callable, NamedTuple

import numpy as np

from .finite import FiniteChoice
from ..dist import (Beta, Binomial, Categorical, Cauchy, ChiSquared, Dirichlet, Exponential, Gamma,
                   Laplace, Logistic, LogNormal, Multinomial, MvNormal, NegativeBinomial, Normal,
                   Pareto, Poisson, StudentT, Uniform, Weibull)
from ..dist.base import Distribution

__all__ = ["RANDOM_PRIMITIVES", "RandomPrimitive", "register_random", "unregister_random", "lookup",
           "is_random_state", "RANDOM_STATE_TYPES", "works_in_place"]

RANDOM_STATE_TYPES = (random.Random, np.random.Generator, np.random.RandomState,
                      np.random.BitGenerator)


def is_random_state(value) -> bool:
    """Is ``value`` a random-number generator object (not a parameter of a choice)?"""
    return isinstance(value, RANDOM_STATE_TYPES)


# -- distribution functions (object first for methods) -----------------------------------------
def _unknown(*args, **kwargs):
    """Random, distribution not known."""
    return None


def _unit_uniform(state, *args, **kwargs):
    return Uniform(0.0, 1.0)


def _py_uniform(state, a, b):
    return Uniform(min(a, b), max(a, b))


def _py_normal(state, mu=0.0, sigma=1.0):
    return Normal(mu, sigma)


def _py_lognormal(state, mu, sigma):
    return LogNormal(mu, sigma)


def _py_exponential(state, lambd=1.0):
    return Exponential(lambd)


def _py_gamma(state, alpha, beta):
    return Gamma(alpha, 1.0 / beta)


def _py_beta(state, alpha, beta):
    return Beta(alpha, beta)


def _py_pareto(state, alpha):
    return Pareto(alpha, 1.0)


def _py_weibull(state, alpha, beta):
    return Weibull(beta, alpha)


def _py_randint(state, a, b):
    return FiniteChoice(range(a, b + 1))


def _py_randrange(state, start, stop=None, step=1):
    return FiniteChoice(range(start) if stop is None else range(start, stop, step))


def _py_choice(state, seq):
    return FiniteChoice(seq)


def _uniform(state, low=0.0, high=1.0, size=None):
    return Uniform(low, high)


def _normal(state, loc=0.0, scale=1.0, size=None):
    return Normal(loc, scale)


def _standard_normal(state, size=None, *args, **kwargs):
    return Normal(0.0, 1.0)


def _legacy_randn(state, *dims):
    return Normal(0.0, 1.0)


def _exponential(state, scale=1.0, size=None):
    return Exponential(1.0 / np.asarray(scale, dtype=float))


def _standard_exponential(state, size=None, *args, **kwargs):
    return Exponential(1.0)


def _gamma(state, shape, scale=1.0, size=None):
    return Gamma(shape, 1.0 / np.asarray(scale, dtype=float))


def _standard_gamma(state, shape, size=None, *args, **kwargs):
    return Gamma(shape, 1.0)


def _beta(state, a, b, size=None):
    return Beta(a, b)


def _binomial(state, n, p, size=None):
    return Binomial(n, p)


def _poisson(state, lam=1.0, size=None):
    return Poisson(lam)


def _negative_binomial(state, n, p, size=None):
    return NegativeBinomial(n, p)


def _lognormal(state, mean=0.0, sigma=1.0, size=None):
    return LogNormal(mean, sigma)


def _laplace(state, loc=0.0, scale=1.0, size=None):
    return Laplace(loc, scale)


def _logistic(state, loc=0.0, scale=1.0, size=None):
    return Logistic(loc, scale)


def _standard_cauchy(state, size=None):
    return Cauchy(0.0, 1.0)


def _standard_t(state, df, size=None):
    return StudentT(df)


def _chisquare(state, df, size=None):
    return ChiSquared(df)


def _weibull(state, a, size=None):
    return Weibull(a, 1.0)


def _dirichlet(state, alpha, size=None):
    return Dirichlet(alpha)


def _multivariate_normal(state, mean, cov, size=None, *args, **kwargs):
    return MvNormal(mean, cov)


def _multinomial(state, n, pvals, size=None):
    return Multinomial(n, pvals)


def _integers(state, low, high=None, size=None, dtype=None, endpoint=False):
    if high is None:
        low, high = 0, low
    return FiniteChoice(range(int(low), int(high) + (1 if endpoint else 0)))


def _legacy_randint(state, low, high=None, size=None, dtype=None):
    return _integers(state, low, high)


def _choice(state, a, size=None, replace=True, p=None, *args, **kwargs):
    if size is not None and not replace:
        return None                      # draws without replacement are not independent
    if isinstance(a, (int, np.integer)):
        return Categorical(np.full(int(a), 1.0 / int(a)) if p is None else p)
    if size is not None:
        return None
    return FiniteChoice(list(a), p)


def _distribution_sample(dist, rng, shape=()):
    return dist


# -- the table: callable -> distribution of its arguments --------------------------------------
_R, _G, _L = random.Random, np.random.Generator, np.random.RandomState

RANDOM_PRIMITIVES: dict = {
    _R.random: _unit_uniform,
    _R.uniform: _py_uniform,
    _R.gauss: _py_normal,
    _R.normalvariate: _py_normal,
    _R.lognormvariate: _py_lognormal,
    _R.expovariate: _py_exponential,
    _R.gammavariate: _py_gamma,
    _R.betavariate: _py_beta,
    _R.paretovariate: _py_pareto,
    _R.weibullvariate: _py_weibull,
    _R.vonmisesvariate: _unknown,
    _R.triangular: _unknown,
    _R.randint: _py_randint,
    _R.randrange: _py_randrange,
    _R.choice: _py_choice,
    _R.choices: _unknown,
    _R.sample: _unknown,
    _R.shuffle: _unknown,
    _R.getrandbits: _unknown,
    _G.random: _unit_uniform,
    _G.uniform: _uniform,
    _G.normal: _normal,
    _G.standard_normal: _standard_normal,
    _G.exponential: _exponential,
    _G.standard_exponential: _standard_exponential,
    _G.gamma: _gamma,
    _G.standard_gamma: _standard_gamma,
    _G.beta: _beta,
    _G.binomial: _binomial,
    _G.poisson: _poisson,
    _G.negative_binomial: _negative_binomial,
    _G.geometric: _unknown,
    _G.lognormal: _lognormal,
    _G.laplace: _laplace,
    _G.logistic: _logistic,
    _G.standard_cauchy: _standard_cauchy,
    _G.standard_t: _standard_t,
    _G.chisquare: _chisquare,
    _G.weibull: _weibull,
    _G.dirichlet: _dirichlet,
    _G.multivariate_normal: _multivariate_normal,
    _G.multinomial: _multinomial,
    _G.integers: _integers,
    _G.choice: _choice,
    _G.permutation: _unknown,
    _G.shuffle: _unknown,
    _G.permuted: _unknown,
    _G.bytes: _unknown,
    _L.rand: _unit_uniform,
    _L.randn: _legacy_randn,
    _L.random: _unit_uniform,
    _L.random_sample: _unit_uniform,
    _L.uniform: _uniform,
    _L.normal: _normal,
    _L.standard_normal: _standard_normal,
    _L.exponential: _exponential,
    _L.standard_exponential: _standard_exponential,
    _L.gamma: _gamma,
    _L.standard_gamma: _standard_gamma,
    _L.beta: _beta,
    _L.binomial: _binomial,
    _L.poisson: _poisson,
    _L.negative_binomial: _negative_binomial,
    _L.geometric: _unknown,
    _L.lognormal: _lognormal,
    _L.laplace: _laplace,
    _L.logistic: _logistic,
    _L.standard_cauchy: _standard_cauchy,
    _L.standard_t: _standard_t,
    _L.chisquare: _chisquare,
    _L.weibull: _weibull,
    _L.dirichlet: _dirichlet,
    _L.multivariate_normal: _multivariate_normal,
    _L.multinomial: _multinomial,
    _L.randint: _legacy_randint,
    _L.choice: _choice,
    _L.permutation: _unknown,
    _L.shuffle: _unknown,
    _L.bytes: _unknown,
    Distribution.sample: _distribution_sample,
}


#: Random callables that permute their argument in place (their draw is not their result).
IN_PLACE = frozenset({_R.shuffle, _G.shuffle, _L.shuffle})


def works_in_place(key) -> bool:
    """Does the random callable ``key`` (a table key) work by mutating an argument?"""
    try:
        return key in IN_PLACE
    except TypeError:
        return False


# -- lookup and registration ---------------------------------------------------------------------
class RandomPrimitive(NamedTuple):
    """A registered random callable as met at a call: its table key, the distribution function,
    and the object it is bound to (``NOT_BOUND`` when the call passes the object itself)."""
    key: object
    distribution_of_args: Callable | None
    bound_self: object

    def distribution(self, args: tuple, kwargs: dict):
        """The distribution of a call with these argument values (None when not known)."""
        if self.distribution_of_args is None:
            return None
        if self.bound_self is not NOT_BOUND:
            args = (self.bound_self,) + tuple(args)
        return self.distribution_of_args(*args, **kwargs)


NOT_BOUND = object()


def _key_and_self(fn):
    """The table key of ``fn`` and the object it is bound to (``NOT_BOUND`` if none)."""
    if type(fn) is types.MethodType:
        return fn.__func__, fn.__self__
    owner = getattr(fn, "__self__", None)
    if (owner is not None and not isinstance(owner, (types.ModuleType, type))
            and isinstance(fn, types.BuiltinMethodType)):
        name = getattr(fn, "__name__", None)
        unbound = getattr(type(owner), name, None) if isinstance(name, str) else None
        if unbound is not None:
            return unbound, owner
    return fn, NOT_BOUND


def lookup(fn) -> RandomPrimitive | None:
    """The registry entry of the callable ``fn`` (bound or not), or None when it is not random."""
    key, owner = _key_and_self(fn)
    try:
        if key not in RANDOM_PRIMITIVES:
            return None
    except TypeError:            # unhashable callable
        return None
    return RandomPrimitive(key, RANDOM_PRIMITIVES[key], owner)


def register_random(fn, distribution_of_args: Callable | None = None):
    """Make calls of ``fn`` random choices.

    ``distribution_of_args(*args, **kwargs)`` receives the argument values of a call (the object
    first when ``fn`` is a method: ``register_random(MyRng.draw, lambda self, mu: Normal(mu, 1))``)
    and returns its distribution, or None when unknown; pass None for no distribution at all.
    A bound method registers its underlying function (for every object). Returns ``fn``.
    """
    key, _ = _key_and_self(fn)
    if not callable(key):
        raise TypeError(f"register_random: {fn!r} is not callable")
    if distribution_of_args is not None and not callable(distribution_of_args):
        raise TypeError(f"register_random: distribution_of_args must be callable or None, "
                        f"got {distribution_of_args!r}")
    RANDOM_PRIMITIVES[key] = distribution_of_args
    return fn


def unregister_random(fn) -> None:
    """Undo ``register_random(fn, ...)`` (KeyError when ``fn`` is not registered)."""
    key, _ = _key_and_self(fn)
    del RANDOM_PRIMITIVES[key]
