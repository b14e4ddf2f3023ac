"""``Tape.lint()``: the invariants every tape satisfies, checked node by node."""
from __future__ import annotations

from .nodes import (Argument, Branch, Constant, LintError, NestedCall, Node, Phi, PrimitiveCall,
                   Raise, Return, Tape)

__all__ = ["lint_tape"]


def _fail(tape: Tape, node: Node | None, what: str):
    where = f"@{node.index} ({node.kind})" if node is not None else "tape"
    raise LintError(f"lint: {tape.name} {where}: {what}")


def _check_reference(tape: Tape, node: Node, ref, what: str):
    if not isinstance(ref, Node):
        _fail(tape, node, f"{what} is not a node: {ref!r}")
    if isinstance(ref, Constant) and ref.tape is None:
        return  # a shared literal
    if ref.tape is None:
        _fail(tape, node, f"{what} @{ref.index} belongs to no tape")
    if ref.tape.root is not tape.root:
        _fail(tape, node, f"{what} @{ref.index} belongs to another run")
    if not ref.order_key() < node.order_key():
        _fail(tape, node, f"{what} @{ref.index} of {ref.tape.name} is not earlier in execution")


def lint_tape(root: Tape) -> None:
    """Raise LintError naming the tape and node of the first violated invariant."""
    todo = [root]
    while todo:
        todo.extend(_lint_one(todo.pop()))


def _lint_one(tape: Tape) -> list:
    """Check one tape; return its child tapes."""
    children = []
    nodes = tape.nodes
    if not nodes or not isinstance(nodes[-1], (Return, Raise)):
        _fail(tape, nodes[-1] if nodes else None, "tape does not end in Return or Raise")
    for i, n in enumerate(nodes):
        if n.tape is not tape or n.index != i:
            _fail(tape, n, f"index/tape mismatch (position {i})")
        if isinstance(n, (Return, Raise)) and i != len(nodes) - 1:
            _fail(tape, n, "Return/Raise before the end of the tape")
        for j, r in enumerate(n.inputs):
            _check_reference(tape, n, r, f"input {j}")
        if isinstance(n, Argument):
            for s in n.source_nodes():
                if tape.parent is None:
                    _fail(tape, n, "root argument has a source")
                if s.tape is None and isinstance(s, Constant):
                    continue
                _check_reference(tape, tape.parent, s, f"source of argument {n.name}")
        elif isinstance(n, Phi):
            if n.inputs != (n.source,) or n.value is not n.source.value:
                _fail(tape, n, "phi value differs from its source's")
        elif isinstance(n, Branch):
            if n.op == "exhausted" and len(n.inputs) != 1:
                _fail(tape, n, "exhausted-iterator branch without its iterator")
            if n.target != n.edge[1]:
                _fail(tape, n, "branch target differs from its edge")
        elif isinstance(n, Return):
            if len(n.inputs) != 1 or n.value is not n.inputs[0].value:
                _fail(tape, n, "return value differs from its input's")
        if isinstance(n, NestedCall):
            child = n.child
            if child is None or child.parent is not n:
                _fail(tape, n, "nested call without its child tape")
            ret = child.returned
            if isinstance(ret, Return) and ret.value is not n.result:
                _fail(tape, n, "nested call's value differs from its child's return")
            children.append(child)
        elif isinstance(n, PrimitiveCall) and n.mutates is not None and n.value is not n.mutates:
            _fail(tape, n, "a mutating node's value must be the container it mutated")
    return children
