"""Fused runs: a block's straight-line steps replayed by one generated function.

The replay (``Frame.replay_steps``) calls one opcode handler per instruction. Most of a loop's
instructions only move nodes between the stack and the locals (``LOAD_FAST``, ``LOAD_CONST``,
``STORE_FAST``, ``COPY``, a call's callable, ...) or make one node from the next logged value
(``BINARY_OP``, ``COMPARE_OP``, ``BINARY_SUBSCR``, ``FOR_ITER``). ``fused_steps`` replaces
each run of such instructions in a block, with the one instruction that ends the run (any
other, replayed by its own handler, or a ``CALL``), by one step: a function generated once per
code object that does what the handlers would do, in order. Stack entries pushed and popped
within the run live in the function's variables (the stack is written only before a handler
runs, at the run's end, and when an instruction raises), and what is known when the code is
generated (literals, names, placeholders, locations) is bound in advance.

Contract: a fused step changes the frame, the log position and the tape exactly as its
instructions' handlers called one by one would (``tests/tracer/test_fused_runs.py`` compares
the two on the corner corpora). Templates are chosen by handler *function* (``TEMPLATES``), so
each Python version's own handlers decide what is fused; a site whose handler may run a user
class's operator method (a guarded site) is replayed by its handler. Only a run's last
instruction may hand the driver a callee. When an instruction of a run raises ``Missing``, the
step leaves the stack as that instruction's handler would and records the instruction's index
in ``frame.raised_at``.

The log is read as the handlers read it: a counted loop's ``FOR_ITER`` (``counted_loops``)
counts a ``range``'s items instead of reading them, and a ``CALL`` is replayed by ``do_call``,
which reads the callable, or nothing where the site expects it (``CodeInfo.expected``;
``tests/tracer/test_fused_log_format.py``).

Generated code contains no text from the traced program: names, literals and locations are
bound through the function's namespace under generated names.
"""
from __future__ import annotations

import re

from .fused_source import CodeFacts, RunSource, compiled
from .fused_templates import ALONE, ENDS_RUN, TEMPLATES
from ..tape.nodes import append_phi_source

__all__ = ["warm_up", "fuse_block", "fused_steps", "entry_function", "CodeFacts", "TEMPLATES"]

MIN_RUN = 2      # steps a fused run replaces at least (one gains nothing, but ``ALONE``'s)
ENABLED = True   # False: every step replayed by its handler (tests compare the two)
HOT = 50         # entries into a block (over every replay of its code) before it is fused:
                 # generating a run costs about 150 us, as much as replaying it 100 times saves

_PRELUDE = (("stack", "f.stack"), ("push", "stack.append"), ("pop", "stack.pop"),
            ("L", "f.locals"), ("tape", "f.tape"), ("r", "f.r"), ("versions", "f.versions"),
            ("log", "r.log"), ("writes", "r.aliasing.writes"), ("nodes", "tape._nodes"))
_NEEDS = {"log": ("r",), "writes": ("r",), "nodes": ("tape",), "push": ("stack",),
          "pop": ("stack",)}


def _generate(c: CodeFacts, steps: list):
    """One function replaying ``steps`` (templated steps, then possibly one handler)."""
    g = RunSource()
    for handler, op, i in steps:
        template = TEMPLATES.get(handler)
        if template is not None:
            mark = (len(g.lines), list(g.pending), dict(g.unwinds), g.serial)
            if template(g, c, op, i):
                continue
            g.lines[mark[0]:], g.pending, g.unwinds, g.serial = [], mark[1], mark[2], mark[3]
        g.flush()
        g.raising(i)
        g.emit(f"{g.bind(handler)}(f, {g.bind(op)}, {i})")
    g.flush()
    g.ns["placeholders"] = c.placeholders
    used = set(re.findall(r"\b[A-Za-z_]\w*\b", "\n".join(g.lines)))
    if any(g.unwinds.values()):
        used.add("stack")
    for name, needs in _NEEDS.items():
        if name in used:
            used.update(needs)
    prelude = [f"{name} = {value}" for name, value in _PRELUDE if name in used]
    unwind = []
    for i, names in g.unwinds.items():
        if names:
            unwind += [f"    if at == {i}:", f"        stack.extend(({', '.join(names)},))"]
    lines = ["def run(f, op, i):", *("    " + p for p in prelude), "    at = -1", "    try:",
             *("        " + line for line in g.lines),
             "    except Missing:", "        f.raised_at = at",
             *("    " + line for line in unwind), "        raise"]
    return compiled(g, lines, "run")


