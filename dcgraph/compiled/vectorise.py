"""Vectorising compiled replay: runs of isomorphic unrolled iterations as numpy array code.

``vectorise(lines, ns, nodes) -> lines`` rewrites the straight-line body ``PathCode`` (and a
backward pass such as ``dcgraph.ad.codegen``) wrote. An unrolled loop is a run of *groups*:
consecutive blocks of lines with equal templates (``vector_forms.templates``). A run of at least
``MIN_GROUPS`` groups whose every line has a known form (``vector_forms.form``) becomes one
array statement per line of the group, the operands of each line across the groups being:

* literals: one literal, or a bound float64 array of them (loop constants);
* a value defined before the run: the same name in every group (broadcast), or different
  names (packed into an array), or elements of an earlier run's vector (a view of it);
* a value defined earlier in the same group (that line's vector);
* a loop-carried sum: ``acc = acc + t`` / ``acc - t`` chains through one or more lines of a
  group become one ``np.add.accumulate`` over ``[acc0, t_0, ...]``: strictly left to right,
  so every partial sum has the bits of the scalar code.

Reads ``xs[i]`` at positions in arithmetic progression become one slice of the list, guarded
(length, exact element types; nested lists read through ``itemgetter``). Exactness: ``+ - *
/`` and ``sqrt`` on float64 arrays give the bits of Python's scalar operations; other
functions (``math.sin``, ``log``, ...) are mapped over the elements with the ``math`` function
itself in the forward pass unless numpy's ufunc was calibrated equal to it on this machine
(``vector_forms.agrees``), and use numpy's ufuncs in lines assigning adjoints (``g``
variables: the backward pass, where agreement to rounding is what the sweep gives anyway).
A first iteration that differs (``s = 0.0 + t``, a literal where the others read a name) is
part of the run; groups that start mid-iteration are moved to the iteration's boundary. A division by an operand
that holds a zero fails a guard (the scalar code would raise). Values a run defines that
later code reads are unpacked from its vectors with their recorded types. A run whose groups
hold copies of one inner body (a nested loop: ``vector_blocks``) is tried first as a
two-dimensional ``vector_grid.GridRun``. Anything not
recognised stays scalar code; runs shorter than ``MIN_GROUPS`` stay scalar (numpy's per-call
cost exceeds the saving).
"""
from __future__ import annotations

import bisect
import re
from collections import Counter


from .vector_forms import form, templates_and_operands
from .vector_blocks import inner_blocks
from .vector_grid import GridRun
from .vector_grid_sums import NotChain
from .vector_run import Run
from .vector_runtime import bind
from .vector_sums import FLOATS, NotVector, without_joined_inits

__all__ = ["vectorise", "MIN_GROUPS", "MAX_PERIOD"]

MIN_GROUPS = 16                    # fewer iterations: scalar code is faster than numpy calls
MAX_PERIOD = 128                   # lines per iteration considered
_TARGETS = re.compile(r" *([A-Za-z_][\w, ]*?) *[-+*/]?=(?!=)")    # a line's targets
_ASSIGNS = ("\x00 = ", "\x00 += ", "\x00 -= ", "\x00 *= ", "\x00 /= ")  # templates: one target
_NAME = re.compile(r"[vg](?<!\w[vg])\d+(?:_\d+)?\b")     # \b[vg]...: begins with a class
_WORD = re.compile(r"\w")
_SUMS = re.compile(r"_w\d+_\d+ = _a\d+_\d+\[\d+::\d+\]$")
_VECTOR = re.compile(r"(?<![\w.])_w\d+_\d+(?!\w)")
_RANGE = re.compile(r"(v\d+) = ([A-Za-z_]\w*)\((\d+(?:, \d+)*|v\d+)\)$")


