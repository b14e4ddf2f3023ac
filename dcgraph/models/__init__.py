"""Expression models (issue #10): AutoPPL's ``x |= dist(...)`` style in plain Python.

```python
from dcgraph.models import model, param, normal, uniform

@model
def regression(X, y):
    w = param(shape=X.shape[1])
    b = param()
    s = param(lower=0.0)
    w |= normal(0.0, 10.0)
    b |= normal(0.0, 10.0)
    s |= uniform(0.0, 5.0)
    y |= normal(X @ w + b, s)      # y is data: an observation

fit = regression.sample(X, y, chains=4, draws=1000)     # a dcgraph.infer.SampleResult
```

``param(shape, lower, upper, kind, name)`` declares a parameter named after the variable it is
assigned to in the source (or ``name=``); ``kind="cov"``, ``"corr_cholesky"``, ``"simplex"``,
``"ordered"`` constrain matrices and vectors, ``kind="int"`` with finite ``lower``/``upper``
makes a discrete parameter (sampled by Gibbs from its exact conditional). ``x |= d`` adds ``d.logpdf(x)`` to the log density (a prior when ``x`` is a
parameter, an observation when it is data); a parameter without a statement has a flat prior.
Python control flow, including branches and loops on parameters, is allowed. The function's
source is found in its file, in ``linecache`` (notebooks, IPython, ``compile`` with a registered
name), or in the interactive prompt's history, or given as ``model(fn, source=text)``
(``source``); without any text (``exec`` of a string) the model is read from its bytecode
(``bytecode_rewrite``). The source is rewritten as an ``ast`` tree into its log density on the unconstrained space (``rewrite``), which
is differentiated by ``dcgraph.value_and_grad`` on the traced path. The distributions are
``dcgraph.dist``'s families under lowercase names (``normal(loc, scale)``,
``gamma(shape, rate)``, ...): the common ones as fast expressions (``distributions``), the others
(``dirichlet``, ``wishart``, ``mv_normal``, ...) as the ``dcgraph.dist`` classes themselves.
"""
from .. import dist as _dist
from .distributions import (DistExpr, bernoulli, beta, exponential, gamma, half_normal,
                            lkj_cholesky, lognormal, normal, poisson, uniform)
from . import joints  # noqa: F401  (registers the statements' joint rule)
from . import inline_forms  # noqa: F401  (registers the helpers' inline forms)
from .model import BoundModel, Model, ParamLayout, model
from .params import KINDS, ModelError, ParamSpec, data, param

student_t = _dist.StudentT
cauchy = _dist.Cauchy
laplace = _dist.Laplace
logistic = _dist.Logistic
inverse_gamma = _dist.InverseGamma
weibull = _dist.Weibull
pareto = _dist.Pareto
chi_squared = _dist.ChiSquared
flat = _dist.Flat
dirichlet = _dist.Dirichlet
mv_normal = _dist.MvNormal
wishart = _dist.Wishart
binomial = _dist.Binomial
categorical = _dist.Categorical
geometric = _dist.Geometric
negative_binomial = _dist.NegativeBinomial
beta_binomial = _dist.BetaBinomial
multinomial = _dist.Multinomial

DISTRIBUTIONS = ("normal", "half_normal", "lognormal", "student_t", "cauchy", "laplace",
                 "logistic", "exponential", "gamma", "inverse_gamma", "beta", "uniform", "weibull",
                 "pareto", "chi_squared", "flat", "dirichlet", "mv_normal", "wishart", "lkj_cholesky",
                 "bernoulli", "binomial", "poisson", "categorical", "geometric", "negative_binomial",
                 "beta_binomial", "multinomial")

__all__ = ["model", "Model", "BoundModel", "ParamLayout", "param", "data", "ParamSpec",
           "ModelError", "KINDS", "DistExpr", *DISTRIBUTIONS]
