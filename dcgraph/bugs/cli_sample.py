"""``dcgraph bugs sample MODEL DATA [INITS...] [--chains N] [--draws N] [--warmup N]
[--monitor a,b] [--sampler auto|nuts|slice] [--seed N] [--csv F] [--svg F]``.

Compiles the model, prints the sampler assignment, samples (``fit.sample``) and prints the
OpenBUGS-style summary of the monitored nodes; ``--csv F`` writes every draw (one row per
draw), ``--svg F`` a trace and density plot (needs matplotlib). Hook: ``add_parser(sub)`` adds
``sample`` to the ``dcgraph bugs`` subcommands; ``main(args)`` returns the exit status (2 with
the located message on stderr for a BUGS error or bad option).
"""
from __future__ import annotations

import sys

__all__ = ["add_parser", "main"]


def add_parser(sub) -> None:
    from .samplers.assign import SAMPLERS
    p = sub.add_parser("sample", help="MCMC on MODEL with DATA (and INITS), print the summary")
    p.add_argument("model", metavar="MODEL", help="BUGS model file")
    p.add_argument("data", metavar="DATA", help="data file (R list or JSON)")
    p.add_argument("inits", nargs="*", metavar="INITS", help="initial values, one file per chain")
    p.add_argument("--chains", type=int, default=4, help="number of chains (default 4)")
    p.add_argument("--draws", type=int, default=1000, help="draws per chain after warm-up")
    p.add_argument("--warmup", type=int, default=1000, help="warm-up iterations per chain")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--monitor", metavar="A,B", help="variables to record (default: parameters)")
    p.add_argument("--sampler", choices=SAMPLERS, default="auto", help="continuous sampler")
    p.add_argument("--csv", metavar="F", help="write every draw to F (CSV)")
    p.add_argument("--svg", metavar="F", help="write trace and density plots to F (SVG)")
    p.set_defaults(run=main)


def main(args) -> int:
    from . import compile
    from .errors import BUGSError
    from .fit import sample
    try:
        model = compile(args.model, args.data, list(args.inits) or None, seed=args.seed)
        result = sample(model, chains=args.chains, draws=args.draws, warmup=args.warmup,
                        seed=args.seed, sampler=args.sampler, monitor=args.monitor)
    except (BUGSError, OSError, ValueError) as exc:
        print(f"dcgraph bugs sample: error: {exc}", file=sys.stderr)
        return 2
    print(result.assignment)
    print(result.summary().render())
    if args.csv:
        result.to_csv(args.csv)
    if args.svg:
        from ..infer import plot_trace
        try:
            fig = plot_trace(result.draws, result.names)
        except ImportError as exc:
            print(f"dcgraph bugs sample: error: {exc}", file=sys.stderr)
            return 2
        fig.savefig(args.svg, format="svg")
    return 0
