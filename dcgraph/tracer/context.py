"""Contexts: which calls the tracer recurses into, and metadata hooks on recorded nodes."""
from __future__ import annotations

import types

from . import ops

__all__ = ["Context", "DepthLimitContext"]

_TOP_LEVEL: dict = {}     # module name -> its top-level package's name (``is_primitive``)


class Context:
    """Decides, per call, primitive or traced; may annotate nodes as tapes are built.

    Default policy: builtins and C functions are primitive (they are never Python functions);
    Python functions are traced unless their top-level module is in ``primitive_modules`` or
    they carry their own VJP rule (``_dcgraph_vjp``: the functions ``dcgraph.grad`` returns).
    Override ``is_primitive`` for another policy, and ``on_<kind>`` (``on_PrimitiveCall``,
    ``on_NestedCall``, ``on_Branch``, ...) to write ``node.meta`` as each node is built.
    """

    primitive_modules: tuple = ("numpy", "scipy", "dcgraph")
    depth_dependent = False   # True when is_primitive's answer depends on the call depth
    _substitutes = False      # set per subclass: does it override ``substitute``?

    def __init__(self, primitive_modules=None, primitive=()):
        if primitive_modules is not None:
            self.primitive_modules = tuple(primitive_modules)
        self.primitive = set(primitive)

    def is_primitive(self, fn: types.FunctionType, depth: int) -> bool:
        """True to record a call of the Python function ``fn`` (made at call depth ``depth``,
        the root frame being 0) as a primitive instead of tracing into it."""
        if fn in self.primitive or "_dcgraph_vjp" in getattr(fn, "__dict__", ()):
            return True          # (a function carrying its own VJP rule: what grad returns)
        module = getattr(fn, "__module__", None)
        if type(module) is str:
            top = _TOP_LEVEL.get(module)
            if top is None:
                if len(_TOP_LEVEL) >= 4096:
                    _TOP_LEVEL.clear()
                top = _TOP_LEVEL[module] = module.partition(".")[0]
            return top in self.primitive_modules
        return isinstance(module, str) and module.partition(".")[0] in self.primitive_modules

    def may_write(self, fn) -> bool:
        """May a primitive call of ``fn`` have written into an array argument without the
        tracer knowing? Then each array argument gets a ``possibly_written`` version after
        the call (later reads depend on the call; gradients through it are checked or
        refused). Default: ``fn`` is not from a module whose effects are known
        (``ops.KNOWN_EFFECT_MODULES``: builtins, math, numpy, scipy, dcgraph, ...)."""
        return ops.effect_unknown(fn)

    def substitute(self, fn, depth: int):
        """A callable to run instead of ``fn`` at this call (made at ``depth``), or None.

        Called for every call made from traced code, in the hook, just before the user's frame
        performs the call (``sys._getframe(2)`` is that frame). The tape records the call under
        ``fn`` with the substitute's result. Overriding it costs a Python call per call site."""
        return None

    def substitutes(self) -> bool:
        """Whether ``substitute`` is overridden (then the hook asks it at every call)."""
        return type(self)._substitutes

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._substitutes = cls.substitute is not Context.substitute

    def annotates(self) -> bool:
        """Whether any ``on_<kind>`` hook is defined (saves a walk when none is)."""
        return any(name.startswith("on_") for klass in type(self).__mro__ if klass is not object
                   for name in vars(klass))

    def annotate(self, node) -> None:
        hook = getattr(self, "on_" + node.kind, None)
        if hook is not None:
            hook(node)


class DepthLimitContext(Context):
    """Trace calls only down to ``depth`` levels below the root; deeper calls are primitive."""

    depth_dependent = True

    def __init__(self, depth: int, **kwargs):
        super().__init__(**kwargs)
        if depth < 0:
            raise ValueError(f"DepthLimitContext: depth must be >= 0, got {depth}")
        self.depth = depth

    def is_primitive(self, fn, depth: int) -> bool:
        return depth > self.depth or super().is_primitive(fn, depth)