def entry_function(phis: list, local_names):
    """A function ``enter(frame, edge)`` making the phis of a block entered along ``edge``, as
    ``Frame.phi`` makes them one by one (``local_names``: a local's ``names`` tuple)."""
    g = RunSource()
    lines = ["def enter(f, edge):", "    L = f.locals", "    tape = f.tape",
             "    nodes = tape._nodes", "    versions = f.versions", "    r = f.r",
             "    writes = r.aliasing.writes"]
    for var in phis:
        if type(var) is not str:           # a stack slot's
            lines.append(f"    f.phi({g.bind(var)}, edge)")
            continue
        name, v = g.bind(var), g.var()
        lines += ["    src = L.get(" + name + ")",
                  "    if isinstance(src, Node):",
                  "        if versions:",
                  "            src = r.resolve(src)",
                  *("        " + line for line in append_phi_source(
                      v, "tape", "nodes", name, "src", "edge", g.bind(local_names(var)))),
                  f"        if writes and type({v}.value) is ndarray:",
                  f"            r.aliasing.noted({v})",
                  f"        L[{name}] = {v}"]
    return compiled(g, lines, "enter")


def warm_up(blocks, c: CodeFacts, local_names) -> None:
    """Make ``blocks`` (a code's ``ReplayBlocks``) fuse each block once it is entered ``HOT``
    times: until then a first step counts the entries (at once when ``HOT`` is 0)."""
    blocks.mode = (ENABLED, HOT)
    if not ENABLED:
        return
    blocks.facts, blocks.local_names, blocks.entered = c, local_names, [0] * len(blocks)
    for bi, steps in enumerate(blocks):
        if HOT <= 0:
            fuse_block(blocks, bi)
        elif steps or blocks.phis[bi]:
            blocks[bi] = [(_count_entry, bi, blocks.starts[bi])] + steps


def _count_entry(f, bi, i) -> None:
    """The first step of a block not fused yet (``op`` is the block's index)."""
    blocks = f.blocks
    n = blocks.entered[bi] = blocks.entered[bi] + 1
    if n >= HOT:
        fuse_block(blocks, bi)     # for the next entry (this one goes on with its old list)


def fuse_block(blocks, bi: int) -> None:
    """Block ``bi``'s steps fused, and its phis made by generated code (equal results if
    two threads race)."""
    steps = blocks[bi]
    if steps and steps[0][0] is _count_entry:
        steps = steps[1:]
    phis = blocks.phis[bi]
    if phis:
        blocks.entries[bi] = entry_function(phis, blocks.local_names)
    blocks[bi] = fused_steps(blocks.facts, steps)


def fused_steps(c: CodeFacts, block: list) -> list:
    """``block``'s steps ``(handler, op, index)`` with each run of templated steps, and the step
    after it, replaced by one generated step whose index is the run's last instruction."""
    out, run = [], []
    for step in block:
        run.append(step)
        template = TEMPLATES.get(step[0])
        if template is None or template in ENDS_RUN \
                or not template(RunSource(), c, step[1], step[2]):
            out += _closed(c, run)
            run = []
    out += _closed(c, run)
    return out


def _closed(c: CodeFacts, run: list) -> list:
    if len(run) < MIN_RUN and not (run and TEMPLATES.get(run[0][0]) in ALONE):
        return run
    last = run[-1]
    return [(_generate(c, run), last[1], last[2])]
