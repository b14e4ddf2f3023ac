"""What a rewritten model calls: parameter reads, log-Jacobians and ``|=`` statements, each a
primitive of the tape with its VJP rule (registered here, one line each).

* ``declare(name, line, *args, **kwargs)`` -> ``ParamSpec`` (memoised; recorded while a
  ``Discovery`` is active, which is how a model's parameters are found),
* ``constrain(theta, at, spec)``: the parameter's value from ``theta[at:at + spec.size]``,
* ``log_jacobian(theta, at, spec)``: ``log|det J|`` of that map,
* ``observe(x, d, line)``: ``d.logpdf(x)`` for ``x |= d``, with the left side, shapes and the
  result checked (``StatementError`` carries the line; the model adds file and source).
"""
from __future__ import annotations

import threading

import numpy as np

from ..ad import defvjp, defzero
from ..ad.values import Sparse, unbroadcast
from ..dist import Distribution
from ..dist.bijectors import Identity
from ..dist.bijectors_matrix import forward_vjp, grad_log_abs_det_jacobian
from .distributions import DistExpr
from .fastpaths import FUSED, STATEMENTS
from .params import ParamSpec, _identity, _one, _zero

__all__ = ["declare", "constrain", "log_jacobian", "observe", "is_distribution", "advance",
           "Discovery", "Probe", "StatementError", "HELPERS"]



class _State(threading.local):
    discovery = None                       # the active ``Discovery`` of this thread


_state = _State()
_F8 = np.dtype(np.float64)
_specs: dict = {}
_sites: dict = {}      # (name, line) -> (args, kwargs, spec) of the last declaration there


class StatementError(ValueError):
    """An ``|=`` statement failed; ``line`` is its line in the model's file."""

    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line = line


class Probe:
    """The stand-in for ``theta`` while a model's parameters are discovered: each parameter
    reads its starting value (``ParamSpec.initial``)."""

    def __repr__(self):
        return "<parameter probe>"


class Discovery:
    """Context manager: ``declare`` records every spec it makes into ``specs``."""

    def __enter__(self):
        self.specs: list = []
        self.previous = getattr(_state, "discovery", None)
        _state.discovery = self
        return self

    def __exit__(self, *exc):
        _state.discovery = self.previous
        return False


def declare(name, line, /, *args, **kwargs):
    """The ``ParamSpec`` of ``param(*args, **kwargs)`` bound to ``name`` at ``line``."""
    site = _sites.get((name, line))
    if site is not None and site[0] == args and site[1] == kwargs:
        spec = site[2]                     # this call site's arguments as last time
    else:
        spec = _declared(name, line, args, kwargs)
    discovery = getattr(_state, "discovery", None)
    if discovery is not None:
        discovery.specs.append(spec)
    return spec


def _declared(name, line, args, kwargs):
    site = (name, line)
    given = dict(kwargs)
    if "name" in kwargs:
        name = kwargs.pop("name")
        if not isinstance(name, str) or not name:
            raise StatementError(line, f"param(name=...) must be a non-empty string, got {name!r}")
    try:                                   # a call site passes its keywords in one order
        key = (name, line, args, tuple(kwargs.items())) if kwargs else (name, line, args)
        spec = _specs.get(key)
    except TypeError:                      # unhashable bounds (arrays)
        key, spec = None, None
    if spec is None:
        try:
            spec = ParamSpec(name, line, *args, **kwargs)
        except TypeError as exc:
            raise StatementError(line, f"param {name!r}: {exc}") from None
        if key is not None:
            if len(_specs) > 4096:
                _specs.clear()
            _specs[key] = spec
    if key is not None:                    # (hashable arguments compare without arrays)
        if len(_sites) > 4096:
            _sites.clear()
        _sites[site] = (args, given, spec)
    return spec


def constrain(theta, at, spec: ParamSpec):
    """The value of the parameter ``spec`` whose coordinates start at ``at``."""
    if type(theta) is Probe:
        return spec.constrain(spec.initial())
    if spec.scalar is not None and at < len(theta):
        forward = spec.scalar[0]
        return float(theta[at]) if forward is _identity else forward(spec.bijector,
                                                                      float(theta[at]))
    stop = at + spec.size
    if spec.vector and stop <= len(theta):     # an unconstrained vector: a copy of its slice
        u = theta[at:stop]
        return u.copy() if u.dtype is _F8 else u.astype(float)
    if stop > len(theta):
        raise StatementError(spec.line, f"param {spec.name!r} needs coordinates {at}..{stop - 1}"
                                        f" but the parameter vector has {len(theta)}: this run "
                                        f"declared more parameters than the model's layout")
    return spec.constrain(theta[at:stop])


