"""Chain driver: reproducibility, processes, initial points, targets and their errors."""

import pickle

import numpy as np
import pytest

# Short warm-ups leave step sizes rough; divergence warnings there are expected, not tested here.
pytestmark = pytest.mark.filterwarnings("ignore::dcgraph.infer.DivergenceWarning")

from dcgraph.infer import NUTS, InvalidPointError, RandomWalkMetropolis, Slice, Target, as_target, sample


def std_normal(q):
    return -0.5 * q.dot(q), -q


class Quadratic:
    """An object target with both methods and a dim attribute."""

    dim = 3

    def logdensity(self, q):
        return -0.5 * q.dot(q)

    def logdensity_and_grad(self, q):
        return -0.5 * q.dot(q), -q


def test_same_seed_same_draws_different_seed_different_draws():
    kw = dict(draws=50, warmup=50, chains=2, init=np.zeros(3))
    a = sample(Target(logdensity_and_grad=std_normal), NUTS(), **kw, seed=42)
    b = sample(Target(logdensity_and_grad=std_normal), NUTS(), **kw, seed=42)
    c = sample(Target(logdensity_and_grad=std_normal), NUTS(), **kw, seed=43)
    np.testing.assert_array_equal(a.draws, b.draws)
    np.testing.assert_array_equal(a.stats["n_leapfrog"], b.stats["n_leapfrog"])
    assert not np.array_equal(a.draws, c.draws)
    assert not np.array_equal(a.draws[0], a.draws[1])  # chains get independent streams


def test_processes_reproduce_the_serial_run_even_with_a_lambda_target():
    target = Target(logdensity_and_grad=lambda q: (-0.5 * q.dot(q), -q), dim=4)
    kw = dict(draws=100, warmup=100, chains=3, seed=7)
    serial = sample(target, NUTS(), **kw)
    parallel = sample(target, NUTS(), **kw, parallel=2)
    np.testing.assert_array_equal(serial.draws, parallel.draws)
    assert [p.step_size for p in serial.tuned] == [p.step_size for p in parallel.tuned]


def test_error_in_a_worker_process_reaches_the_caller():
    def broken(q):
        if q[0] > 1.5:
            raise RuntimeError("model bug at q0 > 1.5")
        return -0.5 * q.dot(q), -q

    with pytest.raises(RuntimeError, match="model bug"):
        sample(Target(logdensity_and_grad=broken), NUTS(), init=np.zeros(2), draws=500, warmup=200, chains=2, parallel=True, seed=0)


def test_seed_none_is_recorded_and_reproduces():
    kw = dict(draws=20, warmup=20, chains=1, init=np.zeros(2))
    first = sample(Target(logdensity_and_grad=std_normal), NUTS(), **kw)
    again = sample(Target(logdensity_and_grad=std_normal), NUTS(), **kw, seed=first.seed)
    np.testing.assert_array_equal(first.draws, again.draws)


def test_target_forms_are_all_accepted():
    obj = sample(Quadratic(), NUTS(), draws=20, warmup=20, chains=1, seed=0)  # dim from the object
    assert obj.draws.shape == (1, 20, 3)
    two = sample(lambda q: -0.5 * q.dot(q), Slice(), dim=2, draws=20, warmup=0, chains=1, seed=0)
    assert two.draws.shape == (1, 20, 2)
    both = as_target(lambda q: -0.5 * q.dot(q), lambda q: (-0.5 * q.dot(q), -q))
    assert both.has_grad and both.logdensity(np.ones(2)) == -1.0
    derived = Target(logdensity_and_grad=std_normal)
    assert derived.logdensity(np.ones(2)) == -1.0
    pickle.loads(pickle.dumps(Target(logdensity_and_grad=std_normal)))  # module-level functions pickle


