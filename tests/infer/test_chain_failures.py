"""Plain log densities, bad return values, errors mid-chain and Ctrl-C: nothing drawn is lost."""

import os
import signal
import threading

import numpy as np
import pytest

import dcgraph
from dcgraph.infer import (
    NUTS, IncompleteSamplingWarning, InvalidPointError, SamplingError, Slice, Target, sample, with_autodiff,
)

pytestmark = pytest.mark.filterwarnings("ignore::dcgraph.infer.DivergenceWarning")


def gaussian_logp(q):
    """N(mu, diag(sd^2)) with mu = (1, -2), sd = (0.5, 2): a plain log density, no gradient."""
    z = (q - np.array([1.0, -2.0])) / np.array([0.5, 2.0])
    return -0.5 * np.dot(z, z)


class FailOnCall:
    """A standard normal log density that raises ``error`` on its ``at``-th call in a process."""

    def __init__(self, at, error):
        self.at, self.error, self.calls = at, error, 0

    def __call__(self, q):
        self.calls += 1
        if self.calls == self.at:
            raise self.error
        return -0.5 * q.dot(q), -q


def test_plain_log_density_is_differentiated_by_dcgraph_for_nuts():
    target = with_autodiff(Target(gaussian_logp, dim=2))
    q = np.array([0.3, 0.7])
    value, grad = target.logdensity_and_grad(q)
    assert value == pytest.approx(gaussian_logp(q))
    np.testing.assert_allclose(grad, dcgraph.grad(gaussian_logp)(q))
    np.testing.assert_allclose(grad, -(q - [1.0, -2.0]) / np.array([0.25, 4.0]))
    r = sample(gaussian_logp, draws=1000, warmup=500, chains=2, seed=3, init=np.zeros(2), parallel=False)
    mean, sd = r.draws.mean(axis=(0, 1)), r.draws.std(axis=(0, 1))
    np.testing.assert_allclose(mean, [1.0, -2.0], atol=0.15)
    np.testing.assert_allclose(sd, [0.5, 2.0], rtol=0.1)


def test_log_density_returning_none_or_an_array_is_named():
    def forgot_return(q):
        -0.5 * q.dot(q)

    for kernel in (NUTS(), Slice()):
        with pytest.raises(InvalidPointError, match="log density returned None at the initial point.*missing return"):
            sample(forgot_return, kernel, init=np.zeros(2), draws=5, warmup=5, chains=1)
        with pytest.raises(InvalidPointError, match=r"must be a scalar, got an array of shape \(3,\)"):
            sample(lambda q: -0.5 * q * q, kernel, init=np.zeros(3), draws=5, warmup=5, chains=1)
    with pytest.raises(InvalidPointError, match=r"must be a scalar float, got str"):
        sample(lambda q: "0.5", Slice(), init=np.zeros(1), draws=5, warmup=5, chains=1)
    with pytest.raises(InvalidPointError, match="returned None"):
        sample(Target(logdensity_and_grad=lambda q: (None, -q)), NUTS(), init=np.zeros(2), draws=5, warmup=5, chains=1)


def test_error_mid_chain_keeps_every_chain_and_names_where_it_failed():
    at = calls_of_first_chain(draws=100, warmup=50, seed=0) // 2
    target = Target(logdensity_and_grad=FailOnCall(at, RuntimeError("model bug")))
    with pytest.raises(SamplingError, match=r"failed in 1 of 3 chains: chain 0 stopped in (warm-up|sampling) .*model bug") as info:
        sample(target, NUTS(), init=np.zeros(2), draws=100, warmup=50, chains=3, seed=0, parallel=False)
    err = info.value
    assert isinstance(err.__cause__, RuntimeError) and str(err.__cause__) == "model bug"
    result = err.result
    assert not result.complete
    failed, ok = err.statuses[0], err.statuses[1:]
    assert failed.stopped == "error" and failed.draws_done + failed.warmup_done < 150
    assert all(s.complete and s.draws_done == 100 for s in ok)
    assert [d.shape[0] for d in result.chain_draws] == [failed.draws_done, 100, 100]
    if failed.draws_done:
        assert result.draws.shape == (3, failed.draws_done, 2) and result.chain_ids == (0, 1, 2)
    else:
        assert result.draws.shape == (2, 100, 2) and result.chain_ids == (1, 2)
    np.testing.assert_array_equal(result.chain_draws[1], sample(
        Target(logdensity_and_grad=FailOnCall(-1, None)), NUTS(), init=np.zeros(2), draws=100, warmup=50,
        chains=3, seed=0, parallel=False).chain_draws[1])
    assert "incomplete" in repr(result)


