"""``compile(model, data, inits=None)``: BUGS model text and data to a ``BUGSModel``."""
from __future__ import annotations

import os

from .codegen import generate
from .errors import BUGSModelError
from .unroll import build_graph
from .model import BUGSModel
from .parser import parse
from .rdata import read_data
from .sequential import sequentialise
from .templates import DISTRIBUTIONS

__all__ = ["compile"]

DISCRETE = tuple(name for name, fam in DISTRIBUTIONS.items() if fam.discrete)


def _model_text(model):
    if isinstance(model, os.PathLike) or (isinstance(model, str) and "{" not in model
                                          and os.path.exists(model)):
        with open(model, encoding="utf-8") as fh:
            return fh.read(), os.fspath(model)
    if not isinstance(model, str):
        raise TypeError(f"model must be BUGS text or a path, not {type(model).__name__}")
    return model, None


def compile(model, data, inits=None, seed: int = 0) -> BUGSModel:
    """Compile a BUGS ``model`` (text or path) with ``data`` (path, R-list or JSON text, dict).

    ``inits``: one data-like source or a list of them (one per chain); parameters they leave out
    are drawn from the prior by ``BUGSModel.initial_values``.
    """
    text, filename = _model_text(model)
    tree = parse(text, filename=filename)
    values = read_data(data) if not isinstance(data, dict) else read_data(dict(data))
    g = build_graph(tree, values, text, filename)
    parts, blocks = sequentialise(g, DISCRETE)
    for part in parts:
        fam = DISTRIBUTIONS.get(part.statement.ast.dist.name) if part.statement.stochastic else None
        block = len(part.instances[0].target) > 1
        if part.statement.stochastic and block != (fam.event != "scalar"):
            what = "a block of nodes" if block else "a single node"
            raise BUGSModelError(f"'{part.statement.ast.dist.name}' cannot define {what} "
                                 f"('{part.statement.ast.target.name}')", part.statement.line,
                                 part.statement.ast.col, text, filename)
    generated = generate(g, parts, blocks)
    if inits is None:
        inits = []
    elif isinstance(inits, (list, tuple)):
        inits = [read_data(i) for i in inits]
    else:
        inits = [read_data(inits)]
    return BUGSModel(g, parts, blocks, generated, inits, seed)
