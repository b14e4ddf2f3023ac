"""Public entry points: ``grad``, ``value_and_grad``, ``vjp`` (autograd/JAX conventions) and
``backward(tape, seed)``.

Arguments may be floats, numpy arrays, and nested lists/tuples/dicts of them; gradients come
back in the same structure. Integer and boolean leaves (and other non-numeric values) carry no
adjoint: their gradient entry is None.

``grad``/``value_and_grad`` compile a path once calls with the same argument structure keep
tracing it (``compiled``): later calls run straight-line code and trace again only when a
guard fails, with the same results. The returned function's ``compiled`` attribute is its
``GradientCache`` (``enabled``, ``reason``, ``stats``).
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from ..tape import PrimitiveCall, Tape
from ..tracer.track import traced_call
from .compiled import GuardFailed, NotCompilable, compile_gradient, structure_key
from .core import Sweep
from .higher import gradient_rule
from .values import Sparse, carries, densify

__all__ = ["grad", "value_and_grad", "vjp", "backward", "GradientCache", "sampling_value_and_grad"]


def grad(f, argnums=0):
    """``grad(f, argnums=0)(*args, **kwargs)``: the gradient of the real scalar ``f`` with
    respect to positional argument(s) ``argnums`` (an int, or a tuple giving a tuple)."""
    vg = value_and_grad(f, argnums)
    evaluate = vg._dcgraph_evaluate

    @functools.wraps(f)
    def gradient(*args, **kwargs):
        return evaluate(args, kwargs, 2)[1]

    gradient.compiled = vg.compiled
    gradient._dcgraph_vjp = gradient_rule(f, argnums, False)     # grad(grad(f)) nests
    return gradient


def value_and_grad(f, argnums=0):
    """``value_and_grad(f, argnums=0)(*args, **kwargs) -> (f(*args, **kwargs), gradient)``."""
    cache = GradientCache(f)
    single = type(argnums) is int
    checked: dict = {}                  # number of positional arguments -> argnums normalised

    def evaluate(args: tuple, kwargs: dict, callers: int):
        """The value and gradient; ``callers``: frames between the user's call and this one's
        callee (``traced_call``), this one included."""
        nums_n = checked.get(len(args))
        if nums_n is None:
            nums_n = checked[len(args)] = _normalised(argnums, len(args))
        key = cache.key(args, kwargs)
        hit = cache.run(key, args, kwargs) if key is not None else None
        if hit is not None:
            value, adjoints, cg, binding = hit
            if single:
                return value, cg.gradient(adjoints, nums_n[0], args, binding)
            adj = dict(zip(cg.wrt, adjoints))
        else:
            value, tape = traced_call(f, args, kwargs, callers=callers)
            seed = _scalar_seed(value)
            binding = _Binding(f, tape, args, kwargs)
            wrt = binding.nodes_for(nums_n)
            sweep = Sweep(tape, wrt=wrt, callers=callers)
            sweep.run(tape, seed)
            adj = sweep.adj
            fresh = cache.learn(key, tape, args, kwargs, wrt, binding, _scalar_seed)
            answer = cache.answer(fresh, args, kwargs) if fresh is not None else None
            if answer is not None:      # the bits every later call on this path will give
                value, adjoints = answer
                cg, binding = fresh
                if single:
                    return value, cg.gradient(adjoints, nums_n[0], args, binding)
                adj = dict(zip(cg.wrt, adjoints))
        grads = tuple(binding.gradient(adj, i, args) for i in nums_n)
        return value, grads[0] if isinstance(argnums, int) else grads

    @functools.wraps(f)
    def value_and_gradient(*args, **kwargs):
        return evaluate(args, kwargs, 2)

    value_and_gradient._dcgraph_evaluate = evaluate
    value_and_gradient.compiled = cache
    value_and_gradient._dcgraph_vjp = gradient_rule(f, argnums, True)
    return value_and_gradient


def sampling_value_and_grad(f, argnums=0):
    """``value_and_grad(f, argnums)`` for a sampler's log density: it compiles from its first
    call (``GradientCache.compile_after = 1``), so every call gives the compiled code's bits and
    a seeded run repeats its draws on a fresh and on a warm function."""
    vg = value_and_grad(f, argnums)
    vg.compiled.compile_after = 1
    return vg


def vjp(f, *args, **kwargs):
    """``vjp(f, *args, **kwargs) -> (value, pullback)``; ``pullback(g)`` returns one gradient
    per positional argument (a tuple), for an output adjoint ``g`` shaped like ``value``."""
    value, tape = traced_call(f, args, kwargs, callers=1)
    binding = _Binding(f, tape, args, kwargs)
    wrt = binding.nodes_for(range(len(args)))

    def pullback(g):
        sweep = Sweep(tape, wrt=wrt, callers=1)
        sweep.run(tape, _as_seed(value, g))
        return tuple(binding.gradient(sweep.adj, i) for i in range(len(args)))

    return value, pullback


def backward(tape: Tape, seed=1.0) -> dict:
    """Sweep ``tape`` backwards from its returned value with adjoint ``seed``; store each
    node's adjoint in ``node.meta["adjoint"]`` (a float, an ndarray, or a ``Sparse`` for a
    container: position/key -> adjoint) and return ``{argument name: gradient}`` for the tape's
    own arguments (dense, in each argument's structure). Every root argument is active."""
    sweep = Sweep(tape, callers=1)
    ret = tape.returned
    sweep.run(tape, _as_seed(ret.value if ret is not None else None, seed))
    for node, g in sweep.adj.items():
        if node.tape is not None:
            node.meta["adjoint"] = g
    return {a.name: densify(a.value, sweep.adj.get(a)) for a in tape.arguments}


# -- helpers -----------------------------------------------------------------------------------
def _normalised(argnums, n: int) -> tuple:
    """``argnums`` as non-negative positions among ``n`` positional arguments (or the error)."""
    nums = _argnums(argnums)
    for i in nums:
        if not -n <= i < n:
            raise ValueError(f"dcgraph.grad: argnums {i} out of range for {n} "
                             f"positional arguments")
    return tuple(i % n for i in nums)


def _argnums(argnums) -> tuple:
    """``argnums`` as a tuple of ints; a clear TypeError for anything else."""
    def bad():
        return TypeError(f"dcgraph.grad: argnums must be an int or a tuple of ints "
                         f"(positions of positional arguments), got {argnums!r}")
    if isinstance(argnums, bool):
        raise bad()
    if isinstance(argnums, int):
        return (argnums,)
    if not isinstance(argnums, (tuple, list)) or not argnums or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in argnums):
        raise bad()
    return tuple(argnums)


