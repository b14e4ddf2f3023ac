"""``@model``: a Python function of ``param`` declarations and ``x |= dist(...)`` statements,
and the model bound to its data (``regression(X, y)``).

``BoundModel`` finds the parameters by running the rewritten model once at a probe point
(``runtime.Discovery``), lays them out on the unconstrained vector in declaration order, and
evaluates ``logdensity(theta)`` (unnormalised log posterior on the unconstrained space,
log-Jacobians included) and ``logdensity_and_grad(theta)`` through ``dcgraph.value_and_grad``
(compiled straight-line replay of the traced path, re-traced when a guard fails).
Errors from the model name the file, line and source of the statement that failed.
"""
from __future__ import annotations

import functools
import math
import types

import numpy as np

from ..ad.api import sampling_value_and_grad
from .bytecode_rewrite import BytecodeUnreadable, rewrite_bytecode
from .params import ModelError
from .rewrite import rewrite
from .runtime import Discovery, Probe, StatementError
from .source import function_source

__all__ = ["model", "Model", "BoundModel", "ParamLayout"]

#: keywords of ``Model.sample`` / ``Model.optimize`` that are not the model's own arguments
_F8 = np.dtype(np.float64)
SAMPLE_KEYWORDS = ("draws", "warmup", "chains", "sampler", "seed", "init", "parallel", "progress",
                   "save_warmup", "kernel_options")
OPTIMIZE_KEYWORDS = ("init", "jacobian", "method", "options")


def model(fn=None, *, source: str | None = None):
    """Decorator: ``@model def regression(X, y): ...`` (see the package docstring).
    ``model(fn, source=text)`` or ``@model(source=text)`` gives the text of a function whose
    source cannot be found (defined by ``exec`` of a string nothing registered); without it
    such a function is read from its bytecode (``bytecode_rewrite``) where that can be done."""
    if fn is None:
        return functools.partial(model, source=source)
    return Model(fn, source)


class Model:
    """A model function. ``model(*args, **kwargs)`` binds data (a ``BoundModel``);
    ``logdensity``, ``logdensity_and_grad``, ``sample``, ``optimize`` and ``graph`` take the
    model's arguments after their own."""

    def __init__(self, fn, source: str | None = None):
        if not isinstance(fn, types.FunctionType):
            raise TypeError(f"@model needs a Python function, got {type(fn).__name__}")
        self.fn = fn
        self._rewritten = None
        try:
            self._source = function_source(fn, source)
        except ModelError as missing:
            if source is not None:
                raise
            try:                               # no text anywhere: read the bytecode
                self._rewritten = rewrite_bytecode(fn)
            except BytecodeUnreadable as exc:
                raise ModelError(f"{missing}; its bytecode could not be read instead: "
                                 f"{exc}") from None
            self._source = None
        functools.update_wrapper(self, fn)

    @property
    def rewritten(self):
        if self._rewritten is None:
            self._rewritten = rewrite(self.fn, self._source)
        return self._rewritten

    @property
    def logdensity_function(self):
        """The rewritten model, ``f(theta, *args, **kwargs) -> log density``: a plain Python
        function (trace it with ``dcgraph.track`` to see the model's tape)."""
        return self.rewritten.function

    def __call__(self, *args, **kwargs) -> "BoundModel":
        return BoundModel(self, args, kwargs)

    def logdensity(self, theta, *args, **kwargs) -> float:
        return self(*args, **kwargs).logdensity(theta)

    def logdensity_and_grad(self, theta, *args, **kwargs):
        return self(*args, **kwargs).logdensity_and_grad(theta)

    def sample(self, *args, **kwargs):
        own = {k: kwargs.pop(k) for k in SAMPLE_KEYWORDS if k in kwargs}
        return self(*args, **kwargs).sample(**own)

    def optimize(self, *args, **kwargs):
        own = {k: kwargs.pop(k) for k in OPTIMIZE_KEYWORDS if k in kwargs}
        return self(*args, **kwargs).optimize(**own)

    def graph(self, *args, **kwargs):
        return self(*args, **kwargs).graph()

    def __reduce__(self):
        """Pickled by reference (module and name), like the function it decorates."""
        return _model_by_name, (self.fn.__module__, self.fn.__qualname__)

    def __repr__(self):
        return f"<model {self.fn.__qualname__}>"


