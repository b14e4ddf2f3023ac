"""Values are recorded by reference: every view marks a node whose container or array was changed
later, naming the node that changed it last (the text dump, the rich tree, Graphviz, HTML)."""
import io

import numpy as np

import dcgraph


def grows(x):
    zs = []
    for i in range(3):
        zs.append(x * i)
    a = np.zeros((2, 2))
    a[0, 0] = x
    return sum(zs) + a.sum()


def test_every_view_marks_values_changed_later():
    _, tape = dcgraph.track(grows, 1.5)
    tape.lint()
    made = tape.find(fn="build_list")[0]
    appends = [n for n in tape if getattr(n, "mutates", None) is made.value]
    last = appends[-1]
    assert len(appends) == 3
    note = f" (final state, after @{last.index})"
    lines = {n.index: line for n, line in zip(tape, str(tape).splitlines())}
    assert lines[made.index].endswith("build_list() = [0.0, 1.5, 3.0]" + note)
    assert all(lines[n.index].endswith(note) for n in appends[:-1])
    assert lines[last.index].endswith("⇒ [0.0, 1.5, 3.0]")                 # the last writer: final
    zeros = tape.find(fn="zeros")[0]
    assert "(final state, after @" in lines[zeros.index]
    out = io.StringIO()
    tape.show(file=out, width=200)
    shown = out.getvalue()
    assert f"@{made.index} zs = build_list() = [0.0, 1.5, 3.0]{note}" in shown
    assert f"@{last.index} @{appends[-2].index}.append(" in shown and f"{note}   L" not in shown.split(
        f"@{last.index} ")[1].splitlines()[0]
    assert note in tape.to_dot()
    html = tape.to_html()
    assert html.count("(final state, after @") == 2 * 4     # the call tree and the graph's labels
