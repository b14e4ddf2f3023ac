"""Diagnostics against closed forms: AR(1) ESS, R-hat of mixed and stuck chains, MCSE."""

import math

import numpy as np
import pytest
from scipy.signal import lfilter
from scipy.stats import norm

from dcgraph.infer import (
    ess_bulk,
    ess_mean,
    ess_quantile,
    ess_tail,
    mcse_mean,
    mcse_quantile,
    rank_normalize,
    rhat,
    split_chains,
    split_rhat,
)


def ar1(seed, rho, chains, draws):
    """Stationary AR(1) chains with unit marginal variance."""
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal((chains, draws)) * math.sqrt(1 - rho**2)
    noise[:, 0] = rng.standard_normal(chains)
    return lfilter([1.0], [1.0, -rho], noise, axis=1)


@pytest.mark.parametrize("rho, draws", [(0.9, 100_000), (0.5, 40_000), (0.0, 20_000), (-0.3, 40_000)])
def test_ess_of_ar1_matches_closed_form(rho, draws):
    # Per-draw ESS of AR(1) is (1 - rho) / (1 + rho).  Draw counts are chosen so the
    # estimator's own relative sd (measured over 40 seeds) is under 2.5%: 10% is > 4 sd.
    x = ar1(11, rho, 4, draws)
    expected = (1 - rho) / (1 + rho) * x.size
    assert ess_mean(x) == pytest.approx(expected, rel=0.10)
    assert ess_bulk(x) == pytest.approx(expected, rel=0.10)


def test_ess_of_iid_draws_is_near_sample_size_and_tail_ess_is_positive():
    x = np.random.default_rng(3).standard_normal((4, 5000))
    assert ess_mean(x) == pytest.approx(x.size, rel=0.1)
    assert 0.7 * x.size < ess_tail(x) < 1.3 * x.size
    assert 0.7 * x.size < ess_quantile(x, 0.5) < 1.3 * x.size


def test_rhat_near_one_for_mixed_chains():
    x = ar1(5, 0.7, 4, 5000)
    assert abs(rhat(x) - 1) < 0.01
    assert abs(split_rhat(x) - 1) < 0.01


def test_rhat_clearly_above_threshold_for_chains_stuck_in_different_modes():
    rng = np.random.default_rng(2)
    modes = np.array([-3.0, -3.0, 3.0, 3.0])[:, None]
    x = modes + rng.standard_normal((4, 1000))
    assert rhat(x) > 1.1
    # one chain of four stuck in the other mode
    x = np.array([-3.0, 3.0, 3.0, 3.0])[:, None] + rng.standard_normal((4, 1000))
    assert rhat(x) > 1.1


def test_rhat_detects_a_drifting_chain_through_splitting():
    # A single chain whose first half sits at 0 and second half at 2: only split R-hat sees it.
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.standard_normal(1000), 2 + rng.standard_normal(1000)])[None, :]
    assert rhat(x) > 1.1


def test_folded_rhat_detects_chains_with_different_scales():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 2000)) * np.array([1.0, 1.0, 1.0, 4.0])[:, None]
    assert split_rhat(x) < 1.05  # same location: the classic version is fooled
    assert rhat(x) > 1.1


def test_mcse_mean_of_iid_is_sd_over_root_n():
    x = np.random.default_rng(7).standard_normal((4, 10_000))
    assert mcse_mean(x) == pytest.approx(1 / math.sqrt(x.size), rel=0.08)


def test_mcse_quantile_of_iid_matches_asymptotic_formula():
    # sd of the p-quantile estimate: sqrt(p (1 - p) / n) / phi(z_p)
    x = np.random.default_rng(8).standard_normal((4, 10_000))
    for p in (0.5, 0.1, 0.975):
        expected = math.sqrt(p * (1 - p) / x.size) / norm.pdf(norm.ppf(p))
        assert mcse_quantile(x, p) == pytest.approx(expected, rel=0.35)  # spread over 30 seeds: 0.80-1.27


def test_split_chains_shapes_and_content():
    x = np.arange(2 * 7).reshape(2, 7).astype(float)
    s = split_chains(x)
    assert s.shape == (4, 3)
    np.testing.assert_array_equal(s[0], [0, 1, 2])
    np.testing.assert_array_equal(s[2], [4, 5, 6])  # middle draw 3 dropped
    assert split_chains(np.zeros((3, 10, 2))).shape == (6, 5, 2)


def test_rank_normalize_is_monotone_and_standard_normal():
    x = np.random.default_rng(9).exponential(size=(2, 3000))
    z = rank_normalize(x)
    order = np.argsort(x, axis=None)
    assert np.all(np.diff(z.ravel()[order]) > 0)
    assert abs(z.mean()) < 1e-12
    assert z.std() == pytest.approx(1.0, rel=0.01)


def test_vector_parameters_give_arrays_and_constant_draws_give_nan():
    x = np.random.default_rng(1).standard_normal((2, 500, 3))
    x[:, :, 2] = 5.0
    out = ess_bulk(x)
    assert out.shape == (3,)
    assert np.all(out[:2] > 100)
    assert math.isnan(out[2])
    assert math.isnan(rhat(np.ones((2, 100))))


def test_agrees_with_arviz_when_installed():
    az = pytest.importorskip("arviz")
    x = ar1(12, 0.8, 4, 1000) ** 3
    assert ess_bulk(x) == pytest.approx(float(az.ess(x, method="bulk")), rel=1e-6)
    assert ess_tail(x) == pytest.approx(float(az.ess(x, method="tail")), rel=1e-6)
    assert ess_mean(x) == pytest.approx(float(az.ess(x, method="mean")), rel=1e-6)
    assert rhat(x) == pytest.approx(float(az.rhat(x)), rel=1e-6)
    assert mcse_mean(x) == pytest.approx(float(az.mcse(x)), rel=1e-6)
