"""Correlated data with an LKJ prior (dcgraph.models): the correlation matrix's Cholesky factor
is a ``kind="corr_cholesky"`` parameter with ``L |= lkj_cholesky(eta)``, the scales are
positive, and the observations are multivariate normal with covariance ``diag(s) L L^T diag(s)``."""
import numpy as np

from dcgraph.models import half_normal, lkj_cholesky, model, mv_normal, param


@model
def correlated(y):
    K = y.shape[1]
    L = param(shape=(K, K), kind="corr_cholesky")
    s = param(shape=K, lower=0.0)
    L |= lkj_cholesky(2.0)
    s |= half_normal(2.0)
    scaled = s[:, None] * L
    y |= mv_normal(np.zeros(K), scaled @ scaled.T)


def data(n=200, seed=0):
    corr = np.array([[1.0, 0.7, -0.4], [0.7, 1.0, -0.2], [-0.4, -0.2, 1.0]])
    scales = np.array([1.0, 2.0, 0.5])
    cov = corr * np.outer(scales, scales)
    return np.random.default_rng(seed).multivariate_normal(np.zeros(3), cov, size=n)


y = data()
TRACE = (correlated.logdensity_function, (correlated(y).initial_point(), y))

if __name__ == "__main__":
    fit = correlated.sample(y, chains=2, draws=500, warmup=500, seed=1)
    L = fit["L"].reshape(-1, 3, 3)
    print("posterior mean correlation:\n", np.round(np.mean(L @ np.swapaxes(L, 1, 2), axis=0), 2))
    print("sample correlation:\n", np.round(np.corrcoef(y.T), 2))
