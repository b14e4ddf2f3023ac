"""The README's BUGS example (examples/bugs/machines) compiles, and its log joint is the sum of
its stochastic nodes' densities, computed here with scipy."""
import pathlib

import numpy as np
import pytest
from scipy import stats

import dcgraph.bugs as bugs

EX = pathlib.Path(__file__).resolve().parents[2] / "examples" / "bugs" / "machines"


def test_the_readme_model_compiles_and_its_log_joint_is_the_scipy_sum():
    model = bugs.compile(str(EX / "model.txt"), str(EX / "data.txt"), str(EX / "inits.txt"))
    failures = np.array([3, 0, 7, 12, 1, 4])
    hours = np.array([120.5, 30.0, 210.0, 480.2, 15.7, 95.0])
    alpha, beta, rate = 1.3, 9.0, np.array([0.02, 0.01, 0.03, 0.025, 0.05, 0.04])
    expected = (stats.expon.logpdf(alpha) + stats.gamma.logpdf(beta, 0.1, scale=1.0)
                + stats.gamma.logpdf(rate, alpha, scale=1 / beta).sum()
                + stats.poisson.logpmf(failures, rate * hours).sum())
    got = model.logjoint({"alpha": alpha, "beta": beta, "rate": rate})
    assert got == pytest.approx(expected, rel=1e-12)
    value, grad = model.logdensity_and_grad(model.initial_values(0))
    assert np.isfinite(value) and grad.shape == (8,)


def test_the_model_object_samples_and_monitors_a_logical_node():
    model = bugs.compile(str(EX / "model.txt"), str(EX / "data.txt"), str(EX / "inits.txt"))
    fit = model.sample(chains=1, draws=60, warmup=60, seed=3, monitor="alpha,mean.rate")
    assert fit["alpha"].shape == (1, 60)
    np.testing.assert_allclose(fit["mean.rate"], fit["alpha"] / model.sample(
        chains=1, draws=60, warmup=60, seed=3, monitor="beta")["beta"], rtol=1e-12)
