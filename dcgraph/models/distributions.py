"""Distribution expressions: ``normal(loc, scale)`` and friends as written in a model.

A ``DistExpr`` keeps the family and its parameter values as given; ``x |= normal(mu, s)`` asks
it for the summed log density and its closed-form gradient (``FAMILIES``: one row a family,
the same parametrisations as ``dcgraph.dist``). Parameters are checked cheaply on every
evaluation; a bad one builds the ``dcgraph.dist`` object, whose validation raises the canonical
error. ``dist()`` gives that object (for sampling, moments, or families not listed here).
Each factory is a primitive of the tape whose rules hand the parameters' adjoints back to its
arguments.
"""
from __future__ import annotations

import math
import sys

import numpy as np
from scipy.special import betaln, digamma, gammaln

from .. import dist
from ..ad import defvjp
from ..ad.values import Sparse, unbroadcast
from .fastpaths import FUSED, LOG_2PI, NEG_INF, SCALAR_GRAD, SCALAR_LP, _log

__all__ = ["DistExpr", "FAMILIES", "FACTORIES", "normal", "uniform", "gamma", "exponential", "half_normal",
           "lognormal", "beta", "bernoulli", "poisson", "lkj_cholesky"]


def _normal_lp(x, loc, scale):
    z = (x - loc) / scale
    return -0.5 * z * z - _log(scale) - 0.5 * LOG_2PI


def _normal_grad(x, loc, scale):
    z = (x - loc) / scale
    return {"x": -z / scale, "loc": z / scale, "scale": (z * z - 1.0) / scale}


def _uniform_lp(x, low, high):
    return np.where((x >= low) & (x <= high), -np.log(high - low), NEG_INF)


def _uniform_grad(x, low, high):
    w = 1.0 / (high - low)
    return {"x": np.zeros(np.shape(x)), "low": w + 0 * x, "high": -w + 0 * x}


def _gamma_lp(x, shape, rate):
    ok = x > 0
    xs = np.where(ok, x, 1.0)
    return np.where(ok, shape * np.log(rate) - gammaln(shape) + (shape - 1) * np.log(xs) - rate * xs,
                    NEG_INF)


def _gamma_grad(x, shape, rate):
    xs = np.where(x > 0, x, 1.0)
    return {"x": (shape - 1) / xs - rate, "shape": np.log(rate) - digamma(shape) + np.log(xs),
            "rate": shape / rate - xs}


def _exponential_lp(x, rate):
    return np.where(x >= 0, np.log(rate) - rate * x, NEG_INF)


def _exponential_grad(x, rate):
    return {"x": -rate + 0 * x, "rate": 1.0 / rate - x}


def _half_normal_lp(x, scale):
    return np.where(x >= 0, 0.5 * math.log(2 / math.pi) - np.log(scale) - x * x / (2 * scale * scale),
                    NEG_INF)


def _half_normal_grad(x, scale):
    return {"x": -x / (scale * scale), "scale": -1.0 / scale + x * x / scale ** 3}


def _lognormal_lp(x, mu, sigma):
    ok = x > 0
    lx = np.log(np.where(ok, x, 1.0))
    return np.where(ok, -lx - np.log(sigma) - 0.5 * LOG_2PI - (lx - mu) ** 2 / (2 * sigma * sigma),
                    NEG_INF)


def _lognormal_grad(x, mu, sigma):
    xs = np.where(x > 0, x, 1.0)
    d = np.log(xs) - mu
    return {"x": -1.0 / xs - d / (sigma * sigma * xs), "mu": d / (sigma * sigma),
            "sigma": -1.0 / sigma + d * d / sigma ** 3}


def _beta_lp(x, a, b):
    ok = (x > 0) & (x < 1)
    xs = np.where(ok, x, 0.5)
    return np.where(ok, (a - 1) * np.log(xs) + (b - 1) * np.log1p(-xs) - betaln(a, b), NEG_INF)


def _beta_grad(x, a, b):
    xs = np.where((x > 0) & (x < 1), x, 0.5)
    dab = digamma(a + b)
    return {"x": (a - 1) / xs - (b - 1) / (1 - xs), "a": np.log(xs) - digamma(a) + dab,
            "b": np.log1p(-xs) - digamma(b) + dab}


def _bernoulli_lp(x, p):
    return np.where(x == 1, np.log(p), np.where(x == 0, np.log1p(-p), NEG_INF))


def _bernoulli_grad(x, p):
    return {"p": np.where(x == 1, 1.0 / p, np.where(x == 0, -1.0 / (1 - p), 0.0))}


def _poisson_lp(x, rate):
    ok = (x >= 0) & (x == np.floor(x))
    xs = np.where(ok, x, 0)
    return np.where(ok, xs * np.log(rate) - rate - gammaln(xs + 1.0), NEG_INF)


