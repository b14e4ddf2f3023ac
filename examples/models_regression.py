"""Bayesian linear regression as an expression model (dcgraph.models): priors and the
observation are ``|=`` statements; NUTS samples it, ``optimize`` finds the mode."""
import numpy as np

from dcgraph.models import model, normal, param, uniform


@model
def regression(X, y):
    w = param(shape=X.shape[1])          # vector parameter
    b = param()                          # scalar
    s = param(lower=0.0)                 # constrained
    w |= normal(0.0, 10.0)
    b |= normal(0.0, 10.0)
    s |= uniform(0.0, 5.0)
    y |= normal(X @ w + b, s)            # y is data: an observation


def data(n=50, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, X @ np.array([1.0, 2.0, -1.0]) + 0.5 + 0.3 * rng.normal(size=n)


X, y = data()
# the gallery traces the log density (the rewritten model) at the starting point
TRACE = (regression.logdensity_function, (regression(X, y).initial_point(), X, y))

if __name__ == "__main__":
    print(regression.graph(X, y))
    fit = regression.sample(X, y, chains=2, draws=500, warmup=500, seed=1)
    print(fit.summary())
    print(regression.optimize(X, y))
    print("least squares:", np.linalg.lstsq(np.c_[X, np.ones(len(X))], y, rcond=None)[0])
