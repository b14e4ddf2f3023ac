"""Nodes of one statement updated and evaluated together: vectorised conjugate updates of
exchangeable nodes (``conjugate_groups``) against closed-form posteriors (Kolmogorov-Smirnov,
fixed seeds) and against the node-by-node rule's moments; blanket terms and logical refreshes one
call per statement (``groups``) equal to the node-by-node values; the collapsed slice
(``collapsed``) against the quadrature posterior of the pair."""
import numpy as np
import pytest
from scipy import integrate, special, stats

from bugs_compile_cases import compiled
from dcgraph.bugs import compile
from dcgraph.bugs.fit import sample
from dcgraph.bugs.samplers import BUGSTarget, assign
from dcgraph.bugs.samplers.blanket import NodeState
from dcgraph.bugs.samplers.conjugate import conjugacy
from dcgraph.bugs.samplers.conjugate_groups import GroupConjugate, grouped
from dcgraph.bugs.samplers.groups import NodeGroup

KS_P = 0.01


def draws(model, name, n=2000, seed=0):
    r = sample(model, chains=1, draws=n, warmup=20, seed=seed, monitor=name, progress=False)
    return np.asarray(r[name][0])


def ks_ok(x, dist):
    return stats.kstest(np.ravel(x), dist.cdf).pvalue > KS_P


def test_gamma_poisson_group_draws_each_node_from_its_posterior():
    x, t = np.array([5, 1, 5, 14, 3]), np.array([94.3, 15.7, 62.9, 126.0, 5.24])
    model = compile("model { for (i in 1:5) { theta[i] ~ dgamma(a, b) \n lambda[i] <- theta[i] * t[i]"
                    "\n x[i] ~ dpois(lambda[i]) } }", {"x": x, "t": t, "a": 1.5, "b": 2.0})
    assert str(model.samplers()) == "[1] conjugate_dgamma_dpois (vectorised) sampler: theta[1:5] (5 nodes)"
    d = draws(model, "theta")
    for i in range(5):
        assert ks_ok(d[:, i], stats.gamma(1.5 + x[i], scale=1 / (2.0 + t[i])))
    assert not ks_ok(d[:, 0], stats.gamma(1.5 + x[1], scale=1 / (2.0 + t[1])))


def test_normal_group_with_affine_children_of_two_statements():
    y, z = np.array([1.2, -0.4, 2.5, 0.3]), np.array([0.1, 0.7, -1.0, 2.0])
    a, b = np.array([0.5, 1.0, 2.0, -1.5]), np.array([0.1, 0.0, -0.3, 1.0])
    model = compile("model { for (i in 1:4) { mu[i] ~ dnorm(1, 0.5) \n m[i] <- a[i] * mu[i] + b[i]"
                    "\n y[i] ~ dnorm(m[i], 3) \n z[i] ~ dnorm(mu[i], 2) } }",
                    {"y": y, "z": z, "a": a, "b": b})
    assert str(model.samplers()) == "[1] conjugate_dnorm_dnorm (vectorised) sampler: mu[1:4] (4 nodes)"
    prec = 0.5 + 3 * a * a + 2
    mean = (0.5 + 3 * a * (y - b) + 2 * z) / prec
    d = draws(model, "mu")
    for i in range(4):
        assert ks_ok(d[:, i], stats.norm(mean[i], 1 / np.sqrt(prec[i])))


def test_beta_group_with_binomial_and_bernoulli_children():
    r, n = np.array([2, 5, 1]), np.array([4, 9, 6])
    zz = np.array([[1, 0, 0, 1], [1, 1, 1, 0], [0, 0, 0, 0]])
    model = compile("model { for (i in 1:3) { p[i] ~ dbeta(2, 3) \n r[i] ~ dbin(p[i], n[i]) \n"
                    "for (j in 1:4) { z[i, j] ~ dbern(p[i]) } } }", {"r": r, "n": n, "z": zz})
    assert str(model.samplers()) == "[1] conjugate_dbeta_dbern_dbin (vectorised) sampler: p[1:3] (3 nodes)"
    d = draws(model, "p")
    for i in range(3):
        s = r[i] + zz[i].sum()
        assert ks_ok(d[:, i], stats.beta(2 + s, 3 + n[i] + 4 - s))


