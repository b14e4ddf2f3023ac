"""The node graph of a BUGS model unrolled with its data (built by ``unroll.build_graph``).

One ``Node`` per scalar element (or per multivariate block) that a statement defines: stochastic
(``~``) or logical (``<-``), observed when the data give its value (``NA`` leaves it unobserved),
constant when it is data or computable from data. Every statement instance keeps its loop
environment and, per variable reference of the statement (``Statement.refs``, in order), the flat
offsets it reads: the sequentialiser and the code generator work from those. An index that is an
unobserved discrete node is resolved at run time (``Instance.dynamic``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import syntax as S
from .errors import BUGSModelError
from .walk import statement_exprs

__all__ = ["Graph", "Node", "Statement", "Instance", "element_name", "topological_order",
           "statement_exprs"]


def element_name(name: str, shape: tuple, offset: int) -> str:
    if not shape:
        return name
    return f"{name}[{','.join(str(i + 1) for i in np.unravel_index(offset, shape))}]"


@dataclass(eq=False)
class Statement:
    """One ``~`` or ``<-`` of the model with its enclosing loops and its variable references."""
    id: int
    ast: object                      # syntax.Stochastic | syntax.Logical
    loops: tuple                     # enclosing syntax.For, outermost first
    refs: list = field(default_factory=list)   # syntax.Var read by the statement, in order
    instances: list = field(default_factory=list)

    @property
    def stochastic(self) -> bool:
        return isinstance(self.ast, S.Stochastic)

    @property
    def line(self) -> int:
        return self.ast.line


@dataclass(eq=False)
class Instance:
    """One unrolled statement: loop values, target offsets and the offsets of each reference."""
    statement: Statement
    env: dict
    target: np.ndarray               # flat offsets of the target
    target_shape: tuple
    refs: list = field(default_factory=list)   # per statement ref: (offsets, shape)
    node: int = -1
    dynamic: dict = field(default_factory=dict)  # ref -> (base, [(stride, var, offset)])


@dataclass(eq=False)
class Node:
    id: int
    shape: tuple                     # the variable's shape
    var: str
    offsets: np.ndarray
    stochastic: bool
    instance: Instance               # the defining instance (the ~ one for stochastic nodes)
    logical: Instance = None         # a stochastic node's logical definition, if any
    observed: bool = False
    constant: bool = False
    value: object = None
    parents: list = field(default_factory=list)   # node ids (non-constant nodes only)

    @property
    def name(self) -> str:
        """The element's BUGS name, e.g. ``mu[2,3]``."""
        if len(self.offsets) == 1:
            return element_name(self.var, self.shape, int(self.offsets[0]))
        first = np.unravel_index(int(self.offsets[0]), self.shape)
        last = np.unravel_index(int(self.offsets[-1]), self.shape)
        return f"{self.var}[{','.join(str(a + 1) if a == b else f'{a + 1}:{b + 1}' for a, b in zip(first, last))}]"
    inputs: list = field(default_factory=list)    # node ids read, constant ones included


@dataclass(eq=False)
class Graph:
    model: S.Model
    statements: list
    nodes: list
    shapes: dict                     # variable -> shape
    data: dict                       # variable -> float array (NaN = not given)
    node_at: dict                    # (variable, offset) -> node id
    source: str = None
    filename: str = None

    def error(self, message, where=None) -> BUGSModelError:
        return BUGSModelError(message, getattr(where, "line", None), getattr(where, "col", None),
                              self.source, self.filename)

    def to_svg(self, path=None) -> str:
        from .picture import graph_svg
        return graph_svg(self, path)


def topological_order(nodes) -> list:
    """Node ids parents first (nodes on a cycle are left out; the sequentialiser reports them)."""
    children = [[] for _ in nodes]
    pending = [0] * len(nodes)
    for n in nodes:
        for p in set(n.parents):
            children[p].append(n.id)
            pending[n.id] += 1
    ready = [n.id for n in nodes if pending[n.id] == 0]
    order = []
    while ready:
        nid = ready.pop()
        order.append(nid)
        for c in children[nid]:
            pending[c] -= 1
            if pending[c] == 0:
                ready.append(c)
    return order