def test_initial_points_per_chain_and_random():
    inits = np.array([[5.0, 5.0], [-5.0, -5.0]])
    r = sample(Target(logdensity_and_grad=std_normal), NUTS(), init=inits, draws=1, warmup=0, chains=2, seed=0, save_warmup=True)
    assert r.draws.shape == (2, 1, 2)
    assert np.all(np.abs(r.draws[0] - 5) < 5) and np.all(np.abs(r.draws[1] + 5) < 5)
    rnd = sample(Target(logdensity_and_grad=std_normal, dim=2), RandomWalkMetropolis(), draws=1, warmup=0, chains=3, seed=1)
    assert rnd.draws.shape == (3, 1, 2)


def test_nan_at_the_initial_point_is_named():
    target = Target(logdensity_and_grad=lambda q: (float("nan"), -q))
    with pytest.raises(InvalidPointError, match="log density is NaN at the initial point"):
        sample(target, NUTS(), init=np.zeros(2), draws=5, warmup=5, chains=1)


def test_wrong_gradient_shape_is_named():
    target = Target(logdensity_and_grad=lambda q: (-0.5 * q.dot(q), -q[:2]))
    with pytest.raises(InvalidPointError, match=r"gradient has shape \(2,\) .* expected \(3,\)"):
        sample(target, NUTS(), init=np.zeros(3), draws=5, warmup=5, chains=1)


def test_non_array_gradient_and_non_finite_gradient_are_named():
    with pytest.raises(InvalidPointError, match="gradient must be a float numpy array"):
        sample(Target(logdensity_and_grad=lambda q: (0.0, list(q))), NUTS(), init=np.zeros(2), draws=2, warmup=0, chains=1)
    with pytest.raises(InvalidPointError, match="non-finite entries at indices \\[1\\]"):
        sample(Target(logdensity_and_grad=lambda q: (0.0, np.array([0.0, np.inf]))), NUTS(), init=np.zeros(2), draws=2, warmup=0, chains=1)
    with pytest.raises(InvalidPointError, match="must be a scalar"):
        sample(Target(lambda q: q), Slice(), init=np.zeros(2), draws=2, warmup=0, chains=1)


def test_no_valid_random_initial_point_is_explained():
    target = Target(logdensity_and_grad=lambda q: (-np.inf, -q), dim=2)
    with pytest.raises(InvalidPointError, match="no valid initial point in 100 random tries"):
        sample(target, NUTS(), draws=2, warmup=0, chains=1)


def test_missing_gradient_or_dimension_is_explained():
    with pytest.raises(ValueError, match="cannot tell the dimension"):
        sample(Target(logdensity_and_grad=std_normal), NUTS())
    with pytest.raises(ValueError, match=r"init must have shape"):
        sample(Target(logdensity_and_grad=std_normal), NUTS(), init=np.zeros((3, 2)), chains=2)
    with pytest.raises(TypeError, match="cannot use int as a target"):
        as_target(3)


def test_numeric_errors_mid_trajectory_count_as_divergences_not_crashes():
    def overflowing(q):
        import math

        return 3.0 * q[0] - math.exp(q[0]), np.array([3.0 - math.exp(q[0])])

    r = sample(Target(logdensity_and_grad=overflowing), NUTS(step_size=400.0, metric="unit"), init=np.zeros(1), draws=20, warmup=0, chains=1, seed=0)
    assert r.divergences > 0
    assert np.all(np.isfinite(r.draws))


def test_progress_bar_is_off_when_not_a_terminal_and_on_when_asked(capsys):
    target = Target(logdensity_and_grad=std_normal, dim=2)
    sample(target, NUTS(), draws=30, warmup=30, chains=2, seed=0)  # pytest's capture is not a terminal
    quiet = capsys.readouterr()
    assert quiet.out == "" and quiet.err == ""
    sample(target, NUTS(), draws=30, warmup=30, chains=2, seed=0, progress=True)
    shown = capsys.readouterr()
    assert "chain 0" in shown.out + shown.err and "60/60" in shown.out + shown.err
