"""The tape's nodes: the closed set of node kinds of a nested Wengert list of what one traced
frame did (the list itself, ``Tape``, is module ``tape``; both are importable from here).

Node kinds (a closed set; every node is exactly one of them):

=============  =================================================================================
kind           meaning
=============  =================================================================================
Argument       a parameter of the traced frame; ``source`` is the caller's node bound to it
               (a node, a tuple of nodes for ``*args``, a dict for ``**kwargs``, or None for a
               default value or a root argument)
Constant       a literal or a global/closure value that a recorded node used. Literals are
               shared per code site, belong to no tape (``tape is None``) and print inline.
PrimitiveCall  a call not traced into. Operators are calls too (``operator.add``,
               ``operator.getitem``, ``operator.setitem``, ``getattr``, ...). ``fn`` is the callable
               (for a method call: the function looked up on the type, with ``self`` as
               ``args[0]`` and ``method`` set), ``args``/``kwargs`` the input nodes, ``via``
               the global name the callable was looked up by (``f(x)``), else None.
               Without keywords ``kwargs`` is one shared, read-only empty dict.
NestedCall     a call traced into; as PrimitiveCall plus ``child``, the callee's Tape
Branch         control transferred along ``edge = (from_block, to_block)`` because a test had
               truth value ``taken``: the truth of ``inputs[0]`` (``op`` None), a comparison
               folded in (``op`` is '<', 'is', 'in', 'exception matches', ...: the compare that
               fed the jump is not a node of its own), or ``op == 'exhausted'`` for a ``for``
               loop's iterator ``inputs[0]`` running out
Phi            a local or stack value merged at a block entry: ``source`` is the incoming node
               along the edge ``edge = (from_block, to_block)`` actually taken
Return         the value returned by the frame (``inputs[0]``)
Yield          a generator frame suspended, yielding ``inputs[0]`` (a ``Return`` subclass: it
               ends a segment as Return ends a frame)
Raise          an exception leaving the frame (``value`` is the exception)
=============  =================================================================================

Generators are recorded one child tape per *resumption* (a segment): each time a traced
generator frame runs (started or resumed by ``next``, a ``for`` loop, or a primitive such as
``sum`` or ``list``), the frame that resumed it gets a ``NestedCall`` of ``next`` on the
generator, whose child tape holds what the frame did until it yielded (ends in ``Yield``),
returned or raised. The first segment starts with the generator's ``Argument`` nodes (sources:
the arguments of the call that made the generator); a later one with ``Argument("(sent)")``,
the value the resumption sent in (its source: ``v``'s node for ``g.send(v)``), or
``Argument("(thrown)")``, the exception ``g.throw``/``g.close`` raised at the yield. Locals carry over: a segment's nodes may take inputs from
earlier segments of the same frame (earlier in execution, so order keys still hold). The call
that made the generator is a ``PrimitiveCall`` of the generator function whose value is the
generator; its segments are listed in ``meta["segments"]``.

Every node has ``tape``, ``index`` (position in its tape), ``inputs`` (the nodes it used, in the
same tape or earlier in execution order), ``value`` (by reference), ``loc`` (a ``Location``),
``names`` and ``meta``, a dict created on first access, where consumers (the backward pass,
random-variable analysis, Gen, BUGS) write.

``names`` is the tuple of variable names the frame bound the node's value to, in the order of the
stores: locals, globals and closure cells by their name (``a = b = x*2`` binds both, ``x += 1``
binds ``x``, as do ``for x in``, ``with ... as x``, ``a, b = ...`` and comprehension variables),
attributes as ``obj.attr`` where the object has a name (``self.mu``). An Argument starts with its
parameter's name and a Phi with its local's. Subscript stores bind no name, and only nodes of the
storing frame's own tape are named (a literal, shared by every run, never is).

Mutation is explicit: a node that mutates a container (``operator.setitem``, ``list.append``, an
in-place operator, ...) has ``mutates`` set to the container and becomes its latest *version*:
later nodes that use the container take that node as input, so reads depend on the writes
before them. The value of a mutating node is the container; ``result`` holds what the call
returned. Values are recorded by reference: a container shows its final state.
"""
from __future__ import annotations

from typing import Any

from .location import Location, plain_getattr

__all__ = ["Location", "Node", "Argument", "Constant", "PrimitiveCall", "NestedCall", "Branch",
           "Phi", "Return", "Yield", "Raise", "Tape", "LintError", "NODE_KINDS"]


