"""``Tape.lint()``: the invariants every tape satisfies, checked node by node.

Linear in the number of nodes: a reference within the node's own tape is checked by index;
a reference to another tape by execution-order keys computed once per tape.
"""
from __future__ import annotations

import inspect

from .nodes import (EMPTY_NAMES, Argument, Branch, Constant, LintError, NestedCall, Node, Phi,
                    PrimitiveCall, Raise, Return, Tape, Yield)

__all__ = ["lint_tape"]


def _fail(tape: Tape, node: Node | None, what: str):
    where = f"@{node.index} ({node.kind})" if node is not None else "tape"
    raise LintError(f"lint: {tape.name} {where}: {what}")


class _Lint:
    """One lint run: the execution-order prefix of each tape met (call-site indices)."""

    def __init__(self, root: Tape):
        self.root = root
        self.prefix: dict[int, tuple] = {id(root): ()}

    def key(self, node: Node) -> tuple | None:
        """``node.order_key()``, or None when its tape is not under the linted root."""
        tape = node.tape
        prefix = self.prefix.get(id(tape))
        if prefix is None:
            if tape.root is not self.root:
                return None
            key = node.order_key()
            self.prefix[id(tape)] = key[:-1]
            return key
        return prefix + (node.index,)

    def reference(self, tape: Tape, node: Node, ref, what: str, here: int) -> None:
        """``ref`` is a node recorded before ``node`` (at position ``here`` of ``tape``)."""
        rt = getattr(ref, "tape", _ABSENT) if isinstance(ref, Node) else _ABSENT
        if rt is tape:
            k = ref.index
            if not (0 <= k < here and tape._nodes[k] is ref):
                _fail(tape, node, f"{what} @{k} is not an earlier node of this tape")
            return
        if rt is _ABSENT:
            _fail(tape, node, f"{what} is not a node: {ref!r}")
        if rt is None:
            if type(ref) is Constant:
                return                   # a shared literal
            _fail(tape, node, f"{what} @{ref.index} belongs to no tape")
        key = self.key(ref)
        if key is None:
            _fail(tape, node, f"{what} @{ref.index} belongs to another run")
        if not key < self.key(node):
            _fail(tape, node, f"{what} @{ref.index} of {rt.name} is not earlier in execution")

    def tape(self, tape: Tape) -> list:
        """Check one tape; return its child tapes."""
        children = []
        nodes = tape.nodes
        last = len(nodes) - 1
        if last < 0 or not isinstance(nodes[-1], (Return, Raise)):
            _fail(tape, nodes[-1] if nodes else None, "tape does not end in Return or Raise")
        reference = self.reference
        names_ok: dict = {}            # id(names) -> names checked (names tuples are shared)
        for i, n in enumerate(nodes):
            if n.tape is not tape or n.index != i:
                _fail(tape, n, f"index/tape mismatch (position {i})")
            inputs = n.inputs
            for r in inputs:
                if isinstance(r, Node):  # ``reference``'s two common cases, inlined:
                    rt = r.tape
                    if rt is tape and 0 <= (k := r.index) < i and nodes[k] is r:
                        continue         # an earlier node of this tape
                    if rt is None and type(r) is Constant:
                        continue         # a shared literal
                j = next(j for j, x in enumerate(inputs) if x is r)
                reference(tape, n, r, f"input {j}", i)
            names = n.names
            if names is not _NO_NAMES and names_ok.get(id(names)) is not names:
                if not _names_ok(names):
                    _fail(tape, n, f"names must be a tuple of distinct strings: {names!r:.80}")
                names_ok[id(names)] = names
            t = type(n)
            if t is PrimitiveCall:
                if n.mutates is not None and n.value is not n.mutates:
                    _fail(tape, n, "a mutating node's value must be the container it mutated")
            elif t is NestedCall:
                child = n.child
                if child is None or child.parent is not n:
                    _fail(tape, n, "nested call without its child tape")
                ret = child.returned
                if isinstance(ret, Return) and ret.value is not n.result:
                    _fail(tape, n, "nested call's value differs from its child's return")
                if n.mutates is not None and n.value is not n.mutates:
                    _fail(tape, n, "a mutating node's value must be the container it mutated")
                self.prefix[id(child)] = self.prefix[id(tape)] + (i,) \
                    if id(tape) in self.prefix else child.parent.order_key()
                children.append(child)
                if child.code is not None and child.code.co_flags & _CO_GENERATOR:
                    self.segment(tape, n)
            elif t is Phi:
                if n.inputs != (n.source,) or n.value is not n.source.value:
                    _fail(tape, n, "phi value differs from its source's")
            elif t is Branch:
                if n.op == "exhausted" and len(n.inputs) != 1:
                    _fail(tape, n, "exhausted-iterator branch without its iterator")
                if n.target != n.edge[1]:
                    _fail(tape, n, "branch target differs from its edge")
            elif t is Argument:
                self.argument(tape, n)
            elif t is Return or t is Raise or t is Yield:
                if i != last:
                    _fail(tape, n, f"{n.kind} before the end of the tape")
                if t is not Raise and (len(n.inputs) != 1 or n.value is not n.inputs[0].value):
                    _fail(tape, n, f"{n.kind.lower()} value differs from its input's")
                if t is Yield and (tape.code is None or not tape.code.co_flags & _CO_GENERATOR
                                   or tape.parent is None):
                    _fail(tape, n, "a yield ends a tape that is not a generator's segment")
        return children

    def segment(self, tape: Tape, n: NestedCall) -> None:
        """``n`` runs a segment of a traced generator: it names the call that made the
        generator, which lists it among its segments, in execution order; the segment
        starts with the frame's arguments (the first) or the value sent in (the others)."""
        maker = n.args[0] if n.args else None
        segments = maker._meta.get("segments") if isinstance(maker, PrimitiveCall) \
            and maker._meta else None
        if segments is None or not any(s is n for s in segments):
            _fail(tape, n, "generator segment without the call that made its generator")
        k = next(j for j, s in enumerate(segments) if s is n)
        before = self.key(segments[k - 1]) if k else None
        if before is not None and not before < self.key(n):
            _fail(tape, n, "generator segments out of execution order")
        first = n.child._nodes[0] if n.child._nodes else None
        sent = type(first) is Argument and first.name in ("(sent)", "(thrown)")
        if (k > 0) != sent:
            _fail(tape, n, "a generator's first segment must start with its arguments, a later "
                  "one with the value sent or the exception thrown in")

    def argument(self, tape: Tape, n: Argument) -> None:
        for s in n.source_nodes():
            if tape.parent is None:
                _fail(tape, n, "root argument has a source")
            if isinstance(s, Constant) and s.tape is None:
                continue
            caller = tape.parent
            self.reference(caller.tape, caller, s, f"source of argument {n.name}", caller.index)


_ABSENT = object()
_NO_NAMES = EMPTY_NAMES    # the shared empty ``names`` (valid: checked once here, not per node)
# frames with segments: generator, coroutine, async generator
_CO_GENERATOR = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def _names_ok(names) -> bool:
    return type(names) is tuple and all(type(x) is str for x in names) \
        and len(set(names)) == len(names)


def lint_tape(root: Tape) -> None:
    """Raise LintError naming the tape and node of the first violated invariant."""
    run = _Lint(root)
    todo = [root]
    while todo:
        todo.extend(run.tape(todo.pop()))
