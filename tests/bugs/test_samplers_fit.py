"""``dcgraph.bugs.fit.sample``: monitors (logical nodes, missing data), names, seeds, errors."""
import json

import numpy as np
import pytest

import dcgraph.bugs as B
from bugs_compile_cases import EXAMPLES, compiled
from dcgraph.bugs.fit import default_monitor, sample
from dcgraph.infer import mcse_mean


def test_monitored_names_shapes_and_reproducibility(tmp_path):
    model = compiled("surgical")
    assert default_monitor(model) == ["p"]
    a = sample(model, chains=2, draws=40, warmup=40, seed=7, progress=False)
    b = sample(model, chains=2, draws=40, warmup=40, seed=7, progress=False)
    np.testing.assert_array_equal(a.draws, b.draws)
    assert a.names == [f"p[{i}]" for i in range(1, 13)] and a["p"].shape == (2, 40, 12)
    assert np.all((a["p"] > 0) & (a["p"] < 1))                  # constrained scale
    assert str(a.assignment) == "[1] conjugate_dbeta_dbin (vectorised) sampler: p[1:12] (12 nodes)"
    assert str(a.samplers) == str(model.samplers()) == str(a.assignment)
    header = open(a.to_csv(tmp_path / "s.csv")).readline().strip().split(",")
    assert header[:4] == ["chain", "draw", "p[1]", "p[2]"]
    c = sample(model, chains=2, draws=40, warmup=40, seed=8, progress=False)
    assert not np.array_equal(a.draws, c.draws)



def test_seeded_nuts_repeats_its_draws_on_a_warm_model():
    """The model's compiled gradient answers from its first call, so a second seeded run on the
    same (warm) model repeats the first (on Pumps the traced sweep and the compiled code differ
    by an ulp, which NUTS turns into other draws: the second run differed before)."""
    model = compiled("pumps")
    runs = [sample(model, chains=1, draws=40, warmup=40, seed=0, sampler="nuts",
                   progress=False)["alpha"] for _ in range(2)]
    np.testing.assert_array_equal(runs[0], runs[1])

def test_logical_node_is_its_function_of_the_parameters():
    model = compiled("rats")
    r = sample(model, chains=1, draws=20, warmup=30, seed=2, monitor="sigma,tau.c,alpha0,alpha.c,beta.c",
               progress=False)
    np.testing.assert_allclose(r["sigma"], 1 / np.sqrt(r["tau.c"]), rtol=1e-12)
    np.testing.assert_allclose(r["alpha0"], r["alpha.c"] - 22 * r["beta.c"], rtol=1e-12)


def test_unknown_monitor_is_an_error():
    with pytest.raises(B.BUGSError, match="cannot monitor 'sigma2'"):
        sample(compiled("rats"), monitor=["sigma2"], progress=False)
    with pytest.raises(ValueError, match="unknown sampler 'gibbs'"):
        sample(compiled("surgical"), sampler="gibbs", progress=False)


def rats_missdata():
    d = EXAMPLES / "rats"
    return B.compile(d / "model.txt", d / "missdata.txt", [d / "inits.txt", d / "inits1.txt"])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_missing_data_is_sampled_and_monitored():
    model = rats_missdata()
    data = B.read_data(EXAMPLES / "rats" / "missdata.txt")["Y"]
    r = sample(model, chains=1, draws=10, warmup=10, seed=1, monitor="Y,mu", progress=False)
    y = r["Y"]
    assert np.all(np.isfinite(y))
    observed = np.isfinite(data)
    assert not observed[25, 1] and np.all(y[:, :, observed] == data[observed])
    assert len(set(y[0, :, 25, 1])) == 10                        # a new value every draw


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_missing_data_matches_published_rats_missdata():
    """Rats with NA weights: the missing Y[26, 2:5] match the published MultiBUGS table."""
    model = rats_missdata()
    table = json.loads((EXAMPLES / "rats" / "posterior.json").read_text())["other_tables"][0]["nodes"]
    r = sample(model, chains=4, draws=1000, warmup=1000, seed=1, monitor="Y,beta.c", progress=False)
    for node, pub in table.items():
        x = r.draws[:, :, r.names.index(node)]
        assert abs(x.mean() - pub["mean"]) <= max(4 * mcse_mean(x), 0.1 * pub["sd"]), node
        assert x.std() == pytest.approx(pub["sd"], rel=0.15), node


def test_chains_on_a_process_pool_give_the_same_draws():
    """The model and the kernels (conjugate and enumeration updates) pickle; draws depend on the seed only."""
    import concurrent.futures as cf
    model = B.compile("model { for (i in 1:N) { x[i] ~ dpois(lam) } \n lam ~ dgamma(2, 1) }",
                      {"N": 4, "x": [3, np.nan, 4, 2]})
    here = sample(model, chains=2, draws=30, warmup=30, seed=3, progress=False)
    with cf.ProcessPoolExecutor(2) as pool:
        there = sample(model, chains=2, draws=30, warmup=30, seed=3, progress=False, executor=pool)
    np.testing.assert_array_equal(here.draws, there.draws)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", ["rats", "bones"])
def test_model_pickles_without_recompiling(name, monkeypatch):
    """A pickled model evaluates as the original; unpickling compiles the generated tree only
    (no parsing, graph building or code generation)."""
    import pickle
    import dcgraph.bugs.codegen as codegen
    import dcgraph.bugs.compiler as compiler
    from dcgraph.bugs.samplers import BUGSTarget
    model = compiled(name)
    blob = pickle.dumps(model)
    assert len(blob) < 2_000_000
    for module, fn in ((compiler, "compile"), (compiler, "build_graph"), (compiler, "generate"),
                       (codegen, "generate")):
        if hasattr(module, fn):
            monkeypatch.setattr(module, fn, lambda *a, **k: pytest.fail("recompiled on unpickling"))
    copy = pickle.loads(blob)
    theta = model.initial_values(1)
    copy.initial_values(1)
    assert copy.logdensity(theta) == model.logdensity(theta)
    v0, g0 = model.logdensity_and_grad(theta)
    v1, g1 = copy.logdensity_and_grad(theta)
    assert v0 == v1 and np.array_equal(g0, g1)
    np.testing.assert_array_equal(copy.discrete, model.discrete)
    assert copy.constrained(theta).keys() == model.constrained(theta).keys()
    assert str(copy.samplers()) == str(model.samplers())
    target = pickle.loads(pickle.dumps(BUGSTarget(model)))
    assert target.logdensity(target.initial_point(0)) == BUGSTarget(model).logdensity(
        BUGSTarget(model).initial_point(0))