def log_jacobian(theta, at, spec: ParamSpec) -> float:
    if type(theta) is Probe:
        return spec.log_jacobian(spec.initial())
    if spec.scalar is not None:
        return spec.scalar[1](spec.bijector, float(theta[at]))
    return spec.log_jacobian(theta[at:at + spec.size])


def advance(at, spec: ParamSpec) -> int:
    """The offset after ``spec``'s coordinates."""
    return at + spec.size


def is_distribution(value) -> bool:
    return isinstance(value, (DistExpr, Distribution))


_LEFT_TYPES = (int, float, np.number, np.ndarray)
_shapes_ok: set = set()      # (left shape, parameter shapes) pairs already checked


def observe(x, d, line):
    """``d``'s log density at ``x`` for the statement ``x |= d`` at ``line``."""
    if type(d) is DistExpr:                # (statements take floats and float vectors only)
        statement = STATEMENTS.get(d.family)
        if statement is not None:
            lp = statement(d, x)
            if lp is not None:
                if lp != lp:
                    raise StatementError(line, f"the log density is NaN (a bad parameter "
                                               f"value in {d!r}?)")
                return lp
    tx = type(x)
    if tx is not float and tx is not np.ndarray and (tx is bool or not isinstance(x, _LEFT_TYPES)):
        hint = " (wrap a list with data(...))" if isinstance(x, (list, tuple)) else ""
        raise StatementError(line, f"the left side of |= must be a parameter or data (a number "
                                   f"or a numpy array), got {type(x).__name__}{hint}")
    if type(d) is DistExpr:
        if tx is float or tx is np.float64:
            lp = d.scalar_logpdf(x)          # None unless every parameter is a float too
            if lp is not None:
                if lp != lp:
                    raise StatementError(line, f"the log density is NaN (a bad parameter "
                                               f"value in {d!r}?)")
                return lp
        params = d.params
        for p in params:
            if type(p) is not float:               # (float parameters broadcast to any x)
                key = (getattr(x, "shape", ()), tuple([getattr(p, "shape", ()) for p in params]))
                if key not in _shapes_ok:
                    _check_shapes(x, d, line)
                    if len(_shapes_ok) > 1024:
                        _shapes_ok.clear()
                    _shapes_ok.add(key)
                break
        lp = d.logpdf(x)
    else:
        if not isinstance(d, Distribution):
            raise StatementError(line, f"the right side of |= is {type(d).__name__}, not a "
                                       f"distribution (a model read from its bytecode takes "
                                       f"every |= as a statement: give model(fn, source=text) "
                                       f"for other uses)")
        _check_shapes(x, d, line)
        with np.errstate(all="ignore"):
            lp = d.logpdf(x)
    if lp != lp:
        raise StatementError(line, f"the log density is NaN (a bad parameter value in "
                                   f"{d!r}?)")
    return lp


def _check_shapes(x, d, line):
    shape = np.shape(x)
    event = tuple(d.event_shape)
    batch = shape[: len(shape) - len(event)] if event else shape
    try:
        full = np.broadcast_shapes(batch, tuple(d.batch_shape))
    except ValueError:
        full = None
    if full != batch or (event and shape[len(shape) - len(event):] != event):
        raise StatementError(line, f"shape mismatch: the left side has shape {shape}, "
                                   f"{type(d).__name__}'s parameters have batch shape "
                                   f"{tuple(d.batch_shape)}" + (f" and event shape {event}" if event else ""))


# -- VJP rules ---------------------------------------------------------------------------------
#: a scalar parameter's adjoint is a dense vector up to this length of ``theta`` (an allocation
#: costs less than merging a ``Sparse``), a ``Sparse`` beyond (its merge is per entry)
DENSE_SCALAR_ADJOINT = 64


def _one_coordinate(theta, at, value):
    if len(theta) <= DENSE_SCALAR_ADJOINT:
        out = np.zeros(len(theta))
        out[at] = value
        return out
    return Sparse({at: value})


def constrain_vjp_theta(g, ans, theta, at, spec):
    if spec.scalar is not None:          # one coordinate
        return _one_coordinate(theta, at, g * spec.scalar[2](spec.bijector, float(theta[at])))
    out = np.zeros(len(theta))
    if spec.discrete:
        return out
    if type(spec.bijector) is Identity:
        out[at:at + spec.size] = g if spec.vector and type(g) is np.ndarray else np.reshape(g, -1)
        return out
    u = theta[at:at + spec.size]
    y = u.reshape(spec.shape) if spec.kind is None and spec.shape != () else (
        u[0] if spec.kind is None else u)
    out[at:at + spec.size] = np.reshape(forward_vjp(spec.bijector, y, g), -1)
    return out


