"""Operators and properties on objects of the user's classes, traced into their Python code.

``a + b``, ``-a``, ``c[k]`` and ``obj.prop`` are bytecode: when ``type(a).__add__`` (or the
property's getter) is Python code, the interpreter calls it from C and its body would run
untraced. Instrumented code guards each such instruction the version's opcode table lists
(``GUARDED_OPERATORS``; ``operator_guards`` says when a site takes its guarded path): when
every tested operand's type is in ``PLAIN_TYPES`` (builtin numbers and containers, numpy arrays
and scalars; modules too for attributes) the instruction runs as before; otherwise it calls
``dispatch_binary``/``dispatch_unary``/``dispatch_attribute``
with the operands, the frame's hook and the operator. Those follow Python's dispatch exactly
(``binary_plan``: the in-place method first and the binary one after ``NotImplemented``; a
subclass's overriding reflected method before the left operand's method; the reflected method
after ``NotImplemented``) and log, per attempted method written in Python whose call the
context traces:

    FORWARD or REFLECTED, the method (logged by the hook), the callee's events, its result

and, when the value comes from C code instead (a C slot, a plain attribute, or a method the
context keeps primitive): ``NATIVE`` and the value. Nothing logged: the operation raised
before any method ran. The replay (``replay_operator``) turns each attempt into a
``NestedCall`` of the method (arguments in the order the method received them) whose value is
the operation's unless it is ``NotImplemented``; a ``NATIVE`` value becomes the operator's
primitive node, as unguarded code records it.

Operators on such objects that run while the guards are off stay primitive nodes, which
``ad.dunders`` differentiates by tracing the methods during the backward pass.
"""
from __future__ import annotations

import operator
import types

from .operator_guards import DUNDERS

__all__ = ["binary_plan", "dispatch_binary", "dispatch_unary", "dispatch_attribute",
           "replay_operator", "FORWARD", "REFLECTED", "NATIVE"]

_FUNCTION = types.FunctionType
_UNKNOWN = object()      # not decided yet (``Run.dispatch``)


class Attempt:
    """A marker in the event log: how the next logged method receives the operands."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"<operator {self.name}>"


FORWARD, REFLECTED, NATIVE = Attempt("forward"), Attempt("reflected"), Attempt("native")


def _level(hook):
    """The recorder level owning ``hook`` (None when the frame logs nowhere)."""
    level = getattr(hook, "__self__", None)
    return level if getattr(level, "run", None) is not None and not level.run.closed else None


def _traced(level, method) -> bool:
    return type(method) is _FUNCTION and not level.run.ctx.is_primitive(method, level.depth + 1)


def _native(level, fn, operands):
    value = fn(*operands)
    level.append(NATIVE)
    level.append(value)
    return value


def _attempt(level, hook, kind, method, x, y=None, binary=True):
    """Call ``method`` (traced) on the operands, logging the attempt and its result."""
    level.append(kind)
    callee = hook(method)
    value = callee(x, y) if binary else callee(x)
    level.append(value)
    return value


def binary_plan(fn, a, b) -> list:
    """Python's order of methods for ``fn(a, b)``: [(kind, method)]."""
    method, reflected, inplace = DUNDERS[fn]
    ta, tb = type(a), type(b)
    plan = []
    if inplace is not None and getattr(ta, inplace, None) is not None:
        plan.append((FORWARD, getattr(ta, inplace)))
    first_reflected = tb is not ta and issubclass(tb, ta) and \
        getattr(tb, reflected, None) is not getattr(ta, reflected, None) and \
        getattr(tb, reflected, None) is not None
    if first_reflected:
        plan.append((REFLECTED, getattr(tb, reflected)))
    if getattr(ta, method, None) is not None:
        plan.append((FORWARD, getattr(ta, method)))
    if tb is not ta and not first_reflected and getattr(tb, reflected, None) is not None:
        plan.append((REFLECTED, getattr(tb, reflected)))
    return plan


def dispatch_binary(a, b, hook, fn):
    """``fn(a, b)`` for a binary or in-place operator, tracing the Python methods it runs."""
    level = _level(hook)
    if level is None:
        return fn(a, b)
    run = level.run
    key = (fn, type(a), type(b))
    if run.dispatch is None:
        run.dispatch = {}
    plan = run.dispatch.get(key, _UNKNOWN)
    if plan is _UNKNOWN:
        plan = binary_plan(fn, a, b)
        if not plan or not any(_traced(level, m) for _, m in plan) or any(
                type(m) is _FUNCTION and not _traced(level, m) for _, m in plan):
            plan = None                   # C code only, or a method kept primitive
        if not run.ctx.depth_dependent:   # (a depth-dependent context decides per call)
            run.dispatch[key] = plan
    if plan is None:
        return _native(level, fn, (a, b))
    for kind, method in plan:
        x, y = (a, b) if kind is FORWARD else (b, a)
        if type(method) is _FUNCTION:
            value = _attempt(level, hook, kind, method, x, y)
        else:
            value = method(x, y)          # a C slot: logged only when it gives the value
            if value is not NotImplemented:
                level.append(NATIVE)
                level.append(value)
        if value is not NotImplemented:
            return value
    raise TypeError(f"unsupported operand type(s) for {_SYMBOLS.get(fn, fn.__name__)}: "
                    f"{type(a).__name__!r} and {type(b).__name__!r}")


