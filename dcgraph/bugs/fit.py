"""``sample(model, ...)``: MCMC on a compiled BUGS model, draws named as in OpenBUGS.

The kernel comes from ``samplers.assign`` (conjugate updates where the graph allows, slice updates
for univariate nodes NUTS cannot serve, NUTS for the other continuous parameters, exact
enumeration Gibbs updates for discrete ones); each chain starts from
``model.initial_values(chain)`` (its inits, the rest drawn from the prior). The result is a
``dcgraph.infer.SampleResult`` over the *monitored* nodes on their natural (constrained) scale:
stochastic parameters, logical nodes (``sigma <- 1 / sqrt(tau)``) and missing data (``NA``)
alike, each with its BUGS shape and 1-based element names (``alpha[3]``, ``Y[26,2]``).
"""
from __future__ import annotations

import numpy as np

from .samplers import BUGSTarget, assign

__all__ = ["sample", "default_monitor"]


def default_monitor(model) -> list:
    """The variables of the unobserved stochastic nodes, in program order."""
    out = []
    for p in model.parameters:
        if p.name not in out:
            out.append(p.name)
    return out


def _monitor_list(model, monitor) -> list:
    if monitor is None:
        return default_monitor(model)
    if isinstance(monitor, str):
        monitor = [m.strip() for m in monitor.split(",") if m.strip()]
    known = model.graph.shapes
    for name in monitor:
        if name not in known:
            raise model.graph.error(f"cannot monitor '{name}': no such variable in the model "
                                    f"(variables: {', '.join(sorted(known))})")
    return list(dict.fromkeys(monitor))


def sample(model, chains: int = 4, draws: int = 1000, warmup: int = 1000, seed: int = 0,
           sampler: str = "auto", monitor=None, executor=None, progress=None):
    """Draw ``draws`` samples after ``warmup`` from each of ``chains`` chains of ``model``.

    ``monitor``: variable names (a list or ``"a,b"``) to record, default every stochastic
    parameter; ``sampler``: ``"auto"``, ``"nuts"`` or ``"slice"`` (see ``samplers.assign``);
    ``executor``: a ``concurrent.futures.Executor`` running the chains (default: this
    process). Reproducible from ``seed``. The sampler assignment is ``result.samplers`` (also
``result.assignment``), printed as NIMBLE's ``configureMCMC`` does.
    """
    from ..infer import sample as infer_sample

    names = _monitor_list(model, monitor)
    target = BUGSTarget(model)
    assignment = assign(model, target, sampler)
    init = np.array([target.initial_point(c) for c in range(int(chains))])
    raw = infer_sample(target, assignment.kernel, draws=draws, warmup=warmup, chains=chains,
                       seed=seed, init=init, parallel=False if executor is None else None,
                       executor=executor, progress=progress)
    shapes = {name: model.graph.shapes[name] for name in names}

    def monitored(x):
        values = target.constrained(x)
        return np.concatenate([np.ravel(np.asarray(values[n], dtype=float)) for n in names])

    result = raw.transformed(monitored, names=shapes)
    result.assignment = result.samplers = assignment
    result.unconstrained = raw
    return result
