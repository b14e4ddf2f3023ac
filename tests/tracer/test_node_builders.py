"""The replay's node constructors (``tape.nodes.append_call``, ``append_phi``) make exactly
the nodes the classes' own constructors make: every slot equal, appended at the same index."""
from __future__ import annotations

import math

import pytest

import dcgraph
from dcgraph.tape import Argument, Constant, NestedCall, Phi, PrimitiveCall, Tape
from dcgraph.tape.nodes import append_call, append_phi

_UNSET = object()


def _slots(node) -> dict:
    names = [s for k in type(node).__mro__ for s in getattr(k, "__slots__", ())]
    return {s: getattr(node, s, _UNSET) for s in names}


def _same(a, b) -> None:
    sa, sb = _slots(a), _slots(b)
    assert sa.keys() == sb.keys()
    for name in sa:
        assert sa[name] is not _UNSET, name
        assert sa[name] == sb[name], name


@pytest.mark.parametrize("cls", [PrimitiveCall, NestedCall])
@pytest.mark.parametrize("with_kwargs", [False, True])
@pytest.mark.parametrize("with_fn_node", [False, True])
def test_append_call_equals_constructor(cls, with_kwargs, with_fn_node):
    one, two = Tape(), Tape()
    for tape in (one, two):
        tape.append(Argument("x", 2.0))
    a1, a2 = one._nodes[0], two._nodes[0]
    k1 = {"base": one.append(Constant("b", 3.0))} if with_kwargs else None
    k2 = {"base": two.append(Constant("b", 3.0))} if with_kwargs else None
    g1 = one.append(Constant("g", math.log)) if with_fn_node else None
    g2 = two.append(Constant("g", math.log)) if with_fn_node else None
    made = one.append(cls(math.log, [a1], k1, 0.63, None, g1, True))
    fast = append_call(two, cls, math.log, (a2,), k2, 0.63, None, g2, True)
    assert fast.index == made.index == len(two._nodes) - 1 and two._nodes[-1] is fast
    assert fast.tape is two and made.tape is one
    assert [n.index for n in fast.inputs] == [n.index for n in made.inputs]
    assert [n.index for n in fast.args] == [n.index for n in made.args]
    assert list(fast.kwargs) == list(made.kwargs) and isinstance(fast.kwargs, dict)
    for node in (made, fast):
        node.tape = node.inputs = node.args = node.kwargs = node.fn_node = None
    _same(made, fast)


def test_append_phi_equals_constructor():
    tape = Tape()
    src = tape.append(Argument("t", 1.5))
    made = tape.append(Phi("t", src, (0, 2)))
    fast = append_phi(tape, "t", src, (0, 2), ("t",))
    assert fast.index == made.index + 1
    fast.index = made.index
    _same(made, fast)
    stack = tape.append(Phi("stack[1]", src, (0, 2)))
    assert stack.names == () == append_phi(tape, "stack[1]", src, (0, 2), ()).names


def test_built_tape_nodes_have_every_slot():
    """A tape built by the replay: every node has every slot of its kind set."""
    def loop(n, xs):
        t = 0.0
        for i in range(n):
            t += math.sin(i * 0.1) + xs[i % 2]
        xs.append(t)
        return t if t > 0 else -t

    _, tape = dcgraph.track(loop, 20, [1.0, 2.0])
    tape.lint()
    kinds = set()
    for node in tape.walk():
        kinds.add(type(node))
        assert all(v is not _UNSET for v in _slots(node).values()), node
    assert {PrimitiveCall, Phi, Argument}.issubset(kinds)
    assert [n.names for n in tape.find(name="t")][:2] == [("t",), ("t",)]
    assert tape.returned.value == pytest.approx(sum(math.sin(i * 0.1) + (1.0, 2.0)[i % 2]
                                                    for i in range(20)))


def test_calls_without_keywords_share_a_read_only_empty_dict():
    _, tape = dcgraph.track(lambda x: math.sin(x) + math.cos(x), 0.5)
    calls = tape.find(kind=PrimitiveCall)
    assert len(calls) == 3 and all(c.kwargs == {} for c in calls)
    assert calls[0].kwargs is calls[1].kwargs is calls[2].kwargs
    with pytest.raises(TypeError, match="without keyword arguments"):
        calls[0].kwargs["x"] = calls[1]
    with pytest.raises(TypeError):
        calls[0].kwargs.update(x=calls[1])
    assert calls[1].kwargs == {} and dict(calls[1].kwargs) == {}
    _, tape = dcgraph.track(lambda x: round(x, ndigits=1), 0.26)
    rounded = tape.find(fn=round)[0]
    assert list(rounded.kwargs) == ["ndigits"] and rounded.kwargs["ndigits"].value == 1
    assert rounded.value == 0.3


def _run_source(lines: list, **names):
    from dcgraph.tape.nodes import EMPTY_NAMES, NO_KEYWORDS
    ns = {"new_node": object.__new__, "PrimitiveCall": PrimitiveCall, "Phi": Phi,
          "NO_KEYWORDS": NO_KEYWORDS, "EMPTY": EMPTY_NAMES, **names}
    exec("\n".join(lines), ns)
    return ns["node"]


def test_generated_call_source_equals_constructor():
    """``append_call_source`` (the fused replay's inline node) makes the constructor's node."""
    from dcgraph.tape.nodes import append_call_source
    one, two = Tape(), Tape()
    a1, a2 = one.append(Argument("x", 2.0)), two.append(Argument("x", 2.0))
    made = one.append(PrimitiveCall(math.log, [a1], None, 0.69, None))
    fast = _run_source(append_call_source("node", "tape", "nodes", "fn", "args", "value", "loc"),
                       tape=two, nodes=two._nodes, fn=math.log, args=(a2,), value=0.69, loc=None)
    assert two._nodes[-1] is fast and fast.index == made.index and fast.tape is two
    assert fast.args is fast.inputs and [n.index for n in fast.args] == [0]
    for node in (made, fast):
        node.tape = node.inputs = node.args = None
    _same(made, fast)


def test_generated_phi_source_equals_constructor():
    from dcgraph.tape.nodes import append_phi_source
    tape = Tape()
    src = tape.append(Argument("t", 1.5))
    made = tape.append(Phi("t", src, (0, 2)))
    fast = _run_source(append_phi_source("node", "tape", "nodes", "name", "src", "edge", "names"),
                       tape=tape, nodes=tape._nodes, name="t", src=src, edge=(0, 2), names=("t",))
    assert fast.index == made.index + 1
    fast.index = made.index
    _same(made, fast)
