"""Turning a ``@model`` function into its log density: an ``ast`` rewrite.

The model's own syntax tree (from its source) is rewritten, never its text, and compiled under
its own file name and line numbers, with the original globals (so the tracer traces it like the
user's code) and closure cells (the helpers of ``runtime`` are added as cells of generated
names). The result is ``logdensity(theta, *args, **kwargs) -> float``; in its body

* ``NAME = param(...)`` becomes ``spec = declare("NAME", line, ...)``,
  ``NAME = constrain(theta, at, spec)``, ``lp = lp + log_jacobian(theta, at, spec)`` (left out
  when the call has no bounds and no kind), ``at = advance(at, spec)``;
* ``TARGET |= VALUE`` becomes ``d = VALUE``; ``if is_distribution(d): lp = lp +
  observe(TARGET, d, line)`` ``else: TARGET |= d`` (numbers and arrays keep their ``|=``);
  the test is left out when VALUE is a call of a distribution factory or class;
* ``return value`` becomes ``return lp`` (after evaluating ``value``), and ``return lp`` ends it.

Nested functions and lambdas are left alone. ``param`` is recognised by what the call's name
resolves to (globals, closure, attribute chains), not by its spelling.
"""
from __future__ import annotations

import ast
import builtins
import linecache
import textwrap
import types

from ..compiled.plan import FIXED_CELLS
from ..dist import Distribution
from .distributions import FACTORIES
from .params import ModelError, param as _param
from .runtime import HELPERS
from .source import function_source

__all__ = ["rewrite", "Rewritten"]

THETA, LP, AT, SPEC, DIST, RET = "_dcg_theta", "_dcg_lp", "_dcg_at", "_dcg_spec", "_dcg_d", "_dcg_ret"


class Rewritten:
    """The rewritten log density ``function`` and the ``statements`` (line -> source text of
    the left side) and ``params`` (line -> bound name) it found."""

    def __init__(self, function, statements: dict, params: dict, filename: str, lines: dict):
        self.function, self.statements, self.params = function, statements, params
        self.filename, self.lines = filename, lines

    def line_text(self, line: int) -> str:
        """The source text of ``line`` of the model's file (empty when unknown)."""
        return self.lines.get(line) or linecache.getline(self.filename, line)


def _load(node):
    return ast.Name(id=node, ctx=ast.Load())


def _store(node):
    return ast.Name(id=node, ctx=ast.Store())


def _call(fn, *args, keywords=()):
    return ast.Call(func=_load(fn), args=list(args), keywords=list(keywords))


def _copy_load(node):
    if isinstance(node, ast.Name):
        return ast.Name(id=node.id, ctx=ast.Load())
    if isinstance(node, ast.Attribute):
        return ast.Attribute(value=node.value, attr=node.attr, ctx=ast.Load())
    if isinstance(node, ast.Subscript):
        return ast.Subscript(value=node.value, slice=node.slice, ctx=ast.Load())
    raise ModelError(f"line {node.lineno}: cannot use {type(node).__name__} as the left side of |=")


def _unconstrained(call: ast.Call) -> bool:
    """``param()``, ``param(3)``, ``param(shape=..., name=...)``: no bounds, no kind, so the map
    from ``theta`` is the identity (no log-Jacobian term)."""
    return len(call.args) <= 1 and not any(isinstance(a, ast.Starred) for a in call.args) and \
        all(k.arg in ("shape", "name") for k in call.keywords)


