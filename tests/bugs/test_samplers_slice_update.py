"""``sampler="auto"`` slice-samples univariate nodes on their Markov blankets: the draws against
the exact posterior CDF (quadrature on a grid, Kolmogorov-Smirnov with a fixed seed), blanket-only
evaluation counts, bounded loops, the assignment rule; and index resolution lets programming
errors through (only "not resolvable" errors mean a dynamic index)."""
import numpy as np
import pytest
from scipy import integrate, stats

from bugs_compile_cases import compiled
from dcgraph.bugs import compile
from dcgraph.bugs.fit import sample
from dcgraph.bugs.samplers import BUGSTarget, assign
from dcgraph.bugs.samplers.blanket import NodeState
from dcgraph.bugs.samplers.conjugate import conjugacy
from dcgraph.bugs.samplers.slice import SliceUpdate, node_support, piecewise_constant

Y = np.array([0.3, 1.9, 1.1, -0.4, 2.6])


def exact_cdf(logpost, lo, hi, n=20001):
    """The CDF of the density proportional to ``exp(logpost)`` on ``[lo, hi]`` (trapezoid rule)."""
    grid = np.linspace(lo, hi, n)
    logp = logpost(grid)
    w = np.exp(logp - logp.max())
    cdf = integrate.cumulative_trapezoid(w, grid, initial=0.0)
    return lambda x: np.interp(x, grid, cdf / cdf[-1])


def ks_pvalue(fit, name, cdf, thin=4):
    x = np.asarray(fit[name])[:, ::thin].ravel()
    return stats.kstest(x, cdf).pvalue


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_unbounded_node_matches_the_quadrature_posterior():
    """``mu ~ dnorm(0, 0.1)`` with Student-t data: no conjugate rule."""
    model = compile("model { mu ~ dnorm(0, 0.1) \n for (i in 1:5) { y[i] ~ dt(mu, 1, 4) } }",
                    {"y": Y})
    fit = sample(model, chains=4, draws=1500, warmup=300, seed=5, progress=False)
    assert str(fit.samplers) == "[1] slice sampler: mu"
    cdf = exact_cdf(lambda m: stats.norm.logpdf(m, 0, 0.1 ** -0.5)
                    + stats.t.logpdf(Y[:, None], 4, loc=m).sum(0), -10, 12)
    assert ks_pvalue(fit, "mu", cdf) > 0.01


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_interval_node_matches_the_quadrature_posterior():
    """``sigma ~ dunif(0, 5)`` as a normal scale (the logit scale of (0, 5)), and a beta node
    with a binomial child reading ``p * p`` (not conjugate; the logit scale of (0, 1))."""
    text = ("model { for (i in 1:5) { y[i] ~ dnorm(0, tau) } \n tau <- 1 / (sigma * sigma) \n"
            "sigma ~ dunif(0, 5) \n k ~ dbin(q, 10) \n q <- p * p \n p ~ dbeta(2, 2) }")
    model = compile(text, {"y": Y, "k": 3})
    fit = sample(model, chains=4, draws=1500, warmup=300, seed=9, progress=False)
    assert str(fit.samplers) == "[1] slice sampler: p\n[2] slice sampler: sigma"
    sigma = exact_cdf(lambda s: stats.norm.logpdf(Y[:, None], 0, s).sum(0), 1e-3, 5)
    p = exact_cdf(lambda v: stats.beta.logpdf(v, 2, 2) + stats.binom.logpmf(3, 10, v * v),
                  1e-9, 1 - 1e-9)
    assert ks_pvalue(fit, "sigma", sigma) > 0.01
    assert ks_pvalue(fit, "p", p) > 0.01
    assert 0 < fit["sigma"].min() and fit["sigma"].max() < 5


def _pumps_alpha():
    model = compiled("pumps")
    target = BUGSTarget(model)
    assignment = assign(model, target, "auto")
    gibbs = assignment.kernel.blocks["nodes"][1].gibbs
    alpha = model.graph.nodes[model.graph.node_at[("alpha", 0)]]
    state = gibbs.state
    state.load(target.constrained(target.initial_point(0)))
    return target, gibbs, state, alpha, dict((n.id, r) for n, r in gibbs.updates
                                             if not isinstance(n, tuple))[alpha.id]


def test_slice_update_evaluates_the_blanket_only(monkeypatch):
    """Pumps' ``alpha`` sliced on its own: each evaluation is the blanket (alpha and theta[1:10]:
    11 node log densities, the theta terms in one call counted as 10); never the joint; the
    support (alpha ~ dexp(1): x > 0) is respected."""
    target, gibbs, state, alpha, _ = _pumps_alpha()
    rule = SliceUpdate()
    assert [n.name for n in state.blanket(alpha)][:2] == ["alpha", "theta[1]"]
    assert len(state.blanket(alpha)) == 11 and node_support(state, alpha) == (0.0, np.inf)
    evals = []
    original = state.blanket_logp
    monkeypatch.setattr(state, "blanket_logp", lambda n: evals.append(n.id) or original(n))
    calls, terms = target.calls, state.terms
    rng = np.random.default_rng(0)
    for _ in range(20):
        value, jump = rule.draw(rng, state, alpha, 1.0)
        state.set(alpha, value)
        assert value > 0 and jump >= 0
    assert set(evals) == {alpha.id} and len(evals) >= 20 * 3   # level, both ends, a proposal
    assert state.terms - terms == 11 * len(evals)
    assert target.calls == calls


