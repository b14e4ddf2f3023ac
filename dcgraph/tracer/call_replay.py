"""Replaying a call instruction: a primitive call, a traced callee, or a traced generator made.

``CallReplay`` is the part of ``Frame`` (module ``frame_replay``, its only subclass) that the
call opcodes use: the hook logged the callable, and the next event says what followed, a traced
callee's ``EntryMark`` (a ``NestedCall`` whose child ``Frame`` the driver replays next), a
traced generator's ``MadeMark`` (module ``generators``) or the call's value (a
``PrimitiveCall``, which becomes the latest version of the container it mutates in place).
Method calls ``obj.name(...)`` are normalised to the function on obj's type with obj first.
"""
from __future__ import annotations

import types

from .instrument.semantics311 import Placeholder
from .recorder import MARK_TYPES, EntryMark, MadeMark, Missing
from .events import CALL_MARK
from . import awaiting, generators
from ..tape import Constant, NestedCall, Node, Phi, PrimitiveCall, Raise, Return, Tape
from ..tape.nodes import append_call
import numpy as np

from . import ops
from .aliasing import possible_writes
from .classes import instance_self
from .summary import value_type

ndarray = np.ndarray
_RESUMERS = (next, types.GeneratorType.__next__, types.GeneratorType.send,
             types.GeneratorType.throw, types.CoroutineType.send, types.CoroutineType.throw)
_METHOD_DESCRIPTOR = types.MethodDescriptorType
_MODULE = types.ModuleType
_FUNCTION = types.FunctionType
_UFUNC = np.ufunc
_SENDERS = (types.GeneratorType.send, types.CoroutineType.send)

__all__ = ["CallReplay"]

def _owner_node(fn_node, owner):
    """The node holding a bound method's ``__self__``: the object its lookup started from."""
    while isinstance(fn_node, Phi):
        fn_node = fn_node.source
    if isinstance(fn_node, PrimitiveCall) and fn_node.fn is getattr and fn_node.args \
            and fn_node.args[0].value is owner:
        return fn_node.args[0]
    return None


def _mutated_node(fn, args, kwargs, k):
    """The argument node a call of ``fn`` mutates in place, if any (a ufunc's ``out=`` too);
    ``k`` is ``ops.mutated_argument(fn)``."""
    if k is not None and k < len(args):
        target = args[k]
    elif kwargs and "out" in kwargs and type(getattr(kwargs["out"], "value", None)) is ndarray:
        target = kwargs["out"]           # any function's out= array
    elif type(fn) is np.ufunc and len(args) > fn.nin \
            and type(getattr(args[fn.nin], "value", None)) is ndarray:
        target = args[fn.nin]            # a ufunc's positional out
    elif len(args) > 2 and (k := ops.out_position(fn)) is not None and k < len(args) \
            and type(getattr(args[k], "value", None)) is ndarray:
        target = args[k]                 # np.dot(a, b, out), np.cumsum(a, 0, None, out)
    else:
        return None
    if isinstance(target, Constant) and target.tape is None:
        return None                      # a literal is never a container we track
    return target if isinstance(target, Node) else None