class Node:
    """Base of the node kinds; see the module docstring for the closed set."""

    __slots__ = ("tape", "index", "inputs", "value", "loc", "_meta", "names")
    kind = "Node"

    def __init__(self, inputs: tuple, value: Any, loc: Location | None = None):
        self.tape: Tape | None = None
        self.index: int = -1
        self.inputs = inputs
        self.value = value
        self.loc = loc
        self._meta = None
        self.names: tuple[str, ...] = ()

    def bind(self, name: str) -> None:
        """Record that the frame bound this node's value to ``name`` (once per name)."""
        if name not in self.names:
            self.names += (name,)

    @property
    def meta(self) -> dict:
        """Metadata written by consumers, created on first access."""
        if self._meta is None:
            self._meta = {}
        return self._meta

    @property
    def has_meta(self) -> bool:
        return bool(self._meta)

    @property
    def line(self) -> int | None:
        return self.loc.line if self.loc is not None else None

    def order_key(self) -> tuple:
        """Execution order: compares nodes across nested tapes (call site indices, then own)."""
        key = [self.index]
        tape = self.tape
        while tape is not None and tape.parent is not None:
            key.append(tape.parent.index)
            tape = tape.parent.tape
        return tuple(reversed(key))

    def __repr__(self):
        from .printing import format_node
        return f"<{format_node(self)}>"


class Argument(Node):
    __slots__ = ("name", "source")
    kind = "Argument"

    def __init__(self, name: str, value, source=None, loc=None):
        self.tape, self.index, self.inputs, self.value, self.loc, self._meta = \
            None, -1, (), value, loc, None
        self.name, self.source = name, source
        self.names = (name,)

    def source_nodes(self) -> tuple:
        """The caller's nodes bound to this parameter, flattened (absent ones, such as the
        ``self`` of a bound method whose owner no node holds, are left out)."""
        s = self.source
        if s is None:
            return ()
        if isinstance(s, Node):
            return (s,)
        return tuple(n for n in (s.values() if isinstance(s, dict) else s) if n is not None)


class Constant(Node):
    __slots__ = ("name",)
    kind = "Constant"

    def __init__(self, name: str | None, value, loc=None):
        self.tape, self.index, self.inputs, self.value, self.loc, self._meta, self.names = \
            None, -1, (), value, loc, None, ()
        self.name = name

    @property
    def is_literal(self) -> bool:
        return self.tape is None


class _NoKeywords(dict):
    """The ``kwargs`` of every call node recorded without keyword arguments: one shared empty
    dict (64 bytes less per node) that refuses changes, so no node's keywords change another's."""

    __slots__ = ()

    def _refuse(self, *args, **kwargs):
        raise TypeError("this call node was recorded without keyword arguments: its kwargs "
                        "are a shared, read-only empty dict")

    __setitem__ = __delitem__ = update = pop = popitem = setdefault = clear = __ior__ = _refuse

    def __reduce__(self):
        return dict, ()


NO_KEYWORDS = _NoKeywords()


class PrimitiveCall(Node):
    __slots__ = ("fn", "fn_node", "args", "kwargs", "method", "mutates", "result", "via")
    kind = "PrimitiveCall"

    def __init__(self, fn, args: tuple, kwargs: dict | None, value, loc=None, fn_node=None,
                 method=False):
        args = tuple(args)
        if kwargs:
            inputs = args + tuple(kwargs.values())
        else:
            kwargs, inputs = NO_KEYWORDS, args
        if fn_node is not None:
            inputs = (fn_node,) + inputs
        self.tape, self.index, self.inputs, self.value, self.loc, self._meta, self.names = \
            None, -1, inputs, value, loc, None, ()
        self.fn, self.fn_node, self.args, self.kwargs = fn, fn_node, args, kwargs
        self.method = method
        self.mutates = None
        self.result = value
        self.via = None       # the global name the callable was looked up by, if it was

    @property
    def fn_name(self) -> str:
        fn = self.fn
        name = plain_getattr(fn, "__name__")
        return name if isinstance(name, str) else type(fn).__name__


class NestedCall(PrimitiveCall):
    __slots__ = ("child",)
    kind = "NestedCall"

    def __init__(self, fn, args, kwargs, value, loc=None, fn_node=None, method=False):
        super().__init__(fn, args, kwargs, value, loc, fn_node, method)
        self.child: Tape | None = None


class Branch(Node):
    __slots__ = ("target", "edge", "op", "taken")
    kind = "Branch"

    def __init__(self, edge: tuple, inputs: tuple, taken, op: str | None = None, loc=None):
        self.tape, self.index, self.inputs, self.value, self.loc, self._meta, self.names = \
            None, -1, tuple(inputs), taken, loc, None, ()
        self.edge, self.target, self.op, self.taken = edge, edge[1], op, taken

    @property
    def cond(self) -> Node | None:
        """The node whose truth value was tested (None when a comparison was folded in)."""
        return self.inputs[0] if self.op is None and self.inputs else None


