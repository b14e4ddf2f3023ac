"""The BUGS distribution table: every distribution's log density against scipy (or a closed form)
in the BUGS parametrisation, and each place where BUGS implementations disagree pinned."""
import numpy as np
import pytest
from scipy import special, stats

import dcgraph.dist as D
from dcgraph.bugs.distributions import ALIASES, DISTRIBUTIONS

S2 = np.array([[2.0, 0.3], [0.3, 1.0]])
T2 = np.linalg.inv(S2)
R2 = np.array([[1.5, 0.2], [0.2, 0.8]])
W2 = np.array([[1.2, -0.1], [-0.1, 0.9]])

# name -> (BUGS parameters, values, scipy/closed-form log density of the values in BUGS terms)
CASES = {
    "dnorm": ((1.0, 4.0), [0.3, 1.0, 2.2], lambda x: stats.norm(1.0, 0.5).logpdf(x)),
    "dlnorm": ((0.2, 2.0), [0.5, 1.0, 3.0], lambda x: stats.lognorm(s=1 / np.sqrt(2.0), scale=np.exp(0.2)).logpdf(x)),
    "dt": ((1.0, 4.0, 3.0), [0.0, 1.0, 5.0], lambda x: stats.t(3.0, loc=1.0, scale=0.5).logpdf(x)),
    "dlogis": ((1.0, 2.0), [0.0, 1.0, 4.0],
               lambda x: np.log(2.0) + 2.0 * (x - 1.0) - 2 * np.log1p(np.exp(2.0 * (x - 1.0)))),
    "ddexp": ((1.0, 2.0), [0.0, 1.0, 4.0], lambda x: np.log(2.0 / 2) - 2.0 * np.abs(x - 1.0)),
    "dexp": ((1.5,), [0.0, 0.4, 3.0], lambda x: stats.expon(scale=1 / 1.5).logpdf(x)),
    "dgamma": ((2.5, 0.7), [0.1, 1.0, 6.0], lambda x: stats.gamma(2.5, scale=1 / 0.7).logpdf(x)),
    "dchisqr": ((3.0,), [0.2, 1.0, 7.0], lambda x: stats.chi2(3.0).logpdf(x)),
    "dweib": ((1.7, 0.4), [0.1, 1.0, 3.0], lambda x: np.log(1.7 * 0.4) + 0.7 * np.log(x) - 0.4 * x**1.7),
    "dpar": ((2.5, 1.5), [1.6, 2.0, 9.0], lambda x: np.log(2.5) + 2.5 * np.log(1.5) - 3.5 * np.log(x)),
    "dbeta": ((2.0, 3.5), [0.1, 0.5, 0.9], lambda x: stats.beta(2.0, 3.5).logpdf(x)),
    "dunif": ((-1.0, 3.0), [-0.5, 0.0, 2.9], lambda x: np.full(np.shape(x), -np.log(4.0))),
    "dflat": ((), [-3.0, 0.0, 1e6], lambda x: np.zeros(np.shape(x))),
    "dggamma": ((2.5, 1.3, 0.7), [0.4, 1.0, 2.5],
                lambda x: np.log(0.7) + 0.7 * 2.5 * np.log(1.3) + (0.7 * 2.5 - 1) * np.log(x) - (1.3 * x) ** 0.7
                - special.gammaln(2.5)),
    "dgev": ((0.5, 1.2, 0.3), [-1.0, 0.5, 4.0], lambda x: stats.genextreme(-0.3, loc=0.5, scale=1.2).logpdf(x)),
    "dgpar": ((0.2, 1.2, 0.3), [0.3, 1.0, 5.0], lambda x: stats.genpareto(0.3, loc=0.2, scale=1.2).logpdf(x)),
    # df(n, m, mu, tau): sqrt(tau) (x - mu) ~ F(n, m), the density of OpenBUGS's GraphF written out
    "df": ((3.0, 5.0, 1.0, 4.0), [1.2, 2.0, 6.0],
           lambda x: special.gammaln(4.0) - special.gammaln(1.5) - special.gammaln(2.5) + 1.5 * np.log(0.6)
           + 0.5 * np.log(2 * (x - 1.0)) + 0.5 * np.log(4.0) - 4.0 * np.log1p(0.6 * 2 * (x - 1.0))),
    "dinvgamma": ((3.0, 2.0), [0.3, 1.0, 4.0], lambda x: stats.invgamma(3.0, scale=2.0).logpdf(x)),
    "dloglik": ((-2.5,), [0.0, 0.0], lambda x: np.full(np.shape(x), -2.5)),
    "dbern": ((0.3,), [0, 1], lambda x: stats.bernoulli(0.3).logpmf(x)),
    "dbin": ((0.3, 10), [0, 3, 10], lambda x: stats.binom(10, 0.3).logpmf(x)),
    "dpois": ((2.5,), [0, 2, 9], lambda x: stats.poisson(2.5).logpmf(x)),
    "dnegbin": ((0.3, 4.0), [0, 3, 12],
                lambda x: special.gammaln(x + 4.0) - special.gammaln(x + 1) - special.gammaln(4.0)
                + 4.0 * np.log(0.3) + x * np.log(0.7)),
    "dgeom": ((0.3,), [1, 2, 6], lambda x: (x - 1) * np.log(0.7) + np.log(0.3)),
    "dgeom0": ((0.3,), [0, 1, 6], lambda x: x * np.log(0.7) + np.log(0.3)),
    "dbetabin": ((2.0, 3.0, 10), [0, 4, 10], lambda x: stats.betabinom(10, 2.0, 3.0).logpmf(x)),
    "dhyper": ((5, 6, 12, 1.7), [1, 3, 5], lambda x: stats.nchypergeom_fisher(12, 5, 6, 1.7).logpmf(x)),
    "dcat": (([0.2, 0.3, 0.5],), [1, 2, 3], lambda x: np.log(np.array([0.2, 0.3, 0.5])[np.asarray(x).astype(int) - 1])),
    "dmulti": (([0.2, 0.3, 0.5], 6), [[1, 2, 3], [6, 0, 0]], lambda x: stats.multinomial(6, [0.2, 0.3, 0.5]).logpmf(x)),
    "ddirich": (([1.5, 2.0, 3.0],), [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]],
                lambda x: stats.dirichlet([1.5, 2.0, 3.0]).logpdf(np.asarray(x).T)),
    "dmnorm": (([0.5, -1.0], T2), [[0.1, 0.2], [1.5, -2.0]],
               lambda x: stats.multivariate_normal([0.5, -1.0], S2).logpdf(x)),
    "dmnorm.vcov": (([0.5, -1.0], S2), [[0.1, 0.2], [1.5, -2.0]],
                    lambda x: stats.multivariate_normal([0.5, -1.0], S2).logpdf(x)),
    "dmt": (([0.5, -1.0], T2, 4.0), [[0.1, 0.2], [1.5, -2.0]],
            lambda x: stats.multivariate_t([0.5, -1.0], S2, df=4.0).logpdf(x)),
    "dwish": ((R2, 5.0), [W2], lambda x: np.atleast_1d(stats.wishart(5.0, np.linalg.inv(R2)).logpdf(W2))),
}


