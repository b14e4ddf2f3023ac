"""``Recurse(production, aggregation, max_branch)``: tree-structured recursion (Gen's Recurse).

Node 1 is the root; child ``c`` (1-based) of node ``i`` is node ``(i - 1) * max_branch + c + 1``.
At each node, ``production(arg) -> Production(value, children)`` (``children``: the arguments of
at most ``max_branch`` child nodes), then, after the children, ``aggregation(value,
child_outputs) -> output``. ``Recurse(...)(root_arg, root_idx)`` returns the root's output.
Choices live at ``(i, "production", ...)`` and ``(i, "aggregation", ...)``. ``update`` and
``regenerate`` walk the new tree: a node's kernel is called again only when its arguments or its
constraints/selection changed; nodes that leave the tree are discarded. ``choice_gradients`` and
``accumulate_param_gradients`` walk the tree in reverse: a node's aggregation gets its output's
adjoint as ``retgrad``; its production gets ``Production(value, children)``'s adjoint (the
aggregation's gradient in ``value``, the child productions' gradients in their arguments).
"""
from __future__ import annotations

from ...ad import Sparse, defnode
from ..address import as_address
from ..choicemap import EMPTY, ChoiceMap
from ..execution import NO_CHANGE, UNKNOWN
from ..generative import GenerativeFunction, default_rng
from ..runtime import GenError, prefixed
from ..trace import Trace
from .vector import value_changed

__all__ = ["Recurse", "Production", "RecurseTrace"]


class Production:
    """What a production kernel returns: the node's ``value`` and its ``children``' args."""

    __slots__ = ("value", "children")

    def __init__(self, value, children=()):
        self.value, self.children = value, list(children)

    def __repr__(self):
        return f"Production({self.value!r}, {self.children!r})"


def _adjoint(g):
    """A gradient in its value's structure (lists/tuples of item gradients) as a sweep adjoint."""
    if type(g) is list or type(g) is tuple:
        items = {i: _adjoint(x) for i, x in enumerate(g) if x is not None}
        return Sparse(items) if items else None
    return g


def production_adjoint(value_grad, child_arg_grads):
    """The adjoint of ``Production(value, children)`` (None when nothing flows back)."""
    fields = {"value": _adjoint(value_grad), "children": _adjoint(list(child_arg_grads))}
    fields = {k: v for k, v in fields.items() if v is not None}
    return Sparse(fields) if fields else None


def _production_rule(sweep, node, g):
    """VJP of ``Production(value, children)``: a ``Sparse`` with fields ``value``/``children``
    (or a ``Production`` of gradients) flows to the two arguments."""
    if isinstance(g, Production):
        g = production_adjoint(g.value, g.children)
    if type(g) is not Sparse:
        return
    bound = dict(zip(("value", "children"), node.args))
    bound.update(node.kwargs)
    for name, a in bound.items():
        ga = g.get(name)
        if ga is not None and sweep.wants(a):
            sweep.add(a, ga)


defnode(Production, _production_rule)


class RecurseTrace(Trace):
    """``production``/``aggregation``: node index -> kernel trace."""

    __slots__ = ("gen_fn", "args", "production", "aggregation", "score", "store", "_choices")

    def __init__(self, gen_fn, args, production, aggregation, score, store):
        self.gen_fn, self.args = gen_fn, args
        self.production, self.aggregation = production, aggregation
        self.score, self.store, self._choices = score, store, None

    def get_retval(self):
        return self.aggregation[self.args[1]].get_retval()

    def get_choices(self):
        if self._choices is None:
            cm = ChoiceMap()
            for kind, traces in (("production", self.production),
                                 ("aggregation", self.aggregation)):
                for i, tr in traces.items():
                    c = tr.get_choices()
                    if not c.is_empty():
                        cm.set_submap((i, kind), c)
            self._choices = cm
        return self._choices

    def project(self, selection):
        return sum(tr.project(selection[i][kind]) for kind, traces in
                   (("production", self.production), ("aggregation", self.aggregation))
                   for i, tr in traces.items())


