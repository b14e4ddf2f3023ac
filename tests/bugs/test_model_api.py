"""The model object: layout, log joint vs log density, simulation, initial values, views, the
random-variable graph of a traced ``simulate``, gradients through ``dcgraph.grad``, and the CLI."""
import argparse
import math

import numpy as np
import pytest
from scipy import stats

import dcgraph
import dcgraph.bugs as B
from bugs_compile_cases import EXAMPLES, compiled

PUMPS = EXAMPLES / "pumps"


def test_parameters_layout():
    model = compiled("pumps")
    assert [(p.name, p.support, p.slice) for p in model.parameters] == [
        ("alpha", "positive", slice(0, 1)), ("beta", "positive", slice(1, 2)),
        ("theta", "positive", slice(2, 12))]
    assert model.parameters[2].indices[:2] == ((1,), (2,))
    assert model.parameter_names[:4] == ["alpha", "beta", "theta[1]", "theta[2]"]
    assert model.dim == 12 and model.ndisc == 0
    with pytest.raises(ValueError, match="this model has 12 unconstrained parameters"):
        model.logdensity(np.zeros(11))


def test_logdensity_is_logjoint_plus_jacobian():
    model = compiled("pumps")
    theta = model.initial_values(1)
    values = model.constrained(theta)
    jac = theta.sum()                                  # every parameter is positive: x = exp(u)
    assert model.logdensity(theta) == pytest.approx(model.logjoint(values) + jac, rel=1e-12)
    # the log joint by hand with scipy
    d = B.read_data(PUMPS / "data.txt")
    a, b, th = values["alpha"], values["beta"], values["theta"]
    by_hand = (stats.expon.logpdf(a) + stats.gamma.logpdf(b, 0.1, scale=1.0)
               + stats.gamma.logpdf(th, a, scale=1 / b).sum()
               + stats.poisson.logpmf(d["x"], th * d["t"]).sum())
    assert model.logjoint(values) == pytest.approx(by_hand, rel=1e-12)


def test_initial_values_use_inits_then_prior():
    model = B.compile(PUMPS / "model.txt", PUMPS / "data.txt", PUMPS / "inits.txt")
    inits = B.read_data(PUMPS / "inits.txt")
    values = model.constrained(model.initial_values(0))
    assert values["alpha"] == pytest.approx(inits["alpha"])
    assert values["beta"] == pytest.approx(inits["beta"])
    partial = B.compile(PUMPS / "model.txt", PUMPS / "data.txt", {"alpha": 2.0})
    v0 = partial.constrained(partial.initial_values(0))
    v1 = partial.constrained(partial.initial_values(1))
    assert v0["alpha"] == v1["alpha"] == 2.0
    assert v0["beta"] != v1["beta"]                     # drawn from the prior, per chain
    none = B.compile(PUMPS / "model.txt", PUMPS / "data.txt")
    assert np.all(np.isfinite(none.initial_values(0)))
    theta = [1.0, -1.0] + [1.0] * 8
    bad = B.compile(PUMPS / "model.txt", PUMPS / "data.txt", [{"theta": theta}, {"alpha": -1.0}])
    with pytest.raises(B.BUGSError,
                       match=r"initial values outside the support of theta\[2\] \(chain 0\)"):
        bad.initial_values(0)
    with pytest.raises(B.BUGSError, match="cannot draw the initial values of chain 1 from the prior"):
        bad.initial_values(1)


def test_simulate_prior_and_prior_predictive():
    model = compiled("pumps")
    draw = model.simulate(np.random.default_rng(0))
    data = B.read_data(PUMPS / "data.txt")
    np.testing.assert_array_equal(draw["x"], data["x"])            # observed stay the data
    np.testing.assert_allclose(draw["lambda"], draw["theta"] * data["t"])
    predictive = model.simulate(np.random.default_rng(0), observed=True)
    assert not np.array_equal(predictive["x"], data["x"])
    assert np.all(predictive["x"] == np.round(predictive["x"]))
    # prior mean of alpha ~ dexp(1) is 1
    alphas = [model.simulate(np.random.default_rng(s))["alpha"] for s in range(400)]
    assert abs(np.mean(alphas) - 1.0) < 4 * 1.0 / math.sqrt(400)


def test_grad_through_the_tape():
    model = compiled("rats")
    theta = model.initial_values(0)
    g = dcgraph.grad(model._logdensity)(theta, model.discrete)
    _, g2 = model.logdensity_and_grad(theta)
    np.testing.assert_allclose(g, g2, rtol=1e-12)
    _, tape = dcgraph.track(model._logdensity, theta, model.discrete)
    tape.lint()
    # vectorised: the tape does not grow with the number of rats
    data = B.read_data(EXAMPLES / "rats" / "data.txt")
    data.update(N=10, Y=data["Y"][:10])
    small = B.compile(EXAMPLES / "rats" / "model.txt", data)
    _, small_tape = dcgraph.track(small._logdensity, small.initial_values(0), small.discrete)
    assert len(list(tape)) == len(list(small_tape)) < 90
    assert not any(type(n).__name__ == "Branch" for n in tape)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")      # vague prior draws underflow
