"""What one probe costs on the running interpreter (the figures behind DESIGN's probe rules).

A loop ``x = x + 1.0`` runs ``n`` times plain and with one probe after its ``BINARY_OP``, inserted
with the running version's call sequence (``instrument.versions``): a C-level ``list.append``
probe (what the tracer uses), a probe calling a Python function, and the plain loop under
``sys.settrace`` with opcode events and a do-nothing tracer (ratio to plain). Then ``track`` of
the loop and of a loop calling ``abs`` (the difference is what the call hook costs). Minimum
over interleaved rounds; costs in ns.

    .venv/bin/python benchmarks/bench_probes.py [--rounds N] [--n N]
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
import types

from bytecode import Bytecode, Instr

import dcgraph
from dcgraph.tracer.instrument.versions import opcode_table


def loop(x, n):
    for _ in range(n):
        x = x + 1.0
    return x


def calls(x, n):
    for _ in range(n):
        x = abs(x)
    return x


def _probed(fn, target):
    """A copy of ``fn`` that calls ``target(value)`` after each BINARY_OP."""
    ops = opcode_table()
    bc = Bytecode.from_code(fn.__code__)
    out = []
    for ins in bc:
        out.append(ins)
        if isinstance(ins, Instr) and ins.name == "BINARY_OP":
            loc = ins.location
            call = [Instr("LOAD_CONST", target, location=loc)]
            call.insert(0 if ops.NULL_FIRST else 1, Instr("PUSH_NULL", location=loc))
            out += call + [Instr("COPY", 3, location=loc)] + ops.call_instrs(1, loc)
            out.append(Instr("POP_TOP", location=loc))
    new = Bytecode(out)
    new._copy_attr_from(bc)
    return types.FunctionType(new.to_code(), fn.__globals__, fn.__name__)


def _tracer(frame, event, arg):
    frame.f_trace_opcodes = True
    return _tracer


def _settrace(n):
    sys.settrace(_tracer)
    try:
        return loop(0.0, n)
    finally:
        sys.settrace(None)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--n", type=int, default=20000)
    args = parser.parse_args(argv)
    n = args.n
    log: list = []

    def python_probe(value):
        log.append(value)

    fns = {"plain": loop, "append probe": _probed(loop, log.append),
           "python probe": _probed(loop, python_probe),
           "track": lambda x, n: dcgraph.track(loop, x, n),
           "plain calls": calls, "track calls": lambda x, n: dcgraph.track(calls, x, n)}
    best = dict.fromkeys([*fns, "settrace"], float("inf"))
    for _ in range(args.rounds):
        for name in best:
            log.clear()
            if name == "settrace":          # a tenth of the iterations, scaled up
                t0 = time.perf_counter()
                _settrace(n // 10)
                elapsed = (time.perf_counter() - t0) * 10
            else:
                fn = fns[name]
                t0 = time.perf_counter()
                fn(0.0, n)
                elapsed = time.perf_counter() - t0
            best[name] = min(best[name], elapsed)
    plain = best["plain"]
    print(f"Python {platform.python_version()}  loop of {n} iterations, one probe each")
    print(f"  plain loop               {plain / n * 1e9:7.1f} ns/iteration")
    for name in ("append probe", "python probe"):
        print(f"  {name:<24} {(best[name] - plain) / n * 1e9:7.1f} ns/probe  "
              f"(x{best[name] / plain:.2f} the loop)")
    print(f"  settrace (opcode events) x{best['settrace'] / plain:.1f} the loop")
    # track adds two probes per iteration of ``loop`` (the item, the sum); per iteration of
    # ``calls`` the same two plus the hook deciding the call of ``abs``
    per_iter = (best["track"] - plain) / n
    per_call_iter = (best["track calls"] - best["plain calls"]) / n
    print(f"  track of the loop        {per_iter * 1e9:7.1f} ns/iteration (2 probes)")
    print(f"  track of a call loop     {per_call_iter * 1e9:7.1f} ns/iteration (2 probes + hook):"
          f" hook ~{(per_call_iter - per_iter) * 1e9:.0f} ns/call")


if __name__ == "__main__":
    main()
