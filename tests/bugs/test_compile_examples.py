"""The 19 OpenBUGS Volume 1 examples: compile with both inits, finite log densities, Rats'
JuliaBUGS value, agreement with an independent scipy evaluation, gradients vs finite differences."""
import numpy as np
import pytest

from bugs_compile_cases import NAMES, compiled, reference_logdensity

# prior draws of vague priors overflow on purpose (both evaluations must agree on it)
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def test_nineteen_examples():
    assert len(NAMES) == 19


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("chain", [0, 1])
def test_finite_at_inits(name, chain):
    model = compiled(name)
    theta = model.initial_values(chain)
    assert theta.shape == (model.dim,)
    assert np.isfinite(model.logdensity(theta))


def test_rats_log_joint_matches_juliabugs():
    model = compiled("rats")
    from dcgraph.bugs import read_data
    from bugs_compile_cases import EXAMPLES
    inits = read_data(EXAMPLES / "rats" / "inits.txt")
    assert model.logjoint(inits) == pytest.approx(-174029.38703951868, rel=1e-9)
    # the same through the unconstrained path: the Jacobian of the precisions (all 1) is zero
    assert model.logdensity(model.unconstrain(inits)) == pytest.approx(-174029.38703951868, rel=1e-9)


BIG = {"lsat"}          # 11,011 nodes: the node-by-node reference takes seconds per point


@pytest.mark.parametrize("name", [n for n in NAMES if n not in BIG] + [
    pytest.param(n, marks=pytest.mark.slow) for n in sorted(BIG)])
def test_matches_scipy_node_by_node(name, draws=5):
    _compare_with_scipy(name, draws)


@pytest.mark.parametrize("name", sorted(BIG))
def test_matches_scipy_node_by_node_big_quick(name):
    _compare_with_scipy(name, 1)


def _compare_with_scipy(name, draws):
    model = compiled(name)
    rng = np.random.default_rng(7)
    points = [model.initial_values(0), model.initial_values(1)]
    for _ in range(draws):
        with np.errstate(all="ignore"):
            theta = model.unconstrain(model.simulate(rng))
        # vague priors (dgamma(0.001, 0.001)) draw values that underflow: keep the rest of the draw
        ok = np.isfinite(theta) & (np.abs(theta) < 30)
        points.append(np.where(ok, theta, rng.normal(size=theta.shape)))
    for theta in points:
        ours = model.logdensity(theta)
        ref = reference_logdensity(model, theta)
        # extreme prior draws may overflow: then both must (nan == nan here)
        np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-8, err_msg=name)


@pytest.mark.parametrize("name", NAMES)
def test_gradient_matches_central_differences(name):
    model = compiled(name)
    theta = model.initial_values(0)
    value, grad = model.logdensity_and_grad(theta)
    assert value == pytest.approx(model.logdensity(theta), rel=1e-12)
    rng = np.random.default_rng(3)
    coords = rng.choice(model.dim, size=min(model.dim, 12), replace=False)
    for k in coords:
        h = 1e-5 * max(1.0, abs(theta[k]))
        up, down = theta.copy(), theta.copy()
        up[k] += h
        down[k] -= h
        fd = (model.logdensity(up) - model.logdensity(down)) / (2 * h)
        assert grad[k] == pytest.approx(fd, rel=1e-4, abs=1e-4 * max(1.0, abs(value)) * 1e-3), \
            (name, model.parameter_names[k])
