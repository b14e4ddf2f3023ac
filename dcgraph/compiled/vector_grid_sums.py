"""Loop-carried sums of a two-dimensional run (a mixin of ``vector_grid.GridRun``).

Sums are found by running the group's assignments in the scalar code's order (``order``):
lines whose operand reads a value of an earlier copy or group, then the lines reading only
those, joined by what they read, form the chains. A chain is one of:

* one sum through all groups and copies (``lp += t`` in both loops): every member reads the
  member before it, the first a value (or literal) from before the run; its terms are laid out
  in that order in one ``(n, L)`` table, the first term takes the initial value in, and the
  table's flat view is accumulated left to right;
* a sum restarted in every group (``r = 0.0`` before the inner loop, or a value an outer line
  before the block computed): the table has that value in column 0 and is accumulated along
  each row;
* one sum per copy through the groups (the backward pass's adjoints of values the inner loop
  reads in every group, ``g_ys[j]``): an ``(n * r, m)`` table of the ``r`` members' terms, the
  initial values added into its first row, accumulated down each column.

Both give the bits of the scalar code (each partial sum is one IEEE addition of the previous
one and a term, in the scalar order). A later line may read a chain's partial sums once all its
members are before it (the chain is then accumulated first: ``readable``). Anything else
raises ``NotVector``.
"""
from __future__ import annotations

import ast

import numpy as np

from .vector_run import Run
from .vector_sums import NotVector

__all__ = ["GridSums", "NotChain"]


class NotChain(NotVector):
    """The run's sums are no chain of a kind ``GridSums`` writes (other inner blocks of the
    same groups would fail alike: the caller tries none)."""