class Phi(Node):
    __slots__ = ("name", "source", "edge")
    kind = "Phi"

    def __init__(self, name: str, source: Node, edge: tuple, loc=None):
        self.tape, self.index, self.inputs, self.value, self.loc, self._meta = \
            None, -1, (source,), source.value, loc, None
        self.name, self.source, self.edge = name, source, edge
        # a local's phi is named (a stack slot's is ``stack[j]``)
        self.names = (name,) if name.isidentifier() else ()


class Return(Node):
    __slots__ = ()
    kind = "Return"


class Yield(Return):
    __slots__ = ()
    kind = "Yield"


class Raise(Node):
    __slots__ = ()
    kind = "Raise"


NODE_KINDS = (Argument, Constant, PrimitiveCall, NestedCall, Branch, Phi, Return, Yield, Raise)


# -- the replay's constructors: the same nodes as the classes' own, appended to a tape ---------
# A tape build makes one node per recorded value: these set the slots directly (no ``__init__``
# chain, no copying of argument tuples) and append the node, about half the cost of
# ``tape.append(Kind(...))``. Every slot a kind declares is set here exactly as its
# ``__init__`` sets it (``tests/tape/test_node_builders.py`` compares them).
_new = object.__new__
_EMPTY: tuple = ()
EMPTY_NAMES = _EMPTY   # the ``names`` of a node bound to no name (one shared empty tuple)


def append_call(tape: Tape, cls: type, fn, args: tuple, kwargs: dict | None, value, loc,
                fn_node=None, method=False) -> PrimitiveCall:
    """``tape.append(cls(fn, args, kwargs, value, loc, fn_node, method))`` for ``cls``
    PrimitiveCall or NestedCall; ``args`` must be a tuple."""
    node = _new(cls)
    nodes = tape._nodes
    if kwargs:
        inputs = args + tuple(kwargs.values())
    else:
        kwargs, inputs = NO_KEYWORDS, args
    if fn_node is not None:
        inputs = (fn_node,) + inputs
    node.tape, node.index, node.inputs, node.value, node.loc, node._meta, node.names = \
        tape, len(nodes), inputs, value, loc, None, _EMPTY
    node.fn, node.fn_node, node.args, node.kwargs = fn, fn_node, args, kwargs
    node.method, node.mutates, node.result, node.via = method, None, value, None
    if cls is NestedCall:
        node.child = None
    nodes.append(node)
    return node


def append_call_source(node: str, tape: str, nodes: str, fn: str, args: str, value: str,
                       loc: str) -> list:
    """Python statements doing ``node = append_call(tape, PrimitiveCall, fn, args, None, value,
    loc)`` inline (for generated replay code, ``tracer.fused_runs``): each argument is the
    name of a variable holding it, ``nodes`` the tape's ``_nodes`` list; the namespace must
    bind ``new_node`` to ``object.__new__``, ``PrimitiveCall``, ``NO_KEYWORDS``, ``EMPTY``."""
    slots = [("tape", tape), ("index", f"len({nodes})"), ("inputs", args),
             ("value", value), ("loc", loc), ("_meta", "None"), ("names", "EMPTY"),
             ("fn", fn), ("fn_node", "None"), ("args", args), ("kwargs", "NO_KEYWORDS"),
             ("method", "False"), ("mutates", "None"), ("result", value), ("via", "None")]
    return [f"{node} = new_node(PrimitiveCall)",
            *(f"{node}.{slot} = {expr}" for slot, expr in slots),
            f"{nodes}.append({node})"]


def append_phi_source(node: str, tape: str, nodes: str, name: str, source: str, edge: str,
                      names: str) -> list:
    """Python statements doing ``node = append_phi(tape, name, source, edge, names)`` inline
    (as ``append_call_source``; the namespace must bind ``new_node`` and ``Phi``)."""
    slots = [("tape", tape), ("index", f"len({nodes})"), ("inputs", f"({source},)"),
             ("value", f"{source}.value"), ("loc", "None"), ("_meta", "None"), ("names", names),
             ("name", name), ("source", source), ("edge", edge)]
    return [f"{node} = new_node(Phi)", *(f"{node}.{slot} = {expr}" for slot, expr in slots),
            f"{nodes}.append({node})"]


def append_phi(tape: Tape, name: str, source: Node, edge: tuple, names: tuple) -> Phi:
    """``tape.append(Phi(name, source, edge))``; ``names`` is what that Phi's ``names`` would
    be (``(name,)`` for a local, ``()`` for a stack slot), shared between phis of one slot."""
    node = _new(Phi)
    nodes = tape._nodes
    node.tape, node.index, node.inputs, node.value, node.loc, node._meta, node.names = \
        tape, len(nodes), (source,), source.value, None, None, names
    node.name, node.source, node.edge = name, source, edge
    nodes.append(node)
    return node


from .tape import LintError, Tape  # noqa: E402 (re-exported; module tape imports the kinds above)