def test_nodes_sharing_a_child_are_not_grouped():
    model = compile("model { for (i in 1:3) { mu[i] ~ dnorm(0, 1) } \n y ~ dnorm(mu[1] + mu[2], 1) \n"
                    "w ~ dnorm(mu[3], 1) }", {"y": 0.5, "w": 1.0})
    assert str(model.samplers()) == "[1] conjugate_dnorm_dnorm sampler: mu[1:3] (3 nodes)"


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name, var, n", [("pumps", "theta", 3000), ("leukfr", "dL0", 800)])
def test_group_draws_have_the_node_by_node_moments(name, var, n):
    """At a fixed point of the other nodes, repeated group draws and repeated node-by-node draws
    (``ConjugateRule.draw``) are both independent draws from the nodes' full conditionals."""
    model = compiled(name)
    target = BUGSTarget(model)
    state = NodeState(model)
    state.load(target.constrained(target.initial_point(0)))
    slot = next(s for p, s in zip(model.parameters, model.slots) if p.name == var)
    nodes = [model.graph.nodes[i.node] for i in slot.part.instances]
    rules = [conjugacy(state, m) for m in nodes]
    group = grouped(state, list(zip(nodes, rules)))
    assert isinstance(group, GroupConjugate) and group.prior.vectorised
    start = group.prior.value().copy()
    rng = np.random.default_rng(5)
    together = []
    for _ in range(n):
        group.update(rng)
        together.append(group.prior.value().copy())
    group.prior.assign(start)
    group.refresh()
    one_by_one = []
    for _ in range(n):
        row = []
        for m, rule in zip(nodes, rules):
            v = rule.draw(rng, state, m)
            state.set(m, v)
            state.refresh(m)
            row.append(v)
        one_by_one.append(row)
    a, b = np.array(together), np.array(one_by_one)
    se = np.sqrt((a.var(0) + b.var(0)) / n)
    assert np.all(np.abs(a.mean(0) - b.mean(0)) < 4.5 * se)
    pvalues = [stats.ks_2samp(a[:, k], b[:, k]).pvalue for k in range(len(nodes))]
    assert min(pvalues) > 0.01 / len(nodes)                  # two-sample KS, Bonferroni


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", ["pumps", "rats", "seeds", "leukfr", "surgical"])
def test_statement_groups_evaluate_as_the_nodes_one_by_one(name):
    """Blanket log densities (children one call per statement) and batched logical refreshes
    equal the node-by-node evaluations, at points moved away from the initial values."""
    model = compiled(name)
    target = BUGSTarget(model)
    state = NodeState(model)
    rng = np.random.default_rng(1)
    x = target.initial_point(0)
    x[:model.dim] += rng.normal(0, 0.2, model.dim)
    state.load(target.constrained(x))
    params = [model.graph.nodes[i.node] for s in model.slots for i in s.part.instances]
    for node in params:
        state.refresh(node)
        for k in state._logicals[node.id]:
            if k in state._live:
                m = model.graph.nodes[k]
                np.testing.assert_allclose(state.values[m.var][m.offsets],
                                           np.ravel(state._logical_closure(m)()), rtol=1e-12)
        one_by_one = sum(state.logp(m) for m in state.blanket(node))
        np.testing.assert_allclose(state.blanket_logp(node), one_by_one, rtol=1e-10)
    grouped_children = [g for n in params for g in state.grouped(state.children(n)) if g.n > 1]
    assert all(g.vectorised for g in grouped_children)
    assert bool(grouped_children) == (name != "surgical")     # Surgical: one child per node


