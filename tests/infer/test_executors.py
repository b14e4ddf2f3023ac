"""Chains on any concurrent.futures.Executor (threads, processes, dask): the same draws for a seed."""

import concurrent.futures as cf

import numpy as np
import pytest

from dcgraph.infer import NUTS, Slice, Target, sample

pytestmark = pytest.mark.filterwarnings("ignore::dcgraph.infer.DivergenceWarning")

KW = dict(draws=60, warmup=60, chains=3, seed=11, init=np.zeros(3))


def logp(q):
    """A plain log density (NUTS differentiates it with dcgraph)."""
    return -0.5 * np.dot(q, q) - 0.1 * q[0] ** 4


@pytest.fixture(scope="module")
def serial():
    return sample(logp, NUTS(), parallel=False, **KW)


@pytest.mark.parametrize("make", [
    lambda: cf.ThreadPoolExecutor(2),
    lambda: cf.ProcessPoolExecutor(2),
], ids=["threads", "processes"])
def test_any_executor_reproduces_the_serial_draws(serial, make):
    with make() as executor:
        result = sample(logp, NUTS(), executor=executor, **KW)
    np.testing.assert_array_equal(result.draws, serial.draws)
    np.testing.assert_array_equal(result.stats["n_leapfrog"], serial.stats["n_leapfrog"])
    assert [p.step_size for p in result.tuned] == [p.step_size for p in serial.tuned]


def test_default_worker_processes_reproduce_the_serial_draws(serial):
    np.testing.assert_array_equal(sample(logp, NUTS(), **KW).draws, serial.draws)
    np.testing.assert_array_equal(sample(logp, NUTS(), parallel=2, **KW).draws, serial.draws)


def test_local_dask_cluster_reproduces_the_serial_draws(serial):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            result = sample(logp, NUTS(), executor=client.get_executor(), **KW)
            sliced = sample(lambda q: -0.5 * q.dot(q), Slice(), executor=client.get_executor(), draws=50, warmup=0,
                            chains=2, seed=2, init=np.zeros(2))
    np.testing.assert_array_equal(result.draws, serial.draws)
    local = sample(lambda q: -0.5 * q.dot(q), Slice(), parallel=False, draws=50, warmup=0, chains=2, seed=2, init=np.zeros(2))
    np.testing.assert_array_equal(sliced.draws, local.draws)


def test_progress_rows_per_chain_on_an_executor(capsys):
    with cf.ThreadPoolExecutor(2) as executor:
        sample(logp, NUTS(), executor=executor, progress=True, **KW)
    shown = capsys.readouterr()
    text = shown.out + shown.err
    assert all(f"chain {c}" in text for c in range(3)) and "120/120" in text


def test_executor_must_be_an_executor():
    with pytest.raises(TypeError, match="executor must be a concurrent.futures.Executor, got str"):
        sample(Target(logdensity_and_grad=lambda q: (0.0, -q)), NUTS(), executor="dask", **KW)


class InterruptOnCall:
    def __init__(self, at):
        self.at, self.calls = at, 0

    def __call__(self, q):
        self.calls += 1
        if self.calls == self.at:
            raise KeyboardInterrupt
        return -0.5 * q.dot(q), -q


def test_ctrl_c_in_a_thread_pool_stops_the_other_chains_and_keeps_the_draws():
    from dcgraph.infer import IncompleteSamplingWarning

    with cf.ThreadPoolExecutor(1) as executor:
        with pytest.warns(IncompleteSamplingWarning):
            result = sample(Target(logdensity_and_grad=InterruptOnCall(400)), NUTS(), executor=executor,
                            draws=1000, warmup=50, chains=3, seed=0, init=np.zeros(2))
    first, *rest = result.statuses
    assert first.stopped == "interrupted" and first.draws_done > 0
    assert all(s.stopped == "interrupted" and s.draws_done == 0 for s in rest)
    assert result.chain_ids == (0,) and result.draws.shape == (1, first.draws_done, 2)
