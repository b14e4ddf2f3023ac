"""``tape.show()``: the tape as a ``rich`` tree in the terminal, one line per node.

A line reads ``▸ @4 geom(@0) = 3   L7  return 1 + geom(p)``: a mark and colour per kind (see
``labels.KIND_MARK``), the node's index and operation, its value abbreviated, and its source
line. Nested calls are branches down to ``depth``; loops and deeper levels fold into dim
"… n more" lines (``fold``). ``str(tape)`` stays the plain dump.
"""
from __future__ import annotations

import io

from rich.console import Console
from rich.text import Text
from rich.tree import Tree

from ..tape import NestedCall, Node, Tape
from .fold import Fold, count, fold, iter_items, subtree_size
from .labels import KIND_MARK, KIND_STYLE, has_value, op_text, value_sep
from .values import abbrev
from ..tape.printing import final_state_note, printable

__all__ = ["show", "render_tree", "build_tree", "node_line"]

VALUE_WIDTH = 48
SOURCE_WIDTH = 60


def node_line(n: Node, values: bool = True) -> Text:
    """The styled one-line label of a node."""
    style = KIND_STYLE.get(n.kind, "")
    text = Text(f"{KIND_MARK.get(n.kind, '?')} ", style=style, no_wrap=True, overflow="ellipsis")
    text.append(f"@{n.index} ", style="dim")
    text.append(op_text(n), style=style)
    if values and has_value(n):
        text.append(value_sep(n), style="dim")
        text.append(abbrev(n.value, VALUE_WIDTH))
        text.append(final_state_note(n), style="dim")
    if n.line is not None:
        source = printable(n.loc.source)
        if len(source) > SOURCE_WIDTH:
            source = source[: SOURCE_WIDTH - 1] + "…"
        text.append(f"   L{n.line}", style="dim")
        if source:
            text.append(f"  {source}", style="dim italic")
    return text


def build_tree(tape: Tape, depth: int | None = 2, values: bool = True,
               max_nodes: int | None = 2000) -> Tree:
    """The ``rich.tree.Tree`` that ``show`` prints (see ``fold.fold`` for the limits)."""
    items = fold(tape, depth=depth, max_nodes=max_nodes)
    shown, folded = count(items)
    total = subtree_size(tape)
    head = Text(printable(tape.name), style="bold")
    head.append(f"  {total:,} nodes", style="dim")
    if folded:
        head.append(f", {folded:,} folded", style="dim")
    root = Tree(head, guide_style="dim")
    branches = {None: root}
    for item, _level, parent in iter_items(items):
        holder = branches[id(parent) if parent is not None else None]
        if isinstance(item, Fold):
            holder.add(Text(printable(item.label), style=KIND_STYLE["Fold"] + " italic"))
            continue
        branch = holder.add(node_line(item.node, values))
        if isinstance(item.node, NestedCall) and item.children:
            branches[id(item)] = branch
    return root


def show(tape: Tape, depth: int | None = 2, values: bool = True, max_nodes: int | None = 2000,
         file=None, width: int | None = None, color: bool | None = None) -> None:
    """Print the tape as a tree to ``file`` (default stdout). ``color``: None to detect the
    terminal, True to force colours, False for plain text."""
    console = Console(file=file, width=width, force_terminal=True if color else None,
                      no_color=color is False, color_system=None if color is False else "auto",
                      highlight=False)
    console.print(build_tree(tape, depth, values, max_nodes))


def render_tree(tape: Tape, depth: int | None = 2, values: bool = True,
                max_nodes: int | None = 2000, width: int = 100) -> str:
    """What ``show`` prints, as plain text of a fixed width (no colour, for tests and logs)."""
    buf = io.StringIO()
    console = Console(file=buf, width=width, color_system=None, force_terminal=False,
                      highlight=False, emoji=False)
    console.print(build_tree(tape, depth, values, max_nodes))
    return buf.getvalue()
