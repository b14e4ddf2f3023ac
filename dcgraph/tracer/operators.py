"""Operators and properties on objects of the user's classes, traced into their Python code.

``a + b``, ``-a``, ``c[k]`` and ``obj.prop`` are bytecode: when ``type(a).__add__`` (or the
property's getter) is Python code, the interpreter calls it from C and its body would run
untraced. On versions whose opcode table lists ``GUARDED_OPERATORS`` (3.11), instrumented code
may guard each such instruction: when every operand's type is in ``PLAIN_TYPES`` (builtin
numbers and containers, numpy arrays and scalars; modules too for attributes) the instruction
runs as before; otherwise it calls ``dispatch_binary``/``dispatch_unary``/``dispatch_attribute``
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

Guards cost scalar loops about a quarter of their traced time, so only code that can meet such
objects carries them: a function whose globals or closure name a class defining operators in
Python (``guards_operators``), and every function traced after it in the same run, or every
function of a run with such an object among its arguments (``operator_arguments``). Elsewhere
(and on 3.12/3.13) operators on such objects stay primitive nodes, which ``ad.dunders``
differentiates by tracing the methods during the backward pass.
"""
from __future__ import annotations

import operator
import types
import weakref

import numpy as np

__all__ = ["PLAIN_TYPES", "PLAIN_ATTRIBUTE_TYPES", "DUNDERS", "guards_operators",
           "operator_arguments", "has_python_operators", "python_inplace", "binary_plan",
           "dispatch_binary", "dispatch_unary", "dispatch_attribute", "replay_operator",
           "FORWARD", "REFLECTED", "NATIVE"]

_FUNCTION = types.FunctionType
_UNKNOWN = object()      # not decided yet (``Run.dispatch``)


def _plain_types() -> frozenset:
    builtin = {int, float, complex, bool, str, bytes, bytearray, tuple, list, dict, set,
               frozenset, range, slice, type(None), type, np.ndarray}
    scalars = {t for t in np.sctypeDict.values() if isinstance(t, type)}
    return frozenset(builtin | scalars)


# Types whose operators are C code, whatever the other operand (a user class's reflected
# method is still found: both operands are checked).
PLAIN_TYPES = _plain_types()
# ... and whose attributes are never a user's property (modules too)
PLAIN_ATTRIBUTE_TYPES = PLAIN_TYPES | {types.ModuleType}

def _dunders() -> dict:
    """operator -> (method, reflected method, in-place method); unary ones have only a method.
    ``operator.iadd`` maps to the binary names too: Python falls back to them."""
    table = {}
    for name in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "and",
                 "or", "xor", "lshift", "rshift"):
        method, reflected = f"__{name}__", f"__r{name}__"
        table[getattr(operator, name if hasattr(operator, name) else name + "_")] = \
            (method, reflected, None)
        table[getattr(operator, "i" + name)] = (method, reflected, f"__i{name}__")
    for name in ("neg", "pos", "invert", "getitem"):
        table[getattr(operator, name)] = (f"__{name}__",)
    return table


DUNDERS = _dunders()


_HEAPTYPE = 1 << 9
OPERATOR_NAMES = frozenset(n for names in DUNDERS.values() for n in names if n is not None)


def has_python_operators(cls) -> bool:
    """Does the class ``cls`` (made by a class statement) define an operator in Python?
    Remembered per class (a class changed later keeps its first answer: guards are a tracing
    choice, never a correctness one, as unguarded operators stay primitive nodes)."""
    if not isinstance(cls, type) or not cls.__flags__ & _HEAPTYPE:
        return False
    hit = _verdicts.get(id(cls))
    if hit is not None and hit[0]() is cls:
        return hit[1]
    verdict = _defines_operators(cls)
    if len(_verdicts) >= _VERDICTS_BOUND:
        _verdicts.clear()
    _verdicts[id(cls)] = (weakref.ref(cls), verdict)
    return verdict


_verdicts: dict = {}      # id(class) -> (weak reference to it, has_python_operators)
_VERDICTS_BOUND = 4096


def _defines_operators(cls) -> bool:
    for klass in cls.__mro__:
        if klass.__flags__ & _HEAPTYPE:
            d = klass.__dict__
            if not OPERATOR_NAMES.isdisjoint(d) and any(
                    type(d[name]) is _FUNCTION for name in OPERATOR_NAMES.intersection(d)):
                return True
    return False


def _user_operators(value, ctx) -> bool:
    """Is ``value`` a class defining operators in Python, from a module the context traces?"""
    if not has_python_operators(value):
        return False
    module = getattr(value, "__module__", None)
    return not (isinstance(module, str) and module.partition(".")[0] in ctx.primitive_modules)


def guards_operators(fn, ctx) -> bool:
    """Should ``fn``'s instrumented code guard its operators? When a name it reads globally,
    or a cell it closes over, holds a class defining operators in Python (and the running
    version tables ``GUARDED_OPERATORS``; classes of modules the context ``ctx`` keeps
    primitive do not count: their methods are never traced). Guards cost scalar code about a
    quarter of its traced time, so code that cannot see such a class goes without them; a run
    switches them on for the rest of its calls once one function needed them
    (``Run.instrumented_function``)."""
    if not _TABLED:
        return False
    scope = fn.__globals__
    for name in fn.__code__.co_names:
        if _user_operators(scope.get(name), ctx):
            return True
    for cell in fn.__closure__ or ():
        try:
            if _user_operators(cell.cell_contents, ctx):
                return True
        except ValueError:              # an empty cell
            pass
    return False


def operator_arguments(args: tuple, kwargs: dict, ctx) -> bool:
    """Does a root argument (or an item of a list, tuple or dict argument) belong to a class
    defining operators in Python? Then the whole run guards operators."""
    if not _TABLED:
        return False
    for value in (*args, *kwargs.values()) if kwargs else args:
        kind = type(value)
        if kind in PLAIN_TYPES and kind is not list and kind is not tuple and kind is not dict:
            continue
        items = value.values() if kind is dict else value if kind in (list, tuple) else (value,)
        for item in items:
            if _user_operators(type(item), ctx):
                return True
    return False


def python_inplace(fn, obj) -> bool:
    """Is ``fn`` an in-place operator that ``obj``'s class defines in Python (so ``obj op= x``
    may have changed ``obj``, and an unguarded replay records it as a mutation)?"""
    names = DUNDERS.get(fn)
    return names is not None and len(names) == 3 and names[2] is not None \
        and type(getattr(type(obj), names[2], None)) is _FUNCTION


def _tabled() -> bool:
    from .instrument.versions import opcode_table
    return bool(getattr(opcode_table(), "GUARDED_OPERATORS", None))


_TABLED = _tabled()


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
    plan = run.dispatch.get(key, _UNKNOWN)
    if plan is _UNKNOWN:
        plan = binary_plan(fn, a, b)
        if not plan or not any(_traced(level, m) for _, m in plan) or any(
                type(m) is _FUNCTION and not _traced(level, m) for _, m in plan):
            plan = None                   # C code only, or a method kept primitive
        if run.shared_memo is not None:   # (a depth-dependent context decides per call)
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
