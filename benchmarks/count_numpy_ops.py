"""Numpy-level operations one compiled gradient of a ``bench_grad`` case executes.

    PYTHONPATH=. python benchmarks/count_numpy_ops.py [--case rats]

Runs the compiled gradient (``compile_gradient``, wrt the first argument, as ``bench_grad``'s
compile cost does) once under a line tracer and counts, in every executed line of its
generated source, the expression nodes (operators, comparisons, subscripts, calls) whose
operands include an ndarray or a numpy function the vectoriser binds (``_vx_*``): each is one
call into numpy's C code (a ufunc, an indexing, ``np.array``, ``np.add.accumulate``, ...).
Prints the lines executed and that count.
"""
import argparse
import ast
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_grad  # noqa: E402

import dcgraph  # noqa: E402
from dcgraph.ad.compiled import compile_gradient  # noqa: E402

_PYTHON_HELPERS = {"_vx_alltype", "_vx_lengths", "_vx_longer", "_vx_chain"}   # no numpy call


def count(case: str) -> tuple:
    """``(lines executed, numpy-level operations)`` of one compiled gradient of ``case``."""
    args = bench_grad.make_data()[case]
    f = bench_grad.PLAIN[case]
    _, tape = dcgraph.track(f, *args)
    cg = compile_gradient(tape, [tape.arguments[0]], args)
    source = cg.source.split("\n")
    executed, final = [], {}

    def tracer(frame, event, arg):
        if frame.f_code.co_name != "compiled":
            return None

        def local(frame, event, arg):
            if event == "line":
                executed.append(frame.f_lineno)
            elif event == "return":
                final.update(frame.f_locals)
            return local
        return local

    sys.settrace(tracer)
    try:
        cg(args, {})
    finally:
        sys.settrace(None)
    namespace = cg._fn.__globals__

    def numpy_name(name: str) -> bool:
        value = final.get(name, namespace.get(name))
        return isinstance(value, (np.ndarray, np.ufunc)) or \
            name.startswith("_vx_") and name not in _PYTHON_HELPERS

    ops = 0
    for number in executed:
        text = source[number - 1].strip()
        if text.startswith("if "):
            text = text[3:text.rindex(":")]
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.Subscript, ast.Call)):
                if any(numpy_name(n.id) for n in ast.walk(node) if isinstance(n, ast.Name)):
                    ops += 1
    return len(executed), ops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--case", default="rats")
    case = parser.parse_args().case
    lines, ops = count(case)
    print(f"{case}: {lines} lines executed, {ops} numpy-level operations per gradient")


if __name__ == "__main__":
    main()