def vectorise(lines: list, ns: dict, nodes: list) -> list:
    """``lines`` with runs of isomorphic groups as array code (``lines`` itself when none)."""
    if len(lines) < 2 * MIN_GROUPS:
        return lines
    lines = _without_dead_ranges(lines, ns)
    if not _may_repeat(lines):
        return lines
    bounds = _units(lines)
    ctx = _Context(bounds, ns, nodes, lines)
    pieces = ctx.scan(0, len(bounds) - 1, MAX_PERIOD)
    if not ctx.runs:
        return lines
    covered = set()                              # units a run's code replaces
    for run in ctx.runs:
        covered.update(range(run.s, run.s + run.p * run.n))
    uses = Counter(_NAME.findall("\n".join(     # name -> occurrences in the new body
        line for i in range(len(bounds) - 1) if i not in covered
        for line in lines[bounds[i]:bounds[i + 1]])))
    owns = {}
    for run in ctx.runs:
        owns[id(run)] = own = Counter(_NAME.findall(run.code()))
        uses.update(own)
    out = []
    for piece in pieces:
        if type(piece) is not int:
            own = owns[id(piece)]
            out += piece.lines
            out += piece.unpack(lambda name: uses[name] > own[name])
        else:
            out += lines[bounds[piece]:bounds[piece + 1]]
    return _without_unread_sums(without_joined_inits(out))


def _without_unread_sums(lines: list) -> list:
    """Drop the lines taking a chain member's partial sums out of the chain's array
    (``_w0_3 = _a0_1[2::6]``) when nothing reads them (most members of a multi-line sum)."""
    found = [i for i, line in enumerate(lines) if line[:2] == "_w" and _SUMS.match(line)]
    if not found:
        return lines
    used = Counter(_VECTOR.findall("\n".join(lines)))
    dead = {i for i in found if used[lines[i].split(" ", 1)[0]] == 1}
    return [line for i, line in enumerate(lines) if i not in dead] if dead else lines


def _may_repeat(lines: list) -> bool:
    """False when no ``MIN_GROUPS`` consecutive lines can all have a form, so no run exists
    (a cheap test before templates). A line with a form assigns a local name (``vK = ...``,
    ``gK = ...``, not ``None``: a bare name other than a local is no operand) or is a guard
    ``if ...``; anything else (``v7.append(v9)``, an indented line, the backward pass's
    ``g7 = None``) is a barrier. Lines passing the test may still be barriers: it only rules
    out."""
    stretch = 0
    for line in lines:
        if line[:3] == "if " or line[:1] in ("v", "g") and " = " in line \
                and line[-7:] != " = None":
            stretch += 1
            if stretch >= MIN_GROUPS:
                return True
        else:
            stretch = 0
    return False


def _without_dead_ranges(lines: list, ns: dict) -> list:
    """Drop ``v = range(<int literals>)`` and ``w = iter(v)`` of such a range when nothing
    reads ``w`` (the steps of unrolled loops are literals): they cannot raise and do nothing,
    and inside a loop body they would break the isomorphism of its iterations."""
    found = [(i, m) for i, line in enumerate(lines) if "range(" in line or "iter(" in line
             for m in (_RANGE.match(line),) if m]
    if not found:
        return lines
    refs = _name_counts("\n".join(lines), {name for _, m in found for name in m.group(1, 3)
                                          if name[0] == "v"})
    dead, ranges = set(), {}
    for i, m in found:
        if ns.get(m.group(2)) is range and m.group(3)[0] != "v":
            ranges[m.group(1)] = i
        elif ns.get(m.group(2)) is iter and m.group(3) in ranges \
                and refs.get(m.group(1)) == 1 and refs.get(m.group(3)) == 2:
            dead.update((i, ranges[m.group(3)]))
    for name, i in ranges.items():
        if refs.get(name) == 1:
            dead.add(i)
    return [line for i, line in enumerate(lines) if i not in dead] if dead else lines


def _name_counts(text: str, names: set) -> Counter:
    """Occurrences of the names ``names`` (all ``v<digits>``) in ``text`` as ``_NAME`` finds
    them (whole names): one scan for the literal ``v``, far cheaper than counting all names,
    the numbers an alternation by common prefixes (``_digit_trie``), so that each ``v`` in
    ``text`` costs a few character tests rather than one per name."""
    pattern = re.compile(r"v%s(?!\w)" % _digit_trie(sorted(name[1:] for name in names)))
    return Counter(m.group() for m in pattern.finditer(text)
                   if not m.start() or not _WORD.match(text, m.start() - 1))


def _digit_trie(words: list) -> str:
    """A regex matching exactly the strings of digits ``words`` (sorted), as a trie:
    ``["12", "123", "45"]`` -> ``(?:12(?:3)?|45)``."""
    if words == [""]:
        return ""
    end = words[0] == ""
    rest = words[1:] if end else words
    alts = []
    for first in sorted({w[0] for w in rest}):
        alts.append(first + _digit_trie([w[1:] for w in rest if w[0] == first]))
    body = "(?:" + "|".join(alts) + ")"
    return body + "?" if end else body


