"""What the gradient and incremental passes need to know about a ``@gen`` run's tape.

Built once per tape (and shared by the traces incremental updates derive from it): the nodes
of the choices and traced calls by local address (the ``@`` nodes, relabelled on the tape as
``choice_site``/``call_site`` calls so that printouts and the backward pass see what they are),
the users of every node across nested tapes, and the containers the run mutated.
``choice_site`` is registered as a random primitive, so ``dcgraph.random_variables(trace.tape)``
finds a trace's choices with their distributions and dependencies.
"""
from __future__ import annotations

import operator

from ..dist import Distribution
from .address import as_address

__all__ = ["TapeIndex", "choice_site", "call_site", "index_of"]


def choice_site(dist, address):
    """Tape label of ``dist @ address`` (a random choice); never called."""
    raise RuntimeError("choice_site labels tape nodes; it is not called")


def call_site(invocation, address):
    """Tape label of ``gen_fn(*args) @ address`` (a traced call); never called."""
    raise RuntimeError("call_site labels tape nodes; it is not called")


def _choice_distribution(dist, address):
    return dist


def _register_for_analysis() -> None:
    """Make ``choice_site`` nodes random choices for ``dcgraph.random_variables`` (once)."""
    import dcgraph
    if not _REGISTERED:
        dcgraph.register_random(choice_site, _choice_distribution)
        _REGISTERED.append(True)


_REGISTERED: list = []


class TapeIndex:
    """``choices``/``calls``: local address -> node; ``users``: node -> list of nodes using
    it (a child tape's ``Argument`` uses the caller's node; a ``NestedCall`` uses its child's
    returned node); ``mutated``: ids of containers some node mutated; ``params``: param nodes."""

    def __init__(self, tape, entries=None):
        from .generative import Invocation
        from .runtime import param
        _register_for_analysis()
        self.tape = tape
        self.choices: dict = {}
        self.calls: dict = {}
        self.params: list = []
        self.users: dict = {}
        self.mutated: set = set()
        self.scaled = entries is not None and any(
            getattr(e, "scale", 1.0) != 1.0 for e in entries.values())
        users = self.users
        for node in tape.walk():
            kind = node.kind
            if kind == "PrimitiveCall" or kind == "NestedCall":
                fn = node.fn
                if fn is operator.matmul and len(node.args) == 2:
                    v0 = node.args[0].value
                    if isinstance(v0, Distribution):
                        node.fn = choice_site
                        self.choices[as_address(node.args[1].value)] = node
                    elif type(v0) is Invocation:
                        node.fn = call_site
                        self.calls[as_address(node.args[1].value)] = node
                elif fn is choice_site:
                    self.choices[as_address(node.args[1].value)] = node
                elif fn is call_site:
                    self.calls[as_address(node.args[1].value)] = node
                elif fn is param:
                    self.params.append(node)
                if node.mutates is not None:
                    self.mutated.add(id(node.value))
                if kind == "NestedCall":
                    ret = node.child.returned if node.child is not None else None
                    if ret is not None:
                        users.setdefault(ret, []).append(node)
                    continue
            if kind == "Argument":
                for s in node.source_nodes():
                    users.setdefault(s, []).append(node)
                continue
            for i in node.inputs:
                users.setdefault(i, []).append(node)


def index_of(trace) -> TapeIndex:
    """The index of ``trace``'s tape (built on first use, then shared)."""
    if trace.index is None:
        trace.tape
    return trace.index
