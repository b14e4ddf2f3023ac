"""``Tape``: the nodes one traced frame recorded, in execution order (node kinds: module ``nodes``).

A tape is built lazily (``defer``: the first access builds it, once, under its lock), read as a
sequence, navigated (``walk``, ``users``, ``slice``, ``find``, ``path``, ``address``) and checked
(``lint``, which raises ``LintError``); its text form is module ``printing``, its other views
come from ``TapeViews`` (module ``views``).
"""
from __future__ import annotations

import threading
from types import MappingProxyType
from typing import Callable, Iterator

from .nodes import Argument, NestedCall, Node, PrimitiveCall, Raise, Return
from .views import TapeViews

__all__ = ["Tape", "LintError"]


_BUILDING = object()              # Tape._build while its builder runs
_BUILD_LOCK = threading.RLock()   # makes each tape's own lock, on its first build


class LintError(AssertionError):
    """A tape invariant does not hold; the message names the tape and node."""


class Tape(TapeViews):
    """The nodes one traced frame recorded, in execution order; nested calls own child tapes.

    ``untraced`` (root tapes): code object -> why calls of it were recorded as primitive.

    A tape may be *lazy*: ``track`` returns it before its nodes are built from the event log;
    the first access builds every tape of the run at once.
    """

    # immutable defaults, replaced per tape when set (a tape is made per ``track`` call and
    # per nested call: fewer stores each)
    untraced = MappingProxyType({})   # replaced on root tapes by track
    values = "keep"    # "summary" on a root tape whose nodes hold ``Summary``s, not values
    parent: NestedCall | None = None
    result = None      # the frame's return value (or the exception it raised)
    raised = False
    _build: Callable[["Tape"], None] | None = None   # fills this tape (``defer``)
    _lock = None       # made by the first build (``_run_build``)

    # (``track`` makes a root tape, a ``tracer.track.RootTape``, without ``__init__``: it sets
    # the same fields, ``_nodes`` excepted, which its build makes)
    def __init__(self, code=None, fn=None, parent: NestedCall | None = None):
        self.code, self.fn, self._nodes = code, fn, []
        if parent is not None:
            self.parent = parent


    # -- building -------------------------------------------------------------------------
    def append(self, node: Node) -> Node:
        node.tape, node.index = self, len(self._nodes)
        self._nodes.append(node)
        return node

    def defer(self, build: Callable[["Tape"], None]) -> None:
        """Fill this tape's nodes with ``build(tape)`` on first access (from any thread). (Its
        lock is made by that access: most tapes of a run are never read.)"""
        self._build = build

    @property
    def nodes(self) -> list[Node]:
        if self._build is not None:
            self._run_build()
        return self._nodes

    def _run_build(self) -> None:
        """Build the nodes once, under the tape's lock: another thread waits for the whole
        tape, never sees a half-built one. A failure is kept and raised again on every later
        access; an interruption (``KeyboardInterrupt``) leaves the tape to be built again."""
        lock = self._lock
        if lock is None:
            with _BUILD_LOCK:           # one lock per tape, made once
                lock = self._lock
                if lock is None:
                    lock = self._lock = threading.RLock()
        with lock:
            build = self._build
            if build is None or build is _BUILDING:
                return                   # built meanwhile, or read by its own builder
            if isinstance(build, BaseException):
                raise build
            self._build = _BUILDING
            try:
                build(self)
            except Exception as exc:
                self._build = exc
                raise
            except BaseException:
                self._nodes, self._build = [], build
                raise
            self._build = None

    # -- sequence protocol ---------------------------------------------------------------
    def __len__(self):
        return len(self.nodes)

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def __getitem__(self, i):
        return self.nodes[i]

    @property
    def name(self) -> str:
        if self.fn is not None:
            return getattr(self.fn, "__qualname__", None) or getattr(self.fn, "__name__", "?")
        return self.code.co_qualname if self.code is not None else "<tape>"

    @property
    def depth(self) -> int:
        d, t = 0, self
        while t.parent is not None:
            d, t = d + 1, t.parent.tape
        return d

    @property
    def root(self) -> "Tape":
        t = self
        while t.parent is not None:
            t = t.parent.tape
        return t

    @property
    def arguments(self) -> list[Argument]:
        return [n for n in self.nodes if isinstance(n, Argument)]

    @property
    def returned(self) -> Node | None:
        last = self.nodes[-1] if self.nodes else None
        return last if isinstance(last, (Return, Raise)) else None

    # -- navigation ------------------------------------------------------------------------
    def walk(self) -> Iterator[Node]:
        """Every node depth-first in execution order; a NestedCall comes before its child's."""
        stack = [iter(self.nodes)]
        while stack:
            for node in stack[-1]:
                yield node
                if isinstance(node, NestedCall) and node.child is not None:
                    stack.append(iter(node.child.nodes))
                    break
            else:
                stack.pop()

    def users(self, node: Node) -> list[Node]:
        """Nodes (anywhere under this tape) that take ``node`` as an input or an argument source."""
        out = []
        for n in self.walk():
            if any(i is node for i in n.inputs):
                out.append(n)
            elif isinstance(n, Argument) and any(s is node for s in n.source_nodes()):
                out.append(n)
        return out

    def slice(self, node: Node) -> list[Node]:
        """Backward data-flow slice: ``node`` and every node it depends on, in execution order.

        Follows inputs, argument sources into callers, and nested calls through their child's
        return. A read ``c[k]`` (or ``c.k``) of a container version written with constant keys
        depends on the value written to that key (``v`` of ``c[k] = v``), not on writes of
        other keys. One step of this closure is ``dependencies(node)``.
        """
        from .slicing import dependencies
        seen: dict[int, Node] = {}
        stack = [node]
        while stack:
            n = stack.pop()
            if id(n) in seen:
                continue
            seen[id(n)] = n
            stack.extend(dependencies(n))
        return sorted(seen.values(), key=Node.order_key)

    def find(self, fn=None, kind=None, name=None, line=None,
             where: Callable[[Node], bool] | None = None) -> list[Node]:
        """Nodes under this tape and its child tapes, in execution order, matching all given
        criteria: ``fn`` (the callable or its name), ``kind``, ``name``, ``line``, ``where``.

        ``name`` matches the nodes bound to that name (``name in node.names``: stores to a
        local, global, cell or attribute such as ``"self.mu"``, parameters, phis of a local)
        and the nodes whose own ``name`` it is (a global or closure Constant read under it)."""
        out = []
        for n in self.walk():
            if kind is not None and not (n.kind == kind or (isinstance(kind, type) and isinstance(n, kind))):
                continue
            if fn is not None:
                if not isinstance(n, PrimitiveCall):
                    continue
                if isinstance(fn, str) and n.fn_name != fn and getattr(n.fn, "__qualname__", None) != fn:
                    continue
                if not isinstance(fn, str) and n.fn is not fn:
                    continue
            if name is not None and name not in n.names and getattr(n, "name", None) != name:
                continue
            if line is not None and n.line != line:
                continue
            if where is not None and not where(n):
                continue
            out.append(n)
        return out

    @staticmethod
    def path(node: Node) -> list[NestedCall]:
        """The call sites from the root tape down to the tape holding ``node``."""
        sites, tape = [], node.tape
        while tape is not None and tape.parent is not None:
            sites.append(tape.parent)
            tape = tape.parent.tape
        return list(reversed(sites))

    @staticmethod
    def address(node: Node) -> str:
        """Hierarchical address ``root/L7/geom/L4/random``: call sites, then the node's own name."""
        parts = []
        for site in Tape.path(node):
            parts += [f"L{site.line}", site.fn_name]
        if isinstance(node, PrimitiveCall):
            parts += [f"L{node.line}", node.fn_name]
        else:
            parts.append(f"@{node.index}")
        root = node.tape.root.name if node.tape is not None else "?"
        return "/".join([root] + parts)

    # -- checks and views ------------------------------------------------------------------
    def lint(self) -> None:
        """Check the invariants of this tape and all nested ones; raise LintError on the first
        violation: indices, references to earlier nodes, argument sources in the caller,
        phi/branch consistency, and every tape ending in Return or Raise."""
        from .lint import lint_tape
        lint_tape(self)

    def __str__(self):
        from .printing import format_tape
        return format_tape(self)

    def backward(self, seed=1.0) -> dict:
        """Reverse sweep from the returned value with adjoint ``seed``: adjoints go to
        ``node.meta["adjoint"]``; returns {argument name: gradient} (``dcgraph.ad.backward``)."""
        from ..ad import backward
        return backward(self, seed)

    def __reduce__(self):
        """Tapes hold live code objects and values: pickling keeps only the name, and the
        unpickled tape raises a ValueError saying so on access (``to_json`` keeps the nodes)."""
        return _pickled_tape, (self.name,)

    def __repr__(self):
        built = self._build is None
        size = f"{len(self._nodes)} nodes" if built else "not yet built"
        return f"<Tape {self.name}: {size}>"


def _pickled_tape(name: str) -> Tape:
    tape = Tape()
    tape._build = ValueError(f"the tape of {name} was pickled, which keeps only its name (a tape "
                             "holds live code objects and values); use Tape.to_json to send one")
    return tape