def test_slice_loops_are_bounded():
    """A huge interval on a peaked conditional: at most 1 + max_steps + max_shrink evaluations;
    a value outside the support (no slice) is kept without evaluating."""
    _, _, state, alpha, _ = _pumps_alpha()
    rule = SliceUpdate(max_steps=2, max_shrink=3)
    counted = []
    original = state.blanket_logp
    state.blanket_logp = lambda n: counted.append(1) or original(n)
    rng = np.random.default_rng(1)
    for _ in range(50):
        counted.clear()
        x0 = float(state.get(alpha))
        value, _ = rule.draw(rng, state, alpha, 1e6)
        assert len(counted) <= 1 + 2 + 3
        assert value == x0 or value > 0
        state.set(alpha, value)
    state.set(alpha, -1.0)
    counted.clear()
    assert rule.draw(rng, state, alpha, 1.0) == (-1.0, 0.0) and not counted


def test_widths_adapt_during_warmup_only():
    model = compiled("pumps")
    fit = sample(model, chains=1, draws=20, warmup=60, seed=2, progress=False)
    assert str(fit.samplers).splitlines()[1] == "[2] slice (beta integrated out) sampler: alpha"
    kernel = fit.samplers.kernel.blocks["nodes"][1]
    target = BUGSTarget(model)
    from dcgraph.infer.gibbs import BlockTarget
    idx = kernel.gibbs.indices
    x = target.initial_point(0)
    block = BlockTarget(target, x, idx)
    rng = np.random.default_rng(3)
    state = kernel.init(block, x[idx])
    tuning = kernel.start_warmup(rng, block, state, 30)
    assert tuning.widths.tolist() == [1.0]
    for _ in range(30):
        state, tuning, _ = kernel.warmup_step(rng, block, state, tuning)
    widths = kernel.finish_warmup(tuning)
    assert widths[0] == pytest.approx(2 * tuning.jump_sum[0] / 30) and widths[0] != 1.0


def test_piecewise_constant_node_is_sliced_and_frees_its_partner():
    """A changepoint ``k`` read through ``step`` has a zero gradient: sliced although it shares a
    blanket with ``d``; ``d`` (Student-t children, no rule) is then alone and sliced too."""
    text = ("model { for (i in 1:6) { y[i] ~ dt(step(k - i) * d, 1, 4) } \n"
            "k ~ dunif(0, 7) \n d ~ dnorm(0, 0.01) }")
    model = compile(text, {"y": [2.1, 1.8, 2.5, 0.1, -0.3, 0.2]})
    state = NodeState(model)
    k, d = (model.graph.nodes[model.graph.node_at[(v, 0)]] for v in ("k", "d"))
    assert piecewise_constant(state, k) and not piecewise_constant(state, d)
    assert str(model.samplers()) == "[1] slice sampler: d\n[2] slice sampler: k"
    smooth = compile(text.replace("step(k - i)", "ilogit(k - i)"), {"y": [2.1, 1.8, 2.5, 0.1, -0.3, 0.2]})
    assert str(smooth.samplers()) == "[1] NUTS sampler: k, d"


def test_index_resolution_lets_programming_errors_through(monkeypatch):
    """Only BUGS errors (and a non-constant element) mean "resolve at each evaluation"; any other
    exception from resolution is a bug and propagates, in blanket.py and in conjugate.py."""
    model = compiled("pumps")
    state = NodeState(model)
    theta = model.graph.nodes[model.graph.node_at[("theta", 0)]]
    assert conjugacy(state, theta) is not None

    def broken(*args, **kwargs):
        raise TypeError("a programming error")

    monkeypatch.setattr(state._static, "resolve", broken)
    with pytest.raises(TypeError, match="programming error"):
        state.params(theta)
    state = NodeState(model)
    monkeypatch.setattr(state.ev, "resolve", broken)
    with pytest.raises(TypeError, match="programming error"):
        conjugacy(state, theta)


def test_a_lone_node_with_a_large_blanket_stays_with_nuts():
    """Slicing evaluates blanket terms one by one: with more than ``SLICE_MAX_BLANKET`` nodes in
    the blanket the lone node goes to NUTS (unless piecewise constant)."""
    from dcgraph.bugs.samplers.assign import SLICE_MAX_BLANKET
    text = "model { mu ~ dnorm(0, 0.1) \n for (i in 1:N) { y[i] ~ dt(mu, 1, 4) } }"
    for n, expected in ((SLICE_MAX_BLANKET - 1, "slice"), (SLICE_MAX_BLANKET, "NUTS")):
        model = compile(text, {"N": n, "y": np.linspace(-1, 1, n)})
        assert str(model.samplers()) == f"[1] {expected} sampler: mu"
    step = compile(text.replace("dt(mu, 1, 4)", "dt(step(mu) * 2, 1, 4)"),
                   {"N": 30, "y": np.linspace(-1, 1, 30)})
    assert str(step.samplers()) == "[1] slice sampler: mu"
