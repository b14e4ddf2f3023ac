"""Operators on objects of the user's classes recorded as primitive nodes: pulled back through
the Python methods that computed them.

The tracer records ``a + b``, ``-a``, ``a[k]`` and property reads on such objects as nested
calls of the methods (``tracer.operators``), and the sweep goes through their bodies. What still
arrives here as a primitive ``operator.add`` and friends: operators that ran before the run's
guards were switched on (``tracer.operator_guards``), methods the context keeps primitive, and
property reads in such code. The numeric rules would be wrong for
such operands, so the sweep asks ``python_operator(node)`` first; when the operator dispatched
to a Python method, ``pull_through_python`` re-runs the operation traced (``apply_operator``
follows Python's dispatch: reflected methods of subclasses first, ``NotImplemented``, in-place
falling back to binary), sweeps that tape with the node's adjoint, and hands the operands'
adjoints back. A property read (``obj.name`` with a Python getter) is pulled back the same way
through its getter. The operands are used as the tape holds them (objects are not versioned).
"""
from __future__ import annotations

import sys
from types import FunctionType

from ..tracer.operator_guards import DUNDERS
from ..tracer.operators import FORWARD, binary_plan

__all__ = ["python_operator", "python_property", "apply_operator", "read_property",
           "pull_through_python", "DUNDERS"]


def _python_method(obj, name) -> bool:
    return name is not None and type(getattr(type(obj), name, None)) is FunctionType


def python_operator(fn, values) -> bool:
    """Did ``fn`` applied to ``values`` dispatch to a Python method of an operand's class?"""
    names = DUNDERS.get(fn) if type(fn) is type(len) else None
    if names is None or not values:
        return False
    if len(names) == 1:
        return _python_method(values[0], names[0])
    a, b = values[0], values[1] if len(values) > 1 else None
    method, reflected, inplace = names
    return (_python_method(a, inplace) or _python_method(a, method)
            or _python_method(b, reflected))


def apply_operator(fn, *operands):
    """``fn(*operands)`` with Python's dispatch spelled out as calls (``binary_plan``), so a
    tracer follows the methods it runs."""
    names = DUNDERS[fn]
    a = operands[0]
    if len(names) == 1:
        return getattr(type(a), names[0])(a, *operands[1:])
    b = operands[1]
    for kind, method in binary_plan(fn, a, b):
        result = method(a, b) if kind is FORWARD else method(b, a)
        if result is not NotImplemented:
            return result
    raise TypeError(f"unsupported operand type(s) for {fn.__name__}: "
                    f"{type(a).__name__!r} and {type(b).__name__!r}")


def read_property(obj, name):
    """``obj.name`` for a property, with its getter called explicitly (a tracer follows it)."""
    return _property(obj, name).fget(obj)


def _property(obj, name):
    for klass in type(obj).__mro__:
        attr = klass.__dict__.get(name)
        if attr is not None:
            return attr if type(attr) is property else None
    return None


def python_property(obj, name) -> bool:
    """Is ``obj.name`` a property whose getter is a Python function (and nothing overrides
    attribute lookup)?"""
    prop = _property(obj, name) if type(name) is str else None
    return (prop is not None and type(prop.fget) is FunctionType
            and type(obj).__getattribute__ is object.__getattribute__)


def pull_through_python(sweep, node, g) -> None:
    """Pull ``g`` back through ``node`` (an operator that ran Python methods, or a property
    read) by tracing it."""
    if node.fn is getattr:
        _pull_traced(sweep, node, g, read_property, (0,))
        return
    inplace = DUNDERS[node.fn][2] if len(DUNDERS[node.fn]) == 3 else None
    if inplace is not None and _python_method(node.args[0].value, inplace) \
            and any(sweep.wants(a) for a in node.args):
        # the method changed the object; re-running it on the object as it is now would
        # start from the changed state: refuse rather than return a wrong gradient
        from .registry import MissingRuleError
        loc = node.loc
        source = f": {loc.source}" if loc is not None and loc.source else ""
        method = f"{type(node.args[0].value).__qualname__}.{inplace}"
        raise MissingRuleError(
            f"dcgraph.ad: the in-place operator method {method} (called at {loc}{source}) was "
            f"recorded as a primitive (not traced into on Python 3.12/3.13, nor in code that "
            f"cannot see the class), and its gradient cannot be rebuilt after it changed the "
            f"object; write the operation out of place (a = a + b)")
    _pull_traced(sweep, node, g, apply_operator, tuple(range(len(node.args))), node.fn)


def _pull_traced(sweep, node, g, fn, positions, *head) -> None:
    """Trace ``fn(*head, *operands)`` with the operands' values (as deep as the user's call
    could have run it: ``Sweep.callers``), sweep that tape with ``g`` and add the adjoints of
    the ``positions`` the sweep wants."""
    from ..tracer.track import traced_call
    from .core import Sweep
    from .higher import GradientContext
    from .values import Sparse
    wanted = [j for j in positions if sweep.wants(node.args[j])]
    if not wanted:
        return
    values = [sweep.value(a) for a in node.args]
    callers = sweep.callers(sys._getframe())
    # _star stands where the user's function stood; ``fn`` (apply_operator, read_property)
    # where the interpreter called the method from C, which took no frame: given back too
    _, tape = traced_call(_star, (fn, *head, *values), {}, GradientContext(),
                          callers=callers + 1)
    inner = Sweep(tape, callers=callers)
    inner.run(tape, g)
    star = next((a for a in tape.arguments if a.name == "operands"), None)
    adj = inner.adj.get(star) if star is not None else None
    if type(adj) is not Sparse:
        return
    for j in wanted:
        sweep.add(node.args[j], adj.get(j + len(head)))


def _star(fn, *operands):
    return fn(*operands)
