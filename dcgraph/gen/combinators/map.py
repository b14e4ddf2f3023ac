"""``Map(kernel)``: independent applications of ``kernel`` over argument sequences (Gen's Map).

``Map(kernel)(xs, ys)`` calls ``kernel(xs[i-1], ys[i-1])`` at address ``i`` for ``i = 1..n``
(``n`` the common length) and returns the list of the return values. ``update`` and
``regenerate`` revisit only applications whose arguments (per the argdiffs, a ``VectorDiff`` or
element identity) or constraints/selection changed; removed applications go to ``discard``.
"""
from __future__ import annotations

from ..address import as_address
from ..choicemap import ChoiceMap
from ..execution import NO_CHANGE
from ..execution import UNKNOWN as _UNKNOWN
from ..generative import default_rng
from ..runtime import GenError, prefixed
from .interned import KernelCombinator
from .vector import (VectorDiff, VectorTrace, check_keys, collect_arg_grads, element_changed,
                     retdiff_of)

__all__ = ["Map"]


def _length(gen_fn, args) -> int:
    if not args:
        raise GenError(f"{gen_fn!r} needs at least one argument sequence")
    lengths = {len(a) for a in args}
    if len(lengths) != 1:
        raise GenError(f"{gen_fn!r}: argument sequences of different lengths "
                       f"{[len(a) for a in args]}")
    return lengths.pop()