def test_every_distribution_has_a_reference_case():
    assert set(DISTRIBUTIONS) - set(ALIASES) == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_density_against_scipy_in_bugs_parametrisation(name):
    params, xs, ref = CASES[name]
    spec = DISTRIBUTIONS[name]
    d = spec.to_dist(*params)
    assert isinstance(d, D.Distribution) and type(d).__name__ == spec.family
    assert len(params) == len(spec.params) == len(spec.param_dims)
    x = np.array(xs, dtype=float)
    got = d.logpdf_elementwise(x)
    np.testing.assert_allclose(got, ref(x), rtol=1e-10, atol=1e-12)
    assert d.is_discrete == spec.is_discrete


@pytest.mark.parametrize("name", sorted(CASES))
def test_value_shape_follows_the_parameters(name):
    params, xs, _ = CASES[name]
    spec = DISTRIBUTIONS[name]
    shapes = [np.shape(p) for p in params]
    for p, dim in zip(params, spec.param_dims):
        assert np.ndim(p) == dim
    d = spec.to_dist(*params)
    assert spec.value_shape(shapes) == d.event_shape
    assert spec.value == {0: "scalar", 1: "vector", 2: "matrix"}[len(d.event_shape)]


def test_aliases_map_to_the_same_law():
    for alias, name in ALIASES.items():
        params, xs, ref = CASES[name]
        np.testing.assert_allclose(DISTRIBUTIONS[alias].to_dist(*params).logpdf_elementwise(np.array(xs, float)),
                                   ref(np.array(xs, float)))
        assert DISTRIBUTIONS[alias].params == DISTRIBUTIONS[name].params


# ------------------------------------------------------------------ disagreements, pinned (OpenBUGS)
def test_ddexp_and_dlogis_have_scale_one_over_tau_not_one_over_sqrt_tau():
    tau = 4.0
    lap = DISTRIBUTIONS["ddexp"].to_dist(0.0, tau)
    assert np.isclose(lap.logpdf(1.0), np.log(tau / 2) - tau)             # (tau/2) exp(-tau |x|)
    assert np.isclose(lap.var, 2 / tau**2)
    logis = DISTRIBUTIONS["dlogis"].to_dist(0.0, tau)
    assert np.isclose(logis.var, np.pi**2 / (3 * tau**2))                # scale 1/tau, not 1/sqrt(tau)


def test_dweib_scale_is_lambda_to_the_minus_one_over_v():
    d = DISTRIBUTIONS["dweib"].to_dist(2.0, 0.25)
    assert np.isclose(d.scale, 0.25 ** -0.5)                              # not 1/lambda = 4
    assert np.isclose(d.sf(1.0), np.exp(-0.25 * 1.0**2))                  # S(x) = exp(-lambda x^v)