class Recurse(GenerativeFunction):
    """Gen's ``Recurse`` combinator."""

    def __init__(self, production: GenerativeFunction, aggregation: GenerativeFunction,
                 max_branch: int):
        self.production, self.aggregation, self.max_branch = production, aggregation, max_branch

    def __repr__(self):
        return f"Recurse({self.production!r}, {self.aggregation!r}, {self.max_branch})"

    def child(self, i: int, c: int) -> int:
        return (i - 1) * self.max_branch + c + 1

    def _walk(self, args, visit, store):
        """Depth-first over the tree; ``visit(kind, idx, kernel, kernel_args) -> trace``."""
        prods, aggs = {}, {}

        def node(idx, arg):
            with prefixed(as_address((idx, "production"))):
                tr = visit("production", idx, self.production, (arg,))
            prods[idx] = tr
            prod = tr.get_retval()
            if not isinstance(prod, Production):
                raise GenError(f"{self!r}: the production kernel must return a Production, got "
                               f"{type(prod).__name__} at node {idx}")
            if len(prod.children) > self.max_branch:
                raise GenError(f"{self!r}: node {idx} has {len(prod.children)} children, more "
                               f"than max_branch={self.max_branch}")
            outs = [node(self.child(idx, c), a) for c, a in enumerate(prod.children, 1)]
            with prefixed(as_address((idx, "aggregation"))):
                tr = visit("aggregation", idx, self.aggregation, (prod.value, outs))
            aggs[idx] = tr
            return tr.get_retval()

        node(args[1], args[0])
        return prods, aggs

    def generate(self, args, constraints, rng=None, store=None):
        rng, acc = rng or default_rng(), [0.0, 0.0]

        def visit(kind, idx, kernel, kargs):
            tr, w = kernel.generate(kargs, constraints.get_submap((idx, kind)), rng=rng,
                                    store=store)
            acc[0] += tr.get_score()
            acc[1] += w
            return tr

        prods, aggs = self._walk(args, visit, store)
        return RecurseTrace(self, args, prods, aggs, acc[0], store), acc[1]

    def simulate(self, args, rng=None, store=None):
        return self.generate(args, EMPTY, rng, store)[0]

    def _change(self, trace, args, rng, edit, fresh):
        """Shared walk of ``update``/``regenerate``; ``edit(kind, idx, kernel, prev, kargs,
        changed) -> (trace, weight) or None`` (None: keep ``prev``)."""
        acc = [0.0, 0.0]
        old = {"production": trace.production, "aggregation": trace.aggregation}

        def visit(kind, idx, kernel, kargs):
            prev = old[kind].get(idx)
            if prev is None:
                tr, w = fresh(kind, idx, kernel, kargs)
            else:
                changed = any(value_changed(a, b) for a, b in zip(kargs, prev.get_args()))
                done = edit(kind, idx, kernel, prev, kargs, changed)
                tr, w = (prev, 0.0) if done is None else done
                acc[0] -= prev.get_score()
            acc[0] += tr.get_score()
            acc[1] += w
            return tr

        prods, aggs = self._walk(args, visit, trace.store)
        removed = [(kind, i, tr) for kind, traces in (("production", trace.production),
                                                       ("aggregation", trace.aggregation))
                   for i, tr in traces.items() if i not in (prods if kind == "production"
                                                             else aggs)]
        score = trace.score + acc[0] - sum(tr.get_score() for _, _, tr in removed)
        new = RecurseTrace(self, args, prods, aggs, score, trace.store)
        return new, acc[1], removed

    def update(self, trace, args, argdiffs, constraints, rng=None):
        rng, discard = rng or default_rng(), ChoiceMap()

        def edit(kind, idx, kernel, prev, kargs, changed):
            sub_c = constraints.get_submap((idx, kind))
            if not changed and sub_c.is_empty():
                return None
            diffs = (UNKNOWN if changed else NO_CHANGE,) * len(kargs)
            tr, w, _, disc = kernel.update(prev, kargs, diffs, sub_c, rng)
            if not disc.is_empty():
                discard.set_submap((idx, kind), disc)
            return tr, w

        def fresh(kind, idx, kernel, kargs):
            return kernel.generate(kargs, constraints.get_submap((idx, kind)), rng=rng,
                                   store=trace.store)

        new, w, removed = self._change(trace, args, rng, edit, fresh)
        for kind, i, tr in removed:
            w -= tr.get_score()
            if not tr.get_choices().is_empty():
                discard.set_submap((i, kind), tr.get_choices())
        retdiff = NO_CHANGE if not value_changed(new.get_retval(), trace.get_retval()) \
            else UNKNOWN
        return new, w, retdiff, discard

    def regenerate(self, trace, args, argdiffs, selection, rng=None):
        rng = rng or default_rng()

        def edit(kind, idx, kernel, prev, kargs, changed):
            sub_s = selection[idx][kind]
            if not changed and sub_s.is_empty():
                return None
            diffs = (UNKNOWN if changed else NO_CHANGE,) * len(kargs)
            tr, w, _ = kernel.regenerate(prev, kargs, diffs, sub_s, rng)
            return tr, w

        def fresh(kind, idx, kernel, kargs):
            return kernel.simulate(kargs, rng=rng, store=trace.store), 0.0

        new, w, _ = self._change(trace, args, rng, edit, fresh)
        retdiff = NO_CHANGE if not value_changed(new.get_retval(), trace.get_retval()) \
            else UNKNOWN
        return new, w, retdiff

    def _backward(self, trace, retgrad, kernel_grads):
        """Reverse walk; ``kernel_grads(kind, idx, kernel, sub, retgrad) -> arg_grads``."""

        def node(idx, rg):
            ag = kernel_grads("aggregation", idx, self.aggregation, trace.aggregation[idx], rg)
            value_g, outs_g = (None, None) if ag is None else (ag[0], ag[1])
            n_children = len(trace.production[idx].get_retval().children)
            child_g = [node(self.child(idx, c), None if outs_g is None else outs_g[c - 1])
                       for c in range(1, n_children + 1)]
            pg = kernel_grads("production", idx, self.production, trace.production[idx],
                              production_adjoint(value_g, child_g))
            return None if pg is None else pg[0]

        return (node(trace.args[1], retgrad), None)

    def choice_gradients(self, trace, selection, retgrad):
        values, grads = ChoiceMap(), ChoiceMap()

        def kernel_grads(kind, idx, kernel, sub, rg):
            ag, v, g = kernel.choice_gradients(sub, selection[idx][kind], rg)
            if not v.is_empty():
                values.set_submap((idx, kind), v)
                grads.set_submap((idx, kind), g)
            return ag

        return self._backward(trace, retgrad, kernel_grads), values, grads

    def accumulate_param_gradients(self, trace, retgrad, scale=1.0):
        return self._backward(
            trace, retgrad,
            lambda kind, idx, kernel, sub, rg: kernel.accumulate_param_gradients(sub, rg, scale))
