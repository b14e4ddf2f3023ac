"""Metropolis-Hastings moves on traces (Gen's ``mh``, ``metropolis_hastings``).

- ``mh(trace, selection)``: resample the selected choices from the model (``regenerate``).
- ``mh(trace, proposal, proposal_args)``: a custom proposal generative function called as
  ``proposal(trace, *proposal_args)``; its choices constrain ``update``, the discard is assessed
  under the reverse proposal.
- ``mh(trace, proposal, proposal_args, involution)``: involutive MCMC. ``involution(trace,
  fwd_choices, fwd_retval, proposal_args) -> (new_trace, bwd_choices, weight)`` where ``weight``
  is ``log p(new) - log p(old)`` plus ``log |det J|`` of the continuous part of the map
  (``log_abs_det_jacobian`` computes it with ``dcgraph.vjp``).

Each returns ``(trace, accepted)``; ``*_log_acceptance`` functions give the proposed trace and
the log acceptance ratio without the accept/reject step.
"""
from __future__ import annotations

import math

import numpy as np

import dcgraph

from ..execution import NO_CHANGE
from ..generative import GenerativeFunction, default_rng
from ..interface import _selection

__all__ = ["mh", "metropolis_hastings", "regenerate_log_acceptance",
           "proposal_log_acceptance", "involutive_log_acceptance", "log_abs_det_jacobian"]


def _keep(trace):
    return trace.get_args(), (NO_CHANGE,) * len(trace.get_args())


def regenerate_log_acceptance(trace, selection, rng=None):
    args, diffs = _keep(trace)
    new, w, _ = trace.get_gen_fn().regenerate(trace, args, diffs, _selection(selection), rng)
    return new, w


def proposal_log_acceptance(trace, proposal, proposal_args=(), rng=None):
    args, diffs = _keep(trace)
    fwd, fwd_w, _ = proposal.propose((trace, *proposal_args), rng=rng)
    new, w, _, discard = trace.get_gen_fn().update(trace, args, diffs, fwd, rng)
    bwd_w, _ = proposal.assess((new, *proposal_args), discard)
    return new, w - fwd_w + bwd_w


def involutive_log_acceptance(trace, proposal, proposal_args, involution, rng=None):
    fwd, fwd_w, fwd_ret = proposal.propose((trace, *proposal_args), rng=rng)
    new, bwd, w = involution(trace, fwd, fwd_ret, tuple(proposal_args))
    bwd_w, _ = proposal.assess((new, *proposal_args), bwd)
    return new, w - fwd_w + bwd_w


def mh(trace, what, proposal_args=(), involution=None, *, rng=None):
    """One MH step; ``-> (trace, accepted)``. ``what``: a selection (list of addresses or
    ``Selection``) or a proposal generative function (see the module docstring)."""
    rng = rng or default_rng()
    if isinstance(what, GenerativeFunction):
        if involution is None:
            new, alpha = proposal_log_acceptance(trace, what, proposal_args, rng)
        else:
            new, alpha = involutive_log_acceptance(trace, what, proposal_args, involution, rng)
    else:
        new, alpha = regenerate_log_acceptance(trace, what, rng)
    if math.log(rng.random()) < alpha:
        return new, True
    return trace, False


metropolis_hastings = mh


def log_abs_det_jacobian(f, x) -> float:
    """``log |det df/dx|`` of ``f: R^n -> R^n`` at ``x``, row by row with ``dcgraph.vjp``."""
    x = np.asarray(x, dtype=float)
    value, pullback = dcgraph.vjp(f, x)
    n = x.size
    if np.size(value) != n:
        raise ValueError(f"log_abs_det_jacobian: f maps {n} numbers to {np.size(value)}; the "
                         f"Jacobian of an involution's continuous part must be square")
    rows = []
    for i in range(n):
        e = np.zeros(n)
        e[i] = 1.0
        rows.append(np.ravel(pullback(e.reshape(np.shape(value)))[0]))
    return float(np.linalg.slogdet(np.array(rows))[1])
