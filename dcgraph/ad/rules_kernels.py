"""VJP rules for the raw log-density kernels of ``dcgraph.dist.kernels``.

Each kernel is elementwise, so the adjoint of argument ``i`` is ``g`` times the closed-form
partial derivative (``dcgraph.dist.kernels.KERNELS``), summed back to the argument's shape.
Integer arguments (a discrete family's ``x``, Binomial's ``n``) are not differentiable.
"""
from __future__ import annotations

from ..dist import kernels
from .registry import defvjp
from .values import unbroadcast

__all__ = []


def _partial_vjp(kernel, partials, i, name):
    """The value rule for argument ``i`` (called ``name``) of ``kernel``."""
    def kernel_vjp(g, ans, *args, **kwargs):
        d = partials(*args, **kwargs)[i]
        return unbroadcast(args[i] if i < len(args) else kwargs[name], g * d)

    kernel_vjp.__name__ = f"{kernel.__name__}_vjp_{name}"
    kernel_vjp.__qualname__ = kernel_vjp.__name__
    return kernel_vjp


def _register(kernel, partials, names):
    """``None`` partials (probed at a valid point) mark the integer arguments: no rule."""
    probe = partials(*(0.5 if n != "n" else 1.0 for n in names))
    defvjp(kernel, *(None if probe[i] is None else _partial_vjp(kernel, partials, i, n)
                     for i, n in enumerate(names)), names=names)


for _kernel, (_partials, _names) in kernels.KERNELS.items():
    _register(_kernel, _partials, _names)
del _kernel, _partials, _names
