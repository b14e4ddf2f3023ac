"""random_variables(tape): addresses, distributions, data/control edges, blankets, rendering."""
import random
import shutil

import numpy as np
import pytest

import dcgraph
from dcgraph.analysis import RandomContext, random_variables

CTX = RandomContext()


def _rvs(f, *args, **kwargs):
    _, tape = dcgraph.track(f, *args, ctx=CTX, **kwargs)
    return random_variables(tape)


# -- geom: recursion, control dependence, stable addresses --------------------------------------
def geom(p):
    if random.random() < p:
        return 1
    return 1 + geom(p)


def _geom_rvs(seed):
    random.seed(seed)
    return _rvs(geom, 0.2)


def test_geom_each_draw_is_control_dependent_on_all_previous_ones():
    rvs = _geom_rvs(5)
    n = len(rvs)
    assert n >= 3, "seed 5 gives a run of 7 draws"
    addrs = rvs.addresses
    line_if = geom.__code__.co_firstlineno + 1
    line_rec = geom.__code__.co_firstlineno + 3
    for k, a in enumerate(addrs):
        assert a == "geom/" + f"L{line_rec}/geom/" * k + f"L{line_if}/random"
        assert rvs.parents(a, "control") == addrs[:k]
        assert rvs.parents(a, "data") == []
        assert rvs.children(a) == addrs[k + 1:]
        assert rvs[a].distribution.low == 0.0 and rvs[a].distribution.high == 1.0
    assert [c.value < 0.2 for c in rvs] == [False] * (n - 1) + [True]


def test_geom_addresses_are_stable_across_runs_with_the_same_seed():
    first, second = _geom_rvs(11), _geom_rvs(11)
    assert first.addresses == second.addresses
    assert [c.value for c in first] == [c.value for c in second]
    # the default context (random.random is C, so nothing changes) gives the same addresses
    random.seed(11)
    _, tape = dcgraph.track(geom, 0.2)
    assert random_variables(tape).addresses == first.addresses


# -- HMMs: precise element reads through writes and appends ---------------------------------------
from rv_models import MU, TRANS  # noqa: E402,F401
from rv_models import hmm as hmm_setitem  # noqa: E402


def hmm_append(rng, T=6):
    z, x = [], []
    for t in range(T):
        p = [0.5, 0.5] if t == 0 else list(TRANS[z[-1]])
        z.append(rng.choice(2, p=p))
        x.append(rng.normal(MU[z[t]], 1.0))
    return z, x


@pytest.mark.parametrize("model", [hmm_setitem, hmm_append])
def test_hmm_blankets(model):
    rvs = _rvs(model, np.random.default_rng(3))
    assert len(rvs) == 12
    addrs = rvs.addresses
    z, x = addrs[0::2], addrs[1::2]
    assert all("choice" in a for a in z) and all("normal" in a for a in x)
    for t in range(6):
        assert rvs.parents(z[t]) == ([z[t - 1]] if t else [])
        assert rvs.parents(z[t], "control") == []
        assert rvs.parents(x[t]) == [z[t]] and rvs.parents(x[t], "data") == [z[t]]
        expected = sorted({z[t - 1] if t else None, z[t + 1] if t < 5 else None, x[t]} - {None},
                          key=addrs.index)
        assert rvs.markov_blanket(z[t]) == expected
        assert rvs.markov_blanket(x[t]) == [z[t]]
    # distributions from the recorded arguments
    for t in range(1, 6):
        prev = int(rvs[z[t - 1]].value)
        assert np.allclose(rvs[z[t]].distribution.p, TRANS[prev])
        assert float(rvs[x[t]].distribution.loc) == MU[int(rvs[z[t]].value)]


def test_iteration_is_in_execution_order_and_indexing_by_address():
    rvs = _rvs(hmm_setitem, np.random.default_rng(0))
    assert [c.index for c in rvs] == list(range(len(rvs)))
    assert [c.address for c in rvs] == rvs.addresses
    orders = [c.node.order_key() for c in rvs]
    assert orders == sorted(orders)
    assert rvs.addresses[2] in rvs and "nowhere/L1/normal" not in rvs
    with pytest.raises(KeyError, match="nowhere/L1/normal"):
        rvs.parents("nowhere/L1/normal")


# -- what counts as a dependence -------------------------------------------------------------------
def unrelated_writes(rng):
    a = rng.normal()
    b = rng.normal()
    v = [0.0, 0.0, 0.0]
    v[0] = a
    v[1] = b
    c = rng.normal(v[1], 1.0)          # reads the element b wrote: not a
    d = rng.normal(v[2] + 1.0, 1.0)    # an element nobody random wrote
    w = np.zeros(3)
    w[2] = a
    e = rng.normal(w[2], 1.0)          # numpy element write
    return c, d, e


def test_element_writes_are_data_dependences_of_their_reads_only():
    rvs = _rvs(unrelated_writes, np.random.default_rng(0))
    a, b, c, d, e = rvs.addresses
    assert rvs.parents(c) == [b]
    assert rvs.parents(d) == []
    assert rvs.parents(e) == [a]


class State:
    pass


def objects_and_dicts(rng):
    s = State()
    s.a = rng.normal()
    s.b = rng.normal()
    d = {}
    d["mu"] = rng.normal()
    d["sd"] = rng.gamma(2.0)
    x = rng.normal(s.a + d["mu"], 1.0)          # a and mu only
    items = [s.a, s.b, 0.0]
    rng.shuffle(items)
    y = rng.normal(items[0], 1.0)               # whichever element came first: all, and the shuffle
    lst = [0.0, 0.0]
    lst[-1] = d["sd"]
    w = rng.normal(lst[1], lst[0] + 1.0)        # negative index write, then read of both ends
    return x, y, w


