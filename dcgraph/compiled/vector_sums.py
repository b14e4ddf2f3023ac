"""Loop-carried sums of a vectorised run (a mixin of ``vector_run.Run``).

A chain is a cycle of lines ``acc = acc + t`` (or ``acc - t``, or ``t + acc``) through one
or more lines of a group, the first reading the last line's value of the previous group (and
``acc0``, a value from before the run, in group 0). Its values are one
``np.add.accumulate`` over ``[acc0, t_0(line 1), t_0(line 2), ..., t_1(line 1), ...]`` with
the terms of ``-`` negated (exact): strictly left to right, the bits of the scalar code. When
the terms are an array of the run's own (an operation's result, or the stacked terms of
several lines), ``acc0`` is added into its first element (``acc0 + t_0``, the scalar code's
first sum) and the partial sums are its accumulation, without a concatenated copy;
``without_joined_inits`` does the same, once the whole code is written, for terms that are
another line's new vector nothing else reads (``math.sin`` mapped over a loop's values).
``find_chains`` also finds values that cross from one group to the next without being such a
sum (the groups start mid-iteration) and says where the iteration boundary lies.
"""
from __future__ import annotations

import ast
import re
from collections import Counter

import numpy as np

__all__ = ["Sums", "NotVector", "FLOATS", "literal", "node_id", "without_joined_inits"]

FLOATS = (float, np.float64)


class NotVector(Exception):
    """This run does not vectorise (it stays scalar code). ``args[1]``, when given: how many
    lines later a run of the same groups may start (the iteration boundary); ``args[2]``: an
    earlier such start to try first (``Sums.clean_cut``; 0: none)."""


_JOINED = re.compile(r"(_a\d+_\d+) = _vx_acc\(_vx_cat\(\(\[([^\]]+)\], (_t\d+_\d+)\)\)\)$")
_ALIAS = re.compile(r"(_t\d+_\d+) = (_w\d+_\d+)$")
_ARRAY = re.compile(r"(?<![\w.])_[atw]\d+_\d+(?!\w)")
_NEW = re.compile(r"\(|_vx_(?!bcast\b)\w+\(")      # an operation's result: a new array


def without_joined_inits(lines: list) -> list:
    """``lines`` where a chain's ``_a = _vx_acc(_vx_cat(([acc0], _t)))`` and ``_w = _a[1::1]``,
    ``_t`` being another line's vector ``_t = _w'``, become ``_t[0] += acc0`` and
    ``_w = _vx_acc(_t)`` when ``_w'`` is a new array (an operation's result) that no other line
    reads: the same partial sums (``acc0 + t_0`` first, then left to right), without
    ``np.concatenate`` (numpy's costliest call when the caches are cold)."""
    found = [i for i, line in enumerate(lines) if line[:2] == "_a" and _JOINED.match(line)]
    if not found:
        return lines
    used = Counter(_ARRAY.findall("\n".join(lines)))
    defs = {line.split(" = ", 1)[0]: i for i, line in enumerate(lines)
            if line[:1] == "_" and " = " in line}
    out = list(lines)
    for i in found:
        a, init, t = _JOINED.match(lines[i]).groups()
        alias = _ALIAS.match(lines[defs.get(t, i)])
        k = i + 1
        if alias is None or used[t] != 2 or used[a] != 2 or k >= len(lines) \
                or not lines[k].endswith(f" = {a}[1::1]"):
            continue
        w = alias.group(2)
        if used[w] != 2 or w not in defs or not _NEW.match(lines[defs[w]].split(" = ", 1)[1]):
            continue
        out[i] = f"{t}[0] += {init}"
        out[k] = f"{lines[k].split(' = ', 1)[0]} = _vx_acc({t})"
    return out


def literal(text: str):
    return float(text) if any(ch in text for ch in ".eE") else int(text)


def node_id(name: str) -> int:
    return int(name[1:].split("_")[0])


