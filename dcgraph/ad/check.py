"""``check_grads``: compare reverse-mode gradients with central finite differences."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

import numpy as np

from .api import grad

__all__ = ["check_grads", "GradCheck", "GradientCheckError"]


class GradientCheckError(AssertionError):
    """Reverse-mode and finite-difference gradients disagree beyond the tolerance."""


@dataclass
class GradCheck:
    """Result of ``check_grads``: the worst error per checked positional argument.

    ``errors[i]`` is max over the argument's real leaves of
    ``|ad - fd| / max(1, |fd|)`` (``ad`` from ``grad``, ``fd`` the central difference).
    """

    errors: dict = field(default_factory=dict)
    tol: float = 1e-6
    gradients: dict = field(default_factory=dict)
    compared: dict = field(default_factory=dict)   # i -> [(path, reverse, central, error)]

    @property
    def worst(self) -> float:
        return max(self.errors.values(), default=0.0)

    @property
    def ok(self) -> bool:
        return self.worst <= self.tol

    def table(self, limit: int = 20) -> str:
        """The compared entries, worst first: argument, position, reverse mode, central
        difference, error."""
        rows = sorted(((e, i, path, ad, fd) for i, entries in self.compared.items()
                       for path, ad, fd, e in entries), key=lambda r: -r[0])
        lines = [f"{'argument':<16} {'reverse mode':>14} {'finite diff.':>14} {'error':>9}"]
        for e, i, path, ad, fd in rows[:limit]:
            where = f"arg {i}" + "".join(f"[{p}]" for p in path)
            lines.append(f"{where:<16} {ad:>14.7g} {fd:>14.7g} {e:>9.2e}")
        if len(rows) > limit:
            lines.append(f"... {len(rows) - limit} more")
        return "\n".join(lines)

    def __str__(self):
        rows = ", ".join(f"arg {i}: {e:.2e}" for i, e in self.errors.items())
        return f"GradCheck({rows}; tol {self.tol:.1e})"


def check_grads(f, *args, argnums=None, eps: float = 1e-6, tol: float = 1e-6,
                raise_on_failure: bool = True, **kwargs) -> GradCheck:
    """Check ``dcgraph.grad(f)`` at ``args`` against central finite differences.

    ``argnums`` (default: every positional argument with a real leaf) selects the arguments;
    each real leaf (float, or element of a float array, inside nested lists/tuples/dicts) is
    perturbed by ``eps``. Returns a ``GradCheck`` with the worst error per argument; raises
    ``GradientCheckError`` when it exceeds ``tol`` unless ``raise_on_failure`` is False.
    """
    if argnums is None:
        argnums = tuple(i for i, a in enumerate(args) if _leaves(a))
    elif isinstance(argnums, int):
        argnums = (argnums,)
    report = GradCheck(tol=tol)
    for i in argnums:
        ad = grad(f, i)(*args, **kwargs)
        report.gradients[i] = ad
        worst = 0.0
        rows = []
        for path in _leaves(args[i]):
            plus, minus = _perturbed(args, i, path, eps), _perturbed(args, i, path, -eps)
            fd = (float(f(*plus, **kwargs)) - float(f(*minus, **kwargs))) / (2.0 * eps)
            got = _get(ad, path)
            if got is None:
                got = 0.0
            err = abs(float(got) - fd) / max(1.0, abs(fd))
            worst = max(worst, err)
            rows.append((path, float(got), fd, err))
        report.errors[i] = worst
        report.compared[i] = rows
    if raise_on_failure and not report.ok:
        raise GradientCheckError(f"dcgraph.check_grads: {report}\n{report.table()}")
    return report


def _leaves(value, path=()) -> list:
    """Paths to every real leaf of a (nested) argument."""
    if isinstance(value, bool) or isinstance(value, (int, np.integer)):
        return []
    if isinstance(value, (float, np.floating)):
        return [path]
    if isinstance(value, np.ndarray):
        if value.dtype.kind != "f":
            return []
        return [path + (idx,) for idx in np.ndindex(value.shape)]
    if isinstance(value, (list, tuple)):
        return [p for k, v in enumerate(value) for p in _leaves(v, path + (k,))]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _leaves(v, path + (k,))]
    return []


def _get(value, path):
    for k in path:
        if value is None:
            return None
        value = value[k]
    return value


def _perturbed(args, i, path, delta):
    args = list(args)
    args[i] = _set(copy.deepcopy(args[i]), path, delta)
    return args


def _set(value, path, delta):
    if not path:
        return type(value)(value + delta)
    k, rest = path[0], path[1:]
    if isinstance(value, np.ndarray) and not rest:
        value[k] += delta
        return value
    if isinstance(value, tuple):
        items = list(value)
        items[k] = _set(items[k], rest, delta)
        return tuple(items)
    value[k] = _set(value[k], rest, delta)
    return value
