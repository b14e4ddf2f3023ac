"""``dcgraph bugs compile MODEL DATA [INITS...] [--svg F] [--source]``.

Prints the sequential program (``BUGSModel.program()``) under a one-line summary with the log
density at each inits file's initial values; ``--svg F`` writes the graph picture, ``--source``
prints the generated Python instead of the program. Hook: ``add_subparser(subparsers)`` adds the
``bugs`` command to the ``dcgraph`` parser; ``main(args)`` runs it and returns the exit status
(2 with the located message on stderr for a BUGS error).
"""
from __future__ import annotations

import sys

__all__ = ["add_subparser", "main"]


def add_subparser(subparsers) -> None:
    bugs = subparsers.add_parser("bugs", help="compile and sample BUGS models")
    sub = bugs.add_subparsers(dest="bugs_command", required=True, metavar="SUBCOMMAND")
    p = sub.add_parser("compile", help="compile MODEL with DATA (and INITS), print the program")
    p.add_argument("model", metavar="MODEL", help="BUGS model file")
    p.add_argument("data", metavar="DATA", help="data file (R list or JSON)")
    p.add_argument("inits", nargs="*", metavar="INITS", help="initial values, one file per chain")
    p.add_argument("--svg", metavar="F", help="write the graph picture (Graphviz SVG) to F")
    p.add_argument("--source", action="store_true", help="print the generated Python instead")
    p.set_defaults(run=main)
    from .cli_sample import add_parser
    add_parser(sub)


def main(args) -> int:
    from . import compile
    from .errors import BUGSError
    try:
        model = compile(args.model, args.data, list(args.inits) or None)
        densities = [model.logdensity(model.initial_values(c)) for c in range(len(args.inits))]
    except BUGSError as exc:
        print(f"dcgraph bugs compile: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"dcgraph bugs compile: error: {exc}", file=sys.stderr)
        return 2
    summary = (f"# {len(model.graph.nodes)} nodes, {model.dim} parameters"
               f"{f', {model.ndisc} discrete' if model.ndisc else ''}")
    if densities:
        summary += "; log density at inits: " + ", ".join(f"{d:.6f}" for d in densities)
    print(summary)
    print(model.source() if args.source else model.program())
    if args.svg:
        model.graph.to_svg(args.svg)
    return 0
