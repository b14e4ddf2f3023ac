"""``dcgraph.bugs.fit.sample`` against the published posteriors of the classic BUGS examples.

Criterion per published node: |mean - published mean| <= max(4 MCSE, 0.1 published sd), the MCSE
of the difference combining ours and the published MC error, and
the posterior sd within 15% of the published sd (except for 0/1 indicators such as
``step(theta - 0.8)``, whose sd is a function of the mean: near 0 or 1 a mean within its MCSE
moves the sd by more than 15%); 4 chains, fixed seed. The default run checks
Rats, Pumps, Seeds and Surgical with short chains; every example runs under ``-m slow``.
"""
import json

import numpy as np
import pytest

from bugs_compile_cases import EXAMPLES, NAMES, compiled
from dcgraph.bugs.fit import sample
from dcgraph.infer import mcse_mean

FAST = {"rats": 200, "pumps": 300, "seeds": 250, "surgical": 300}
# Heavy right tails whose published sd is not reproducible: magnesium's published runs disagree
# on it by 10x (posterior.json notes); for oxford's sigma (published sd 0.0905 from an ESS of 332)
# an independent NumPyro run (non-centred, 2 x 4000 draws, no divergences) gives sd 0.067, mean
# 0.104 and median 0.087 (published median 0.0877), as we do. Their median and 2.5% quantile are
# compared instead (within 0.1 published sd, or 4 MCSE). Magnesium's OR[1] keeps its sd check: its exact
# sd is 0.6 (test_samplers_components.py, by quadrature), carried by posterior mass 3e-7 at OR > e^4,
# which no run of this length visits; below e^2 the exact sd is 0.161, where the published 0.1757 is.
HEAVY_TAILED = {"magnesium": {"OR[2]", "OR[3]"}, "oxford": {"sigma"}}


def published(name):
    doc = json.loads((EXAMPLES / name / "posterior.json").read_text())
    return doc, doc["nodes"] or {}


def mismatches(name, draws, warmup, seed=1):
    """Published nodes whose mean or sd the run does not reproduce (with the figures)."""
    model = compiled(name)
    _, nodes = published(name)
    nodes = {k: v for k, v in nodes.items() if k.split("[")[0] in model.graph.shapes}
    monitor = sorted({k.split("[")[0] for k in nodes})
    result = sample(model, chains=4, draws=draws, warmup=warmup, seed=seed, monitor=monitor,
                    progress=False)
    bad = []
    for node, pub in nodes.items():
        x = result.draws[:, :, result.names.index(node)]
        mean, sd, mcse = x.mean(), x.std(), mcse_mean(x)
        binary = np.isin(x, (0.0, 1.0)).all()      # step() indicators: sd = sqrt(m (1 - m)) is
        sd_ok = binary or abs(sd / pub["sd"] - 1) <= 0.15     # set by the mean, checked with it
        if node in HEAVY_TAILED.get(name, ()):
            tol = max(4 * float(np.hypot(mcse, pub.get("mc_error") or 0.0)), 0.1 * pub["sd"])
            mean, pub = np.median(x), dict(pub, mean=pub["median"])
            sd_ok = abs(np.quantile(x, 0.025) - pub["q2.5"]) <= tol
        mcse = float(np.hypot(mcse, pub.get("mc_error") or 0.0))   # both are estimates
        if abs(mean - pub["mean"]) > max(4 * mcse, 0.1 * pub["sd"]) or not sd_ok:
            bad.append(f"{node}: mean {mean:.4g} (published {pub['mean']}, mcse {mcse:.2g}), "
                       f"sd {sd:.4g} (published {pub['sd']})")
    return nodes, bad


@pytest.mark.parametrize("name", sorted(FAST))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_reproduces_published_posterior_short_chains(name):
    nodes, bad = mismatches(name, FAST[name], FAST[name])
    assert len(nodes) >= 3
    assert not bad, "\n".join(bad)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_reproduces_published_posterior(name):
    doc, nodes = published(name)
    if not doc["model_matches"] or not nodes:
        pytest.skip(f"{name}: no published table for exactly this model")
    nodes, bad = mismatches(name, 1000, 1000)
    assert nodes
    assert not bad, "\n".join(bad)
