"""Public entry points: ``grad``, ``value_and_grad``, ``vjp`` (autograd/JAX conventions) and
``backward(tape, seed)``.

Arguments may be floats, numpy arrays, and nested lists/tuples/dicts of them; gradients come
back in the same structure. Integer and boolean leaves (and other non-numeric values) carry no
adjoint: their gradient entry is None.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from ..tape import PrimitiveCall, Tape
from ..track import track
from .core import Sweep
from .values import Sparse, carries, densify

__all__ = ["grad", "value_and_grad", "vjp", "backward"]


def grad(f, argnums=0):
    """``grad(f, argnums=0)(*args, **kwargs)``: the gradient of the real scalar ``f`` with
    respect to positional argument(s) ``argnums`` (an int, or a tuple giving a tuple)."""
    vg = value_and_grad(f, argnums)

    @functools.wraps(f)
    def gradient(*args, **kwargs):
        return vg(*args, **kwargs)[1]

    return gradient


def value_and_grad(f, argnums=0):
    """``value_and_grad(f, argnums=0)(*args, **kwargs) -> (f(*args, **kwargs), gradient)``."""

    @functools.wraps(f)
    def value_and_gradient(*args, **kwargs):
        nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
        for i in nums:
            if not -len(args) <= i < len(args):
                raise ValueError(f"dcgraph.grad: argnums {i} out of range for {len(args)} "
                                 f"positional arguments")
        nums_n = tuple(i % len(args) for i in nums)
        value, tape = track(f, *args, **kwargs)
        seed = _scalar_seed(value)
        binding = _Binding(f, tape, args, kwargs)
        sweep = Sweep(tape, wrt=binding.nodes_for(nums_n))
        sweep.run(tape, seed)
        grads = tuple(binding.gradient(sweep.adj, i) for i in nums_n)
        return value, grads[0] if isinstance(argnums, int) else grads

    return value_and_gradient


def vjp(f, *args, **kwargs):
    """``vjp(f, *args, **kwargs) -> (value, pullback)``; ``pullback(g)`` returns one gradient
    per positional argument (a tuple), for an output adjoint ``g`` shaped like ``value``."""
    value, tape = track(f, *args, **kwargs)
    binding = _Binding(f, tape, args, kwargs)
    wrt = binding.nodes_for(range(len(args)))

    def pullback(g):
        sweep = Sweep(tape, wrt=wrt)
        sweep.run(tape, _as_seed(value, g))
        return tuple(binding.gradient(sweep.adj, i) for i in range(len(args)))

    return value, pullback


def backward(tape: Tape, seed=1.0) -> dict:
    """Sweep ``tape`` backwards from its returned value with adjoint ``seed``; store each
    node's adjoint in ``node.meta["adjoint"]`` (a float, an ndarray, or a ``Sparse`` for a
    container: position/key -> adjoint) and return ``{argument name: gradient}`` for the tape's
    own arguments (dense, in each argument's structure). Every root argument is active."""
    sweep = Sweep(tape)
    ret = tape.returned
    sweep.run(tape, _as_seed(ret.value if ret is not None else None, seed))
    for node, g in sweep.adj.items():
        if node.tape is not None:
            node.meta["adjoint"] = g
    return {a.name: densify(a.value, sweep.adj.get(a)) for a in tape.arguments}


# -- helpers -----------------------------------------------------------------------------------
def _scalar_seed(value):
    if isinstance(value, (bool, int)) and not isinstance(value, float):
        raise TypeError(f"dcgraph.grad: the function returned an integer ({value!r}); "
                        "gradients need a real scalar output")
    if isinstance(value, np.ndarray):
        if value.size != 1:
            raise TypeError(f"dcgraph.grad: the function returned an array of shape "
                            f"{value.shape}; use vjp for non-scalar outputs")
        return np.ones(value.shape)
    if not isinstance(value, (float, np.floating)):
        raise TypeError(f"dcgraph.grad: the function returned {type(value).__name__}; "
                        "gradients need a real scalar output (use vjp otherwise)")
    return 1.0


def _as_seed(value, g):
    """An output adjoint in the sweep's form: Sparse for containers, arrays for arrays."""
    t = type(value)
    if t in (list, tuple):
        return Sparse({i: _as_seed(v, g[i]) for i, v in enumerate(value) if g[i] is not None})
    if t is dict:
        return Sparse({k: _as_seed(v, g[k]) for k, v in value.items() if g.get(k) is not None})
    if t is np.ndarray:
        return np.broadcast_to(np.asarray(g, dtype=float), value.shape)
    return g


class _Binding:
    """Which root ``Argument`` node receives each positional argument of the call."""

    def __init__(self, f, tape: Tape, args, kwargs):
        self.args = args
        self.slots: list = [None] * len(args)       # (node, position in *args or None)
        arguments = tape.arguments
        nodes = tape.nodes
        k = len(args) + len(kwargs)
        call = nodes[k] if len(nodes) > k else None
        if (type(call) is PrimitiveCall and call.fn is f
                and tuple(call.args) == tuple(arguments[:len(args)])):
            for i in range(len(args)):                  # f itself was recorded as a primitive
                self.slots[i] = (arguments[i], None)
            return
        by_name = {a.name: a for a in arguments}
        params = list(inspect.signature(f).parameters.values())
        positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                           p.POSITIONAL_OR_KEYWORD)]
        star = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None)
        for i in range(len(args)):
            if i < len(positional):
                self.slots[i] = (by_name.get(positional[i]), None)
            elif star is not None:
                self.slots[i] = (by_name.get(star), i - len(positional))

    def nodes_for(self, nums) -> set:
        return {self.slots[i][0] for i in nums if self.slots[i][0] is not None}

    def gradient(self, adj: dict, i: int):
        node, pos = self.slots[i]
        g = adj.get(node) if node is not None else None
        if pos is not None:
            g = g.get(pos) if type(g) is Sparse else None
        value = self.args[i]
        if not carries(value) and not isinstance(value, (list, tuple, dict)):
            return None
        return densify(value, g)
