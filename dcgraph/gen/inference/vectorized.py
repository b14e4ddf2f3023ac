"""Vectorised importance sampling: all particles in one run of the model, with numpy arrays.

``importance_sampling_vectorized(model, args, observations, n)`` runs ``model`` once under a
base handler whose unconstrained choices are arrays of ``n`` draws (a choice whose distribution
has scalar parameters draws ``n`` values; one whose parameters already carry the particle axis
draws one value per particle) and whose log densities are per-particle arrays. This is valid
when the model's control flow does not depend on its random choices: Python refuses to branch
on an array (``if x > 0`` with ``x`` an array raises), and that refusal, or any other failure
to broadcast, is reported as a ``GenError`` naming the first address. Returns
``(choices, log_normalized_weights, log_ml_estimate)``, ``choices`` a ``ChoiceMap`` of arrays
(particle axis first), the same estimator as ``importance_sampling`` with the prior proposal.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp

import dcgraph

from ..choicemap import ChoiceMap
from ..execution import Execution
from ..generative import _context, _store, default_rng
from ..interface import _choices
from ..runtime import GenError, state

__all__ = ["importance_sampling_vectorized"]


class VectorGenerate(Execution):
    """``generate`` for ``n`` particles at once; ``score``/``weight`` are arrays."""

    def __init__(self, gen_fn, rng, store, constraints, n):
        super().__init__(gen_fn, rng, store, np.zeros(n))
        self.weight, self.constraints, self.n = np.zeros(n), constraints, n
        self.choices = ChoiceMap()

    def choose(self, addr, dist, value, constrained, scale):
        n = self.n
        batch = getattr(dist, "batch_shape", None)
        if batch not in ((), (n,)) or getattr(dist, "event_dim", 0) != 0:
            raise GenError(f"vectorised importance sampling: the distribution at {addr} has "
                           f"batch shape {batch} (expected () or ({n},)); scalar families only")
        if self.constraints.has_value(addr):
            value = self.constraints.get_value(addr)
            lp = scale * np.broadcast_to(dist.logpdf_elementwise(value), (n,))
            self.weight = self.weight + lp
        else:
            value = dist.sample(self.rng, n if batch == () else ())
            lp = scale * dist.logpdf_elementwise(value)
            self.choices.set_value(addr, value)
        self.score = self.score + lp
        return value, lp

    def subcall(self, addr, gen_fn, args):
        raise GenError(f"vectorised importance sampling: traced call at {addr}; only choices "
                       f"made directly by the model are vectorised")


def importance_sampling_vectorized(model, args, observations, n: int, *, rng=None,
                                   store=None):
    """``-> (choices, log_normalized_weights, log_ml_estimate)`` (see the module doc)."""
    ex = VectorGenerate(model, rng or default_rng(), _store(store), _choices(observations), n)
    saved = state.frame
    state.frame = ex
    try:
        dcgraph.track(model.fn, *tuple(args), ctx=_context())
    except GenError:
        raise
    except (ValueError, TypeError, IndexError) as exc:
        raise GenError(f"vectorised importance sampling of {model!r} failed ({exc}); its "
                       f"control flow may depend on its random choices: use "
                       f"importance_sampling") from exc
    finally:
        state.frame = saved
    ex.finish()
    lw = np.asarray(ex.weight, dtype=float)
    total = logsumexp(lw)
    return ex.choices, lw - total, float(total - math.log(n))
