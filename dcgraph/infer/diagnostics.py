"""Convergence diagnostics: split R-hat, bulk/tail ESS, Monte Carlo standard errors.

Rank-normalised split R-hat and ESS follow Vehtari, Gelman, Simpson,
Carpenter & Buerkner (2021), "Rank-normalization, folding, and localization:
an improved R-hat for assessing convergence of MCMC".  Autocorrelations are
combined across chains and truncated with Geyer's initial monotone sequence.

Every function takes draws shaped ``(chains, draws, *shape)`` (a 1-D array
is one chain) and returns a float for scalar parameters, else an array of
``shape``.  Undefined results (constant draws, non-finite values, chains
shorter than four draws) are NaN.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtri
from scipy.stats import beta, rankdata

__all__ = [
    "split_chains",
    "rank_normalize",
    "autocovariance",
    "rhat",
    "split_rhat",
    "ess_bulk",
    "ess_tail",
    "ess_mean",
    "ess_quantile",
    "mcse_mean",
    "mcse_quantile",
]


def _chains(x) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if x.ndim == 1:
        x = x[np.newaxis]
    if x.ndim < 2:
        raise ValueError(f"draws must have shape (chains, draws, ...), got {x.shape}")
    return x


def _per_parameter(fn, x, *args):
    """Apply ``fn`` to each ``(chains, draws)`` slice of ``x``."""
    x = _chains(x)
    if x.ndim == 2:
        return fn(x, *args)
    shape = x.shape[2:]
    out = np.empty(shape)
    for ix in np.ndindex(*shape):
        out[ix] = fn(x[(slice(None), slice(None)) + ix], *args)
    return out


def split_chains(x) -> np.ndarray:
    """Split each chain in half: ``(m, n, ...) -> (2m, n // 2, ...)`` (the middle draw of odd n is dropped)."""
    x = _chains(x)
    half = x.shape[1] // 2
    return np.concatenate([x[:, :half], x[:, x.shape[1] - half:]], axis=0)


def rank_normalize(x) -> np.ndarray:
    """Normal scores of the pooled ranks: ``Phi^{-1}((r - 3/8) / (S + 1/4))``, per parameter."""
    x = _chains(x)
    m, n = x.shape[:2]
    flat = x.reshape(m * n, -1)
    ranks = rankdata(flat, axis=0, method="average")
    return ndtri((ranks - 0.375) / (m * n + 0.25)).reshape(x.shape)


def autocovariance(x) -> np.ndarray:
    """Biased autocovariance of each chain at every lag, by FFT: ``(m, n) -> (m, n)``."""
    x = _chains(x)
    n = x.shape[1]
    centred = x - x.mean(axis=1, keepdims=True)
    size = 1 << (2 * n - 1).bit_length()
    spectrum = np.fft.rfft(centred, n=size, axis=1)
    return np.fft.irfft(spectrum * np.conj(spectrum), n=size, axis=1)[:, :n] / n


def _usable(x: np.ndarray) -> bool:
    return x.shape[1] >= 4 and bool(np.all(np.isfinite(x))) and np.ptp(x) > 0


def _ess(x: np.ndarray) -> float:
    """ESS of ``(m, n)`` chains (already split / transformed as required)."""
    if not _usable(x):
        return math.nan
    m, n = x.shape
    acov = autocovariance(x)
    within = acov[:, 0].mean() * n / (n - 1)
    var_plus = within * (n - 1) / n
    if m > 1:
        var_plus += x.mean(axis=1).var(ddof=1)
    rho = 1.0 - (within - acov.mean(axis=0)) / var_plus
    rho[0] = 1.0
    # Geyer's initial positive sequence on pairs (rho[2k] + rho[2k+1]), then monotone.
    n_pairs = (n - 2) // 2
    pairs = rho[: 2 * n_pairs : 2] + rho[1 : 2 * n_pairs : 2]
    negative = np.flatnonzero(pairs < 0)
    k = negative[0] if negative.size else n_pairs
    positive = np.minimum.accumulate(pairs[:k])
    tau = -1.0 + 2.0 * positive.sum()
    if negative.size and rho[2 * k] > 0:
        tau += rho[2 * k]  # reduces variance for antithetic chains
    tau = max(tau, 1.0 / math.log10(m * n))
    return m * n / tau


def _rhat(x: np.ndarray) -> float:
    """Potential scale reduction of ``(m, n)`` chains (no splitting)."""
    if not _usable(x):
        return math.nan
    n = x.shape[1]
    between = n * x.mean(axis=1).var(ddof=1) if x.shape[0] > 1 else 0.0
    within = x.var(axis=1, ddof=1).mean()
    return math.sqrt(((n - 1) / n * within + between / n) / within)


def _rhat_rank(x: np.ndarray) -> float:
    bulk = _rhat(split_chains(rank_normalize(x)))
    tail = _rhat(split_chains(rank_normalize(np.abs(x - np.median(x)))))
    return max(bulk, tail) if bulk == bulk and tail == tail else math.nan


def rhat(x):
    """Rank-normalised split R-hat: the larger of the bulk and folded (tail) versions."""
    return _per_parameter(_rhat_rank, x)


def split_rhat(x):
    """Classic split R-hat on the raw draws (no rank normalisation)."""
    return _per_parameter(lambda c: _rhat(split_chains(c)), x)


def ess_bulk(x):
    """Bulk ESS: ESS of the rank-normalised split chains."""
    return _per_parameter(lambda c: _ess(split_chains(rank_normalize(c))), x)


def _indicator_ess(c, prob):
    return _ess(split_chains((c <= np.quantile(c, prob)).astype(float)))


def ess_tail(x):
    """Tail ESS: the smaller ESS of the 5% and 95% quantile indicators."""
    return _per_parameter(lambda c: min(_indicator_ess(c, 0.05), _indicator_ess(c, 0.95)), x)


def ess_mean(x):
    """ESS for the mean: ESS of the raw split chains."""
    return _per_parameter(lambda c: _ess(split_chains(c)), x)


def ess_quantile(x, prob: float):
    """ESS for the ``prob`` quantile (ESS of its indicator)."""
    return _per_parameter(_indicator_ess, x, prob)


def mcse_mean(x):
    """Monte Carlo standard error of the mean: ``sd / sqrt(ESS_mean)``."""
    return _per_parameter(lambda c: c.std(ddof=1) / math.sqrt(_ess(split_chains(c))), x)


_ONE_SD = (0.15865525393145707, 0.8413447460685429)  # Phi(-1), Phi(1)


def _mcse_quantile(c: np.ndarray, prob: float) -> float:
    ess = _indicator_ess(c, prob)
    if not ess == ess:
        return math.nan
    lo, hi = beta.ppf(_ONE_SD, ess * prob + 1, ess * (1 - prob) + 1)
    ordered = np.sort(c, axis=None)
    size = ordered.size
    th_lo = ordered[max(int(math.floor(lo * size)), 0)]
    th_hi = ordered[min(int(math.ceil(hi * size)), size - 1)]
    return (th_hi - th_lo) / 2.0


def mcse_quantile(x, prob: float):
    """Monte Carlo standard error of the ``prob`` quantile, from the Beta
    posterior of the indicator's mean at the quantile's ESS."""
    return _per_parameter(_mcse_quantile, x, prob)
