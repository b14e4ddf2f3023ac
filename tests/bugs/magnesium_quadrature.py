"""The exact posterior of Magnesium's prior 1 by numerical integration (independent of dcgraph).

Prior 1 of ``magnesium/model.txt``: ``mu ~ dunif(-10, 10)``, ``theta[k] ~ dnorm(mu, prec)``,
``prec ~ dgamma(0.001, 0.001)``, ``pc[k] ~ dunif(0, 1)``, ``rt[k] ~ dbin(ilogit(theta[k] +
logit(pc[k])), nt[k])``, ``rc[k] ~ dbin(pc[k], nc[k])``. Each study's ``pc[k]`` is integrated out on
a logit grid, then each ``theta[k]`` against its normal density, leaving the posterior of
``(mu, log tau)`` (``tau = 1 / sqrt(prec)``) on a grid, normalised. ``posterior()`` returns
the grid and its weights; ``summary()`` the moments and tail probabilities the tests use.
"""
import functools

import numpy as np
from scipy import special, stats

RT = np.array([1, 9, 2, 1, 10, 1, 1, 90])
NT = np.array([40, 135, 200, 48, 150, 59, 25, 1159])
RC = np.array([2, 23, 7, 1, 8, 9, 3, 118])
NC = np.array([36, 135, 200, 46, 148, 56, 23, 1157])
DATA = {"rt": RT.tolist(), "nt": NT.tolist(), "rc": RC.tolist(), "nc": NC.tolist()}


def _study_likelihoods(theta):
    """``L[i, k] = p(rt[k], rc[k] | theta[i])`` with ``pc[k]`` integrated over its uniform prior."""
    phi = np.linspace(-12.0, 4.0, 601)
    pc = special.expit(phi)
    log_prior = np.log(pc * (1 - pc)) + np.log(phi[1] - phi[0])   # dunif(0, 1) on the logit scale
    out = np.empty((theta.size, RT.size))
    for k in range(RT.size):
        a = (stats.binom.logpmf(RT[k], NT[k], special.expit(theta[:, None] + phi[None, :]))
             + (stats.binom.logpmf(RC[k], NC[k], pc) + log_prior)[None, :])
        out[:, k] = special.logsumexp(a, axis=1)
    return out


@functools.lru_cache(maxsize=None)
def posterior():
    """``(mu, tau, w)``: grids of ``mu`` and ``tau`` and the normalised posterior weights
    ``w[i, j]`` of ``(tau[i], mu[j])`` (uniform cells in ``mu`` and ``log tau``)."""
    theta = np.linspace(-8.0, 6.0, 561)
    dth = theta[1] - theta[0]
    log_l = _study_likelihoods(theta)
    lmax = log_l.max(axis=0)
    like = np.exp(log_l - lmax)
    mu = np.linspace(-10.0, 10.0, 501)
    tau = np.exp(np.linspace(np.log(1e-3), np.log(30.0), 240))
    sq = (theta[:, None] - mu[None, :]) ** 2
    logpost = np.empty((tau.size, mu.size))
    with np.errstate(divide="ignore"):
        for i, t in enumerate(tau):
            if t < 2 * dth:                  # the normal is narrower than the grid: theta = mu
                marg = np.stack([np.interp(mu, theta, like[:, k]) for k in range(RT.size)], 1)
            else:
                marg = (np.exp(-sq / (2 * t * t)) * (dth / (t * np.sqrt(2 * np.pi)))).T @ like
            logpost[i] = np.log(marg).sum(axis=1)
        prec = tau ** -2.0
        # prec ~ dgamma(0.001, 0.001), as a density of log tau: p(prec) |d prec / d log tau|
        log_prior = stats.gamma.logpdf(prec, 0.001, scale=1000.0) + np.log(2 * prec)
    lp = logpost + log_prior[:, None]
    w = np.exp(lp - lp.max())
    return mu, tau, w / w.sum()


def summary() -> dict:
    """Exact posterior moments, quantiles and tails of ``OR = exp(mu)`` and ``tau``."""
    mu, tau, w = posterior()
    w_mu, w_tau = w.sum(axis=0), w.sum(axis=1)
    odds = np.exp(mu)

    def moments(x, p):
        m = float(p @ x)
        return m, float(np.sqrt(p @ (x - m) ** 2))

    def quantile(x, p, q):
        return float(np.interp(q, np.cumsum(p) - p / 2, x))   # mass centred on each cell

    or_mean, or_sd = moments(odds, w_mu)
    bulk = odds <= np.exp(2.0)               # OR below e^2 (posterior mass 1 - 7e-6)
    _, or_sd_bulk = moments(odds[bulk], w_mu[bulk] / w_mu[bulk].sum())
    tau_mean, tau_sd = moments(tau, w_tau)
    return {"OR_mean": or_mean, "OR_sd": or_sd, "OR_sd_below_e2": or_sd_bulk,
            "OR_median": quantile(odds, w_mu, 0.5), "OR_q2.5": quantile(odds, w_mu, 0.025),
            "OR_q97.5": quantile(odds, w_mu, 0.975),
            "tau_mean": tau_mean, "tau_sd": tau_sd, "tau_median": quantile(tau, w_tau, 0.5),
            "tau_q97.5": quantile(tau, w_tau, 0.975),
            "P_tau_gt_2": float(w_tau[tau > 2].sum()), "P_mu_gt_1": float(w_mu[mu > 1].sum())}
