"""The gradient's straight-line code: ``dcgraph.compiled``'s forward code plus a backward pass.

``GradientCode`` is the ``PathCode`` subclass ``compile_gradient`` hands to
``dcgraph.compiled.compile_path``: the body of ``compiled(_a, _kw) -> (value, adjoints)``
recomputes the path (the forward code), then pulls the seed back as ``core.Sweep`` does, node
by node in the same order: scalar operators and ``math`` functions inline, float64 array
arithmetic, sums and reads by the templates of ``codegen_arrays``, other primitives
through their registered rules (value rules on values, node rules on ``Live`` stand-ins through
a ``LiveSweep``). Nodes that do not depend on ``wrt`` get no backward code. ``adjoints`` are
those of ``wrt``, in order (None where nothing flowed). What only emission finds unsupported
raises ``NotCompilable``.
"""
from __future__ import annotations

from ..compiled.expressions import inline  # noqa: F401
from ..compiled.forward import PathCode
from ..compiled.support import NotCompilable, symbol, unalias, where  # noqa: F401
import numpy as np

from .codegen_arrays import ArrayTemplates
from .codegen_backward import TEMPLATES, UNIT, BackwardEmitter, _mode  # noqa: F401
from .codegen_joint import JointRules
from .core import Sweep

__all__ = ["GradientCode", "NotCompilable", "TEMPLATES", "where", "symbol"]


class GradientCode(ArrayTemplates, JointRules, BackwardEmitter, PathCode):
    """Forward code of the path, then its backward pass into the adjoints of ``wrt``."""

    def __init__(self, tape, plan: dict, lengths: dict, runtime: dict, wrt=(), unit=False):
        super().__init__(tape, plan, lengths, runtime)
        self.wrt, self.unit = list(wrt), unit    # unit: the seed of a real scalar is 1.0
        self.activity = Sweep(tape, wrt=set(self.wrt))
        self.state: dict = {}            # node -> NONE / MAYBE / SURE, in backward order
        self.owned: set = set()          # nodes whose adjoint is a buffer made this call
        self.nonzero: dict = {}          # ... made by zeros: node -> positions written
        self.gname: dict = {}            # node -> its adjoint variable (handed-on ones share)
        self.init, self.bwd = [], []
        self.giveable, self.indent, self.cond, self.uses_live = None, "", False, False
        self.slots: dict = {}            # node -> {constant position: scalar adjoint variable}
        self.setup_arrays(tape)

    def g(self, node) -> str:
        return self.gname.get(node) or f"g{self.ids[node]}"

    def tail(self, ret, result: str) -> tuple:
        self.activity.activate(self.ids)          # every node, in execution order
        unit = self.unit and type(ret.value) in (float, np.float64)
        if unit:
            self.mark(ret)                        # its type is guarded: the seed is 1.0
            self.giveable = UNIT
            self.add(ret, UNIT, "scalar")
        else:
            self.add(ret, "_s", _mode(ret))       # Sweep.run seeds the returned node
        for node, phase in reversed(self.events):
            self.backward(node, phase)
        for node in list(self.slots):             # root arguments read at positions
            self.flush(node)
        self.imply_types()
        seed = [] if unit else [f"_s = _seed({result})"]    # its type is guarded
        lines = self.shape_guard_lines() + seed + [f"{n} = None" for n in dict.fromkeys(self.init)]
        lines += (["_ls = _LS()"] if self.uses_live else []) + self.bwd
        outs = "".join((self.g(w) if self.state.get(w) else "None") + ", " for w in self.wrt)
        self.ns["_fresh"] = tuple(w in self.fresh for w in self.wrt)   # no copy needed
        return lines, f"{result}, ({outs})"

    def guards_callee(self, node) -> bool:
        return bool(self.state.get(node))         # only when its rule is used

    def names_of(self, node, k) -> tuple:
        return (f"v{k}", self.g(node))
