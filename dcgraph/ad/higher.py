"""Second derivatives: ``hessian(f)``, ``hvp(f)``, and ``grad(grad(f))`` (reverse over reverse).

The gradient program of ``f`` at the arguments is the straight-line code compiled replay
writes for the path ``f`` took (``compiled``): the forward values and the backward pass as
plain Python calling the VJP rules. That program is traced like any user code (with
``GradientContext``, which traces into ``dcgraph.ad``'s own functions so the rules' arithmetic
is recorded), and its tape is swept backwards once per output adjoint: ``hvp`` seeds ``v``,
``hessian`` each unit vector, and the rule of a gradient function (``grad`` marks the
functions it returns) seeds the outer sweep's adjoint, so ``grad(grad(f))`` nests.

A path compiled replay does not support (container mutation, exceptions, generators) or a
rule whose own derivative is missing is refused with ``MissingRuleError`` naming the reason.
"""
from __future__ import annotations

import sys

import numpy as np

from ..tracer.context import Context
from ..tracer.track import traced_call
from .compiled import NotCompilable, compile_gradient
from .core import Sweep
from .registry import MissingRuleError
from .values import Sparse, densify

__all__ = ["hessian", "hvp", "GradientContext", "gradient_rule"]


class GradientContext(Context):
    """The default policy, except that ``dcgraph.ad``'s functions (rules, adjoint helpers,
    the compiled runtime) are traced: a traced gradient program shows the rules' arithmetic."""

    def is_primitive(self, fn, depth: int) -> bool:
        module = getattr(fn, "__module__", None) or ""
        if module.startswith("dcgraph.ad."):
            return False
        return super().is_primitive(fn, depth)


def _nums(argnums) -> tuple:
    from .api import _argnums
    return _argnums(argnums)


def _gradient_program(f, nums: tuple, args: tuple, kwargs: dict, callers: int):
    """``program(*args) -> gradient`` (one entry per ``nums``, dense, in each argument's
    structure) as straight-line code for the path ``f`` takes at ``args``. ``callers``: the
    frames between the user's call and this one (``traced_call``): ``f`` gets the recursion
    depth it has called in the user's call's place."""
    from .api import _Binding, _scalar_seed
    _, tape = traced_call(f, args, kwargs, callers=callers + 1)
    binding = _Binding(f, tape, args, kwargs)
    wrt = binding.nodes_for(nums)
    try:
        cg = compile_gradient(tape, wrt, args, kwargs, f, _scalar_seed)
    except NotCompilable as exc:
        raise MissingRuleError(f"dcgraph: second derivatives of {getattr(f, '__name__', f)} "
                               f"need a path compiled replay supports: {exc}") from None
    run = cg._fn
    order = {node: k for k, node in enumerate(cg.wrt)}
    slots = [(order.get(binding.slots[i][0]), binding.slots[i][1]) for i in nums]

    def gradient_program(*a):
        _, adjoints = run(a, kwargs)
        out = []                   # a loop, not a generator: the tracer follows it
        for j in range(len(nums)):
            k, pos = slots[j]
            out.append(_dense_entry(a[nums[j]], adjoints, k, pos))
        return tuple(out)

    return gradient_program


def _dense_entry(value, adjoints, k, pos):
    g = adjoints[k] if k is not None else None
    if pos is not None:
        g = g.get(pos) if type(g) is Sparse else None
    return densify(value, g)


def _second_sweep(f, nums, args, kwargs, seed, wrt_nums, callers: int) -> tuple:
    """Adjoints, for the positional arguments ``wrt_nums``, of the gradient program of ``f``
    (gradients for ``nums``) pulled back from the output adjoint ``seed`` (one per entry);
    ``callers`` as for ``_gradient_program``."""
    from .api import _Binding, _as_seed
    program = _gradient_program(f, nums, args, kwargs, callers + 1)
    grads, tape = traced_call(program, args, {}, GradientContext(), callers=callers + 1)
    binding = _Binding(program, tape, args, {})
    sweep = Sweep(tape, wrt=binding.nodes_for(wrt_nums), callers=callers + 1)
    sweep.run(tape, _as_seed(grads, seed))
    return tuple(binding.gradient(sweep.adj, i, args) for i in wrt_nums)


def hvp(f, argnums: int = 0):
    """``hvp(f, argnums=0)(*args, v, **kwargs)``: the Hessian of the real scalar ``f`` with
    respect to positional argument ``argnums``, times ``v`` (shaped like that argument)."""
    if not isinstance(argnums, int) or isinstance(argnums, bool):
        raise TypeError(f"dcgraph.hvp: argnums must be an int, got {argnums!r}")

    def hessian_vector_product(*args_and_v, **kwargs):
        *args, v = args_and_v
        args = tuple(args)
        i = _index(argnums, args, "hvp")
        return _second_sweep(f, (i,), args, kwargs, (v,), (i,), 1)[0]

    return hessian_vector_product


