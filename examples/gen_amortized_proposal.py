"""Amortised inference with dcgraph.gen: learn a proposal network for Bayesian linear
regression by maximising the expected log proposal density E_{p(a, b, ys)}[log q(a, b | ys)]
(Gen's "train a proposal on simulated data"), then use it in importance sampling and compare
the effective sample size with the prior as proposal.

    python examples/gen_amortized_proposal.py [--minibatches 150] [--threads 1]
"""
from __future__ import annotations

import argparse

import numpy as np

from dcgraph.gen import ADAM, ParameterStore, gen, normal, param, simulate, train
from dcgraph.gen.inference import effective_sample_size, importance_sampling

XS = np.linspace(-1.0, 1.0, 6)
HIDDEN = 16


@gen
def regression():
    a = normal(0.0, 2.0) @ "a"
    b = normal(0.0, 2.0) @ "b"
    for i, x in enumerate(XS):
        normal(a * x + b, 0.3) @ ("y", i)


@gen
def proposal(ys):
    """q(a, b | ys): a one-hidden-layer tanh network giving means and log standard deviations."""
    h = np.tanh(param("W1") @ ys + param("b1"))
    out = param("W2") @ h + param("b2")
    normal(out[0], np.exp(out[2])) @ "a"
    normal(out[1], np.exp(out[3])) @ "b"


def init_network(store: ParameterStore, rng) -> None:
    store.init_param(proposal, "W1", rng.normal(0, 0.3, (HIDDEN, len(XS))))
    store.init_param(proposal, "b1", np.zeros(HIDDEN))
    store.init_param(proposal, "W2", rng.normal(0, 0.3, (4, HIDDEN)))
    store.init_param(proposal, "b2", np.zeros(4))


def simulated_example(rng):
    """One (args, constraints) pair for ``train``: data simulated from the model, the proposal
    constrained to the latent values that produced it."""
    tr = simulate(regression, (), rng=rng)
    ys = np.array([tr[("y", i)] for i in range(len(XS))])
    return (ys,), {"a": tr["a"], "b": tr["b"]}


#: What the gallery (viz/make_gallery.py) traces: drawing one training example.
TRACE = (simulated_example, (np.random.default_rng(0),))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minibatches", type=int, default=150)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--particles", type=int, default=1000)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    store = ParameterStore()
    init_network(store, rng)
    hist = train(proposal, simulated_example, store, ADAM(0.01), num_minibatch=a.minibatches,
                 minibatch=32, threads=a.threads, rng=rng,
                 callback=lambda i, ll: print(f"minibatch {i:4d}: E[log q] = {ll:8.3f}")
                 if i % 25 == 0 else None)
    print(f"expected log proposal density: {hist[0]:.3f} -> {hist[-1]:.3f}")
    (ys,), truth = simulated_example(np.random.default_rng(123))
    obs = {("y", i): float(y) for i, y in enumerate(ys)}
    for name, prop, pargs in (("prior", None, ()), ("amortised", proposal, (ys,))):
        traces, lw, lml = importance_sampling(regression, (), obs, a.particles, prop, pargs,
                                              rng=np.random.default_rng(1), store=store)
        ess = effective_sample_size(lw)
        a_mean = float(np.exp(lw) @ np.array([t["a"] for t in traces]))
        print(f"{name:>9} proposal: ESS {ess:7.1f} of {a.particles}, log ML {lml:8.3f}, "
              f"E[a | ys] {a_mean:6.3f} (true a {truth['a']:.3f})")


if __name__ == "__main__":
    main()