def _units(lines: list) -> list:
    """Where the statements of ``lines`` start (a compound statement with its indented body
    is one), then ``len(lines)``: unit ``u`` is ``lines[bounds[u]:bounds[u + 1]]``."""
    bounds = [i for i, line in enumerate(lines) if line[:1] != " "]
    if lines and (not bounds or bounds[0]):
        bounds.insert(0, 0)
    bounds.append(len(lines))
    return bounds


class _Context:
    """The units of one function body, their templates, and the runs found so far."""

    def __init__(self, bounds, ns, nodes, lines):
        self.ns, self.nodes = ns, nodes
        self.runs: list = []
        self.vectors: dict = {}              # name -> (array expression, position)
        self.forms: dict = {}
        self.types: dict = {}
        self.codes, self.operands = [], []
        body = "\n".join(lines)
        self._assigned = None
        self._types: dict = {}               # name -> its recorded type (``recorded_type``)
        shapes, self._flat, self._offsets = templates_and_operands(body)
        self._shapes, self._lines = shapes, lines
        codes = {}
        for i in range(len(bounds) - 1):     # unit i: lines bounds[i] ... bounds[i + 1] - 1
            at = bounds[i]
            if bounds[i + 1] - at > 1:
                self.codes.append(-1 - i)
                self.operands.append(())
                continue
            template = shapes[at]
            code = codes.get(template)
            if code is None:
                f = form(template, ns)
                code = codes[template] = len(codes) if f is not None else -1
                self.forms[code] = f
            self.codes.append(code if code >= 0 else -1 - i)
            self.operands.append(at)             # its line: operands when a run reads it
        self.positions: dict = {}
        self.barriers = []                   # lines no run contains, in order
        for i, c in enumerate(self.codes):
            if c >= 0:
                self.positions.setdefault(c, []).append(i)
            else:
                self.barriers.append(i)
        self.barriers.append(len(self.codes))

    def scan(self, lo: int, hi: int, pmax: int) -> list:
        """Pieces of units ``lo:hi``: unit indices (scalar) and ``Run``s."""
        out, codes, i, floor = [], self.codes, lo, lo
        barriers = self.barriers
        while i < hi:
            c = codes[i]
            best = None
            if c >= 0:
                pos = self.positions[c]
                end = min(hi, barriers[bisect.bisect_left(barriers, i)])  # no barrier inside
                last = MIN_GROUPS - 1        # groups lie before the next barrier (unique codes)
                for j in pos[bisect.bisect_right(pos, i):]:
                    p = j - i
                    if p > pmax or i + MIN_GROUPS * p > end:
                        break
                    if codes[i + last * p] != c:     # group MIN_GROUPS - 1 starts elsewise
                        continue
                    block = codes[i:j]
                    if block != codes[j:j + p]:
                        continue
                    n = 2
                    while i + (n + 1) * p <= hi and codes[i + n * p:i + (n + 1) * p] == block:
                        n += 1
                    if n >= MIN_GROUPS and (best is None or n * p > best[0] * best[1]):
                        best = (p, n)
            if best is None:
                out.append(i)
                i += 1
                continue
            p, n = best
            run, start = self.run(i, p, n, hi, floor), i
            if run is None:
                out += self.scan(i, i + p * n, p - 1) if p > 1 else list(range(i, i + n))
            else:
                out += list(range(i, run.s))      # the lines before its shifted start
                while out and type(out[-1]) is int and out[-1] >= run.s:
                    out.pop()
                self.runs.append(run)
                out.append(run)
                start, n = run.s, run.n
                floor = start + p * n
            i = start + p * n
        return out

    def earlier(self, s: int, p: int, floor: int) -> int:
        """How many groups before ``s`` (none before ``floor``) have the lines of the group
        at ``s`` (a shifted start leaves the first iteration out)."""
        codes, k = self.codes, 0
        block = codes[s:s + p]
        while s - (k + 1) * p >= floor and codes[s - (k + 1) * p:s - k * p] == block:
            k += 1
        return k

    def run(self, i: int, p: int, n: int, hi: int, floor: int):
        """The ``Run`` at ``i`` or, when a value crosses from one group to the next that
        is not a sum (the groups start mid-iteration), at a later start; None if neither.
        After such a failure the cleanest start the failure names is tried first, then the
        one its crossing values give (``NotVector``)."""
        for _ in range(4):
            try:
                return self.attempt(i, p, n, floor)
            except NotVector as exc:
                shift = exc.args[1] if len(exc.args) > 1 else 0
                clean = exc.args[2] if len(exc.args) > 2 else 0
                if not 0 < shift <= p:
                    return None
                if 0 < clean < shift and self.groups(i + clean, p, hi) >= MIN_GROUPS:
                    try:
                        return self.attempt(i + clean, p, self.groups(i + clean, p, hi), floor)
                    except NotVector:
                        pass
                i += shift
                n = self.groups(i, p, hi)
                if n < MIN_GROUPS:
                    return None
        return None

    def attempt(self, i: int, p: int, n: int, floor: int):
        """The ``Run`` of ``n`` groups at ``i``, extended over the groups before it that have
        its lines (``earlier``) when it still vectorises so (tried first: one construction
        instead of two); raises ``NotVector``."""
        k = self.earlier(i, p, floor)
        for block in inner_blocks(self.codes[i:i + p], lambda j: self.uses(i + j)):
            for start, n_ in ((i - k * p, n + k), (i, n)) if k else ((i, n),):
                try:
                    return GridRun(self, start, p, n_, len(self.runs), block)
                except NotChain:
                    break
                except NotVector:
                    pass
            else:
                continue
            break
        if k:
            try:
                return Run(self, i - k * p, p, n + k, len(self.runs))
            except NotVector:
                pass
        return Run(self, i, p, n, len(self.runs))

    def groups(self, i: int, p: int, hi: int) -> int:
        """How many groups from ``i`` on (before ``hi``) have the lines of the first."""
        codes, n = self.codes, 1
        block = codes[i:i + p]
        while i + (n + 1) * p <= hi and codes[i + n * p:i + (n + 1) * p] == block:
            n += 1
        return n

    @property
    def assigned(self) -> Counter:
        """Local name -> number of lines assigning it (found when a run asks)."""
        if self._assigned is None:           # ``_TARGETS`` line by line, ``vK = ...`` read
            found, flat, offsets = Counter(), self._flat, self._offsets    # from its operands
            for i, shape in enumerate(self._shapes):
                if shape.startswith(_ASSIGNS) and flat[offsets[i]][0] in "vg":
                    found[flat[offsets[i]]] += 1
                elif "=" in shape:
                    m = _TARGETS.match(self._lines[i])
                    if m:
                        found.update(_NAME.findall(m.group(1)))
            self._assigned = found
        return self._assigned

    def operands_of(self, i: int) -> list:
        ops = self.operands[i]
        if type(ops) is int:
            offsets = self._offsets
            ops = self.operands[i] = self._flat[offsets[ops]:offsets[ops + 1]]
        return ops

    def uses(self, i: int) -> tuple:
        """``(target or None, names read)`` of unit ``i`` (a line with a form)."""
        ops, kind = self.operands_of(i), self.form_of(i).kind
        names = [x for x in ops if x[0] in "vg"]
        if kind in ("expr", "read"):
            return ops[0], names[1:]
        return None, names

    def form_of(self, i: int):
        return self.forms[self.codes[i]]

    def recorded_type(self, name: str):
        """The recorded type of a value ``vK``; for an adjoint ``gK`` (``gK_P``: of item
        ``P`` of node ``K``), None when the node (item) is a real scalar (its adjoint is a
        float of either type), else the node's type (the run then refuses it)."""
        t = self._types.get(name, self)
        if t is not self:
            return t
        k, _, item = name[1:].partition("_")
        node = self.nodes[int(k)] if int(k) < len(self.nodes) else None
        if node is None:
            t = object
        else:
            value = node.value
            if item:
                value = value[int(item)] if type(value) in (list, tuple) and \
                    int(item) < len(value) else object()
            t = type(value)
            t = None if name[0] == "g" and t in FLOATS else t
        self._types[name] = t
        return t

    def bind(self, obj, hint: str) -> str:
        if type(obj) is type and hint == "_vk_t":          # a type: one name for all
            known = self.types.get(obj)
            if known is None:
                known = self.types[obj] = self.bind(obj, "_vk_type")
            return known
        name, k = hint, 0
        while name in self.ns:
            k += 1
            name = f"{hint}_{k}"
        self.ns[name] = obj
        return name

    def runtime(self) -> None:
        """The helpers array code calls (bound once per namespace)."""
        bind(self.ns)
