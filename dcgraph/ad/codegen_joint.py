"""Compiled replay of the registry's two call-saving rule kinds (``registry.defjoint``,
``registry.defscatter``), a mixin of ``codegen.GradientCode`` beside ``BackwardEmitter``.

* joint: one call gives the adjoints of a node's arguments and of the arguments of an inner
  call among them (``x |= normal(loc, scale)``: the statement and its factory in one call);
* scatter: the adjoint of an array argument is zero but at one key (an int or a slice), added
  in place into one buffer per array, as reads ``a[key]`` are (``codegen_backward.array_read``).
"""
from __future__ import annotations

import numpy as np

from ..compiled.inline import Site
from ..compiled.support import unalias
from ..tape import PrimitiveCall
from .codegen_backward import NONE, SURE, _mode

__all__ = ["JointRules"]


class JointRules:
    """``joint_rule`` and ``scatter_rule`` (they read the generator's state)."""

    def local(self, base: str) -> str:
        """A local variable name no namespace binding uses (reserved in the namespace)."""
        name = base
        while name in self.ns:
            name += "_"
        self.ns[name] = None
        return name

    def joint_rule(self, node, g, rule) -> bool:
        """One call for the adjoints of the arguments and of those of argument ``p`` when that
        is a positional call of a function with a joint rule (False: use the value rules)."""
        p, joints, forms = rule.joint
        args = node.args
        inner = unalias(args[p]) if not node.kwargs and len(args) > p else None
        if type(inner) is not PrimitiveCall or inner.kwargs or inner.mutates is not None:
            return False
        try:
            joint = joints.get(inner.fn)
        except TypeError:                # an unhashable callable
            return False
        if joint is None:
            return False
        targets = [x for i, x in enumerate(args) if i != p] + list(inner.args)
        wants = tuple(self.wants(x) for x in targets)
        if not any(wants):
            return True
        name = self.local(f"_j{self.ids[node]}")
        form = forms.get(inner.fn)
        a_exprs = [self.v(x) for x in args]
        written = None if form is None else \
            form(Site(self, node, self.ids[node], a_exprs, {}), g, wants)
        if written is None:
            written = f"{self.bind(joint)}({', '.join([repr(wants), g, self.v(node)] + a_exprs)})"
            self.emit(f"{name} = {written}")
            parts = [f"{name}[{k}]" for k in range(len(targets))]
        else:                            # a form's tuple, one item per target: unpacked
            skip = self.seen.get("joint: unused item") or \
                self.seen.setdefault("joint: unused item", self.local("_jx"))
            parts = [self.local(f"{name}_{k}") if wants[k] else skip
                     for k in range(len(targets))]
            self.emit(f"{', '.join(parts)} = {written}")
        for k, x in enumerate(targets):
            if wants[k]:
                self.add(x, parts[k], _mode(x))
        return True

    def scatter_rule(self, node, g, rule) -> bool:
        """``buffer[key] += values`` for argument ``p``, a float64 vector, from the call
        ``fn(g, ans, *args) -> (key, values)``: into its buffer when this call owns one, or a
        new buffer when it has no adjoint yet (False otherwise: use the value rules)."""
        p, fn, form = rule.scatter
        args = node.args
        if node.kwargs or len(args) <= p:
            return False
        a = args[p]
        if any(self.wants(x) for i, x in enumerate(args) if i != p):
            return False
        if not self.wants(a):
            return True
        if not (type(a.value) is np.ndarray and a.value.dtype == np.float64 and a.value.ndim == 1):
            return False
        st, name = self.state.get(a, NONE), self.g(a)
        fresh = st == NONE and not self.cond
        if not fresh and not (st == SURE and a in self.owned):
            return False
        if type(node.value) is np.ndarray and node not in self.dense:
            self.emit(f"if _type({g}) is _Sparse: {g} = _dense({self.v(node)}.shape, {g}, "
                      f"{self.v(node)}.dtype)")
        a_exprs = [self.v(x) for x in args]
        written = None if form is None else \
            form(Site(self, node, self.ids[node], a_exprs, {}), g)
        if written is not None:                   # the rule's result as code
            key, part = written
        else:
            call = ", ".join([g, self.v(node)] + a_exprs)
            key, part = self.local(f"_at{self.ids[node]}"), self.local(f"_adj{self.ids[node]}")
            self.emit(f"{key}, {part} = {self.bind(fn)}({call})")
        if fresh:
            self.know_shape(a)
            self.mark(a)
            self.emit(f"{name} = {self.bind(np.zeros, '_zeros')}({a.value.shape!r})")
            self.emit(f"{name}[{key}] = {part}")
            self.state[a] = SURE
            self.fresh.add(a)
            self.dense.add(a)
            self.owned.add(a)
        else:
            self.emit(f"{name}[{key}] += {part}")
        return True