#: argument types whose structure key cannot change while they are bound (immutable)
_FIXED = frozenset({float, int, bool, str, type(None), np.float64, np.int64, np.bool_})


def _array_data(args, kwargs):
    """``(array, shape, dtype)`` of each array argument when every other argument is of an
    immutable type (then the call's structure key changes only with these), else None."""
    arrays = []
    for a in (*args, *kwargs.values()):
        if type(a) is np.ndarray:
            arrays.append((a, a.shape, a.dtype))
        elif type(a) not in _FIXED:
            return None
    return arrays


def _fast_call(bound, path, binding):
    """``theta -> (value, gradient) | None``: ``path`` called directly while the arrays
    among ``bound``'s data keep the shapes and dtypes its structure key was computed for
    (None: a guard failed, the path raised or gave no float gradient of ``theta``'s shape;
    the caller goes through the cache). None when ``path`` does not hand back ``theta``'s
    whole gradient or some argument is a container. Written as code: the arrays' checks
    without a loop (the text holds generated names only)."""
    node, pos = binding.slots[0]
    arrays = bound._arrays
    if pos is not None or node not in path.wrt or arrays is None:
        return None
    k = path.wrt.index(node)
    names = {"fn": path._fn, "kwargs": bound.kwargs, "shape": bound._shape,
             "cache": bound._vg.compiled, "stats": bound._vg.compiled.stats, "F8": _F8,
             "ndarray": np.ndarray, "Exception": Exception, "float": float, "type": type}
    tests = []
    for i, (a, a_shape, a_dtype) in enumerate(arrays):
        names[f"a{i}"], names[f"s{i}"], names[f"d{i}"] = a, a_shape, a_dtype
        tests.append(f"a{i}.shape != s{i} or a{i}.dtype is not d{i}")
    args = []
    for i, x in enumerate(bound.args):
        names[f"x{i}"] = x
        args.append(f"x{i}, ")
    grad = "grad" if path.fresh[k] else "grad.copy()"
    source = (f"def call(theta):\n"
              + (f"    if {' or '.join(tests)}:\n        return None\n" if tests else "")
              + f"    try:\n        value, adjoints = fn((theta, {''.join(args)}), kwargs)\n"
              f"        grad = adjoints[{k}]\n"
              f"    except Exception:\n        return None\n"
              f"    if type(grad) is ndarray and grad.shape == shape and "
              f"(grad.dtype is F8 or grad.dtype == F8) and cache.enabled:\n"
              f"        stats['hits'] += 1\n        return float(value), {grad}\n"
              f"    return None\n")
    exec(compile(source, "<dcgraph.models fast call>", "exec"), names)
    return names["call"]


def _model_by_name(module: str, qualname: str) -> Model:
    import importlib
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if not isinstance(obj, Model):
        raise TypeError(f"{module}.{qualname} is not a @model")
    return obj


class ParamLayout:
    """A named parameter on the unconstrained vector: its declarations (``specs``, several when
    a declaration ran in a loop: their values are stacked), their ``starts``, and the
    constrained ``shape``."""

    def __init__(self, name):
        self.name, self.specs, self.starts = name, [], []

    @property
    def shape(self) -> tuple:
        one = self.specs[0].shape
        return one if len(self.specs) == 1 else (len(self.specs),) + one

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def value(self, theta):
        vals = [s.constrain(theta[a:a + s.size]) for s, a in zip(self.specs, self.starts)]
        return vals[0] if len(vals) == 1 else np.asarray(vals, dtype=float)


