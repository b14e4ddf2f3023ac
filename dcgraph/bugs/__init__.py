"""BUGS models: ``dcgraph.bugs.compile(model, data, inits=None) -> BUGSModel``.

The route (DESIGN.md section 5): text -> syntax tree (``parse``) -> node graph with the data
(``graph``) -> sequential program (``sequential``) -> generated Python (``codegen``), traced by
``dcgraph.track`` like any other code. ``parse``, ``read_data`` and ``BUGSError`` are re-exported.
"""
from importlib import import_module

__all__ = ["compile", "BUGSModel", "BUGSError", "parse", "read_data"]

_LAZY = {"BUGSModel": "dcgraph.bugs.model", "BUGSError": "dcgraph.bugs.errors",
         "parse": "dcgraph.bugs.parser", "read_data": "dcgraph.bugs.rdata",
         "compile": "dcgraph.bugs.compiler"}


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dcgraph.bugs' has no attribute {name!r}")
    return getattr(import_module(module), name)
