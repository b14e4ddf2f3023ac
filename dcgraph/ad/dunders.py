"""Operators on objects of the user's classes: pulled back through the Python methods that
computed them.

``a + b``, ``-a``, ``a[k]`` are bytecode, so the tape records ``operator.add`` and friends as
primitives even when ``type(a).__add__`` is Python code. The numeric rules would be wrong for
such operands, so the sweep asks ``python_operator(node)`` first; when the operator dispatched
to a Python method, ``pull_through_python`` re-runs the operation traced (``apply_operator``
follows Python's dispatch: reflected methods of subclasses first, ``NotImplemented``, in-place
falling back to binary), sweeps that tape with the node's adjoint, and hands the operands'
adjoints back. A property read (``obj.name`` with a Python getter) is pulled back the same way
through its getter. The operands are used as the tape holds them (objects are not versioned).
"""
from __future__ import annotations

import operator
from types import FunctionType

__all__ = ["python_operator", "python_property", "apply_operator", "read_property",
           "pull_through_python", "DUNDERS"]

# operator -> (method, reflected method, in-place method); unary ones have only a method
DUNDERS = {
    operator.add: ("__add__", "__radd__", None), operator.sub: ("__sub__", "__rsub__", None),
    operator.mul: ("__mul__", "__rmul__", None), operator.matmul: ("__matmul__", "__rmatmul__", None),
    operator.truediv: ("__truediv__", "__rtruediv__", None),
    operator.floordiv: ("__floordiv__", "__rfloordiv__", None),
    operator.mod: ("__mod__", "__rmod__", None), operator.pow: ("__pow__", "__rpow__", None),
    operator.iadd: ("__add__", "__radd__", "__iadd__"),
    operator.isub: ("__sub__", "__rsub__", "__isub__"),
    operator.imul: ("__mul__", "__rmul__", "__imul__"),
    operator.imatmul: ("__matmul__", "__rmatmul__", "__imatmul__"),
    operator.itruediv: ("__truediv__", "__rtruediv__", "__itruediv__"),
    operator.ipow: ("__pow__", "__rpow__", "__ipow__"),
    operator.neg: ("__neg__",), operator.pos: ("__pos__",), operator.abs: ("__abs__",),
    operator.getitem: ("__getitem__",),
}


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
    """``fn(*operands)`` with Python's dispatch spelled out as calls, so a tracer follows the
    methods it runs."""
    names = DUNDERS[fn]
    a = operands[0]
    if len(names) == 1:
        return getattr(type(a), names[0])(a, *operands[1:])
    b = operands[1]
    method, reflected, inplace = names
    if inplace is not None and getattr(type(a), inplace, None) is not None:
        result = getattr(type(a), inplace)(a, b)
        if result is not NotImplemented:
            return result
    ta, tb = type(a), type(b)
    first_reflected = tb is not ta and issubclass(tb, ta) and \
        getattr(tb, reflected, None) is not getattr(ta, reflected, None)
    if first_reflected:
        result = getattr(tb, reflected)(b, a)
        if result is not NotImplemented:
            return result
    if getattr(ta, method, None) is not None:
        result = getattr(ta, method)(a, b)
        if result is not NotImplemented:
            return result
    if tb is not ta and not first_reflected and getattr(tb, reflected, None) is not None:
        result = getattr(tb, reflected)(b, a)
        if result is not NotImplemented:
            return result
    raise TypeError(f"unsupported operand type(s) for {fn.__name__}: "
                    f"{ta.__name__!r} and {tb.__name__!r}")


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
    else:
        _pull_traced(sweep, node, g, apply_operator, tuple(range(len(node.args))), node.fn)


def _pull_traced(sweep, node, g, fn, positions, *head) -> None:
    from ..tracer.track import track
    from .core import Sweep
    from .higher import GradientContext
    from .values import Sparse
    wanted = [j for j in positions if sweep.wants(node.args[j])]
    if not wanted:
        return
    values = [sweep.value(a) for a in node.args]
    _, tape = track(_star, fn, *head, *values, ctx=GradientContext())
    inner = Sweep(tape)
    inner.run(tape, g)
    star = next((a for a in tape.arguments if a.name == "operands"), None)
    adj = inner.adj.get(star) if star is not None else None
    if type(adj) is not Sparse:
        return
    for j in wanted:
        sweep.add(node.args[j], adj.get(j + len(head)))


def _star(fn, *operands):
    return fn(*operands)