def log_jacobian_vjp_theta(g, ans, theta, at, spec):
    if spec.scalar is not None:
        return _one_coordinate(theta, at, g * spec.scalar[3](spec.bijector, float(theta[at])))
    out = np.zeros(len(theta))
    if spec.discrete or type(spec.bijector) is Identity:
        return out
    u = theta[at:at + spec.size]
    y = u.reshape(spec.shape) if spec.kind is None and spec.shape != () else (
        u[0] if spec.kind is None else u)
    grad = np.broadcast_to(grad_log_abs_det_jacobian(spec.bijector, y), np.shape(y))
    out[at:at + spec.size] = g * np.reshape(grad, -1)
    return out


def _partials(x, d, line, want_x: bool, want_params: bool) -> dict:
    try:
        if type(d) is DistExpr:
            fused = FUSED.get(d.family)
            if fused is not None:
                return fused[1](d, x, want_x, want_params)
            return d.partials(x, want_x, want_params)
        return d.grad_logpdf(x)
    except NotImplementedError as exc:
        raise StatementError(line, f"{type(d).__name__}.logpdf has no gradient: {exc}") from None


def observe_vjp_x(g, ans, x, d, line):
    """The left side's adjoint of ``x |= d`` (a parameter's prior)."""
    grads = _partials(x, d, line, True, False)
    gx = grads.get("x")
    if gx is None:
        raise StatementError(line, f"{d!r} has no gradient with respect to the left side")
    if type(g) is not float or g != 1.0:
        gx = g * gx
    if type(x) is np.ndarray and type(gx) is np.ndarray and gx.shape == x.shape:
        return gx
    return unbroadcast(x, gx)


def observe_vjp_d(g, ans, x, d, line):
    """The distribution's adjoint: a ``Sparse`` by parameter name, which the factory's (or the
    ``dcgraph.dist`` constructor's) rule hands to its arguments."""
    grads = _partials(x, d, line, False, True)
    if type(d) is DistExpr:
        if type(g) is float and g == 1.0 and "x" not in grads:    # the seed itself: no products
            return Sparse(grads)
        return Sparse({name: g * grads[name] for name in d.names if name in grads})
    return _scaled(g, {name: grads[name] for name in d.params if name in grads})


def _scaled(g, grads: dict) -> Sparse:
    return Sparse({name: _scaled(g, v) if isinstance(v, dict) else g * v
                   for name, v in grads.items()})


def _scaled_slope(g, slope, spec, theta, at):
    """``g * slope(bijector, theta[at])``, constant slopes without the call."""
    if slope is _one:
        return g
    if slope is _zero:
        return 0.0
    return g * slope(spec.bijector, float(theta[at]))


def constrain_scatter(g, ans, theta, at, spec):
    """``constrain_vjp_theta`` as ``(key, values)`` of ``theta``'s coordinates (compiled
    replay adds them in place into one gradient buffer: ``defscatter``, registered with its
    inline form in ``inline_forms``)."""
    if spec.scalar is not None:
        slope = spec.scalar[2]
        return at, g if slope is _one else _scaled_slope(g, slope, spec, theta, at)
    stop = at + spec.size
    if spec.vector and type(g) is np.ndarray and g.shape == (spec.size,):
        return slice(at, stop), g
    return slice(at, stop), constrain_vjp_theta(g, ans, theta, at, spec)[at:stop]


def log_jacobian_scatter(g, ans, theta, at, spec):
    """``log_jacobian_vjp_theta`` as ``(key, values)`` (see ``constrain_scatter``)."""
    if spec.scalar is not None:
        return at, _scaled_slope(g, spec.scalar[3], spec, theta, at)
    stop = at + spec.size
    return slice(at, stop), log_jacobian_vjp_theta(g, ans, theta, at, spec)[at:stop]


defvjp(constrain, constrain_vjp_theta, None, None)
defvjp(log_jacobian, log_jacobian_vjp_theta, None, None)
defvjp(observe, observe_vjp_x, observe_vjp_d, None)
defzero(declare)
defzero(advance)
defzero(is_distribution)

#: generated name -> helper, bound as closure cells of a rewritten model
HELPERS = {"_dcg_declare": declare, "_dcg_constrain": constrain, "_dcg_logjac": log_jacobian,
           "_dcg_advance": advance, "_dcg_isdist": is_distribution, "_dcg_observe": observe}