def hessian(f, argnums: int = 0):
    """``hessian(f, argnums=0)(*args, **kwargs)``: second derivatives of the real scalar ``f``
    with respect to positional argument ``argnums`` (a float or an array): shape
    ``x.shape + x.shape`` for an array ``x``, a float for a float."""
    if not isinstance(argnums, int) or isinstance(argnums, bool):
        raise TypeError(f"dcgraph.hessian: argnums must be an int, got {argnums!r}")

    def hessian_of_f(*args, **kwargs):
        args = tuple(args)
        i = _index(argnums, args, "hessian")
        x = args[i]
        if isinstance(x, (bool, int, np.integer)) or (
                isinstance(x, np.ndarray) and x.dtype.kind not in "f"):
            raise TypeError(f"dcgraph.hessian: argument {i} must be a real float or float "
                            f"array, got {type(x).__name__}")
        from .api import _Binding, _as_seed
        program = _gradient_program(f, (i,), args, kwargs, 1)
        grads, tape = traced_call(program, args, {}, GradientContext(), callers=1)
        binding = _Binding(program, tape, args, {})
        wrt = binding.nodes_for((i,))
        if isinstance(x, (float, np.floating)):
            sweep = Sweep(tape, wrt=wrt, callers=1)
            sweep.run(tape, _as_seed(grads, (1.0,)))
            return float(binding.gradient(sweep.adj, i, args))
        x = np.asarray(x)
        rows = []
        for k in range(x.size):
            e = np.zeros(x.size)
            e[k] = 1.0
            sweep = Sweep(tape, wrt=wrt, callers=1)
            sweep.run(tape, _as_seed(grads, (e.reshape(x.shape),)))
            rows.append(np.asarray(binding.gradient(sweep.adj, i, args), dtype=float))
        return np.array(rows).reshape(x.shape + x.shape)

    return hessian_of_f


def _index(argnums: int, args: tuple, name: str) -> int:
    if not -len(args) <= argnums < len(args):
        raise ValueError(f"dcgraph.{name}: argnums {argnums} out of range for {len(args)} "
                         f"positional arguments")
    return argnums % len(args)


def gradient_rule(f, argnums, with_value: bool):
    """The node rule of a function ``grad(f, argnums)`` (or ``value_and_grad``) returned: the
    outer sweep's adjoint of its result pulled back to its arguments (reverse over reverse).
    The code it traces gets the recursion depth ``f`` has called in the user's call's place
    (``Sweep.callers``)."""
    nums_given = argnums

    def rule(sweep, node, g):
        args = tuple(sweep.value(a) for a in node.args)
        kwargs = {k: sweep.value(a) for k, a in node.kwargs.items()}
        nums = tuple(i % len(args) for i in _nums(nums_given))
        single = isinstance(nums_given, int)
        gg = g.get(1) if with_value and type(g) is Sparse else g
        result = node.value[1] if with_value else node.value
        seed = _entries(densify(result, gg) if gg is not None else None, single, len(nums))
        wanted = tuple(j for j, a in enumerate(node.args) if sweep.wants(a))
        if not wanted:
            return
        gv = g.get(0) if with_value and type(g) is Sparse else None
        callers = sweep.callers(sys._getframe())
        if gv is not None:                  # the value's own adjoint: gv times f's gradient
            from .api import value_and_grad
            first = value_and_grad(f, wanted)._dcgraph_evaluate(args, kwargs, callers + 1)[1]
            for j, d in zip(wanted, first):
                sweep.add(node.args[j], _as_adjoint(args[j], _scaled(d, gv)))
        if seed is None:
            return
        adjoints = _second_sweep(f, nums, args, kwargs, seed, wanted, callers)
        for j, adj in zip(wanted, adjoints):
            sweep.add(node.args[j], _as_adjoint(args[j], adj))

    return rule


def _entries(g, single: bool, n: int):
    """The outer adjoint of a gradient result as one entry per differentiated argument."""
    if g is None:
        return None
    if single:
        return (g,)
    if type(g) is Sparse:
        return tuple(g.get(k) for k in range(n))
    return tuple(g)


def _scaled(d, s):
    """A dense gradient (nested lists/tuples/dicts of arrays and floats) times scalar ``s``."""
    if isinstance(d, (list, tuple)):
        return type(d)(_scaled(v, s) for v in d)
    if isinstance(d, dict):
        return {k: _scaled(v, s) for k, v in d.items()}
    return None if d is None else d * s


def _as_adjoint(value, dense):
    from .values import as_adjoint
    return as_adjoint(value, dense)
