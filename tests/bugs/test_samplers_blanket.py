"""Node updates evaluate Markov blankets only: counts of single-node log densities per update,
the blanket's log density against the joint, and the graph's children against the random-variable
analysis of the traced program."""
import numpy as np
import pytest

import dcgraph
from bugs_compile_cases import compiled
from dcgraph.bugs import compile
from dcgraph.bugs.samplers import BUGSTarget, assign
from dcgraph.bugs.samplers.blanket import NodeState

MIXTURE = ("model { z ~ dcat(p[]) \n for (i in 1:4) { y[i] ~ dnorm(mu[z], 1) } \n"
           "for (j in 1:50) { v[j] ~ dnorm(0, 1) \n u[j] ~ dnorm(v[j], 1) } }")
MIX_DATA = {"p": [0.2, 0.3, 0.5], "mu": [-1.0, 0.0, 2.0], "y": [0.5, 1.0, -0.2, 2.2],
            "u": np.linspace(-1, 1, 50)}


def test_enumeration_update_evaluates_the_blanket_only():
    model = compile(MIXTURE, MIX_DATA)
    target = BUGSTarget(model)
    assignment = assign(model, target, "auto")
    assert str(assignment) == ("[1] conjugate_dnorm_dnorm (vectorised) sampler: v[1:50] (50 nodes)\n"
                               "[2] enumeration sampler: z")
    gibbs = assignment.kernel.blocks["nodes"][1].gibbs
    state = gibbs.state
    z = model.graph.nodes[model.graph.node_at[("z", 0)]]
    assert [n.name for n in state.blanket(z)] == ["z", "y[1]", "y[2]", "y[3]", "y[4]"]
    x = target.initial_point(0)
    state.load(target.constrained(x))
    calls, terms = target.calls, state.terms
    rule = dict((n.id, r) for n, r in gibbs.updates if not isinstance(n, tuple))[z.id]
    rule.draw(np.random.default_rng(0), state, z)
    assert state.terms - terms == 3 * 5 + 2        # 3 values x (z and its 4 children), and z
    #                                                alone at 0 and 4, outside the support
    gibbs(np.random.default_rng(1), x)             # a whole sweep: the 50 v (one vectorised
    #                                                conjugate draw, no log density) and z
    assert target.calls == calls                   # never the joint log density
    assert state.terms - terms == 2 * (3 * 5 + 2)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", ["rats", "pumps", "bones"])
def test_blanket_log_density_differences_equal_the_joints(name):
    model = compiled(name)
    state = NodeState(model)
    theta = model.initial_values(0)
    named = model.constrained(theta)
    rng = np.random.default_rng(4)
    for p in model.parameters[:4]:
        var = p.name
        offset = int(np.ravel_multi_index(tuple(i - 1 for i in p.indices[0]), p.shape)) if p.shape else 0
        node = model.graph.nodes[model.graph.node_at[(var, offset)]]
        state.load(named)
        before = state.blanket_logp(node)
        value = np.asarray(named[var], dtype=float).copy()
        flat = value.reshape(-1)
        flat[offset] = flat[offset] + 1 if p.discrete else flat[offset] * np.exp(rng.normal(0, 0.1))
        moved = dict(named, **{var: value})
        state.load(moved)
        after = state.blanket_logp(node)
        np.testing.assert_allclose(after - before, model.logjoint(moved) - model.logjoint(named),
                                   rtol=1e-9, atol=1e-9)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", ["rats", "pumps", "seeds", "stacks", "equiv", "surgical"])
def test_blanket_children_agree_with_the_traced_random_variables(name):
    model = compiled(name)
    fixed = [None] * len(model.parameters)
    _, tape = dcgraph.track(model._simulate, np.random.default_rng(0), True, fixed,
                            ctx=dcgraph.RandomContext())
    tape.lint()
    rv = dcgraph.random_variables(tape)
    order = [p for b in model.blocks for p in b.parts if p.statement.stochastic]
    part_of = {inst.node: p.id for p in model.parts for inst in p.instances}
    choices = list(rv)
    index = {c.address: k for k, c in enumerate(choices)}
    state = NodeState(model)
    checked = 0
    for choice, part in zip(choices, order):
        if part.role != "param":
            continue
        graph_children = {part_of[c.id] for i in part.instances
                          for c in state.children(model.graph.nodes[i.node])}
        traced = {order[index[a]].id for a in rv.children(choice.address)}
        assert graph_children == traced, part.statement.ast.target.name
        checked += 1
    assert checked == len(model.parameters)
