"""The VJP rule table: one ``Rule`` per primitive, registered one per line by the rule modules.

Three kinds of registration (HIPS autograd's style, named functions only):

``defvjp(fn, vjp_0, vjp_1, ..., names=None)``
    value rules: ``vjp_i(g, ans, *args, **kwargs)`` returns the adjoint of positional argument
    ``i`` given the output adjoint ``g``, the output ``ans`` and the argument *values*; ``None``
    marks an argument that is not differentiable. ``names`` (the parameter names by position)
    lets keyword arguments be differentiated too. Rules must not modify ``g``.
``defnode(fn, rule)``
    node rules: ``rule(sweep, node, g)`` gets the node and accumulates adjoints itself through
    ``sweep.add(node, adjoint)`` (containers, iteration, attribute access, dispatchers).
``definplace(fn, rule)``
    like ``defnode`` but used when the call mutated a container in place (``node.mutates``).
``defzero(fn)``
    the output is piecewise constant or not numeric: its adjoint is dropped.
``defjoint(fn, p, {inner_fn: joint, ...})``
    extra rules for compiled replay only (value rules stay required): when argument ``p`` is
    a positional call of ``inner_fn`` on the path, one call ``joint(wants, g, ans, *args)``
    gives the adjoints of ``fn``'s arguments other than ``p`` followed by those of the inner
    call's arguments (the inner call then gets nothing from ``fn``); ``wants`` (tuple of
    bools, same order) says which are needed, the others may be None.
``defscatter(fn, rule, p, inline=None)``
    another for compiled replay only: argument ``p``'s adjoint is zero but at one key,
    ``rule(g, ans, *args) -> (key, values)`` (an int or a slice); compiled replay adds it in
    place into one buffer per array. ``inline(site, g) -> (key text, values expression) |
    None`` writes the rule's result as code at a call site (``dcgraph.compiled.inline.Site``;
    it must equal the rule's) instead of a call.

A key is the callable recorded in ``PrimitiveCall.fn``, or ``(fn, type)`` for rules chosen by
the type of argument 0 (``defdispatch``: ``scipy.stats`` distributions' ``logpdf``).
"""
from __future__ import annotations

__all__ = ["Rule", "RULES", "load_deferred", "defvjp", "defscalar", "defnode", "definplace", "defzero", "defdispatch",
           "defjoint", "defscatter", "lookup", "primitive_name", "supported", "MissingRuleError"]


class MissingRuleError(NotImplementedError):
    """A primitive the gradient depends on has no VJP rule; the message names it and the
    source line where it was called."""


class Rule:
    """How to pull an adjoint back through one primitive."""

    __slots__ = ("key", "vjps", "names", "node", "inplace", "fast1", "fast2", "sparse", "joint",
                 "scatter")

    def __init__(self, key):
        self.key = key
        self.vjps = None       # tuple of value-rule functions by position (None entries allowed)
        self.names = None      # parameter names by position, for keyword arguments
        self.node = None       # node rule
        self.inplace = None    # node rule for a call that mutated a container
        self.fast1 = self.fast2 = None     # fast paths: value rules for 1 or 2 scalar args
        self.sparse = False    # node rules that take Sparse adjoints of arrays as they are
        self.joint = None      # (position, {inner fn: joint rule}) for compiled replay
        self.scatter = None    # (position, rule) for compiled replay (``defscatter``)

    def index(self, name: str) -> int | None:
        """Position of the parameter called ``name`` (None when unknown)."""
        if self.names is not None and name in self.names:
            return self.names.index(name)
        return None

    def __repr__(self):
        return f"<Rule {primitive_name(self.key)}>"


RULES: dict = {}


def _rule(key) -> Rule:
    rule = RULES.get(key)
    if rule is None:
        rule = RULES[key] = Rule(key)
    return rule


def defvjp(fn, *vjps, names=None) -> None:
    """Register value rules for ``fn``'s positional arguments (see the module docstring)."""
    for v in vjps:
        if v is not None and getattr(v, "__name__", "<lambda>") == "<lambda>":
            raise TypeError(f"defvjp({primitive_name(fn)}): rules must be named functions")
    rule = _rule(fn)
    rule.vjps = tuple(vjps)
    rule.names = tuple(names) if names is not None else None
    rule.fast2 = (vjps[0], vjps[1]) if len(vjps) >= 2 and None not in vjps[:2] else None
    rule.fast1 = vjps[0] if len(vjps) >= 1 else None


def defscalar(fn, *vjps) -> None:
    """Faster value rules for ``fn`` called on real Python/numpy scalars only (the sweep's
    fast path); ``defvjp`` must register the general rules too."""
    rule = _rule(fn)
    if len(vjps) >= 2:
        rule.fast2 = (vjps[0], vjps[1])
    rule.fast1 = vjps[0]


def defjoint(fn, p: int, joints: dict, inline=None) -> None:
    """Register ``fn``'s joint rules for compiled replay (see the module docstring);
    ``inline``: inner fn -> ``form(site, g, wants) -> expression | list | None``, the rule's
    result (a tuple of one item per adjoint, unpacked) written as code at a call site (``dcgraph.compiled.inline.Site`` of
    ``fn``'s call), which must equal the rule's; or a list of one expression per adjoint
    (None where not wanted), each added as it is, in order (a later item may read a name an
    earlier one binds)."""
    for joint in joints.values():
        if getattr(joint, "__name__", "<lambda>") == "<lambda>":
            raise TypeError(f"defjoint({primitive_name(fn)}): rules must be named functions")
    rule = lookup(fn)
    if rule is None or rule.vjps is None:
        raise TypeError(f"defjoint({primitive_name(fn)}): register its value rules first")
    rule.joint = (int(p), dict(joints), dict(inline or {}))


