"""Inference for bound models: ``sample`` with ``dcgraph.infer`` and ``optimize`` (MAP).

Continuous coordinates are updated by NUTS (``sampler="nuts"`` or ``"auto"``) or random-walk
Metropolis (``"mh"``); each discrete parameter (``kind="int"``) is its own Gibbs block drawn
from its exact full conditional, found by enumerating its support with the model's log density.
The result is ``dcgraph.infer``'s ``SampleResult`` on the *constrained* parameters (names and
shapes from the model; the unconstrained run is its ``unconstrained`` attribute).
"""
from __future__ import annotations

import math

import numpy as np

from .. import infer
from ..infer.result import parse_layout
from .params import ModelError

__all__ = ["sample", "optimize", "exact_conditional", "MapResult"]

SAMPLERS = ("auto", "nuts", "mh")


def exact_conditional(bound, index: int, support, theta) -> np.ndarray:
    """Probabilities of each value of ``support`` for coordinate ``index`` given the rest of
    ``theta`` (enumeration of the joint log density; values where it raises count as -inf)."""
    logps = np.empty(len(support))
    t = np.array(theta, dtype=float)
    for k, v in enumerate(support):
        t[index] = v
        try:
            logps[k] = bound.logdensity(t)
        except (ArithmeticError, ValueError):
            logps[k] = -np.inf
    top = np.max(logps)
    if not np.isfinite(top):
        raise ModelError(f"every value of the discrete parameter at coordinate {index} has zero "
                         f"probability given the others")
    p = np.exp(logps - top)
    return p / p.sum()


class _ExactSampler:
    """``ExactConditional``'s sampler for one discrete coordinate (picklable)."""

    def __init__(self, bound, index, support):
        self.bound, self.index, self.support = bound, index, support

    def __call__(self, rng, theta):
        p = exact_conditional(self.bound, self.index, self.support, theta)
        return np.array([float(self.support[rng.choice(len(p), p=p)])])


def _kernel(bound, sampler: str, options: dict):
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    base = None
    if len(bound.continuous):
        base = infer.RandomWalkMetropolis(**options) if sampler == "mh" else infer.NUTS(**options)
    if not bound.discrete:
        if base is None:
            raise ModelError(f"{bound.model.fn.__qualname__} has no parameters to sample")
        return base
    blocks = {}
    if base is not None:
        blocks["continuous"] = (bound.continuous, base)
    for spec, start in bound._starts():
        if spec.discrete:
            blocks[f"{spec.name}@{start}"] = (start, infer.ExactConditional(
                _ExactSampler(bound, start, spec.support)))
    return infer.Gibbs(blocks)


def _finite(bound, point) -> bool:
    try:
        return bool(np.isfinite(bound.logdensity(point)))
    except (ArithmeticError, ValueError):
        return False


def _initial(bound, init):
    if init is None:
        base = bound.initial_point()
        discrete = [(start, spec.support) for spec, start in bound._starts() if spec.discrete]

        def draw(rng):
            for attempt in range(200):
                point = base.copy()
                point[bound.continuous] = rng.uniform(-2.0, 2.0, size=len(bound.continuous))
                if attempt % 2:          # discrete values from their supports too
                    for start, support in discrete:
                        point[start] = float(rng.choice(support))
                if _finite(bound, point):
                    return point
            return base
        return draw
    if isinstance(init, dict):
        return bound.unconstrain(init)
    return init


def sample(bound, draws=1000, warmup=1000, chains=4, sampler="auto", seed=None, init=None,
           parallel=False, progress=None, save_warmup=False, kernel_options=None):
    """Draws from the model's posterior (``SampleResult`` on the constrained parameters).
    ``init``: None (uniform on (-2, 2) in unconstrained space), a dict of constrained values,
    or anything ``dcgraph.infer.sample`` takes. ``parallel`` defaults to False (this process)."""
    kernel = _kernel(bound, sampler, dict(kernel_options or {}))
    target = infer.Target(bound.logdensity, bound.logdensity_and_grad, dim=bound.dim)
    raw = infer.sample(target, kernel, draws=draws, warmup=warmup, chains=chains, seed=seed,
                       init=_initial(bound, init), dim=bound.dim, parallel=parallel,
                       progress=progress, save_warmup=save_warmup)
    result = constrained_result(bound, raw)
    result.unconstrained = raw
    return result


def _constrain_draws(bound, draws):
    if draws is None:
        return None
    c, n, _ = draws.shape
    flat = [bound.flat_constrained(t) for t in draws.reshape(c * n, bound.dim)]
    width = len(flat[0]) if flat else 0
    return np.asarray(flat, dtype=float).reshape(c, n, width)


def constrained_result(bound, raw):
    """``raw`` (draws of the unconstrained vector) as a ``SampleResult`` of named parameters."""
    names = {name: entry.shape for name, entry in bound.layout.items()}
    draws = _constrain_draws(bound, raw.draws)
    return infer.SampleResult(
        draws, raw.stats, parse_layout(names, draws.shape[2]), seed=raw.seed, tuned=raw.tuned,
        elapsed=raw.elapsed, warmup_draws=_constrain_draws(bound, raw.warmup_draws),
        warmup_stats=raw.warmup_stats, kernel=raw.kernel, warmup=raw.warmup,
        statuses=raw.statuses)


class MapResult:
    """``optimize``'s answer: ``values`` (name -> constrained value), ``theta`` (unconstrained),
    ``logdensity`` there and scipy's ``OptimizeResult`` as ``scipy``."""

    def __init__(self, values, theta, logdensity, scipy_result):
        self.values, self.theta, self.logdensity, self.scipy = values, theta, logdensity, scipy_result

    def __getitem__(self, name):
        return self.values[name]

    def __repr__(self):
        shown = ", ".join(f"{k}={np.array2string(np.asarray(v), precision=4)}"
                          for k, v in self.values.items())
        return f"MapResult({shown}; logdensity={self.logdensity:.6g})"


def optimize(bound, init=None, jacobian=False, method="L-BFGS-B", options=None) -> MapResult:
    """The posterior mode by ``scipy.optimize.minimize`` with the model's gradient.
    ``jacobian=False`` (Stan's default) drops the log-Jacobians: the mode of the density of the
    constrained parameters; True gives the mode on the unconstrained space. Discrete parameters
    stay at their ``init`` values."""
    from scipy.optimize import minimize

    theta0 = bound.initial_point() if init is None else (
        bound.unconstrain(init) if isinstance(init, dict) else np.asarray(init, dtype=float))
    idx = bound.continuous
    if not len(idx):
        raise ModelError("optimize: the model has no continuous parameters")
    full = theta0.copy()

    def objective(x):
        full[idx] = x
        value, grad = bound.logdensity_and_grad(full)
        if not jacobian:
            value, grad = value - _log_jacobian(bound, full), grad - _log_jacobian_grad(bound, full)
        if not math.isfinite(value):
            return math.inf, np.zeros(len(idx))
        return -value, -grad[idx]

    res = minimize(objective, theta0[idx], jac=True, method=method, options=options)
    full[idx] = res.x
    return MapResult(bound.constrain(full), full.copy(), bound.logdensity(full), res)


def _log_jacobian(bound, theta) -> float:
    return sum(s.log_jacobian(theta[a:a + s.size]) for s, a in bound._starts())


def _log_jacobian_grad(bound, theta) -> np.ndarray:
    from ..ad.values import dense_array
    from .runtime import log_jacobian_vjp_theta
    out = np.zeros(bound.dim)
    for s, a in bound._starts():
        out += dense_array((bound.dim,), log_jacobian_vjp_theta(1.0, None, theta, a, s))
    return out