def test_dhyper_uses_openbugs_argument_order_not_jags():
    # OpenBUGS dhyper(n, m, N, psi): n of N in group 1, m drawn. JAGS dhyper(n1, n2, m1, psi).
    d = DISTRIBUTIONS["dhyper"].to_dist(5, 6, 12, 1.0)
    central = stats.hypergeom(12, 5, 6)                                   # psi = 1: the central law
    np.testing.assert_allclose(d.logpdf_elementwise(np.arange(6.0)), central.logpmf(np.arange(6)), rtol=1e-12)
    with pytest.raises(ValueError, match="'m1' must be at most n1 \\+ n2"):   # the JAGS reading of (5, 6, 12)
        D.NoncentralHypergeometric(5, 6, 12, 1.0)
    jags = D.NoncentralHypergeometric(5, 6, 3, 1.7)                      # JAGS dhyper(5, 6, 3, 1.7)
    openbugs = DISTRIBUTIONS["dhyper"].to_dist(5, 3, 11, 1.7)            # the same law in OpenBUGS order
    np.testing.assert_allclose(jags.logpdf_elementwise(np.arange(4.0)), openbugs.logpdf_elementwise(np.arange(4.0)))


def test_dcat_is_one_based_and_not_renormalised():
    d = DISTRIBUTIONS["dcat"].to_dist([0.25, 0.75])
    assert d.logpdf(0.0) == -np.inf and np.isclose(d.logpdf(2.0), np.log(0.75))
    with pytest.raises(ValueError, match="summing to 1"):                 # JAGS would normalise [1, 3]
        DISTRIBUTIONS["dcat"].to_dist([0.25, 0.25])


def test_dgeom_counts_trials_and_dgeom0_failures():
    assert DISTRIBUTIONS["dgeom"].to_dist(0.4).logpdf(0.0) == -np.inf
    assert np.isclose(DISTRIBUTIONS["dgeom"].to_dist(0.4).logpdf(1.0), np.log(0.4))
    assert np.isclose(DISTRIBUTIONS["dgeom0"].to_dist(0.4).logpdf(0.0), np.log(0.4))


def test_precisions_everywhere_they_are_precisions():
    assert np.isclose(DISTRIBUTIONS["dnorm"].to_dist(0.0, 0.25).scale, 2.0)
    assert np.isclose(DISTRIBUTIONS["dlnorm"].to_dist(0.0, 0.25).sigma, 2.0)
    assert np.isclose(DISTRIBUTIONS["dt"].to_dist(0.0, 0.25, 5).scale, 2.0)
    np.testing.assert_allclose(DISTRIBUTIONS["dmnorm"].to_dist([0.0, 0.0], T2).cov, S2)
    np.testing.assert_allclose(DISTRIBUTIONS["dmt"].to_dist([0.0, 0.0], T2, 4).scale, S2)


def test_dwish_density_is_proportional_to_the_bugs_kernel():
    k, p = 5.0, 2
    d = DISTRIBUTIONS["dwish"].to_dist(R2, k)
    def kernel(x):
        return (k - p - 1) / 2 * np.linalg.slogdet(x)[1] - np.trace(R2 @ x) / 2
    other = np.array([[0.7, 0.2], [0.2, 1.4]])
    assert np.isclose(d.logpdf(W2) - d.logpdf(other), kernel(W2) - kernel(other))


def test_order_of_arguments_p_before_n():
    assert DISTRIBUTIONS["dbin"].params == ("p", "n")
    assert DISTRIBUTIONS["dmulti"].params == ("p", "N")
    assert DISTRIBUTIONS["dnegbin"].params == ("p", "r")
    assert DISTRIBUTIONS["dt"].params == ("mu", "tau", "k")


def test_bad_parameters_are_rejected_by_the_family():
    with pytest.raises(ValueError, match="dnorm: parameter 'tau' must be positive, got -1.0"):
        DISTRIBUTIONS["dnorm"].to_dist(0.0, -1.0)
    with pytest.raises(ValueError, match="ddexp: parameter 'tau' must be positive, got 0.0"):
        DISTRIBUTIONS["ddexp"].to_dist(0.0, 0.0)
    with pytest.raises(ValueError, match="Binomial: parameter 'p' must be"):
        DISTRIBUTIONS["dbin"].to_dist(1.5, 3)


def test_bijectors_come_from_dcgraph_dist():
    b = D.bijectors
    assert isinstance(DISTRIBUTIONS["dgamma"].bijector(1.0, 1.0), b.Exp)
    assert isinstance(DISTRIBUTIONS["dnorm"].bijector(0.0, 1.0), b.Identity)
    unif = DISTRIBUTIONS["dunif"].bijector(-1.0, 3.0)
    assert isinstance(unif, b.LogitAffine) and -1.0 < unif.forward(np.array(5.0)) < 3.0
    assert isinstance(DISTRIBUTIONS["dpar"].bijector(2.0, 1.5), b.LowerBound)
    assert isinstance(DISTRIBUTIONS["ddirich"].bijector([1.0, 1.0, 1.0]), b.StickBreaking)
    assert isinstance(DISTRIBUTIONS["dwish"].bijector(R2, 4.0), b.CholeskyPD)
    with pytest.raises(TypeError, match="discrete"):
        DISTRIBUTIONS["dpois"].bijector(1.0)
