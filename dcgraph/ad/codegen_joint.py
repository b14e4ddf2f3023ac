"""Compiled replay of the registry's two call-saving rule kinds (``registry.defjoint``,
``registry.defscatter``), a mixin of ``codegen.GradientCode`` beside ``BackwardEmitter``.

* joint: one call gives the adjoints of a node's arguments and of the arguments of an inner
  call among them (``x |= normal(loc, scale)``: the statement and its factory in one call);
* scatter: the adjoint of an array argument is zero but at one key (an int or a slice), added
  in place into one buffer per array, as reads ``a[key]`` are (``codegen_backward.array_read``).

A buffer made by ``zeros`` keeps the literal positions written so far (``nonzero``): a write
at literal positions none of them covers is an assignment (``g0[3] = g``), not ``+=`` (which
reads and adds a numpy scalar); any other write forgets them (``+=`` from then on).
"""
from __future__ import annotations

import re

import numpy as np

from ..compiled.inline import Site
from ..compiled.support import unalias
from ..tape import PrimitiveCall
from .codegen_backward import NONE, SURE, _mode

__all__ = ["JointRules"]

_INT_KEY = re.compile(r"\(?(-?[0-9]+)\)?$")
_SLICE_KEY = re.compile(r"([0-9]+):([0-9]+)$")
_MANY = 4096                             # slices longer than this are not tracked


class JointRules:
    """``joint_rule`` and ``scatter_rule`` (they read the generator's state)."""

    def local(self, base: str) -> str:
        """A local variable name no namespace binding uses (reserved in the namespace)."""
        name = base
        while name in self.ns:
            name += "_"
        self.ns[name] = None
        return name

    def positions(self, a, key: str):
        """The set of positions of ``a``'s buffer (first axis) the literal key text ``key``
        writes, or None (not literal, or out of range)."""
        n = a.value.shape[0] if getattr(a.value, "ndim", 0) else 0
        m = _INT_KEY.match(key)
        if m is not None:
            k = int(m.group(1))
            k += n if k < 0 else 0
            return {k} if 0 <= k < n else None
        m = _SLICE_KEY.match(key)
        if m is not None:
            lo, hi = int(m.group(1)), min(int(m.group(2)), n)
            return set(range(lo, hi)) if hi - lo <= _MANY else None
        return None

    def buffer_made(self, a, key: str) -> None:
        """``a``'s buffer was made by ``zeros`` and written at ``key`` (see the module)."""
        pos = self.positions(a, key)
        if pos is None:
            self.nonzero.pop(a, None)
        else:
            self.nonzero[a] = pos

    def buffer_write(self, a, key: str, value: str) -> str:
        """The line adding ``value`` into ``a``'s own buffer at ``key``: an assignment where
        the buffer is known zero there (see the module)."""
        written, pos = self.nonzero.get(a), self.positions(a, key)
        if pos is None:
            self.nonzero.pop(a, None)
        elif written is not None:
            fresh = written.isdisjoint(pos)
            written |= pos
            if fresh:
                return f"{self.g(a)}[{key}] = {value}"
        return f"{self.g(a)}[{key}] += {value}"

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
        if type(written) is list:        # one expression per wanted target, in order
            for x, item in zip(targets, written):
                if item is not None:
                    self.add(x, item, _mode(x))
            return True
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
            self.buffer_made(a, key)
            self.state[a] = SURE
            self.fresh.add(a)
            self.dense.add(a)
            self.owned.add(a)
        else:
            self.emit(self.buffer_write(a, key, part))
        return True