def _scalar_seed(value):
    if isinstance(value, (bool, int)) and not isinstance(value, float):
        raise TypeError(f"dcgraph.grad: the function returned an integer ({value!r}); "
                        "gradients need a real scalar output")
    if isinstance(value, np.ndarray):
        if value.size != 1:
            raise TypeError(f"dcgraph.grad: the function returned an array of shape "
                            f"{value.shape}; use vjp for non-scalar outputs")
        return np.ones(value.shape)
    if not isinstance(value, (float, np.floating)):
        raise TypeError(f"dcgraph.grad: the function returned {type(value).__name__}; "
                        "gradients need a real scalar output (use vjp otherwise)")
    return 1.0


def _as_seed(value, g):
    """An output adjoint in the sweep's form: Sparse for containers, arrays for arrays."""
    t = type(value)
    if t in (list, tuple):
        return Sparse({i: _as_seed(v, g[i]) for i, v in enumerate(value) if g[i] is not None})
    if t is dict:
        return Sparse({k: _as_seed(v, g[k]) for k, v in value.items() if g.get(k) is not None})
    if t is np.ndarray:
        return np.broadcast_to(np.asarray(g, dtype=float), value.shape)
    return g


class _Binding:
    """Which root ``Argument`` node receives each positional argument of the call."""

    def __init__(self, f, tape: Tape, args, kwargs):
        self.args = args
        self.slots: list = [None] * len(args)       # (node, position in *args or None)
        arguments = tape.arguments
        nodes = tape.nodes
        k = len(args) + len(kwargs)
        call = nodes[k] if len(nodes) > k else None
        if (type(call) is PrimitiveCall and call.fn is f
                and tuple(call.args) == tuple(arguments[:len(args)])):
            for i in range(len(args)):                  # f itself was recorded as a primitive
                self.slots[i] = (arguments[i], None)
            return
        by_name = {a.name: a for a in arguments}
        params = list(inspect.signature(f).parameters.values())
        positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                           p.POSITIONAL_OR_KEYWORD)]
        star = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None)
        for i in range(len(args)):
            if i < len(positional):
                self.slots[i] = (by_name.get(positional[i]), None)
            elif star is not None:
                self.slots[i] = (by_name.get(star), i - len(positional))

    def nodes_for(self, nums) -> set:
        return {self.slots[i][0] for i in nums if self.slots[i][0] is not None}

    def gradient(self, adj: dict, i: int, args=None):
        """The gradient for positional argument ``i`` of ``args`` (default: the traced call's)
        from the adjoints ``adj`` of the root arguments."""
        node, pos = self.slots[i]
        g = adj.get(node) if node is not None else None
        if pos is not None:
            g = g.get(pos) if type(g) is Sparse else None
        value = (self.args if args is None else args)[i]
        if not carries(value) and not isinstance(value, (list, tuple, dict)):
            return None
        return densify(value, g)