def _poisson_grad(x, rate):
    return {"rate": x / rate - 1.0}


def _lkj(x, eta, dim):
    x = np.asarray(x, dtype=float)
    K = x.shape[-1] if x.ndim >= 2 else 0
    if dim is not None and dim != K:
        raise ValueError(f"lkj_cholesky(eta, dim={dim}): the left side has shape {x.shape}")
    if K < 2:
        raise ValueError(f"lkj_cholesky: the left side must be a K x K Cholesky factor with "
                         f"K >= 2, got shape {x.shape}")
    return dist.LKJCholesky(K, eta)


def _lkj_lp(x, eta, dim):
    return _lkj(x, eta, dim).logpdf(x)


def _lkj_grad(x, eta, dim):
    return _lkj(x, eta, dim).grad_logpdf(x)


def _lkj_dist(eta, dim):
    from .params import ModelError
    if dim is None:
        dist.LKJCholesky(2, eta)           # the canonical error for a bad eta
        raise ModelError("lkj_cholesky(eta): give dim= to build the distribution outside a "
                         "statement (in `L |= lkj_cholesky(eta)` the size is L's)")
    return dist.LKJCholesky(dim, eta)


def _dim(v):
    return v is None or (isinstance(v, int) and not isinstance(v, bool) and v >= 2)


def _quiet(fn):
    """``fn`` with numpy's divide/invalid warnings off (values outside the support)."""
    def quiet(*args):
        with np.errstate(divide="ignore", invalid="ignore"):
            return fn(*args)
    quiet.__name__ = fn.__name__
    return quiet


def _positive(v):
    return v > 0 if isinstance(v, (float, int)) else np.all(v > 0)


def _unit_closed(v):
    return 0 <= v <= 1 if isinstance(v, (float, int)) else np.all((v >= 0) & (v <= 1))


def _real(v):
    return True


def _increasing(low, high):
    return low < high if type(low) is float and type(high) is float else np.all(low < high)


_SCALARS = (float, int)
_FLOATS = {float, np.float64}

_Q = _quiet
#: name -> (dcgraph.dist class, parameter names, checks per parameter, log density, gradient)
FAMILIES = {
    "normal": (dist.Normal, ("loc", "scale"), (_real, _positive), _normal_lp, _normal_grad),
    "uniform": (dist.Uniform, ("low", "high"), (_real, _real), _Q(_uniform_lp), _Q(_uniform_grad)),
    "gamma": (dist.Gamma, ("shape", "rate"), (_positive, _positive), _Q(_gamma_lp), _Q(_gamma_grad)),
    "exponential": (dist.Exponential, ("rate",), (_positive,), _Q(_exponential_lp),
                    _Q(_exponential_grad)),
    "half_normal": (dist.HalfNormal, ("scale",), (_positive,), _Q(_half_normal_lp),
                    _Q(_half_normal_grad)),
    "lognormal": (dist.LogNormal, ("mu", "sigma"), (_real, _positive), _Q(_lognormal_lp),
                  _Q(_lognormal_grad)),
    "beta": (dist.Beta, ("a", "b"), (_positive, _positive), _Q(_beta_lp), _Q(_beta_grad)),
    "bernoulli": (dist.Bernoulli, ("p",), (_unit_closed,), _Q(_bernoulli_lp), _Q(_bernoulli_grad)),
    "poisson": (dist.Poisson, ("rate",), (_positive,), _Q(_poisson_lp), _Q(_poisson_grad)),
    "lkj_cholesky": (_lkj_dist, ("eta", "dim"), (_positive, _dim), _Q(_lkj_lp), _Q(_lkj_grad)),
}


#: family -> (position, check) of the parameters whose check is not trivially true
CHECKS = {family: tuple((k, c) for k, c in enumerate(row[2]) if c is not _real)
          for family, row in FAMILIES.items()}