def test_attributes_dict_keys_shuffles_and_negative_indices():
    rvs = _rvs(objects_and_dicts, np.random.default_rng(0))
    a, b, mu, sd, x, shuffle, y, w = rvs.addresses
    assert rvs.parents(x) == [a, mu]
    assert rvs.parents(y) == [a, b, shuffle]
    assert rvs.parents(w) == [sd]
    assert rvs[shuffle].distribution is None and rvs[shuffle].name == "shuffle"


def helper(z):
    if z == 1:
        return 3.0
    return -3.0


def gated(rng):
    z = rng.integers(0, 2)
    loc = helper(z)                    # the return is chosen by a branch on z
    x = rng.normal(loc, 1.0)
    box = [0.0]
    if z == 1:
        box[0] = 1.0                   # a write that happens only for z == 1
    y = rng.normal(box[0], 1.0)
    scale = 1.0
    while rng.random() < 0.5:          # a loop whose test draws
        scale = scale * 2.0
    w = rng.normal(0.0, scale)
    return x, y, w


def test_returns_phis_and_conditional_writes_carry_branch_dependences():
    rvs = _rvs(gated, np.random.default_rng(5))
    addrs = rvs.addresses
    z, x, y = addrs[:3]
    tests, w = addrs[3:-1], addrs[-1]
    assert rvs.parents(x, "data") == [z] and rvs.parents(x, "control") == []
    assert rvs.parents(y, "data") == [z]
    assert tests and all("random" in a for a in tests)
    for k, a in enumerate(tests):
        assert rvs.parents(a, "control") == tests[:k]
    assert rvs.parents(w, "data") == tests         # scale went through the loop's phis
    assert rvs.parents(w, "control") == []


def random_length(rng):
    n = rng.poisson(3.0) + 1
    xs = [rng.normal() for _ in range(n)]
    ys = []
    for v in xs:
        ys.append(rng.normal(v, 1.0))
    return ys


def test_loops_depend_on_what_decides_their_length_not_on_the_items():
    rvs = _rvs(random_length, np.random.default_rng(2))
    addrs = rvs.addresses
    n = addrs[0]
    k = (len(addrs) - 1) // 2
    xs, ys = addrs[1:1 + k], addrs[1 + k:]
    assert len(ys) == k >= 2
    for i in range(k):
        assert rvs.parents(xs[i], "control") == [n] and rvs.parents(xs[i], "data") == []
        # ys[i] reads element i of xs: x_i, not the other items. The element was appended under
        # the comprehension's loop, whose length n decided which append lands at index i (a memory
        # phi in gated-SSA terms), so n is a data parent too.
        assert rvs.parents(ys[i], "data") == [n, xs[i]]
        assert rvs.parents(ys[i], "control") == [n]


# -- observed flags, user names, rendering --------------------------------------------------------
class NamingContext(RandomContext):
    def on_PrimitiveCall(self, node):
        if node.fn is np.random.Generator.normal and node.line == OBSERVED_LINE:
            node.meta["address"] = "y"
            node.meta["observed"] = True


def regression(rng):
    slope = rng.normal(0.0, 1.0)
    return rng.normal(slope * 2.0, 0.5)


OBSERVED_LINE = regression.__code__.co_firstlineno + 2


def test_observed_and_user_names_from_metadata_or_argument():
    _, tape = dcgraph.track(regression, np.random.default_rng(0), ctx=NamingContext())
    rvs = random_variables(tape)
    slope, y = rvs.addresses
    assert y == "y" and rvs["y"].observed and not rvs[slope].observed
    assert rvs[y].site.endswith(f"L{OBSERVED_LINE}/normal") and rvs[rvs[y].site] is rvs["y"]
    assert rvs.parents("y") == [slope]
    _, tape = dcgraph.track(regression, np.random.default_rng(0), ctx=CTX)
    site = random_variables(tape).addresses[1]
    marked = random_variables(tape, observed=[site])
    assert [c.observed for c in marked] == [False, True]
    with pytest.raises(KeyError, match="nowhere"):
        random_variables(tape, observed=["nowhere"])


def test_dot_and_svg_draw_data_solid_and_control_dashed():
    rvs = _rvs(gated, np.random.default_rng(5))
    dot = rvs.to_dot()
    implied = rvs._implied_control()            # control edges another control edge shows
    assert dot.count("->") == len(rvs.edges()) - len(implied)
    n_control = len(rvs.edges("control")) - len(implied)
    assert n_control > 0 and dot.count("style=dashed") == n_control
    assert dot.count("style=solid") == len(rvs.edges("data"))
    for c in rvs:
        assert c.address in dot
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot program is not installed (make system-deps)")
    svg = rvs.to_svg()
    assert "<svg" in svg and svg.count('class="node"') == len(rvs)


def test_a_parameter_mutated_after_the_draw_has_no_recorded_distribution():
    def f(rng):
        p = [0.5, 0.5]
        k = rng.choice(2, p=p)
        p[0], p[1] = 0.9, 0.1
        return k

    (choice,) = _rvs(f, np.random.default_rng(0))
    assert choice.distribution is None and "mutated" in choice.distribution_error