class Map(KernelCombinator):
    """Gen's ``Map`` combinator over the generative function ``kernel``."""

    def _element(self, args, i):
        return tuple(a[i - 1] for a in args)

    def simulate(self, args, rng=None, store=None):
        rng, n = rng or default_rng(), _length(self, args)
        subs = []
        for i in range(1, n + 1):
            with prefixed(as_address(i)):
                subs.append(self.kernel.simulate(self._element(args, i), rng=rng, store=store))
        return VectorTrace(self, args, subs, [s.get_retval() for s in subs],
                           sum(s.get_score() for s in subs), store)

    def generate(self, args, constraints, rng=None, store=None):
        rng, n = rng or default_rng(), _length(self, args)
        check_keys(constraints, n, self, "generate")
        subs, weight = [], 0.0
        for i in range(1, n + 1):
            with prefixed(as_address(i)):
                sub, w = self.kernel.generate(self._element(args, i), constraints.get_submap(i),
                                              rng=rng, store=store)
            subs.append(sub)
            weight += w
        trace = VectorTrace(self, args, subs, [s.get_retval() for s in subs],
                            sum(s.get_score() for s in subs), store)
        return trace, weight

    def _candidates(self, argdiffs, keys, m):
        """Positions ``1..m`` that may need a visit: with only ``NoChange``/``VectorDiff``
        argdiffs, the updated positions and ``keys`` (constrained/selected), else all."""
        if keys is None or not all(d is NO_CHANGE or isinstance(d, VectorDiff)
                                   for d in argdiffs):
            return range(1, m + 1)
        found = set(k for k in keys if isinstance(k, int) and k <= m)
        for d in argdiffs:
            if isinstance(d, VectorDiff):
                found.update(i for i in d.updated if i <= m)
        return sorted(found)

    def _diffs(self, trace, args, argdiffs, i):
        old = self._element(trace.args, i)
        new = self._element(args, i)
        changed = any(element_changed(d, i, a, b) for d, a, b in zip(argdiffs, new, old))
        return new, changed

    def update(self, trace, args, argdiffs, constraints, rng=None):
        rng, n, prev_n = rng or default_rng(), _length(self, args), len(trace)
        check_keys(constraints, n, self, "update")
        subs, retval = list(trace.subtraces[:n]), list(trace.retval[:n])
        weight, score, discard, changed = 0.0, trace.score, ChoiceMap(), {}
        keys = [k for k, _ in constraints.get_submaps_shallow()]
        for i in self._candidates(argdiffs, keys, min(n, prev_n)):
            new_args, args_changed = self._diffs(trace, args, argdiffs, i)
            sub_c = constraints.get_submap(i)
            if not args_changed and sub_c.is_empty():
                continue
            prev = subs[i - 1]
            diffs = tuple(NO_CHANGE if not element_changed(d, i, a, b) else _UNKNOWN
                          for d, a, b in zip(argdiffs, new_args, self._element(trace.args, i)))
            with prefixed(as_address(i)):
                sub, w, rd, disc = self.kernel.update(prev, new_args, diffs, sub_c, rng)
            subs[i - 1], retval[i - 1] = sub, sub.get_retval()
            weight += w
            score += sub.get_score() - prev.get_score()
            if not disc.is_empty():
                discard.set_submap(i, disc)
            if rd is not NO_CHANGE:
                changed[i] = True
        for i in range(n + 1, prev_n + 1):                      # removed applications
            prev = trace.subtraces[i - 1]
            weight -= prev.get_score()
            score -= prev.get_score()
            if not prev.get_choices().is_empty():
                discard.set_submap(i, prev.get_choices())
        for i in range(prev_n + 1, n + 1):                      # new applications
            with prefixed(as_address(i)):
                sub, w = self.kernel.generate(self._element(args, i), constraints.get_submap(i),
                                              rng=rng, store=trace.store)
            subs.append(sub)
            retval.append(sub.get_retval())
            weight += w
            score += sub.get_score()
        new = VectorTrace(self, args, subs, retval, score, trace.store)
        return new, weight, retdiff_of(changed, n, prev_n), discard

    def regenerate(self, trace, args, argdiffs, selection, rng=None):
        rng, n, prev_n = rng or default_rng(), _length(self, args), len(trace)
        subs, retval = list(trace.subtraces[:n]), list(trace.retval[:n])
        weight, score, changed = 0.0, trace.score, {}
        addrs = selection.addresses()
        keys = None if addrs is None else [as_address(a)[0] for a in addrs if len(as_address(a))]
        for i in self._candidates(argdiffs, keys, min(n, prev_n)):
            new_args, args_changed = self._diffs(trace, args, argdiffs, i)
            sub_s = selection[i]
            if not args_changed and sub_s.is_empty():
                continue
            prev = subs[i - 1]
            diffs = (_UNKNOWN if args_changed else NO_CHANGE,) * len(new_args)
            with prefixed(as_address(i)):
                sub, w, rd = self.kernel.regenerate(prev, new_args, diffs, sub_s, rng)
            subs[i - 1], retval[i - 1] = sub, sub.get_retval()
            weight += w
            score += sub.get_score() - prev.get_score()
            if rd is not NO_CHANGE:
                changed[i] = True
        for i in range(n + 1, prev_n + 1):
            score -= trace.subtraces[i - 1].get_score()
        for i in range(prev_n + 1, n + 1):
            with prefixed(as_address(i)):
                sub = self.kernel.simulate(self._element(args, i), rng=rng,
                                           store=trace.store)
            subs.append(sub)
            retval.append(sub.get_retval())
            score += sub.get_score()
        new = VectorTrace(self, args, subs, retval, score, trace.store)
        return new, weight, retdiff_of(changed, n, prev_n)

    def choice_gradients(self, trace, selection, retgrad):
        values, grads, per = ChoiceMap(), ChoiceMap(), []
        for i, sub in enumerate(trace.subtraces, 1):
            rg = None if retgrad is None else retgrad[i - 1]
            ag, v, g = self.kernel.choice_gradients(sub, selection[i], rg)
            per.append(ag)
            if not v.is_empty():
                values.set_submap(i, v)
                grads.set_submap(i, g)
        return collect_arg_grads(per, trace.args), values, grads

    def accumulate_param_gradients(self, trace, retgrad, scale=1.0):
        per = []
        for i, sub in enumerate(trace.subtraces, 1):
            rg = None if retgrad is None else retgrad[i - 1]
            per.append(self.kernel.accumulate_param_gradients(sub, rg, scale))
        return collect_arg_grads(per, trace.args)

