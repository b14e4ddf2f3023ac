"""VJP rules for ``dcgraph.dist``: log densities and the distributions' constructors.

``Normal(mu, sigma).logpdf(x)`` is two primitive calls: the constructor and the (summed) log
density. The density's rule uses the family's closed-form ``grad_logpdf``: the adjoint of ``x``
and, for the distribution object, a ``Sparse`` adjoint keyed by parameter name; the
constructor's rule hands each parameter's adjoint to the argument that supplied it.
"""
from __future__ import annotations

import inspect

from .. import dist
from .registry import MissingRuleError, defnode
from .values import Sparse, unbroadcast

__all__ = []


def _density_rule(sweep, node, g):
    d_node = node.args[0]
    x_node = node.args[1] if len(node.args) > 1 else node.kwargs.get("x")
    d = d_node.value
    try:
        grads = d.grad_logpdf(sweep.value(x_node))
    except NotImplementedError as exc:
        raise MissingRuleError(f"dcgraph.ad: {type(d).__name__}.logpdf has no gradient: {exc} "
                               f"(called at {node.loc})") from None
    if x_node is not None and sweep.wants(x_node) and "x" in grads:
        sweep.add(x_node, unbroadcast(sweep.value(x_node), g * grads["x"]))
    if sweep.wants(d_node):
        sweep.add(d_node, _scaled(g, {name: grads[name] for name in d.params if name in grads}))


def _scaled(g, grads: dict) -> Sparse:
    """``g`` times each parameter's gradient; a nested dict (a wrapper's base) nests."""
    return Sparse({name: _scaled(g, v) if isinstance(v, dict) else g * v
                   for name, v in grads.items()})


def _constructor_rule(sweep, node, g):
    if type(g) is not Sparse:
        return
    try:
        names = list(inspect.signature(node.fn).parameters)
    except (TypeError, ValueError):
        names = []
    for name, adjoint in g.items():
        arg = node.kwargs.get(name)
        if arg is None and name in names and names.index(name) < len(node.args):
            arg = node.args[names.index(name)]
        if arg is not None and sweep.wants(arg):
            if type(adjoint) is Sparse:          # a distribution argument (a wrapper's base)
                sweep.add(arg, adjoint)
            else:
                sweep.add(arg, unbroadcast(sweep.value(arg), adjoint))


defnode(dist.Distribution.logpdf, _density_rule)
defnode(dist.Distribution.logpmf, _density_rule)
for _family in dist.LOGPDF_FAMILIES.values():
    defnode(_family, _constructor_rule)
del _family
