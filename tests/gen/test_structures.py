"""Addresses, choice-map tries, selections and traces: semantics and printouts."""
import io

import numpy as np
import pytest
from rich.console import Console

from dcgraph.gen import (Address, ChoiceMap, all_selection, choicemap, complement, generate,
                         select, simulate)

from gen_models import top

TREE = """\
│
├── 'x' : 1.0
├── 'sub'
│   ├── 'y' : 2.0
│   └── 'deeper'
│       └── 'w' : 3
└── 'z'
    └── 3 : 0.5"""


def example():
    return choicemap({"x": 1.0, "sub": {"y": 2.0, "deeper": {"w": 3}}, ("z", 3): 0.5})


def test_address():
    a = Address("a", 3, "x")
    assert a.first() == "a" and a.rest() == Address(3, "x") and not a.empty()
    assert Address().empty() and a == ("a", 3, "x") and hash(a) == hash(("a", 3, "x"))
    assert str(a) == "'a' => 3 => 'x'" and repr(a) == "Address('a', 3, 'x')"
    assert Address(np.int64(2)) == (2,) and type(Address(np.int64(2))[0]) is int
    with pytest.raises(IndexError):
        Address().first()


def test_choicemap_trie_semantics():
    cm = example()
    assert cm.has_value("x") and not cm.has_value("sub") and cm.has_submap("sub")
    assert cm[("sub", "deeper", "w")] == 3 and cm.get_value(("z", 3)) == 0.5
    assert cm.get_submap("sub").to_dict() == {"y": 2.0, "deeper": {"w": 3}}
    assert cm.get_submap("nothing").is_empty()
    assert dict(cm.get_values_shallow()) == {"x": 1.0}
    assert [k for k, _ in cm.get_submaps_shallow()] == ["sub", "z"]
    assert list(cm.items()) == [(("x",), 1.0), (("sub", "y"), 2.0), (("sub", "deeper", "w"), 3),
                                (("z", 3), 0.5)]
    assert len(cm) == 4 and ("sub", "y") in cm and "sub" not in cm
    assert ChoiceMap.from_dict(cm.to_dict()) == cm
    assert cm.to_dict() == {"x": 1.0, "sub": {"y": 2.0, "deeper": {"w": 3}}, "z": {3: 0.5}}
    other = choicemap({"q": 1})
    merged = cm.merge(other)
    assert merged["q"] == 1 and merged != cm and "q" not in cm
    cm2 = ChoiceMap()
    cm2.set_submap("s", cm.get_submap("sub"))
    assert cm2[("s", "deeper", "w")] == 3
    arr = np.arange(3.0)
    cm2.set_value("arr", arr)
    assert cm2["arr"] is arr            # values are stored by reference, never copied


def test_choicemap_printouts():
    cm = example()
    assert str(cm) == TREE
    assert repr(cm) == "choicemap({'x': 1.0, 'sub': {'y': 2.0, 'deeper': {'w': 3}}, 'z': {3: 0.5}})"
    out = io.StringIO()
    Console(file=out, width=60, color_system=None).print(cm)
    assert out.getvalue() == "choices\n" + TREE.split("\n", 1)[1].replace("│\n", "") + "\n"


def test_selections():
    s = select("x", ("z", 3))
    assert "x" in s and ("x", "below") in s and ("z", 3) in s and ("z", 4) not in s
    assert "z" not in s and s["z"].addresses() == [(3,)] and s["q"].is_empty()
    assert s["x"] is all_selection and repr(s) == "select('x', ('z', 3))"
    c = complement(s)
    assert "x" not in c and ("z", 4) in c and "y" in c and complement(c) is s
    assert ("z", 3) not in c and ("z", 5) in c["z"] and 3 not in c["z"]
    assert ("any", 1) in all_selection and select().is_empty()
    assert (~s) is not s and "y" in ~s


def test_trace_accessors():
    tr = simulate(top, (0.5,), rng=np.random.default_rng(0))
    assert tr.get_args() == (0.5,) and tr.get_gen_fn().__name__ == "top"
    assert tr["m"] == pytest.approx(tr[("m", "l", "v")] + tr[("m", "r", "v")])
    assert tr.get_retval() == tr["obs"]
    assert tr.get_choices().get_submap("m").addresses() == [("l", "v"), ("r", "v")]
    tr.tape.lint()


TOP_TAPE = """\
@0: Argument mu = 0.5
@1: [L{l}] middle(@0) = <gen middle>(0.5)
@2: [L{l}] m = call_site(@1, 'm') = 1.75
@3: [L{k}] normal(@2, 1.0) = normal(loc=1.75, scale=1.0)
@4: [L{k}] choice_site(@3, 'obs') = 2.0
@5: return @4 = 2.0"""


def test_trace_tape_printout():
    import inspect
    tr, _ = generate(top, (0.5,), {"m": {"l": {"v": 0.25}, "r": {"v": 1.5}}, "obs": 2.0})
    first = inspect.getsourcelines(top.fn)[1]
    assert str(tr.tape) == TOP_TAPE.format(l=first + 2, k=first + 3)
    tr.tape.lint()


def test_random_variable_analysis_of_a_trace_tape():
    import dcgraph
    from gen_models import hmm
    tr = simulate(hmm, (4,), rng=np.random.default_rng(0))
    rvs = dcgraph.random_variables(tr.tape)
    assert len(rvs) == 8
    dists = [type(v.distribution).__name__ for v in rvs]
    assert dists == ["categorical", "normal"] * 4
    values = [v.value for v in rvs]
    assert values == [tr[(k, t)] for t in range(4) for k in ("z", "x")]


def test_traces_pickle_without_their_tape():
    import pickle

    from dcgraph.gen import choicemap as cm_, update
    from gen_models import foo, foo_store, hmm
    tr = simulate(hmm, (6,), rng=np.random.default_rng(0))
    back = pickle.loads(pickle.dumps(tr))
    assert back.get_gen_fn() is hmm and back.get_choices() == tr.get_choices()
    assert back.get_score() == tr.get_score()
    new, w, _, _ = update(back, (6,), (None,), cm_({("x", 2): 0.0}))
    ref, w_ref, _, _ = update(tr, (6,), (None,), cm_({("x", 2): 0.0}))
    assert w == w_ref and new.get_choices() == ref.get_choices()
    back.tape.lint()
    tr2 = simulate(foo, (1.0,), rng=np.random.default_rng(0), store=foo_store(0.5))
    back2 = pickle.loads(pickle.dumps(tr2))
    assert back2.store.get_param(back2.get_gen_fn(), "theta2") == 0.0
    assert back2.get_choices() == tr2.get_choices()


def test_choice_maps_survive_pickling_for_worker_processes():
    import pickle
    from dcgraph.gen import choicemap
    cm = choicemap({"x": 1.0, "sub": {"y": 2.0}, ("z", 3): 0.5, "n": None})
    back = pickle.loads(pickle.dumps(cm))
    assert back == cm
    assert back.to_dict() == {"x": 1.0, "sub": {"y": 2.0}, "z": {3: 0.5}, "n": None}
    assert back.has_value("n") and not back.has_value("sub")
