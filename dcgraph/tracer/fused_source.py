"""The source of a fused run being generated (module ``fused_runs``): its lines, the
namespace its generated names are bound in, and the run's stack entries held in variables.

``RunSource`` is what the instruction templates (module ``fused_templates``) write into;
``CodeFacts`` what they read of the code object. Generated code contains no text from the
traced program: every name, literal and location is bound under a generated name.
"""
from __future__ import annotations

import numpy as np

from .events import MARK_TYPES, Missing
from .generators import resumed_item
from .instrument import semantics311 as s311
from .instrument.semantics311 import NULL, Folded, Placeholder
from .operator_guards import python_inplace
from ..tape.nodes import EMPTY_NAMES, NO_KEYWORDS, Constant, Node, Phi, PrimitiveCall

__all__ = ["CodeFacts", "RunSource", "compiled"]


class CodeFacts:
    """What the templates read of one code object: its ``CodeInfo``, structure, the operator
    sites that are guarded, and the per-site placeholders the handlers share."""

    __slots__ = ("info", "s", "guarded_sites", "placeholders")

    def __init__(self, info, guarded_sites, placeholders: dict):
        self.info, self.s = info, info.structure
        self.guarded_sites, self.placeholders = guarded_sites, placeholders


class RunSource:
    """The generated function's lines, namespace, and the run's stack entries held in
    variables (``pending``: (variable, is a fresh unnamed node of this tape), bottom first)."""

    def __init__(self):
        self.lines: list[str] = []
        self.ns: dict = {"Missing": Missing, "MARK_TYPES": MARK_TYPES, "NULL": NULL,
                         "Placeholder": Placeholder, "Folded": Folded, "Node": Node,
                         "new_node": object.__new__, "PrimitiveCall": PrimitiveCall,
                         "Constant": Constant, "NO_KEYWORDS": NO_KEYWORDS, "EMPTY": EMPTY_NAMES,
                         "ndarray": np.ndarray, "is_mutable": s311._is_mutable,
                         "python_inplace": python_inplace, "resumed_item": resumed_item,
                         "Phi": Phi}
        self.known: dict = {}           # bound name -> its value (placeholders read statically)
        self.pending: list = []
        self.unwinds: dict = {}         # instruction -> the variables to push when it raises
        self.serial = 0

    def bind(self, value) -> str:
        name = f"k{len(self.ns)}"
        self.ns[name] = value
        self.known[name] = value
        return name

    def var(self) -> str:
        self.serial += 1
        return f"v{self.serial}"

    def emit(self, *lines: str) -> None:
        self.lines.extend(lines)

    # -- the stack ----------------------------------------------------------------------------
    def push(self, name: str, fresh: bool = False) -> None:
        self.pending.append((name, fresh))

    def pop(self) -> tuple:
        if self.pending:
            return self.pending.pop()
        v = self.var()
        self.emit(f"{v} = pop()")
        return v, False

    def flush(self) -> None:
        names = [name for name, _ in self.pending]
        if len(names) == 1:
            self.emit(f"push({names[0]})")
        elif names:
            self.emit(f"stack.extend(({', '.join(names)},))")
        self.pending = []

    def raising(self, i: int, indent: str = "") -> None:
        """Instruction ``i`` may raise from here: the stack it leaves is the pending entries."""
        self.emit(f"{indent}at = {i}")
        self.unwinds[i] = [name for name, _ in self.pending]

    def operands(self, n: int) -> list:
        """``n`` operands popped as the handlers pop them (``f.use()``, top first), bottom
        first."""
        popped = [self.pop()[0] for _ in range(n)]
        return self.used(popped)[::-1]

    def used(self, names: list) -> list:
        """``f.use()`` of entries popped in this order: resolved when containers have versions."""
        if not names:
            return []
        out = [self.var() for _ in names]
        self.emit("if versions:", *(f"    {o} = f.used({n})" for o, n in zip(out, names)),
                  "else:", *(f"    {o} = {n}" for o, n in zip(out, names)))
        return out


def compiled(g: RunSource, lines: list, name: str):
    """The function ``name`` that ``lines`` define, in ``g``'s namespace."""
    exec(compile("\n".join(lines), "<dcgraph fused run>", "exec"), g.ns)
    return g.ns[name]