class _Transformer(ast.NodeTransformer):
    def __init__(self, is_param, is_factory):
        self.is_param, self.is_factory = is_param, is_factory
        self.statements: dict = {}
        self.params: dict = {}
        self.source_lines: list = []

    # nested scopes keep their code
    def visit_FunctionDef(self, node):
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef

    def visit_Assign(self, node):
        value = node.value
        if (isinstance(value, ast.Call) and self.is_param(value.func) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            name, line = node.targets[0].id, node.lineno
            self.params[line] = name
            declare = ast.Call(func=_load("_dcg_declare"),
                               args=[ast.Constant(name), ast.Constant(line), *value.args],
                               keywords=value.keywords)
            out = [ast.Assign(targets=[_store(SPEC)], value=declare),
                   ast.Assign(targets=[_store(name)],
                              value=_call("_dcg_constrain", _load(THETA), _load(AT), _load(SPEC)))]
            if not _unconstrained(value):        # a log-Jacobian only where there is one
                out.append(ast.Assign(targets=[_store(LP)], value=ast.BinOp(
                    left=_load(LP), op=ast.Add(),
                    right=_call("_dcg_logjac", _load(THETA), _load(AT), _load(SPEC)))))
            out.append(ast.Assign(targets=[_store(AT)],
                                  value=_call("_dcg_advance", _load(AT), _load(SPEC))))
            return [ast.copy_location(s, node) for s in out]
        return self.generic_visit(node)

    def visit_AugAssign(self, node):
        if not isinstance(node.op, ast.BitOr):
            return self.generic_visit(node)
        line = node.lineno
        self.statements[line] = ast.unparse(node.target)
        observe = ast.Assign(targets=[_store(LP)], value=ast.BinOp(
            left=_load(LP), op=ast.Add(),
            right=_call("_dcg_observe", _copy_load(node.target), _load(DIST), ast.Constant(line))))
        keep = ast.AugAssign(target=node.target, op=ast.BitOr(), value=_load(DIST))
        out = [ast.Assign(targets=[_store(DIST)], value=node.value)]
        if isinstance(node.value, ast.Call) and self.is_factory(node.value.func):
            out.append(observe)          # the right side is a distribution: no test needed
        else:
            out.append(ast.If(test=_call("_dcg_isdist", _load(DIST)), body=[observe], orelse=[keep]))
        return [ast.fix_missing_locations(ast.copy_location(s, node)) for s in out]

    def visit_Return(self, node):
        out = []
        if node.value is not None:
            out.append(ast.Assign(targets=[_store(RET)], value=node.value))
        out.append(ast.Return(value=_load(LP)))
        return [ast.copy_location(s, node) for s in out]


def _resolver(fn):
    closure = {}
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:
                pass
    missing = object()

    def resolve(node):
        if isinstance(node, ast.Name):
            for space in (closure, fn.__globals__, vars(builtins)):
                if node.id in space:
                    return space[node.id]
            return missing
        if isinstance(node, ast.Attribute):
            base = resolve(node.value)
            return missing if base is missing else getattr(base, node.attr, missing)
        return missing

    def is_param(node):
        return resolve(node) is _param

    def is_factory(node):
        value = resolve(node)
        return any(value is f for f in FACTORIES) or (
            isinstance(value, type) and issubclass(value, Distribution))

    return is_param, is_factory


def rewrite(fn, found=None) -> Rewritten:
    """The log density of the model function ``fn`` (see the module docstring); ``found`` is
    its ``(lines, first_line)`` if already looked up (``source.function_source``)."""
    if not isinstance(fn, types.FunctionType):
        raise TypeError(f"@model needs a Python function, got {type(fn).__name__}")
    lines, first = found or function_source(fn)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        raise ModelError(f"@model: {fn.__qualname__} is not a def statement")
    ast.increment_lineno(tree, first - 1)
    fdef.decorator_list = []
    transformer = _Transformer(*_resolver(fn))
    body = []
    for stmt in fdef.body:
        new = transformer.visit(stmt)
        body.extend(new if isinstance(new, list) else [new])
    prologue = [ast.Assign(targets=[_store(LP)], value=ast.Constant(0.0)),
                ast.Assign(targets=[_store(AT)], value=ast.Constant(0))]
    fdef.body = [ast.copy_location(s, fdef) for s in prologue] + body + [
        ast.copy_location(ast.Return(value=_load(LP)), fdef)]
    if fdef.args.posonlyargs:
        fdef.args.posonlyargs.insert(0, ast.arg(arg=THETA))
    else:
        fdef.args.args.insert(0, ast.arg(arg=THETA))
    cells = list(fn.__code__.co_freevars) + list(HELPERS)
    outer = ast.FunctionDef(
        name="_dcg_outer", args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=c) for c in cells],
                                               kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=[fdef, ast.Return(value=_load(fdef.name))], decorator_list=[])
    module = ast.Module(body=[ast.copy_location(outer, fdef)], type_ignores=[])
    ast.fix_missing_locations(module)
    filename = fn.__code__.co_filename
    code = compile(module, filename, "exec")
    outer_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    inner_code = next(c for c in outer_code.co_consts if isinstance(c, types.CodeType)
                      and c.co_name == fdef.name)
    by_name = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    by_name.update({name: types.CellType(h) for name, h in HELPERS.items()})
    closure = tuple(by_name[name] for name in inner_code.co_freevars)
    function = types.FunctionType(inner_code, fn.__globals__, fn.__name__, fn.__defaults__,
                                  closure or None)
    function.__kwdefaults__ = fn.__kwdefaults__
    function.__qualname__ = fn.__qualname__
    setattr(function, FIXED_CELLS, frozenset(HELPERS))     # made here, never rebound
    return Rewritten(function, transformer.statements, transformer.params, filename,
                     {first + k: text for k, text in enumerate(lines)})