def test_error_in_worker_processes_keeps_the_draws_and_the_traceback():
    target = Target(logdensity_and_grad=FailOnCall(900, KeyError("missing data")))  # each process counts its own calls
    with pytest.raises(SamplingError, match="failed in 2 of 2 chains") as info:
        sample(target, NUTS(), init=np.zeros(2), draws=200, warmup=100, chains=2, seed=1, parallel=2)
    err = info.value
    assert isinstance(err.__cause__, KeyError)
    assert all(s.stopped == "error" and "KeyError" in s.traceback for s in err.statuses)
    assert any("FailOnCall" in note or "__call__" in note for note in err.__notes__)


def test_error_before_any_iteration_is_raised_as_it_is():
    with pytest.raises(ZeroDivisionError):
        sample(Target(logdensity_and_grad=FailOnCall(1, ZeroDivisionError("at init"))), NUTS(),
               init=np.zeros(2), draws=5, warmup=5, chains=1)


def calls_of_first_chain(**kw):
    counter = FailOnCall(-1, None)
    sample(Target(logdensity_and_grad=counter), NUTS(), init=np.zeros(2), chains=1, parallel=False, **kw)
    return counter.calls


def test_keyboard_interrupt_in_this_process_returns_the_draws_so_far():
    at = calls_of_first_chain(draws=300, warmup=50, seed=0) * 2 // 3  # in chain 0's sampling phase
    target = Target(logdensity_and_grad=FailOnCall(at, KeyboardInterrupt()))
    with pytest.warns(IncompleteSamplingWarning, match="chain 0 stopped .* \\(interrupted\\)"):
        result = sample(target, NUTS(), init=np.zeros(2), draws=300, warmup=50, chains=3, seed=0, parallel=False)
    assert not result.complete
    first, *rest = result.statuses
    assert first.stopped == "interrupted" and 0 < first.draws_done < 300
    assert all(s.stopped == "interrupted" and s.phase == "init" and s.draws_done == 0 for s in rest)
    assert result.draws.shape == (1, first.draws_done, 2) and result.chain_ids == (0,)
    assert result.summary().incomplete


def test_ctrl_c_stops_worker_processes_and_collects_their_draws():
    def interrupt_soon():
        os.kill(os.getpid(), signal.SIGINT)

    def slow_normal(q):
        import time

        time.sleep(2e-4)
        return -0.5 * q.dot(q), -q

    timer = threading.Timer(1.5, interrupt_soon)
    timer.start()
    try:
        with pytest.warns(IncompleteSamplingWarning):
            result = sample(Target(logdensity_and_grad=slow_normal), NUTS(), init=np.zeros(2), draws=100_000,
                            warmup=100, chains=2, seed=0, parallel=2)
    finally:
        timer.cancel()
    assert not result.complete
    statuses = result.statuses
    assert all(s.stopped == "interrupted" and 0 < s.warmup_done + s.draws_done for s in statuses)
    assert all(s.draws_done < 100_000 for s in statuses)
    assert [len(d) for d in result.chain_draws] == [s.draws_done for s in statuses]
    if all(s.draws_done for s in statuses):  # a loaded machine may still be warming up after 1.5 s
        assert result.draws.shape == (2, min(s.draws_done for s in statuses), 2)


def crash_at_seven(q):
    if q[0] == 7.0:  # only chain 0 starts here: its worker process dies
        os._exit(3)
    return -0.5 * q.dot(q), -q


def test_a_dead_worker_process_loses_only_its_own_chain():
    with pytest.raises(SamplingError, match="chain 0 stopped with its worker process .*died with exit code 3") as info:
        sample(Target(logdensity_and_grad=crash_at_seven), NUTS(), init=np.array([[7.0, 7.0], [0.0, 0.0]]),
               draws=100, warmup=50, chains=2, seed=0, parallel=2)
    result = info.value.result
    assert result.chain_ids == (1,) and result.draws.shape == (1, 100, 2)
    assert info.value.statuses[1].complete


def sometimes_none(q):
    if q[0] > 1.0:
        return None
    return -0.5 * np.dot(q, q)


def test_none_from_a_plain_log_density_away_from_the_initial_point_is_named_with_the_point():
    with pytest.raises(TypeError, match=r"log density returned None at the point theta=\[.*\]: .*missing return"):
        sample(sometimes_none, init=np.zeros(2), draws=200, warmup=100, chains=1, seed=0)