class CallReplay:
    """The call opcodes' part of a ``Frame``: its methods use the frame's ``r``, ``stack``,
    ``callee`` and node helpers (``add``, ``call``, ``mutation``, ``constant``, ``loc``)."""

    def do_call(self, i: int, callee, args: list, kwargs: dict) -> None:
        """The callable was logged by the hook or the site, or not at all where the site's
        callable was the one it expects (``CodeInfo.expected``; else a ``CALL_MARK`` precedes
        it) or a method site called the object's method (``CodeInfo.method_sites``: the
        callable is ``getattr(obj, name)``; else a ``CALL_MARK`` precedes it); a traced
        callee's entry mark may follow."""
        r = self.r
        log, pos = r.log, r.pos
        expected = self.info.expected
        if expected and (f := expected.get(i)) is not None and (
                pos >= len(log) or log[pos] is not CALL_MARK):
            ev = log[pos] if pos < len(log) else None   # the site logged nothing: it was ``f``
        elif expected and i in expected:
            r.pos = pos = pos + 1        # ``CALL_MARK``: the callable follows, as at any site
            f = r.take()
            ev = r.peek()
        elif (methods := self.info.method_sites) and i in methods and (
                pos >= len(log) or log[pos] is not CALL_MARK):
            f = getattr(callee.obj.value, methods[i])   # logged nothing (``method_sites``)
            ev = log[pos] if pos < len(log) else None
        elif methods and i in methods:
            r.pos = pos = pos + 1        # ``CALL_MARK``: the callable follows
            f = r.take()
            ev = r.peek()
        elif pos + 1 < len(log) and type(f := log[pos]) not in MARK_TYPES:
            ev = log[pos + 1]            # ``r.take()`` and ``r.peek()``, inlined
            r.pos = pos + 1
        else:
            f = r.take()
            ev = r.peek()
        fn, fn_node, method, via = f, None, False, None
        if type(callee) is Placeholder:
            obj = callee.obj
            if obj is None:
                via = callee.name
            elif type(obj) is not Placeholder or type(getattr(f, "__self__", None)) is not _MODULE:
                fn, fn_node, method, args = self._method(i, f, callee, args)   # (reads no log)
            # else ``module.name(...)`` of a global module: the function itself
        elif isinstance(callee, Node) and not (type(callee) is Constant and callee.tape is None):
            fn_node = callee
        if ev is None or type(ev) in MARK_TYPES:
            ev = r.peek()
            if type(ev) is EntryMark:
                self.nested_call(i, ev, f, fn, fn_node, method, args, kwargs, via)
                return
            if type(ev) is MadeMark:
                generators.made(self, i, f, fn, fn_node, method, args, kwargs, via)
                return
            value = r.take()
        else:
            value = ev                   # ``take`` after ``peek``: the same event
            r.pos += 1
        if r.resumed is not None and fn in _RESUMERS and args:
            segment = generators.resumed_item(
                self, value, args[0].value,
                args[1] if len(args) == 2 and fn in _SENDERS else None, fn)
            if segment is not None:      # next(g), g.send(v) of a traced generator: its segment
                self.stack.append(segment)
                return
        if type(fn) is _METHOD_DESCRIPTOR and args and fn in r.future_methods:
            linked = awaiting.primitive(self, r.future_methods[fn], args, value, i)
            if linked is not None:       # a future's or task's result: the node it came from
                self.stack.append(linked)
                return
        args = tuple(args)
        node = append_call(self.tape, PrimitiveCall, fn, args, kwargs, value, self.ops[i].loc,
                           fn_node, method)
        node.via = via
        if type(value) is ndarray and r.aliasing.writes:
            r.aliasing.noted(node)
        known = r.mutated_arguments.get(id(fn))   # ``ops.mutated_argument``, once per callable
        if known is not None and known[0] is fn:
            k = known[1]
        else:
            k = ops.mutated_argument(fn)
            r.mutated_arguments[id(fn)] = (fn, k)
        if k is None and not kwargs and (
                len(args) < 2 or len(args) == 2 and type(fn) is not _UFUNC):
            target = None                # (``_mutated_node``'s every case excluded)
        else:
            target = _mutated_node(fn, args, kwargs, k)
        if target is not None:
            self.mutation(node, target)
            if value is not None and value is not node.value:
                self.stack.append(self.call(ops.call_result, (node,), value, i))
            else:
                self.stack.append(r.literal(None) if value is None else node)
            return
        arrays = False
        for a in args:
            if type(a.value) is ndarray:
                arrays = True
                break
        else:
            if kwargs:
                arrays = any(type(a.value) is ndarray for a in kwargs.values())
        if arrays and r.ctx.may_write(fn):
            possible_writes(self, node, i)          # an array handed to unknown code
        self.stack.append(node)

    def _method(self, i, f, callee, args):
        """Normalise ``obj.name(...)``: a method of obj's type with obj as argument 0."""
        obj = callee.obj
        owner = getattr(f, "__self__", None)
        if isinstance(obj, Placeholder):      # a global not logged: its value is f's owner
            if owner is None or isinstance(owner, types.ModuleType):
                return f, None, False, args
            obj = self.constant(obj.name, owner, i)
        if owner is obj.value and not isinstance(owner, types.ModuleType):
            if type(f) is types.MethodType:
                return f.__func__, None, True, [obj] + args
            descriptor = getattr(value_type(owner), callee.name, None)
            if descriptor is not None and callable(descriptor) and not isinstance(owner, type):
                return descriptor, None, True, [obj] + args
        if isinstance(obj.value, types.ModuleType):
            return f, None, False, args
        getter = self.call(getattr, (obj, self.r.literal(callee.name)), f, i)
        return f, getter, False, args

    def nested_call(self, i, ev, f, fn, fn_node, method, args, kwargs, via) -> None:
        bound = type(f) is types.MethodType and not method
        called_object = not bound and type(f) is not _FUNCTION \
            and instance_self(f, ev.info.code)   # its __call__ runs
        holder = fn_node
        if called_object and holder is None:      # the object's node, before the call's
            holder = self.r.resolve(self.constant(via or type(f).__name__, f, i))
        node = append_call(self.tape, NestedCall, fn, tuple(args), kwargs, None, self.loc(i),
                           fn_node, method)
        node.via = via
        target = f.__func__ if type(f) is types.MethodType else f
        child = Tape(ev.info.code, target, parent=node)
        node.child = child
        self.r.pos += 1
        frame = type(self)(self.r, ev.info, child)   # a Frame
        if bound:
            args = [_owner_node(fn_node, f.__self__)] + list(args)   # self, where known
        elif called_object:                      # a callable object: its __call__, self first
            args = [holder] + list(args)
            child.fn = type(f).__call__
        try:
            frame.enter(args, kwargs)
        except Missing:                # interrupted in its prologue (a KeyboardInterrupt)
            self.r.pending_raises.append(child.append(Raise((), None)))
            child.raised = True
            raise
        frame.call_node = node
        self.callee = frame            # replayed by the driver; then ``returned_from``

    def returned_from(self, frame: "Frame") -> None:
        """The traced callee ``frame`` was replayed: its call's value is the next event."""
        node = frame.call_node
        then, self.after_call = self.after_call, None
        try:
            value = self.r.take()      # Missing here: the callee raised, so does this call
        except Missing:
            ret = frame.tape.returned
            if type(ret) is Return:    # it returned, and the caller was interrupted at once
                node.value = node.result = ret.value
            raise
        if self.r.summary:             # the same object: one summary (a list's are fresh)
            ret = frame.tape.returned
            if type(ret) is Return:
                value = ret.value
        node.value = node.result = value
        self.stack.append(node)
        if then is not None:
            then(self)

    def star_arguments(self, i: int, node) -> list:
        """Nodes for the elements of a ``*args`` tuple (the tuple's own inputs when it was
        built here, else ``getitem`` projections)."""
        if isinstance(node, PrimitiveCall) and node.fn in (ops.build_tuple, tuple) \
                and node.fn is ops.build_tuple and len(node.args) == len(node.value):
            return list(node.args)
        value = node.value
        if isinstance(value, (tuple, list)):
            return [self.call(__import__("operator").getitem, (node, self.r.literal(k)), v, i)
                    for k, v in enumerate(value)]
        return [node]

    def star_keywords(self, i: int, node) -> dict:
        value = node.value
        if isinstance(node, PrimitiveCall) and node.fn is ops.build_const_key_dict:
            return dict(zip(node.args[-1].value, node.args[:-1]))
        if isinstance(value, dict):
            import operator
            return {k: self.call(operator.getitem, (node, self.r.literal(k)), v, i)
                    for k, v in value.items()}
        return {}
