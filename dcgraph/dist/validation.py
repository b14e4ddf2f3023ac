"""Parameter validation: every error names the distribution, the parameter and the bad value."""
from __future__ import annotations

import math
from contextvars import ContextVar

import numpy as np

__all__ = ["validation", "is_validating", "fmt_value", "check_param", "check_matrix", "check_prob_vector", "check_ordered", "broadcast_batch", "fail"]


_VALIDATE = ContextVar("dcgraph_dist_validate", default=True)


def is_validating() -> bool:
    """The current default of ``validate_args`` for new distributions (True unless switched off)."""
    return _VALIDATE.get()


class validation:
    """Switch parameter validation of new distributions on or off (the default of ``validate_args``).

    ``dcgraph.dist.validation(False)`` switches it off from now on (in this thread/context);
    ``with dcgraph.dist.validation(False): ...`` switches it off for the block and restores the
    previous setting on exit. A family's ``validate_args=True/False`` overrides it per instance.
    With validation off, parameters are stored unchecked (float arrays, not copied) and
    ``logpdf`` of scalar families skips the value checks: the caller vouches for the inputs.
    """

    def __init__(self, enabled: bool = True):
        self.enabled = bool(enabled)
        self._token = _VALIDATE.set(self.enabled)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _VALIDATE.reset(self._token)
        return False

    def __repr__(self):
        return f"validation({self.enabled})"


def fmt_value(v) -> str:
    """Compact text for a parameter value: ``1.0``, ``3``, ``[0.2, 0.8]``."""
    a = np.asarray(v)
    if a.ndim == 0:
        return repr(a.item())
    fmt = {"float_kind": lambda v: repr(float(v))}
    text = np.array2string(a, separator=", ", threshold=12, edgeitems=3, max_line_width=10**9, formatter=fmt)
    return " ".join(text.split())


def fail(dist: str, name: str, requirement: str, value, index=None):
    """Raise the canonical ``ValueError`` for a bad parameter."""
    where = "" if index is None else f" at index {index}"
    raise ValueError(f"{dist}: parameter '{name}' must be {requirement}, got {fmt_value(value)}{where}")


def _numeric(dist: str, name: str, value) -> np.ndarray:
    if value is None or isinstance(value, (str, bytes)):
        raise TypeError(f"{dist}: parameter '{name}' must be numeric, got {value!r}")
    try:
        a = np.asarray(value)
    except Exception as exc:  # ragged nested lists and the like
        raise TypeError(f"{dist}: parameter '{name}' must be numeric, got {value!r}") from exc
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{dist}: parameter '{name}' must be numeric, got {value!r}")
    return a.astype(float)


_CONSTRAINTS = {
    "real": (lambda a: np.ones(a.shape, bool), "a finite real number"),
    "extended_real": (lambda a: ~np.isnan(a), "a real number or +/-inf"),
    "positive": (lambda a: a > 0, "positive"),
    "nonnegative": (lambda a: a >= 0, "non-negative"),
    "probability": (lambda a: (a >= 0) & (a <= 1), "in [0, 1]"),
    "open_closed_unit": (lambda a: (a > 0) & (a <= 1), "in (0, 1]"),
    "nonnegative_integer": (lambda a: (a >= 0) & (a == np.floor(a)), "a non-negative integer"),
}


#: the same constraints on one finite Python float (the fast path of ``check_param``)
_SCALAR_OK = {
    "real": lambda v: True,
    "positive": lambda v: v > 0,
    "nonnegative": lambda v: v >= 0,
    "probability": lambda v: 0 <= v <= 1,
    "open_closed_unit": lambda v: 0 < v <= 1,
    "nonnegative_integer": lambda v: v >= 0 and v == math.floor(v),
}


def _first_bad(a, ok, dist, name, requirement):
    if not ok.all():
        idx = tuple(int(i) for i in np.argwhere(~ok)[0])
        fail(dist, name, requirement, a[idx] if a.ndim else a, idx if a.ndim else None)


def check_param(dist: str, name: str, value, constraint: str = "real") -> np.ndarray:
    """Validate ``value`` against ``constraint`` and return it as a read-only array.

    Integer constraints return ``int64`` arrays, everything else ``float64``.
    Raises ``TypeError`` for non-numeric input and ``ValueError`` (naming ``dist``,
    ``name`` and the first offending element) for a violated constraint or a NaN/inf.
    """
    kind = type(value)
    if kind is float or kind is np.float64 or (kind is int and -2**53 <= value <= 2**53):
        v = float(value)
        ok = _SCALAR_OK.get(constraint)
        if ok is not None and math.isfinite(v) and ok(v):   # valid scalar: skip the array checks
            a = np.array(v, dtype=np.int64 if constraint == "nonnegative_integer" else float)
            a.flags.writeable = False
            return a
    a = _numeric(dist, name, value)
    pred, requirement = _CONSTRAINTS[constraint]
    if constraint != "extended_real":
        _first_bad(a, np.isfinite(a), dist, name, "finite" if constraint == "real" else f"finite and {requirement}")
    _first_bad(a, pred(a), dist, name, requirement)
    if constraint == "nonnegative_integer":
        a = a.astype(np.int64)
    a.flags.writeable = False
    return a


