"""MCMC on unconstrained R^d: NUTS, static HMC, random-walk Metropolis, slice
sampling and Gibbs blocks; diagnostics (rank-normalised R-hat, bulk/tail ESS,
MCSE) and summaries.

Needs only a log density (the Hamiltonian kernels differentiate it with
:func:`dcgraph.value_and_grad` unless a gradient is given)::

    from dcgraph.infer import sample
    result = sample(logp, draws=1000, warmup=1000, chains=4, seed=1, init=x0)
    print(result.summary())
"""

from .adaptation import dual_averaging_init, dual_averaging_update, warmup_windows
from .chain import ChainStatus
from .chains import DivergenceWarning, IncompleteSamplingWarning, SamplingError, sample
from .diagnostics import (
    ess_bulk,
    ess_mean,
    ess_quantile,
    ess_tail,
    mcse_mean,
    mcse_quantile,
    rank_normalize,
    rhat,
    split_chains,
    split_rhat,
)
from .gibbs import BlockTarget, ExactConditional, Gibbs
from .hamiltonian import HMCState, Metric, find_reasonable_step_size, leapfrog
from .hmc import HMC, HMCInfo, hmc_step
from .kernel import Kernel
from .mh import MHState, RandomWalkMetropolis, mh_step
from .nuts import NUTS, HMCParams, NUTSInfo, hmc_init, nuts_step
from .plots import plot_trace
from .result import SampleResult
from .slice import Slice, slice_step
from .summary import Summary, SummaryRow, summary
from .target import AutoGradient, InvalidPointError, Target, as_target, with_autodiff

__all__ = [
    "NUTS", "HMC", "RandomWalkMetropolis", "Slice", "Gibbs", "ExactConditional", "BlockTarget", "Kernel",
    "sample", "SampleResult", "DivergenceWarning", "IncompleteSamplingWarning", "SamplingError", "ChainStatus",
    "Target", "as_target", "with_autodiff", "AutoGradient", "InvalidPointError",
    "nuts_step", "hmc_step", "mh_step", "slice_step", "hmc_init", "leapfrog", "find_reasonable_step_size",
    "HMCState", "MHState", "HMCParams", "NUTSInfo", "HMCInfo", "Metric",
    "dual_averaging_init", "dual_averaging_update", "warmup_windows",
    "summary", "Summary", "SummaryRow", "plot_trace",
    "rhat", "split_rhat", "ess_bulk", "ess_tail", "ess_mean", "ess_quantile", "mcse_mean", "mcse_quantile",
    "rank_normalize", "split_chains",
]