@pytest.mark.parametrize("name", ["rats", "pumps", "seeds"])
def test_random_variables_parent_sets(name):
    model = compiled(name)
    fixed = [None] * len(model.parameters)
    _, tape = dcgraph.track(model._simulate, np.random.default_rng(0), True, fixed,
                            ctx=dcgraph.RandomContext())
    tape.lint()
    rv = dcgraph.random_variables(tape)
    g = model.graph
    order = [p for b in model.blocks for p in b.parts if p.statement.stochastic]
    part_of = {inst.node: p for p in model.parts for inst in p.instances}

    def stochastic_parents(part):
        out, todo, seen = set(), [n for i in part.instances for n in g.nodes[i.node].parents], set()
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            if g.nodes[n].stochastic:
                out.add(part_of[n].id)
            else:
                todo.extend(g.nodes[n].parents)
        return out
    choices = list(rv)
    assert len(choices) == len(order)
    address = {c.address: k for k, c in enumerate(choices)}
    for k, (choice, part) in enumerate(zip(choices, order)):
        got = {order[address[a]].id for a in rv.parents(choice.address)}
        assert got == stochastic_parents(part), part.statement.ast.target.name


def test_program_and_source_views():
    model = compiled("pumps")
    assert model.program().splitlines()[:2] == ["alpha ~ dexp(1)", "beta ~ dgamma(0.1, 1.0)"]
    src = model.source()
    assert src.startswith("def logdensity(theta, disc):")
    assert "for " not in src.split("def logjoint")[0]                  # vectorised
    assert "theta" in repr(model.parameters[2])


def test_graph_picture(tmp_path):
    model = compiled("rats")
    from dcgraph.bugs.picture import graph_dot
    dot = graph_dot(model.graph).source
    assert 'label="30 × 5"' in dot and "fillcolor=lightgrey" in dot and "style=dashed" in dot
    assert dot.count("->") == 11
    svg = model.graph.to_svg(tmp_path / "rats.svg")
    assert svg.lstrip().startswith("<?xml") and (tmp_path / "rats.svg").exists()


def _cli(*argv):
    from dcgraph.bugs.cli import add_subparser
    parser = argparse.ArgumentParser(prog="dcgraph")
    add_subparser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(list(argv))
    return args.run(args)


def test_cli_compile(tmp_path, capsys):
    svg = tmp_path / "pumps.svg"
    status = _cli("bugs", "compile", str(PUMPS / "model.txt"), str(PUMPS / "data.txt"),
                  str(PUMPS / "inits.txt"), "--svg", str(svg))
    out = capsys.readouterr().out
    assert status == 0
    model = compiled("pumps")
    assert out.splitlines()[0] == (f"# 32 nodes, 12 parameters; log density at inits: "
                                   f"{model.logdensity(model.initial_values(0)):.6f}")
    assert "\n".join(out.splitlines()[1:]) == model.program()
    assert svg.read_text().lstrip().startswith("<?xml")


def test_cli_error(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("model {\n  y ~ dnorm(mu, 1)\n}\n")
    assert _cli("bugs", "compile", str(bad), str(PUMPS / "data.txt")) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2:13: undefined variable 'mu'" in err and "^" in err


def test_rats_named_values_every_call_fresh_with_data_constants_and_logical_nodes():
    model = compiled("rats")
    d = B.read_data(EXAMPLES / "rats" / "data.txt")
    theta = model.initial_values(1)
    a = model.constrained(theta)
    b = model.constrained(theta + 0.5)
    assert set(a) == {"Y", "mu", "alpha", "beta", "tau.c", "sigma", "alpha.c", "alpha.tau",
                      "beta.c", "beta.tau", "alpha0"}
    np.testing.assert_array_equal(a["Y"], d["Y"])
    np.testing.assert_allclose(a["alpha"], theta[3:33])
    assert a["tau.c"] == pytest.approx(math.exp(theta[0]))
    assert b["tau.c"] == pytest.approx(math.exp(theta[0] + 0.5))
    assert a["sigma"] == pytest.approx(1 / math.sqrt(a["tau.c"]))
    assert a["alpha0"] == pytest.approx(a["alpha.c"] - d["xbar"] * a["beta.c"])
    np.testing.assert_allclose(a["mu"], a["alpha"][:, None]
                               + a["beta"][:, None] * (np.asarray(d["x"]) - d["xbar"])[None, :])
    a["Y"][0, 0] = -1.0                                # the caller owns its arrays
    assert model.constrained(theta)["Y"][0, 0] == d["Y"][0][0]


def test_bugs_nuts_uses_the_early_metric_windows():
    from dcgraph.bugs.samplers import BUGSTarget, assign
    from dcgraph.infer import NUTS
    from dcgraph.infer.adaptation import EARLY_WINDOWS
    model = compiled("rats")
    kernel = assign(model, BUGSTarget(model), "nuts").kernel
    assert isinstance(kernel, NUTS) and kernel.adapt_windows == EARLY_WINDOWS   # one NUTS block
