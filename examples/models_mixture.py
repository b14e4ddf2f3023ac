"""A model with a discrete indicator and stochastic control flow (dcgraph.models): the indicator
is drawn by Gibbs from its exact conditional, the mean by NUTS."""
import numpy as np

from dcgraph.models import bernoulli, model, normal, param


@model
def mixture(y):
    z = param(kind="int", lower=0, upper=1)
    z |= bernoulli(0.3)
    m = param()
    m |= normal(0.0, 1.0)
    if z == 1:                           # which likelihood runs depends on z
        y |= normal(m + 1.0, 1.0)
    else:
        y |= normal(m - 1.0, 1.0)


Y = np.array([0.9, -0.2])
TRACE = (mixture.logdensity_function, (mixture(Y).initial_point(), Y))

if __name__ == "__main__":
    print(mixture.graph(Y))
    fit = mixture.sample(Y, chains=2, draws=1000, warmup=500, seed=2)
    print(fit.summary())
    print("P(z = 1 | y) =", fit["z"].mean())