class Sums:
    """``find_chains``, ``term`` and ``accumulate`` (they read the run's state)."""

    def find_chains(self) -> list:
        """Chains ``acc = acc + t`` through lines of a group, each closed over the groups:
        a list of (lines, link side of each, init value)."""
        self.chain_of, chains, links = {}, [], {}
        for j, f in enumerate(self.forms):
            tree = f.tree if f.kind == "expr" else None
            if type(tree) is not ast.BinOp or type(tree.op) not in (ast.Add, ast.Sub):
                continue
            sides = [(tree.left, tree.right, "+" if type(tree.op) is ast.Add else "-")]
            if type(tree.op) is ast.Add:
                sides.append((tree.right, tree.left, "+"))
            for link, rest, sign in sides:
                if type(link) is not ast.Name:
                    continue
                seq = self.column(j, link.id)
                if any(x[0].isdigit() for x in seq[1:]):
                    continue
                i = self.local(j, seq)
                if i is not None:
                    links[j] = ("local", i, rest, sign)
                    break
                i = self.carried(seq)
                if i is not None:
                    links[j] = ("carry", i, rest, sign, seq[0])
                    break
        crossing = []                    # lines reading a value of the previous group
        for j, link in links.items():
            if link[0] != "carry":
                continue
            members, last = [j], link[1]
            while members[-1] != last and last >= j:
                nxt = next((i for i, lk in links.items() if lk[0] == "local"
                            and lk[1] == members[-1] and i > members[-1]), None)
                if nxt is None:
                    break
                members.append(nxt)
            init = link[4]
            if members[-1] != last or any(names[0] == init for i, names in
                                          self.targets.items() if i < j):
                crossing.append((j, last))
                continue
            for i in members:
                self.chain_of[i] = len(chains)
            chains.append((members, [links[i][2:4] for i in members], init))
        for j, f in enumerate(self.forms):
            if f.kind in ("expr", "read", "typeguard") and j not in self.chain_of:
                for q in range(len(self.ops[j][0])):
                    seq = self.column(j, f"_Po{q}")
                    if (q or f.kind == "typeguard") and seq[-1][0] in "vg":
                        i = self.carried(seq) if self.local(j, seq) is None else None
                        if i is not None:
                            crossing.append((j, i))
        if crossing:                     # the groups start mid-iteration: start later, at
            first = min(i for _, i in crossing)         # the first line defining one
            last = max(j for j, _ in crossing)
            shift = first if first > last else 0
            clean = self.clean_cut(last, first, links) if shift else 0
            raise NotVector("a loop-carried value that is not a sum", shift, clean)
        for j, link in links.items():
            if link[0] == "local" and j not in self.chain_of and link[1] in self.chain_of:
                raise NotVector("a partial sum used by another line")
        return chains

    def clean_cut(self, lo: int, hi: int, links: dict) -> int:
        """The first line ``b`` in ``lo < b <= hi`` at which a group may start without
        separating a value of group 0 from a line that reads it (the links of chains aside:
        they close over the groups), or 0: the likely iteration boundary, a start that puts every
        value crossing from one group to the next (the lines ``lo`` ... ``hi``) inside one
        group too."""
        defined = {}
        for i, names in self.targets.items():
            defined.setdefault(names[0], i)
        blocked = set()
        for j, f in enumerate(self.forms):
            skip = 1 if f.kind in ("expr", "read") else 0        # a target is no read
            link = links.get(j) if j in self.chain_of else None
            for x in self.ops[j][0][skip:]:
                i = defined.get(x) if x[0] in "vg" else None
                if i is not None and i < j and not (link is not None and link[1] == i):
                    blocked.update(range(max(i, lo) + 1, min(j, hi) + 1))
        return next((b for b in range(lo + 1, hi + 1) if b not in blocked), 0)

    def shape_text(self, j: int) -> str:
        """The shape of line ``j``'s vector, as code."""
        return str(self.n)

    def term(self, j: int) -> None:
        members, parts, _ = self.chains[self.chain_of[j]]
        rest, sign = parts[members.index(j)]
        text, vector = self.text(j, rest)
        if sign == "-":
            text = f"(-{text})"
        if not vector:
            text = f"_vx_full({self.shape_text(j)}, {text}, float)"
        name = f"_t{self.r}_{j}"
        self.body.append(f"{name} = {text}")
        # a new array (an operation's result, not a name, view or bound constant): its own
        fresh = text[0] == "(" or text.startswith("_vx_")
        self.vec[j] = (name, True, "term" if fresh else "shared term", None)

    def accumulate(self, chain) -> None:
        members, _, init = chain
        m, terms = len(members), [self.vec[i][0] for i in members]
        a = f"_a{self.r}_{members[0]}"
        if init[0] in "vg":
            self.guard_type(init, self.code_for(members[0]))
        if m > 1 or self.vec[members[0]][2] == "term":      # terms in an array of its own:
            if m > 1:                                         # the first term takes acc0 in
                flat = f"_s{self.r}_{members[0]}"
                self.body.append(f"{flat} = _vx_array(({', '.join(terms)},)).T.ravel()")
            else:
                flat = terms[0]
            self.body.append(f"{flat}[0] += {init}")
            first = 0
        else:
            flat = terms[0]
            self.body.append(f"{a} = _vx_acc(_vx_cat(([{init}], {flat})))")
            first = 1
        if not first and m == 1:
            a = f"_w{self.r}_{members[0]}"
        if not first:
            self.body.append(f"{a} = _vx_acc({flat})")
        for r, i in enumerate(members):
            t = self.element_type(i)
            w = f"_w{self.r}_{i}"
            if w != a:
                self.body.append(f"{w} = {a}[{first + r}::{m}]")
            self.vec[i] = (w, True, "floats", t)

