"""Interweaving moves for a hierarchical precision: assignment text and the posterior of the
precision against quadrature (random effects with Poisson children, updated by NUTS)."""
import numpy as np
import pytest

from dcgraph.bugs import compile
from dcgraph.bugs.fit import sample
from dcgraph.infer import mcse_mean

TEXT = ("model { for (i in 1:3) { b[i] ~ dnorm(0, tau) \n y[i] ~ dpois(lam[i]) \n"
        "log(lam[i]) <- b[i] } \n tau ~ dgamma(2, 1) }")
Y = np.array([0, 3, 1])


def exact_tau_posterior():
    """Grid over tau and the normalised posterior density there (Gauss-Hermite over each b)."""
    from scipy import stats
    z, w = np.polynomial.hermite_e.hermegauss(80)
    w = w / w.sum()
    tau = np.linspace(1e-3, 30, 6000)
    logp = stats.gamma(2, scale=1).logpdf(tau)
    for y in Y:
        b = z[None, :] / np.sqrt(tau[:, None])
        logp += np.log(np.sum(w * stats.poisson.pmf(y, np.exp(b)), axis=1))
    p = np.exp(logp - logp.max())
    return tau, p / np.trapezoid(p, tau)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_precision_with_interweaving_matches_quadrature():
    model = compile(TEXT, {"y": Y})
    assert str(model.samplers()) == ("[1] slice sampler: b[1:3] (3 nodes)\n"
                                     "[2] conjugate_dgamma_dnorm sampler: tau\n"
                                     "[3] interweaving (log-scale slice) sampler: tau with b (3 nodes)")
    r = sample(model, chains=2, draws=1000, warmup=200, seed=2, monitor="tau", progress=False)
    x = r["tau"]
    grid, dens = exact_tau_posterior()
    mean = np.trapezoid(grid * dens, grid)
    assert abs(x.mean() - mean) < 4 * mcse_mean(x)
    cdf = np.cumsum(dens) * (grid[1] - grid[0])
    for q in (0.1, 0.5, 0.9):
        exact_q = grid[np.searchsorted(cdf, q)]
        assert abs(np.mean(x < exact_q) - q) < 0.04, q


def test_move_keeps_the_non_centred_effects_and_moves_the_precision():
    from dcgraph.bugs.samplers import BUGSTarget, assign
    model = compile(TEXT, {"y": Y})
    target = BUGSTarget(model)
    kernel = assign(model, target, "auto").kernel
    x = target.initial_point(0)
    rng = np.random.default_rng(5)
    moved = 0
    for _ in range(20):
        before = target.constrained(x)
        state = kernel._move(rng, target, type("S", (), {"position": x})())
        after = target.constrained(state.position)
        np.testing.assert_allclose(after["b"] * np.sqrt(after["tau"]), before["b"] * np.sqrt(before["tau"]),
                                   rtol=1e-9)
        assert state.logdensity == target.logdensity(state.position)
        moved += after["tau"] != before["tau"]
        x = state.position
    assert moved >= 15


def test_compiled_density_route_draws_what_the_blanket_route_draws():
    """Both routes' densities of log(tau) differ by a constant, so with the same random numbers
    the slice draws agree: the compiled log density (one vectorised evaluation per step) and the
    node-by-node blanket evaluation."""
    from dcgraph.bugs.samplers import BUGSTarget, assign
    model = compile(TEXT, {"y": Y})
    target = BUGSTarget(model)
    kernel = assign(model, target, "auto").kernel
    x = target.initial_point(0)
    blanket = type(kernel)(kernel.inner, target, kernel.state, kernel.groups)
    blanket._plain_coordinates = lambda *args: None
    for seed in range(8):
        s = type("S", (), {"position": x})()
        ns = kernel.state
        ns.load(target.constrained(x))
        assert kernel._plain_coordinates(ns, x, *kernel.groups[0]) is not None
        ours = kernel._move(np.random.default_rng(seed), target, s).position
        theirs = blanket._move(np.random.default_rng(seed), target, s).position
        np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-10)
        x = ours