class BoundModel:
    """A model with its arguments: ``dim``, ``layout`` (name -> ``ParamLayout``), ``specs``
    (every declaration in order), ``logdensity``, ``logdensity_and_grad``, ``constrain``,
    ``unconstrain``, ``initial_point``, ``sample``, ``optimize``, ``graph``."""

    def __init__(self, model: Model, args: tuple, kwargs: dict):
        self.model, self.args, self.kwargs = model, args, kwargs
        self._fn = model.rewritten.function
        with Discovery() as found:
            self._call(Probe())
        self.specs = found.specs
        self.layout: dict = {}
        at = 0
        for spec in self.specs:
            entry = self.layout.setdefault(spec.name, ParamLayout(spec.name))
            if entry.specs and entry.specs[0].key()[2:] != spec.key()[2:]:
                raise ModelError(f"{self._where(spec.line)}: parameter {spec.name!r} is declared "
                                 f"again with another shape or constraint (first at line "
                                 f"{entry.specs[0].line})")
            entry.specs.append(spec)
            entry.starts.append(at)
            at += spec.size
        self.dim = at
        self.discrete = [i for s, i in self._starts() if s.discrete]
        self.continuous = np.setdiff1d(np.arange(self.dim), self.discrete)
        self._shape = (self.dim,)
        self._vg = sampling_value_and_grad(self._fn)
        self._direct, self._fast = False, None
        self._key, self._arrays = None, _array_data(args, kwargs)

    def __getstate__(self):
        """Pickles without the compiled function and gradient cache (rebuilt on load)."""
        state = dict(self.__dict__)
        del state["_fn"], state["_vg"], state["_key"], state["_fast"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._fn = self.model.rewritten.function
        self._vg = sampling_value_and_grad(self._fn)
        self._direct, self._key, self._fast = False, None, None

    def _starts(self):
        at = 0
        for s in self.specs:
            yield s, at
            at += s.size

    # -- evaluation --------------------------------------------------------------------------
    def _where(self, line) -> str:
        filename = self.model.rewritten.filename
        source = self.model.rewritten.line_text(line).strip()
        return f"{filename}:{line}: `{source}`" if source else f"{filename}:{line}"

    def _call(self, theta, fn=None):
        try:
            return (fn or self._fn)(theta, *self.args, **self.kwargs)
        except StatementError as exc:
            raise ModelError(f"{self._where(exc.line)}: {exc}") from None
        except Exception as exc:
            line = self._model_line(exc.__traceback__)
            if line is not None and not isinstance(exc, ModelError):
                exc.add_note(f"in the model at {self._where(line)}")
            raise

    def _model_line(self, tb):
        code, line = self._fn.__code__, None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == code.co_filename and \
                    tb.tb_frame.f_code.co_name == code.co_name:
                line = tb.tb_lineno
            tb = tb.tb_next
        return line

    def _vector(self, theta) -> np.ndarray:
        if type(theta) is np.ndarray and theta.dtype == np.float64 and theta.shape == self._shape:
            return theta
        theta = np.asarray(theta, dtype=float)
        if theta.shape != (self.dim,):
            raise ValueError(f"{self.model.fn.__qualname__}: expected a parameter vector of shape "
                             f"({self.dim},), got {theta.shape}")
        return theta

    def logdensity(self, theta) -> float:
        """The unnormalised log posterior at the unconstrained ``theta``."""
        return float(self._call(self._vector(theta)))

    def logdensity_and_grad(self, theta):
        """``(logdensity(theta), its gradient)`` by ``dcgraph.value_and_grad``: the compiled path
        of the last hit is called directly while its guards hold and it
        gives a float gradient of ``theta``'s shape (``_fast``, see ``_fast_call``), then the
        paths of its cache (which count guard failures and errors), then ``value_and_grad``
        (which traces)."""
        if type(theta) is not np.ndarray or theta.dtype is not _F8 or theta.shape != self._shape:
            theta = self._vector(theta)
        fast = self._fast
        if fast is not None:
            hit = fast(theta)
            if hit is not None:
                return hit
            self._fast = None
        if self._direct:
            hit = self._direct_hit(theta)
            if hit is not None:
                return hit
            self._direct = False          # a guard failed: value_and_grad re-traces
        cache = self._vg.compiled
        hits = cache.stats["hits"]
        value, grad = self._call(theta, self._vg)
        self._direct = cache.stats["hits"] > hits
        grad = np.zeros(self.dim) if grad is None else np.asarray(grad, dtype=float)
        return float(value), grad

    def _same_data(self) -> bool:
        """Do the arrays among the data still have the shapes and dtypes the cached structure
        key ``_key`` was computed for? (False when some argument is a container.)"""
        if self._arrays is None:
            return False
        for a, shape, dtype in self._arrays:
            if a.shape != shape or a.dtype is not dtype:
                return False
        return True

    def _direct_hit(self, theta):
        """``value_and_grad``'s compiled-path hit without its wrapper, or None (no path holds:
        the caller goes through ``value_and_grad``, which tries them again and traces)."""
        args = (theta, *self.args)
        cache = self._vg.compiled
        key = self._key
        if key is None or not self._same_data():
            key = self._key = cache.key(args, self.kwargs)
            self._arrays = _array_data(self.args, self.kwargs)
        hit = cache.run(key, args, self.kwargs)
        if hit is None:
            return None
        value, adjoints, path, binding = hit
        grad = path.gradient(adjoints, 0, args, binding)     # a fresh array (never shared)
        if type(grad) is not np.ndarray or grad.dtype != np.float64:
            grad = np.zeros(self.dim) if grad is None else np.asarray(grad, dtype=float)
        self._fast = _fast_call(self, path, binding)
        return float(value), grad

    @property
    def gradient_cache(self):
        """The ``GradientCache`` of the compiled paths (``stats``, ``enabled``, ``reason``)."""
        return self._vg.compiled

    # -- layout --------------------------------------------------------------------------------
    def constrain(self, theta) -> dict:
        """Parameter name -> constrained value at the unconstrained ``theta``."""
        theta = self._vector(theta)
        return {name: entry.value(theta) for name, entry in self.layout.items()}

    def unconstrain(self, values: dict) -> np.ndarray:
        """The unconstrained vector of constrained ``values`` (name -> value)."""
        missing = set(self.layout) - set(values)
        if missing:
            raise KeyError(f"unconstrain: no value for {sorted(missing)}")
        theta = np.zeros(self.dim)
        for name, entry in self.layout.items():
            vals = [values[name]] if len(entry.specs) == 1 else list(values[name])
            for spec, start, v in zip(entry.specs, entry.starts, vals):
                theta[start:start + spec.size] = spec.unconstrain(v)
        return theta

    def initial_point(self) -> np.ndarray:
        """The probe point: zeros for continuous coordinates, lower bounds for discrete ones."""
        return np.concatenate([s.initial() for s in self.specs]) if self.specs else np.zeros(0)

    def flat_constrained(self, theta) -> np.ndarray:
        theta = np.asarray(theta, dtype=float)
        return np.concatenate([np.ravel(e.value(theta)) for e in self.layout.values()]) \
            if self.layout else np.zeros(0)

    # -- inference and the graph (see ``inference`` and ``graph``) ----------------------------
    def sample(self, **kwargs):
        from .inference import sample
        return sample(self, **kwargs)

    def optimize(self, **kwargs):
        from .inference import optimize
        return optimize(self, **kwargs)

    def graph(self):
        from .graph import model_graph
        return model_graph(self)

    def __repr__(self):
        params = ", ".join(f"{n}{list(e.shape) if e.shape else ''}" for n, e in self.layout.items())
        return f"<{self.model.fn.__qualname__} bound: {params}; dim {self.dim}>"