def dispatch_unary(a, hook, fn):
    """``fn(a)`` for a unary operator, or ``fn(a, k)`` for ``getitem`` (called as
    ``dispatch_unary((a, k), hook, getitem)``), tracing a Python method."""
    level = _level(hook)
    binary = fn is operator.getitem
    obj = a[0] if binary else a
    method = getattr(type(obj), DUNDERS[fn][0], None)
    if level is None or not _traced(level, method):
        operands = a if binary else (a,)
        return fn(*operands) if level is None else _native(level, fn, operands)
    return _attempt(level, hook, FORWARD, method, *(a if binary else (a,)), binary=binary)


def _getter(cls, name: str):
    """The Python getter ``obj.name`` runs for an instance of ``cls`` (a ``property`` found on
    the class, with no ``__getattribute__``/``__getattr__`` of its own), or None."""
    if cls.__getattribute__ is not object.__getattribute__ or hasattr(cls, "__getattr__"):
        return None
    for klass in cls.__mro__:
        attr = klass.__dict__.get(name)
        if attr is not None:
            return attr.fget if type(attr) is property and type(attr.fget) is _FUNCTION \
                else None
    return None


def dispatch_attribute(obj, hook, name: str):
    """``obj.name``, tracing a property's Python getter."""
    level = _level(hook)
    if level is None:
        return getattr(obj, name)
    getters = level.run.dispatch
    if getters is None:
        getters = level.run.dispatch = {}
    key = (type(obj), name)
    getter = getters.get(key, _UNKNOWN)
    if getter is _UNKNOWN:
        getter = getters[key] = _getter(type(obj), name)
    if getter is None or not _traced(level, getter):
        return _native(level, getattr, (obj, name))
    return _attempt(level, hook, FORWARD, getter, obj, binary=False)



_SYMBOLS = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.matmul: "@",
            operator.truediv: "/", operator.floordiv: "//", operator.mod: "%",
            operator.pow: "** or pow()", operator.and_: "&", operator.or_: "|",
            operator.xor: "^", operator.lshift: "<<", operator.rshift: ">>",
            operator.iadd: "+=", operator.isub: "-=", operator.imul: "*=",
            operator.imatmul: "@=", operator.itruediv: "/=", operator.ifloordiv: "//=",
            operator.imod: "%=", operator.ipow: "**=", operator.iand: "&=", operator.ior: "|=",
            operator.ixor: "^=", operator.ilshift: "<<=", operator.irshift: ">>="}


# -- replay --------------------------------------------------------------------------------------
def replay_operator(frame, i: int, fn, operands: tuple) -> bool:
    """At an operator instruction whose operands are ``operands`` (nodes, already popped):
    replay what ``dispatch_*`` logged. True: done (the result node is pushed, or a traced
    method is left to the driver, which continues here afterwards); False: the instruction's
    value is the next event, as for a plain operator (``NATIVE``, consumed here, or nothing
    logged by a dispatch)."""
    r = frame.r
    ev = r.peek()
    if type(ev) is not Attempt:
        return False
    r.pos += 1
    if ev is NATIVE:
        return False
    binary = len(operands) == 2 and fn in DUNDERS and len(DUNDERS[fn]) == 3
    args = list(operands) if ev is FORWARD else [operands[1], operands[0]]
    frame.do_call(i, None, args, {})
    then = _Continue(i, fn, operands, binary)
    if frame.callee is not None:
        frame.after_call = then
    else:                               # the hook kept the method primitive
        then(frame)
    return True


class _Continue:
    """After an attempted method's call node is on the stack: a ``NotImplemented`` from a
    binary operator's method means the next attempt follows (or the operation raised)."""

    __slots__ = ("i", "fn", "operands", "binary")

    def __init__(self, i, fn, operands, binary):
        self.i, self.fn, self.operands, self.binary = i, fn, operands, binary

    def __call__(self, frame) -> None:
        if not self.binary or frame.stack[-1].value is not NotImplemented:
            return
        from .recorder import Missing
        ev = frame.r.peek()
        if type(ev) is not Attempt:
            raise Missing                 # every method declined: the TypeError was raised
        frame.stack.pop()
        if not replay_operator(frame, self.i, self.fn, self.operands):     # a C slot's value
            frame.stack.append(frame.call(self.fn, self.operands, frame.r.take(), self.i))