class GridSums:
    """``find_chains``, ``readable`` and ``accumulate`` of a ``GridRun``."""

    def find_chains(self) -> list:
        """Sums carried through the group's lines in the scalar code's order (see the module)."""
        self.chain_of = {}
        sides = {}
        for j, f in enumerate(self.forms):
            tree = f.tree if f.kind == "expr" else None
            if type(tree) is not ast.BinOp or type(tree.op) not in (ast.Add, ast.Sub):
                continue
            sign = "+" if type(tree.op) is ast.Add else "-"
            options = [(tree.left, tree.right, sign)]
            if sign == "+":
                options.append((tree.right, tree.left, "+"))
            sides[j] = [(link.id, rest, sg) for link, rest, sg in options
                        if type(link) is ast.Name]
        if not sides:
            return []
        reaching = self.reaching()   # (line, ph) -> the events its reads take values of
        read = {(j, ph): reaching[(j, int(ph[3:]))] for j, options in sides.items()
                for ph, _, _ in options}
        events = list(self.order())
        summary = {}                # (line, ph) -> (lines it reads, lines it reads across
        for key, found in read.items():     # copies or groups)
            j = key[0]
            lines, crossing = set(), set()
            for k, d in enumerate(found):
                if d is not None:
                    lines.add(d[0])
                    if d[0] not in crossing and self.crosses(d, (j, k)):
                        crossing.add(d[0])
            summary[key] = (lines, crossing)
        links, pending = {}, dict(sides)   # line -> (ph, rest, sign): a member's link
        while True:                 # members: lines reading a value of an earlier copy or
            grown = False           # group, then the lines reading only members
            for j, options in list(pending.items()):
                for ph, rest, sign in options:
                    lines, crossing = summary[(j, ph)]
                    if lines and lines <= links.keys() or crossing and crossing <= sides.keys():
                        links[j] = (ph, rest, sign)
                        del pending[j]
                        grown = True
                        break
            if not grown:
                break
        if not links:
            return []
        group = {j: j for j in links}           # chains: links joined by what they read
        def root(j):
            while group[j] != j:
                j = group[j]
            return j
        for j, (ph, _, _) in links.items():
            for d in read[(j, ph)]:
                if d is not None and d[0] in links:
                    group[root(d[0])] = root(j)
        chains = []
        for top in sorted({root(j) for j in links}):
            members = sorted(j for j in links if root(j) == top)
            for i in members:
                self.chain_of[i] = len(chains)
            chains.append(self.chain(members, events, read, links))
        return chains

    def chain(self, members: list, events: list, read: dict, links: dict) -> tuple:
        """``(members, (rest, sign) of each, init)``: ``init`` a name or literal from before
        the run (one sum through all groups), or ``(line,)`` / ``(literal,)``: a sum
        restarted in every group from that outer line's value or that literal."""
        chain = [(j, idx) for j, idx in events if j in members]
        parts = [links[i][1:] for i in members]
        if self.linked(chain, read, links, 0, len(chain)):
            first = chain[0][0]
            return members, parts, self.column(first, links[first][0])[0]
        if all(map(self.inner, members)):        # one sum per copy, through the groups
            inits = self.columns(chain, read, links)
            if inits is not None:
                return members, parts, ("columns", inits)
        per = len(chain) // self.n               # a sum restarted in every group from the
        start = None                             # value of one outer line before the block
        for k in range(self.n):
            j, idx = chain[k * per]
            d = read[(j, links[j][0])][idx]
            if d is None:                        # a literal
                d = self.ops[j][idx][int(links[j][0][3:])]
                if not d[0].isdigit():
                    raise NotChain("a sum restarted from a value from before the run")
            elif d[0] in links or d[0] >= self.j0 or self.frame(*d)[0] != k:
                raise NotChain("sums that are not one chain in the scalar code's order")
            else:
                d = d[0]
            if start not in (None, d) or \
                    not self.linked(chain, read, links, k * per + 1, (k + 1) * per):
                raise NotChain("sums that are not one chain in the scalar code's order")
            start = d
        return members, parts, (start,)

    def columns(self, chain: list, read: dict, links: dict):
        """The initial values (names or literals from before the run, one per copy) when
        ``chain`` (inner lines only) is one sum per copy through the groups: in copy ``c``
        every member reads the member before it in that copy; else None."""
        m, inits = self.m, []
        for c in range(m):
            own = [(j, idx) for j, idx in chain if idx % m == c]
            if not self.linked(own, read, links, 0, len(own)):
                return None
            j, idx = own[0]
            inits.append(self.ops[j][idx][int(links[j][0][3:])])
        return inits

    @staticmethod
    def linked(chain, read, links, lo: int, hi: int) -> bool:
        """Does every member event in ``chain[lo:hi]`` read the one before it (the first:
        a value from before the run when ``lo`` is 0)?"""
        previous = chain[lo - 1] if lo else None
        for j, idx in chain[lo:hi]:
            if read[(j, links[j][0])][idx] != previous:
                return False
            previous = (j, idx)
        return True

    def frame(self, j: int, idx: int) -> tuple:
        """``(group, copy)`` of an event: copy -1 before the inner block, ``m`` after it."""
        if self.inner(j):
            return divmod(idx, self.m)
        return idx, (-1 if j < self.j0 else self.m)

    def crosses(self, d: tuple, e: tuple) -> bool:
        """Does event ``e`` read the value of event ``d`` of an earlier copy or group (not a
        value of its own copy, of the outer lines before it, or an outer line reading the
        inner copies of its group)?"""
        (jd, xd), (je, xe) = d, e
        m, j0, q = self.m, self.j0, self.q
        if j0 <= jd < j0 + q:
            kd, cd = divmod(xd, m)
        else:
            kd, cd = xd, (-1 if jd < j0 else m)
        if j0 <= je < j0 + q:
            ke, ce = divmod(xe, m)
        else:
            ke, ce = xe, (-1 if je < j0 else m)
        return kd != ke or cd != ce and cd != -1 and ce != m

    def readable(self, i: int, j: int) -> bool:
        """A chain's partial sums are readable by a later line once all its members are
        before that line (the chain is then accumulated first)."""
        c = self.chain_of.get(i)
        if c is not None and max(self.chains[c][0]) < j and c not in self.summed:
            self.accumulate(self.chains[c])
        return (c is None or c in self.summed) and i in self.vec \
            and self.vec[i][2] != "objects"

    def accumulate(self, chain) -> None:
        members, _, init = chain
        c = self.chain_of[members[0]]
        if c in self.summed:
            return
        self.summed.add(c)
        if type(init) is not tuple and not any(map(self.inner, members)):
            super().accumulate(chain)            # through outer lines only
            for j in members:
                self.shapes[j] = "vector"
            return
        n, m, r = self.n, self.m, self.r
        before = [j for j in members if j < self.j0]
        middle = [j for j in members if self.inner(j)]
        after = [j for j in members if j >= self.j0 + self.q]
        if type(init) is tuple and init[0] == "columns":
            self.accumulate_columns(members, init[1])
            return
        per_group = type(init) is tuple         # restarted in each group
        b, ri = len(before) + per_group, len(middle)
        width = b + m * ri + len(after)
        s, a = f"_s{r}_{members[0]}", f"_a{r}_{members[0]}"
        if not per_group and init[0] in "vg":
            self.guard_type(init, self.code_for(members[0]))
        self.body.append(f"{s} = _vx_empty(({n}, {width}))")
        place = {}
        if per_group and type(init[0]) is str:       # a literal
            self.body.append(f"{s}[:, 0] = {init[0]}")
        elif per_group:
            w, vector, kind, _ = self.vec.get(init[0], (None, None, "objects", None))
            if kind == "objects" or init[0] in self.chain_of:
                raise NotVector("a sum restarted from a list")
            self.body.append(f"{s}[:, 0] = {w}")
        for x, j in enumerate(before):
            place[j] = f"[:, {x + per_group}]"
        for x, j in enumerate(middle):
            place[j] = f"[:, {b + x}:{b + m * ri}:{ri}]"
        for x, j in enumerate(after):
            place[j] = f"[:, {b + m * ri + x}]"
        for j in members:
            self.body.append(f"{s}{place[j]} = {self.vec[j][0]}")
        if per_group:                            # left to right along each row
            self.body.append(f"{a} = _vx_acc({s}, 1)")
        else:                                    # left to right through all rows
            flat = f"_f{r}_{members[0]}"
            self.body.append(f"{flat} = {s}.reshape(-1)")
            self.body.append(f"{flat}[0] += {init}")
            self.body.append(f"{a} = _vx_acc({flat}).reshape({n}, {width})")
        for j in members:
            w = f"_w{r}_{j}"
            self.body.append(f"{w} = {a}{place[j]}")
            self.vec[j] = (w, True, "floats", self.element_type(j))
            self.shapes[j] = "full" if self.inner(j) else "vector"

    def accumulate_columns(self, members: list, inits: list) -> None:
        """One sum per copy through the groups: the terms of member ``x`` in rows ``x::r``
        of an ``(n * r, m)`` table whose first row takes the initial values in, accumulated
        down each column (the scalar code's order within a copy)."""
        n, m, r, first = self.n, self.m, len(members), members[0]
        s, a = f"_s{self.r}_{first}", f"_a{self.r}_{first}"
        if all(x[0].isdigit() for x in inits):
            start = self.ctx.bind(np.array([float(x) for x in inits]), f"_vk{self.r}_{first}_0")
        else:
            if any(x[0].isdigit() for x in inits):
                raise NotChain("per-copy sums from literals and values")
            start, _ = Run.pack(self, first, "_Po0", inits)
        self.body.append(f"{s} = _vx_empty(({n * r}, {m}))")
        for x, j in enumerate(members):
            self.body.append(f"{s}[{x}::{r}] = {self.vec[j][0]}")
        self.body.append(f"{s}[0] += {start}")
        self.body.append(f"{a} = _vx_acc({s}, 0)")
        for x, j in enumerate(members):
            w = f"_w{self.r}_{j}"
            self.body.append(f"{w} = {a}[{x}::{r}]")
            self.vec[j] = (w, True, "floats", self.element_type(j))
            self.shapes[j] = "full"
