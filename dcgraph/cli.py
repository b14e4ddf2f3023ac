"""The ``dcgraph`` command line: ``trace``, ``view``, ``demo`` and ``bugs``.

    dcgraph trace MODULE:FUNCTION ARG... [--kw NAME=VALUE] [--depth N] [--svg F] [--html F] [--json F]
    dcgraph view FILE.json [--depth N] [--svg F] [--html F]
    dcgraph demo

MODULE is an importable module name (looked up from the current directory, as ``python -m``
does) or a path to a ``.py`` file; ARG and VALUE are Python literals (``3``, ``0.5``,
``"'text'"``, ``"[1, 2]"``). Exit status: 0 done, 1 the traced function raised, 2 usage error.
"""
from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import sys
from pathlib import Path

__all__ = ["main", "CLIError", "parse_literal", "load_target"]


class CLIError(Exception):
    """A usage error: the message says what is wrong and is printed without a traceback."""


def parse_literal(text: str, what: str = "argument"):
    """``text`` as a Python literal, or CLIError naming it."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise CLIError(f"{what} {text!r} is not a Python literal (a number, string, list, "
                       f"...); strings need quotes inside the shell's, e.g. \"'{text}'\"") from None


def load_target(spec: str):
    """The callable named by ``MODULE:FUNCTION`` (MODULE a module name or a .py path)."""
    module_name, sep, qualname = spec.rpartition(":")
    if not sep or not module_name or not qualname:
        raise CLIError(f"target {spec!r} is not MODULE:FUNCTION (e.g. examples/loops.py:main)")
    if module_name.endswith(".py") or "/" in module_name:
        path = Path(module_name)
        if not path.is_file():
            raise CLIError(f"no such file: {module_name}")
        spec_ = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec_)
        sys.path.insert(0, str(path.resolve().parent))   # as `python FILE` would
        sys.modules[path.stem] = module
        spec_.loader.exec_module(module)
    else:
        if "" not in sys.path and str(Path.cwd()) not in sys.path:
            sys.path.insert(0, "")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            raise CLIError(f"cannot import module {module_name!r}: {exc}") from None
    obj = module
    for part in qualname.split("."):
        if not hasattr(obj, part):
            raise CLIError(f"{module_name} has no {qualname!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise CLIError(f"{module_name}:{qualname} is not callable")
    return obj


def _output(tape, args) -> None:
    from .views import GraphvizNotFound, show
    show(tape, depth=args.depth, values=not args.no_values)
    try:
        _write_files(tape, args)
    except GraphvizNotFound as exc:
        raise CLIError(str(exc)) from None


def _write_files(tape, args) -> None:
    from .views import to_html, to_json, to_svg
    if getattr(args, "json", None):
        to_json(tape, args.json)
        print(f"wrote {args.json}", file=sys.stderr)
    if args.svg:
        to_svg(tape, args.svg, depth=args.depth)
        print(f"wrote {args.svg}", file=sys.stderr)
    if args.html:
        to_html(tape, args.html, depth=args.depth)
        print(f"wrote {args.html}", file=sys.stderr)


def _trace(args) -> int:
    from . import track
    fn = load_target(args.target)
    positional = [parse_literal(a) for a in args.args]
    keywords = {}
    for item in args.kw:
        name, eq, value = item.partition("=")
        if not eq or not name.isidentifier():
            raise CLIError(f"--kw {item!r} is not NAME=VALUE")
        keywords[name] = parse_literal(value, f"--kw {name}")
    try:
        result, tape = track(fn, *positional, **keywords)
    except Exception as exc:
        tape = getattr(exc, "tape", None)
        if tape is not None:
            _output(tape, args)
        print(f"dcgraph: {args.target} raised {type(exc).__name__}: {_line(exc)}", file=sys.stderr)
        return 1
    _output(tape, args)
    return 0


def _view(args) -> int:
    from .views import from_json
    try:
        tape = from_json(Path(args.file))
    except FileNotFoundError:
        raise CLIError(f"no such file: {args.file}") from None
    except (ValueError, OSError, RecursionError) as exc:   # main prints one printable line
        raise CLIError(f"{args.file}: {exc}") from None
    _output(tape, args)
    return 0


def geom(n, beta, rng):
    """The geometric example: the number of failures before the first success."""
    return n if rng.random() < beta else geom(n + 1, beta, rng)


def _demo(args) -> int:
    import numpy as np

    from . import Context, track
    # dcgraph's own modules are primitive by default; the demo function lives in one
    result, tape = track(geom, 0, 0.3, np.random.default_rng(args.seed),
                         ctx=Context(primitive_modules=("numpy", "scipy")))
    print("geom(n, beta, rng) = n if rng.random() < beta else geom(n + 1, beta, rng)")
    print(f"traced geom(0, 0.3, default_rng({args.seed})) = {result}\n")
    print(tape)
    print()
    _output(tape, args)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dcgraph", description="Trace Python functions and "
                                     "look at their dynamic computation graphs.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def views(p, json_out=True):
        p.add_argument("--depth", type=int, default=2, help="nested call levels shown (2)")
        p.add_argument("--no-values", action="store_true", help="leave values out of the tree")
        p.add_argument("--svg", metavar="F", help="also write the Graphviz SVG to F")
        p.add_argument("--html", metavar="F", help="also write the HTML explorer to F")
        if json_out:
            p.add_argument("--json", metavar="F", help="also save the tape as JSON to F")

    p = sub.add_parser("trace", help="trace MODULE:FUNCTION called with literal arguments")
    p.add_argument("target", metavar="MODULE:FUNCTION")
    p.add_argument("args", nargs="*", metavar="ARG", help="positional arguments (literals)")
    p.add_argument("--kw", action="append", default=[], metavar="NAME=VALUE",
                   help="a keyword argument (a literal); repeatable")
    views(p)
    p.set_defaults(run=_trace)
    p = sub.add_parser("view", help="show a tape saved with --json / Tape.to_json")
    p.add_argument("file", metavar="FILE.json")
    views(p, json_out=False)
    p.set_defaults(run=_view)
    p = sub.add_parser("demo", help="trace the geometric example and print its tape")
    p.add_argument("--seed", type=int, default=7, help="random seed (7)")
    views(p)
    p.set_defaults(run=_demo)
    from .bugs.cli import add_subparser as add_bugs
    add_bugs(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    if argv is None:
        argv = sys.argv[1:]
    args = _parser().parse_args(list(argv) or ["demo"])     # no command: the demo
    try:
        return args.run(args)
    except CLIError as exc:
        print(f"dcgraph {args.command}: error: {_line(exc)}", file=sys.stderr)
        return 2


def _line(message) -> str:
    """``message`` as one printable line (no terminal escapes from a file or a value)."""
    from .tape.printing import printable
    try:
        text = str(message)
    except Exception:       # a user's exception whose __str__ fails
        text = f"<{type(message).__name__}>"
    return printable(text.replace("\n", " "))