class GradientCache:
    """The compiled paths of one differentiated function (``value_and_grad`` keeps one as
    the ``compiled`` attribute of the function it returns).

    A path is compiled when a call with the same argument structure is traced for the
    ``compile_after``-th time (default ``COMPILE_AFTER``: compiling costs five to ten traced
    calls, so one-off calls stay cheap; the layers whose samplers call thousands of times set
    1), or after a guard failed. The call that compiles a path answers with the compiled code
    (its primitives run again unobserved: compiled paths have no effects), so from then on a
    path's value and gradient are the same bits whatever ran before: a seeded sampler gives the
    same draws on a fresh and on a warm function. Up to ``PER_KEY`` paths per argument structure and
    ``MAX_PATHS`` in all, the one used last first.
    Setting ``enabled`` False turns compiled replay off; it is turned off for good, with the
    ``reason``, when a path cannot be compiled or when guards fail on ``MAX_MISSES`` calls in
    a row. ``stats`` counts hits, traces, compiles, guard failures and errors (calls whose
    compiled code raised; they are traced, so the normal path reports the error).
    """

    MAX_PATHS, PER_KEY, MAX_MISSES, COMPILE_AFTER = 8, 4, 8, 2

    def __init__(self, f):
        self.f = f
        self.paths: dict = {}
        self.enabled, self.reason = True, None
        self.stats = {"hits": 0, "traces": 0, "compiles": 0, "guard_failures": 0, "errors": 0}
        self._misses = 0
        self._traced: dict = {}         # key -> traced calls not compiled yet
        self.compile_after = self.COMPILE_AFTER

    def key(self, args, kwargs):
        """The structure key of a call (None when it cannot be computed; an unhashable key,
        which only exotic leaf types give, is refused by ``run`` and ``learn``)."""
        if not self.enabled:
            return None
        try:
            return structure_key(args, kwargs)
        except TypeError:
            return None

    def run(self, key, args, kwargs):
        """``(value, adjoints, path, binding)`` from a compiled path (``adjoints``: those of
        ``path.wrt``, in order), or None: trace instead."""
        try:
            entries = self.paths.get(key)
        except TypeError:                         # an unhashable key: never learned
            return None
        if not entries:
            return None
        cg, binding = entries[0]
        try:
            value, adjoints = cg._fn(args, kwargs)
        except Exception as exc:
            return self._after(exc, key, entries, args, kwargs)
        self.stats["hits"] += 1
        self._misses = 0
        return value, adjoints, cg, binding

    def _after(self, exc, key, entries, args, kwargs):
        """``run`` once the first path of ``entries`` raised ``exc``: the other paths."""
        stats = self.stats
        for i, (cg, binding) in enumerate(entries):
            if i:
                try:
                    value, adjoints = cg._fn(args, kwargs)
                    exc = None
                except Exception as raised:
                    exc = raised
            if isinstance(exc, GuardFailed):
                stats["guard_failures"] += 1
                continue
            if isinstance(exc, NotCompilable):
                self.disable(str(exc))
                return None
            if exc is not None:
                stats["errors"] += 1
                return None
            stats["hits"] += 1
            self._misses = 0
            self.paths[key] = [entries[i]] + entries[:i] + entries[i + 1:]   # used last: first
            return value, adjoints, cg, binding
        self._misses += 1
        return None

    def learn(self, key, tape, args, kwargs, wrt, binding, seed=None):
        """A call was traced and swept: compile its path for later calls. Returns the new
        ``(path, binding)`` when this call compiled one, else None."""
        self.stats["traces"] += 1
        if key is None or not self.enabled:
            return None
        try:
            hash(key)
        except TypeError:
            return None
        if self._misses >= self.MAX_MISSES:
            self.disable(f"guards failed on {self._misses} calls in a row")
            return None
        seen = self._traced.get(key, 0) + 1
        if seen < self.compile_after and key not in self.paths:
            if len(self._traced) >= 64:
                self._traced.clear()
            self._traced[key] = seen
            return None
        self._traced.pop(key, None)
        try:
            cg = compile_gradient(tape, wrt, args, kwargs, self.f, seed)
        except NotCompilable as exc:
            self.disable(str(exc))
            return None
        except Exception as exc:             # a dcgraph bug: keep the normal path working
            self.disable(f"compiling failed: {type(exc).__name__}: {exc}")
            return None
        self.stats["compiles"] += 1
        entries = [(cg, binding)] + self.paths.pop(key, [])[: self.PER_KEY - 1]
        self.paths[key] = entries
        while sum(map(len, self.paths.values())) > self.MAX_PATHS:
            oldest = next(iter(self.paths))
            self.paths[oldest] = self.paths[oldest][:-1]
            if not self.paths[oldest]:
                del self.paths[oldest]
        return cg, binding

    def answer(self, fresh, args, kwargs):
        """``(value, adjoints)`` of the just-compiled ``fresh`` path on the call that compiled
        it, or None (its code raised or its guards refused: the sweep's answer stands)."""
        try:
            return fresh[0]._fn(args, kwargs)
        except Exception:
            return None

    def disable(self, reason: str) -> None:
        self.enabled, self.reason = False, reason
        self.paths = {}
