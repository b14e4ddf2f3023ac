"""Folding: loops and deep calls fold into markers whose counts account for every node."""
import dcgraph
from dcgraph.views.fold import Fold, Row, count, fold, iter_items, subtree_size
from views_cases import big_loop, caller_mutates, geom, loop_sum


def covered(items):
    """(tape, index) of every node the items account for, shown or folded."""
    out = []
    for item, _level, _parent in iter_items(items):
        if isinstance(item, Row):
            out.append((id(item.node.tape), item.node.index))
        else:
            for i in range(item.start, item.stop):
                n = item.tape.nodes[i]
                out.append((id(item.tape), i))
                if isinstance(n, dcgraph.NestedCall) and n.child is not None:
                    out += [(id(m.tape), m.index) for m in n.child.walk()]
    return out


def all_nodes(tape):
    return [(id(n.tape), n.index) for n in tape.walk()]


def test_every_node_accounted_for_exactly_once_in_order():
    cases = [dcgraph.track(loop_sum, 40)[1], dcgraph.track(geom, [0.9] * 6 + [0.1], 0, 0.3)[1],
             dcgraph.track(caller_mutates, 3)[1]]
    for tape in cases:
        for kw in [{}, {"depth": 0}, {"depth": 1, "max_nodes": 5}, {"head": 0, "tail": 0}]:
            items = fold(tape, **kw)
            assert covered(items) == all_nodes(tape), kw
            shown, folded = count(items)
            assert shown + folded == subtree_size(tape) == len(all_nodes(tape))


def test_loop_keeps_head_and_tail_iterations():
    _, tape = dcgraph.track(big_loop, 100)        # 5 nodes per iteration
    items = fold(tape)
    folds = [i for i in items if isinstance(i, Fold)]
    assert [(f.reason, f.iterations, f.count, f.line) for f in folds] == [("loop", 97, 485, 41)]
    assert folds[0].label == "… 97 more iterations of the loop at L41 (485 nodes)"
    shown = [i.node for i in items if isinstance(i, Row)]
    assert shown[-1].kind == "Return" and shown[0].kind == "Argument"


def test_short_loops_are_not_folded():
    _, tape = dcgraph.track(loop_sum, 3)
    assert not any(isinstance(i, Fold) for i in fold(tape))


def test_depth_folds_children_and_budget_stops_rows():
    _, tape = dcgraph.track(geom, [0.9, 0.9, 0.1], 0, 0.3)
    items = fold(tape, depth=0)
    call = next(i for i in items if isinstance(i, Row) and i.children)
    assert [(f.reason, f.count) for f in call.children] == [("depth", 15)]
    items = fold(tape, max_nodes=3)
    assert count(items)[0] == 3
    assert isinstance(items[-1], Fold) and items[-1].reason == "budget"
    assert items[-1].label == "… 21 more nodes (max_nodes reached)"
