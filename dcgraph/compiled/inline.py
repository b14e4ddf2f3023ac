"""Inline forms: calls the compiled forward pass writes as code instead of a call.

``definline(fn, form)`` registers, for the callable ``fn`` (as recorded in
``PrimitiveCall.fn``), ``form(site) -> (lines, expression, kind) | None``: the lines that
compute the call's value at this call site and the expression of that value, or None to keep
the call. ``kind``: "constant" (the expression is the recorded value itself: later forms and
int folding may rely on it), "typed" (its type is always the recorded value's: no type guard
follows) or None. A form sees only ``Site``: the recorded call, its argument expressions and the
means to write safe code (bound names, literals, a guard that fails to re-tracing); it must
give exactly the call's value for every argument that passes its guards. Layers register
their helpers' forms as data (``dcgraph.models.inline_forms``); this package knows none.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from ..tape import Argument, Constant, PrimitiveCall
from .support import unalias

__all__ = ["definline", "INLINE_FORMS", "Site", "inline_call", "recorded_callee"]

#: callable -> its inline form (see the module)
INLINE_FORMS: dict = {}


def definline(fn, form) -> None:
    """Register ``form`` as the inline form of calls of ``fn`` (see the module)."""
    INLINE_FORMS[fn] = form


class Site:
    """One call as an inline form sees it: ``node`` (the recorded call, whose ``args`` hold
    the recorded values), ``args``/``kwargs`` (expressions of the arguments), ``k`` (its
    number). ``known(x)``: is the expression of argument node ``x`` the recorded value itself
    (a literal, a folded int, a constant an inline form gave)? ``bind(obj, hint)``: a name
    for ``obj``; ``literal(value)``: an expression of it; ``guard(test)``: a line re-tracing
    when ``test`` holds; ``once(key)``: True the first time on this path (shared guards:
    ask last, once the form will return its lines);
    ``local(base)``: a reserved variable name for scratch values; ``typed(x)``: is argument
    node ``x``'s runtime type the recorded one without a check (literal, an inline form's)?
    ``users(x)``: the nodes of the path taking node ``x`` as an input or argument source;
    ``typed_item(x)``: a read of a float64 vector typed by one guard of the vector;
    ``closing(make)``: lines after the forward code."""

    def __init__(self, code, node, k: int, args: list, kwargs: dict):
        self.code, self.node, self.k, self.args, self.kwargs = code, node, k, args, kwargs

    def known(self, x) -> bool:
        u = unalias(x)
        return (type(u) is Constant and u.tape is None) or u in self.code.steps \
            or u in self.code.fixed

    def bind(self, obj, hint: str) -> str:
        return self.code.bind(obj, hint)

    def literal(self, value) -> str:
        t = type(value)
        if t in (int, bool) or value is None or (t is float and math.isfinite(value)):
            return f"({value!r})" if repr(value)[0] == "-" else repr(value)
        return self.code.bind(value, "_k")

    def typed(self, x) -> bool:
        u = unalias(x)
        return (type(u) is Constant and u.tape is None) or u in self.code.typed

    def local(self, base: str) -> str:
        """A variable name for this path that no binding uses (the same one for ``base``)."""
        key = ("inline local", base)
        name = self.code.seen.get(key)
        if name is None:
            name = base
            while name in self.code.ns:
                name += "_"
            self.code.ns[name] = self.code.seen[key] = name
        return name

    def typed_item(self, x) -> list | None:
        """When argument node ``x`` is a read ``a[i]`` at a known int ``i`` of a float64
        vector (an ndarray, as recorded): the guard of ``a``'s type, dtype and dimension (the
        first time on the path; none after), after which ``x`` is a float64 with no check of
        its own (``typed``); else None."""
        u = unalias(x)
        if type(u) is not PrimitiveCall or u.fn is not operator.getitem or len(u.args) != 2 \
                or u.kwargs or u.fn_node is not None or type(u.value) is not np.float64:
            return None
        a, i = u.args
        if not (self.known(i) and type(i.value) is int and type(a.value) is np.ndarray
                and a.value.dtype == np.float64 and a.value.ndim == 1):
            return None
        self.code.typed.add(u)
        va = self.code.v(a)
        if not self.once(("float64 vector", va)):
            return []
        test = (f"_type({va}) is not {self.bind(np.ndarray, '_ndarray')} or {va}.ndim != 1 "
                f"or {va}.dtype != {self.bind(a.value.dtype, '_F8')}")
        return [self.guard(test)]

    def closing(self, make) -> None:
        """Call ``make() -> lines`` once the forward code is written: its lines run after it
        (before any backward code); they may read every value of the path."""
        self.code.closing.append(make)

    def users(self, x) -> list:
        table = self.code.seen.get(("inline users",))
        if table is None:                     # built once per path
            table = self.code.seen[("inline users",)] = {}
            for n in self.code.ids:
                sources = n.source_nodes() if type(n) is Argument else ()
                for i in (*n.inputs, *sources):
                    table.setdefault(i, []).append(n)
        return table.get(x, [])

    def guard(self, test: str) -> str:
        return f"if {test}: raise _GF({self.k})"

    def once(self, key) -> bool:
        key = ("inline", key)
        if key in self.code.seen:
            return False
        self.code.seen[key] = None
        return True


def recorded_callee(node) -> bool:
    """Is the callee of ``node`` the recorded one without a guard (called by name, or a read
    value that is the recorded object: a global or cell read, guarded where it is read)?"""
    u = node.fn_node if node.fn_node is None else unalias(node.fn_node)
    return u is None or (type(u) is Constant and u.value is node.fn)


def inline_call(code, node, k: int) -> list | None:
    """The lines of ``node`` (``code``: the ``PathCode``) by its callable's inline form, or
    None (then it is a call)."""
    try:
        form = INLINE_FORMS.get(node.fn)
    except TypeError:                         # an unhashable callable
        return None
    if form is None or node.mutates is not None or not recorded_callee(node):
        return None
    if node.method and node.args:
        code.mark(node.args[0])               # the method was looked up on its type
    kw = {n: code.v(x) for n, x in node.kwargs.items()}
    out = form(Site(code, node, k, [code.v(x) for x in node.args], kw))
    if out is None:
        return None
    lines, code.val[node], kind = out
    if kind == "constant":                    # the recorded value itself
        code.fixed.add(node)
        if type(node.value) is int:
            code.steps[node] = node.value
    if kind:                                  # its type is the recorded one: no type guard
        code.typed.add(node)
    return lines