def defscatter(fn, rule, p: int, inline=None) -> None:
    """Register ``fn``'s scatter rule for argument ``p`` (see the module docstring)."""
    if getattr(rule, "__name__", "<lambda>") == "<lambda>":
        raise TypeError(f"defscatter({primitive_name(fn)}): rules must be named functions")
    found = lookup(fn)
    if found is None or found.vjps is None:
        raise TypeError(f"defscatter({primitive_name(fn)}): register its value rules first")
    found.scatter = (int(p), rule, inline)


def defnode(fn, node_rule, sparse: bool = False) -> None:
    """Register a node rule ``node_rule(sweep, node, g)`` for ``fn``. Unless ``sparse``, an
    array-valued node's adjoint is made dense before the rule sees it."""
    rule = _rule(fn)
    rule.node = node_rule
    rule.sparse = rule.sparse or sparse


def definplace(fn, node_rule, sparse: bool = False) -> None:
    """Register the rule used when a call of ``fn`` mutated a container in place."""
    rule = _rule(fn)
    rule.inplace = node_rule
    rule.sparse = rule.sparse or sparse


def _drop(sweep, node, g) -> None:
    """The output is piecewise constant (or not numeric): nothing flows back."""


def defzero(fn) -> None:
    """Declare ``fn``'s output piecewise constant: its adjoint is dropped."""
    _rule(fn).node = _drop


def _dispatch(sweep, node, g) -> None:
    """Pick the rule registered for ``(fn, type(argument 0))`` and apply it."""
    key = (node.fn, type(node.args[0].value)) if node.args else None
    try:
        rule = RULES.get(key)
    except TypeError:
        rule = None
    if rule is None:
        sweep.missing(node, g, key)
        return
    sweep.apply(node, rule, g)


def defdispatch(fn) -> None:
    """Rules for ``fn`` are chosen by the type of its argument 0 (``defvjp((fn, T), ...)``)."""
    _rule(fn).node = _dispatch


def lookup(fn) -> Rule | None:
    try:
        return RULES.get(fn)
    except TypeError:         # unhashable callable
        return None


# Rule modules imported on first need (a primitive without a rule, or ``supported()``), so
# that ``import dcgraph.ad`` does not import scipy.stats (about a second).
_DEFERRED = ["dcgraph.ad.rules_scipy", "dcgraph.ad.rules_dist", "dcgraph.ad.rules_kernels"]


def load_deferred() -> bool:
    """Import the deferred rule modules; True if any was imported now."""
    import importlib
    loaded = False
    while _DEFERRED:
        importlib.import_module(_DEFERRED.pop())
        loaded = True
    return loaded


_NAMESPACES = ("numpy", "numpy.linalg", "scipy.special")


def _namespace_names(fn) -> list[str]:
    """Every public ``numpy``/``numpy.linalg``/``scipy.special`` name bound to ``fn``."""
    import importlib
    out = []
    for mod in _NAMESPACES:
        module = importlib.import_module(mod)
        for name in getattr(module, "__all__", None) or dir(module):
            if not name.startswith("_") and getattr(module, name, None) is fn:
                out.append(f"{mod}.{name}")
    return out


def primitive_name(fn) -> str:
    """A readable dotted name for a primitive (or a ``(fn, type)`` dispatch key)."""
    if type(fn) is tuple and len(fn) == 2:
        owner, kind = fn
        inst = kind.__name__[:-4] if kind.__name__.endswith("_gen") else kind.__name__
        return f"scipy.stats.{inst}.{getattr(owner, '__name__', owner)}"
    objclass = getattr(fn, "__objclass__", None)
    name = getattr(fn, "__name__", None) or type(fn).__name__
    owner = getattr(fn, "__self__", None)
    if type(owner).__name__ == "ufunc" and type(owner).__module__ == "numpy":
        return f"numpy.{owner.__name__}.{name}"           # np.add.reduce
    if objclass is not None:
        module = objclass.__module__
        module = "" if module == "builtins" else module + "."
        return f"{module}{objclass.__qualname__}.{name}"
    module = getattr(fn, "__module__", None) or ""
    if module.startswith(("numpy", "scipy")) or not module:
        import importlib
        for mod in _NAMESPACES:
            if getattr(importlib.import_module(mod), name, None) is fn:
                return f"{mod}.{name}"
    if module in ("builtins", "_operator"):
        module = "operator" if module == "_operator" else ""
    qual = getattr(fn, "__qualname__", name)
    return f"{module}.{qual}" if module else qual


def supported() -> list[str]:
    """Sorted names of every primitive with a rule (importing ``dcgraph.ad`` fills the table);
    a function exported under several names (``numpy.abs``/``numpy.absolute``) is listed under
    each."""
    load_deferred()
    names = set()
    for key, rule in RULES.items():
        if rule.node is _dispatch:
            continue
        names.add(primitive_name(key))
        if type(key) is not tuple and getattr(key, "__objclass__", None) is None:
            names.update(_namespace_names(key))
    return sorted(names)