class DistExpr:
    """``family(*params)`` as written in a model (see the module docstring)."""

    __slots__ = ("family", "params", "_dist", "_cache")

    def __init__(self, family: str, params: tuple):
        self.family, self.params, self._dist, self._cache = family, params, None, None

    @property
    def names(self) -> tuple:
        return FAMILIES[self.family][1]

    @property
    def batch_shape(self) -> tuple:
        return np.broadcast_shapes(*(np.shape(p) for p in self.params))

    event_shape = ()

    def dist(self):
        """The validated ``dcgraph.dist`` distribution (raises its error for bad parameters)."""
        if self._dist is None:
            self._dist = FAMILIES[self.family][0](*self.params)
        return self._dist

    def _checked(self):
        row = FAMILIES[self.family]
        params = self.params
        for k, check in CHECKS[self.family]:
            if not check(params[k]):
                self.dist()          # raises the family's canonical error
        if self.family == "uniform" and not _increasing(*params):
            self.dist()
        return row

    def logpdf(self, x) -> float:
        """The log density at ``x`` summed over elements (-inf outside the support)."""
        row = self._checked()
        if isinstance(x, _SCALARS) and all(isinstance(p, _SCALARS) for p in self.params):
            return float(SCALAR_LP[self.family](x, *self.params))
        fused = FUSED.get(self.family)
        if fused is not None:
            return fused[0](self, x)
        lp = row[3](x, *self.params)
        return float(lp.sum()) if type(lp) is np.ndarray else float(lp)

    def scalar_logpdf(self, x: float):
        """The log density at the float ``x`` when every parameter is a float (Python or numpy;
        math only), else None."""
        for p in self.params:
            if type(p) is not float and type(p) is not np.float64:
                return None
        self._checked()
        return float(SCALAR_LP[self.family](x, *self.params))

    def grad_logpdf(self, x) -> dict:
        """Gradients of the summed log density: ``"x"`` and each parameter's, elementwise."""
        return FAMILIES[self.family][4](x, *self.params)

    def partials(self, x, want_x: bool, want_params: bool) -> dict:
        """The gradients a statement's rule needs: ``"x"`` if ``want_x``, the parameters' if
        ``want_params`` (a scalar parameter's may come summed over the elements)."""
        fused = FUSED.get(self.family)
        if fused is not None:
            return fused[1](self, x, want_x, want_params)
        scalar = SCALAR_GRAD.get(self.family)
        if scalar is not None and type(x) in _FLOATS and all(type(p) in _FLOATS for p in self.params):
            return scalar(x, *self.params)
        return self.grad_logpdf(x)

    def sample(self, rng, shape=()):
        return self.dist().sample(rng, shape)

    def __ror__(self, other):
        _not_a_statement(self, sys._getframe(1))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _not_a_statement(self, sys._getframe(1))

    def __repr__(self):
        shown = ", ".join(f"{n}={np.round(p, 6)!r}" if np.ndim(p) == 0 else f"{n}=<{np.shape(p)}>"
                          for n, p in zip(self.names, self.params) if p is not None)
        return f"{self.family}({shown})"


def _not_a_statement(d, frame):
    from .params import ModelError
    raise ModelError(f"{frame.f_code.co_filename}:{frame.f_lineno}: `x |= {d.family}(...)` is a "
                     f"statement only directly in the body of a @model function")


def _factory_vjp(k: int):
    """The rule of a factory's ``k``-th argument: its entry of the ``Sparse`` adjoint (parameter
    name -> adjoint) that the statement's rule gave the expression, unbroadcast to it."""
    def factory_argument_vjp(g, ans, *args, **kwargs):
        adjoint = g.get(FAMILIES[ans.family][1][k]) if type(g) is Sparse else None
        value = ans.params[k]                    # (given by position or by keyword)
        if type(adjoint) is float and type(value) is float:
            return adjoint
        return unbroadcast(value, 0.0 if adjoint is None else adjoint)
    factory_argument_vjp.__name__ = f"factory_argument_{k}_vjp"
    return factory_argument_vjp


def normal(loc, scale):
    """Normal with mean ``loc`` and standard deviation ``scale``."""
    return DistExpr("normal", (loc, scale))


def uniform(low, high):
    return DistExpr("uniform", (low, high))


def gamma(shape, rate):
    """Gamma with ``shape`` and ``rate`` (mean ``shape / rate``)."""
    return DistExpr("gamma", (shape, rate))


def exponential(rate):
    return DistExpr("exponential", (rate,))


def half_normal(scale):
    return DistExpr("half_normal", (scale,))


def lognormal(mu, sigma):
    return DistExpr("lognormal", (mu, sigma))


def beta(a, b):
    return DistExpr("beta", (a, b))


def bernoulli(p):
    return DistExpr("bernoulli", (p,))


def poisson(rate):
    return DistExpr("poisson", (rate,))


def lkj_cholesky(eta, dim=None):
    """LKJ prior on the Cholesky factor of a correlation matrix (``dcgraph.dist.LKJCholesky``):
    ``L |= lkj_cholesky(eta)`` for ``L = param(shape=(K, K), kind="corr_cholesky")``; the size
    is the left side's (``dim`` is needed only to sample outside a statement)."""
    return DistExpr("lkj_cholesky", (eta, dim))


#: the factories of ``DistExpr`` (each a primitive whose rules are ``_factory_vjp``'s)
FACTORIES = (normal, uniform, gamma, exponential, half_normal, lognormal, beta, bernoulli, poisson,
             lkj_cholesky)
for _factory in FACTORIES:
    _names = FAMILIES[_factory.__name__][1]
    defvjp(_factory, *(None if n == "dim" else _factory_vjp(k) for k, n in enumerate(_names)),
           names=_names)
del _factory, _names