def test_pumps_updates_evaluate_blankets_one_call_per_statement():
    """One Pumps sweep: the ten theta in one draw (their lambda refreshed in one call); alpha's
    marginal density: its blanket, alpha and theta[1:10] (11 node log densities, the theta in
    one call), and beta's conditional; never the joint log density."""
    model = compiled("pumps")
    target = BUGSTarget(model)
    gibbs = assign(model, target, "auto").kernel.blocks["nodes"][1].gibbs
    (thetas, group), (alpha, collapsed) = gibbs.updates
    assert len(thetas) == 10 and len(group.refresh.steps) == 1
    state = gibbs.state
    assert [(g.n, g.vectorised) for g in state.grouped(state.children(alpha))] == [(10, True)]
    x = target.initial_point(0)
    state.load(target.constrained(x))
    calls, terms = target.calls, state.terms
    collapsed.marginal_logp()
    assert state.terms - terms == 11
    gibbs(np.random.default_rng(0), x)
    assert target.calls == calls


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_collapsed_slice_draws_the_pair_from_its_posterior():
    """``theta`` observed: ``p(alpha | theta)`` with ``beta`` integrated out in closed form
    (quadrature CDF), ``beta``'s marginal its gamma conditional averaged over it."""
    theta = np.array([0.06, 0.1, 0.09, 0.11, 0.6, 0.6, 0.9, 0.9, 1.6, 2.0])
    model = compile("model { for (i in 1:10) { theta[i] ~ dgamma(alpha, beta) } \n alpha ~ dexp(1)"
                    "\n beta ~ dgamma(0.1, 1.0) }", {"theta": theta})
    assert str(model.samplers()) == ("[1] slice (beta integrated out) sampler: alpha\n"
                                     "[2] conjugate_dgamma_dgamma (with alpha) sampler: beta")
    n, S, L = len(theta), theta.sum(), np.log(theta).sum()
    grid = np.linspace(1e-4, 6, 20001)
    logp = (-grid + special.gammaln(n * grid + 0.1) - n * special.gammaln(grid) + (grid - 1) * L
            - (n * grid + 0.1) * np.log1p(S))
    w = np.exp(logp - logp.max())
    w /= integrate.trapezoid(w, grid)
    cdf_alpha = integrate.cumulative_trapezoid(w, grid, initial=0.0)
    fit = sample(model, chains=1, draws=3000, warmup=200, seed=0, progress=False)
    a, b = np.asarray(fit["alpha"][0])[::3], np.asarray(fit["beta"][0])[::3]
    assert stats.kstest(a, lambda v: np.interp(v, grid, cdf_alpha)).pvalue > KS_P
    sub = grid[::40]

    def cdf_beta(v):
        inner = stats.gamma.cdf(np.asarray(v)[:, None], n * sub[None, :] + 0.1, scale=1 / (1 + S))
        return integrate.trapezoid(inner * np.interp(sub, grid, w)[None, :], sub, axis=1)
    assert stats.kstest(b, cdf_beta).pvalue > KS_P
    assert stats.kstest(a, lambda v: np.interp(v * 1.1, grid, cdf_alpha)).pvalue < KS_P


def test_grouped_and_collapsed_updates_pickle_for_process_pools():
    """The Pumps kernel (a vectorised group, a collapsed slice) pickles; the copy makes the same
    sweep from the same random numbers."""
    import pickle
    model = compiled("pumps")
    target = BUGSTarget(model)
    gibbs = assign(model, target, "auto").kernel.blocks["nodes"][1].gibbs
    copy = pickle.loads(pickle.dumps(gibbs))
    x = target.initial_point(1)
    np.testing.assert_array_equal(gibbs(np.random.default_rng(7), x), copy(np.random.default_rng(7), x))
    collapsed = copy.updates[1][1]
    assert collapsed.state is copy.state and collapsed.partner.state is copy.state   # one state
