"""Gen's inference library over the generative function interface."""
from .chains import run_chains
from .elliptical import elliptical_slice
from .gradient_moves import hmc, mala, map_optimize
from .importance import importance_resampling, importance_sampling
from .mh import (involutive_log_acceptance, log_abs_det_jacobian, metropolis_hastings, mh,
                 proposal_log_acceptance, regenerate_log_acceptance)
from .vectorized import importance_sampling_vectorized
from .particles import (ParticleFilterState, effective_sample_size, get_log_weights,
                        get_traces, initialize_particle_filter, log_ml_estimate,
                        maybe_resample, particle_filter_step, rejuvenate, resample_indices,
                        sample_unweighted_traces)

__all__ = ["importance_sampling", "importance_resampling", "mh", "metropolis_hastings",
           "regenerate_log_acceptance", "proposal_log_acceptance", "involutive_log_acceptance",
           "log_abs_det_jacobian", "hmc", "mala", "map_optimize", "elliptical_slice",
           "ParticleFilterState", "initialize_particle_filter", "particle_filter_step",
           "maybe_resample", "log_ml_estimate", "effective_sample_size", "get_traces",
           "get_log_weights", "sample_unweighted_traces", "rejuvenate", "resample_indices",
           "run_chains", "importance_sampling_vectorized"]
