"""``choice_gradients`` and ``accumulate_param_gradients`` from the backward pass over a trace's
tape (``dcgraph.ad.Sweep``).

The differentiated quantity is Gen's: the trace's score plus ``retval · retgrad``, with every
choice value held fixed as a leaf. Before the sweep each choice node is seeded with its own
log density's derivative in its value, and its distribution node with the derivative in the
distribution's parameters (the constructors' rules pass those to the arguments). During the
sweep the rules of ``choice_site`` (record the choice's gradient), ``call_site`` (recurse into
the sub-trace with the call's adjoint as ``retgrad``, hand back its argument gradients) and
``param`` (accumulate ``scale`` times the adjoint in the store) read the current frame.
"""
from __future__ import annotations

import threading

from ..ad import Sparse, Sweep, defnode
from ..ad.values import densify
from .choicemap import ChoiceMap
from .runtime import GenError, param
from .tapeindex import call_site, choice_site, index_of

__all__ = ["trace_gradients", "constructor_rules"]


class _Unseeded:
    """Marks a node the sweep must visit though nothing flowed into it yet."""

    __slots__ = ()

    def __add__(self, other):
        return other

    __radd__ = __add__


UNSEEDED = _Unseeded()


class _Frame:
    __slots__ = ("trace", "selection", "scale", "accumulate", "values", "grads")

    def __init__(self, trace, selection, scale, accumulate):
        self.trace, self.selection = trace, selection
        self.scale, self.accumulate = scale, accumulate
        self.values, self.grads = ChoiceMap(), ChoiceMap()


_local = threading.local()


def _frame() -> _Frame:
    return _local.stack[-1]


def constructor_rules() -> None:
    """The fast lowercase families share their ``dcgraph.dist`` class's constructor rule (made
    on first use: the ``dcgraph.dist`` rules are deferred; idempotent)."""
    from ..ad.registry import load_deferred, lookup
    from .distributions import FAST_FAMILIES
    if lookup(next(iter(FAST_FAMILIES))) is not None:
        return
    load_deferred()
    for cls, base in FAST_FAMILIES.items():
        defnode(cls, lookup(base).node)


def trace_gradients(trace, selection, retgrad, scale: float, accumulate: bool):
    """``(arg_grads, choice_values, choice_gradients)`` of ``trace`` (see the module doc)."""
    constructor_rules()
    tape = trace.tape
    index = index_of(trace)
    sweep = Sweep(tape)
    # choice values and parameters are leaves the score depends on, like arguments
    for node in (*index.choices.values(), *index.calls.values(), *index.params):
        sweep._active[node] = True
    frame = _Frame(trace, selection, scale, accumulate)
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    stack.append(frame)
    try:
        for addr, node in index.choices.items():
            rec = trace.entries[addr]
            sweep.adj[node] = UNSEEDED
            try:
                grads = rec.dist.grad_logpdf(rec.value)
            except NotImplementedError as exc:
                raise GenError(f"choice_gradients: {type(rec.dist).__name__} at address {addr} "
                               f"has no gradient ({exc})") from None
            if "x" in grads:
                sweep.add(node, rec.scale * grads["x"])
            d_node = node.args[0]
            pgrads = {n: rec.scale * grads[n] for n in rec.dist.params if n in grads}
            if pgrads and sweep.wants(d_node):
                sweep.add(d_node, Sparse(pgrads))
        for node in index.calls.values():
            sweep.adj[node] = UNSEEDED
        ret = tape.returned
        if retgrad is not None and ret is not None and ret.inputs:
            sweep.add(ret.inputs[0], retgrad)
        sweep.sweep(tape)
    finally:
        stack.pop()
    arg_grads = tuple(densify(a.value, _dense(sweep.adj.get(a))) for a in tape.arguments)
    return arg_grads, frame.values, frame.grads


def _dense(g):
    return None if g is UNSEEDED else g


def _choice_rule(sweep, node, g):
    frame = _frame()
    addr = node.args[1].value
    sel = frame.selection
    if sel is not None and addr in sel:
        rec = frame.trace.entries[_addr(addr)]
        frame.values.set_value(addr, rec.value)
        frame.grads.set_value(addr, densify(rec.value, _dense(g)))


def _call_rule(sweep, node, g):
    frame = _frame()
    addr = _addr(node.args[1].value)
    sub = frame.trace.entries[addr]
    gf = sub.get_gen_fn()
    retgrad = densify(sub.get_retval(), _dense(g))
    if frame.accumulate:
        arg_grads = gf.accumulate_param_gradients(sub, retgrad, frame.scale)
    else:
        arg_grads, values, grads = gf.choice_gradients(sub, frame.selection[addr], retgrad)
        if not values.is_empty():
            frame.values.set_submap(addr, values)
            frame.grads.set_submap(addr, grads)
    for a, ga in zip(node.args[0].args, arg_grads):
        if ga is not None and sweep.wants(a):
            sweep.add(a, _as_adjoint(ga))


def _as_adjoint(g):
    """A gradient in its value's structure (a list/tuple of item gradients, as combinators
    return for sequence arguments) as the sweep's container adjoint."""
    if type(g) is list or type(g) is tuple:
        from ..ad.values import Sparse
        return Sparse((i, _as_adjoint(x)) for i, x in enumerate(g) if x is not None)
    return g


def _param_rule(sweep, node, g):
    frame = _frame()
    g = _dense(g)
    if frame.accumulate and g is not None:
        tr = frame.trace
        name = node.args[0].value
        tr.store.accumulate(tr.gen_fn, name, frame.scale * densify(node.value, g))


def _addr(a):
    from .address import as_address
    return as_address(a)


defnode(choice_site, _choice_rule)
defnode(call_site, _call_rule)
defnode(param, _param_rule)