def check_matrix(dist: str, name: str, value, min_ndim: int = 2):
    """Validate a (batch of) symmetric positive definite matrices.

    Returns ``(matrix, cholesky_lower)``, both read-only float arrays of shape ``(..., p, p)``.
    """
    a = _numeric(dist, name, value)
    if a.ndim < min_ndim or a.shape[-1] != a.shape[-2] or a.shape[-1] == 0:
        raise ValueError(f"{dist}: parameter '{name}' must be a square matrix (..., p, p), got shape {a.shape}")
    batch = a.shape[:-2]

    def check(ok, requirement):
        if not np.all(ok):
            idx = tuple(int(i) for i in np.argwhere(~ok)[0]) if batch else None
            fail(dist, name, requirement, a[idx] if batch else a, idx)

    check(np.all(np.isfinite(a), axis=(-2, -1)), "finite")
    check(np.all(np.abs(a - np.swapaxes(a, -1, -2)) <= 1e-10 * np.maximum(1.0, np.abs(a)), axis=(-2, -1)), "symmetric")
    check(np.linalg.eigvalsh(a)[..., 0] > 0, "positive definite")
    try:
        chol = np.linalg.cholesky(a)
    except np.linalg.LinAlgError:  # eigenvalues positive but too close to zero for Cholesky
        fail(dist, name, "positive definite (numerically)", a)
    a.flags.writeable = False
    chol.flags.writeable = False
    return a, chol


def check_location_and_matrix(dist: str, loc_name: str, loc, matrices: dict) -> tuple:
    """Validate a location vector ``loc`` (shape ``(..., k)``, parameter ``loc_name``) and the
    one matrix given among ``matrices`` (name -> value or None: exactly one must be given; a
    batch of ``k x k`` symmetric positive definite matrices, ``check_matrix``). Returns
    ``(location, name, matrix, cholesky_lower)``, read-only arrays."""
    given = [name for name, value in matrices.items() if value is not None]
    if len(given) != 1:
        names = " and ".join(repr(name) for name in matrices)
        raise ValueError(f"{dist}: give exactly one of {names}")
    key = given[0]
    m = check_param(dist, loc_name, loc, "real")
    if m.ndim < 1:
        raise ValueError(f"{dist}: parameter '{loc_name}' must have shape (..., k), got shape {m.shape}")
    mat, chol = check_matrix(dist, key, matrices[key])
    if mat.shape[-1] != m.shape[-1]:
        raise ValueError(f"{dist}: parameter '{key}' has shape {mat.shape}, "
                         f"which does not match '{loc_name}' of shape {m.shape}")
    return m, key, mat, chol


def broadcast_batch(dist: str, shapes: dict) -> tuple:
    """Broadcast the batch shapes of the parameters or raise naming all of them."""
    if not any(shapes.values()):          # all scalars
        return ()
    try:
        return tuple(np.broadcast_shapes(*shapes.values()))
    except ValueError:
        desc = ", ".join(f"{k} {tuple(s)}" for k, s in shapes.items())
        raise ValueError(f"{dist}: parameter shapes do not broadcast: {desc}") from None


def check_prob_vector(dist: str, name: str, value) -> np.ndarray:
    """Validate probability vectors of shape ``(..., K)``: entries in [0, 1], rows summing to 1 (to 1e-8)."""
    a = check_param(dist, name, value, "probability")
    if a.ndim < 1 or a.shape[-1] == 0:
        raise ValueError(f"{dist}: parameter '{name}' must have shape (..., K) with K >= 1, got shape {a.shape}")
    bad = np.abs(a.sum(-1) - 1.0) > 1e-8
    if np.any(bad):
        idx = tuple(int(j) for j in np.argwhere(bad)[0]) if bad.ndim else None
        fail(dist, name, "a probability vector summing to 1", a[idx] if idx else a, idx)
    return a


def check_ordered(dist: str, low, high, shape, names=("low", "high")):
    """Raise unless ``low < high`` elementwise; the error names ``high`` and quotes ``low``."""
    lo, hi = np.broadcast_to(low, shape), np.broadcast_to(high, shape)
    ok = lo < hi
    if not np.all(ok):
        idx = tuple(int(i) for i in np.argwhere(~ok)[0])
        fail(dist, names[1], f"greater than {names[0]}={fmt_value(lo[idx])}", hi[idx], idx or None)
