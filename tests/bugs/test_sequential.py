"""Sequentialisation corner cases (seeds/002): the program produced, compared to golden text,
and the log density of each checked against the independent scipy evaluation."""
import textwrap

import numpy as np
import pytest

import dcgraph.bugs as B
from bugs_compile_cases import compiled, reference_logdensity

CASES = {
    "rats_reordered": (None, """\
        tau.c ~ dgamma(0.001, 0.001)
        sigma <- 1 / sqrt(tau.c)
        alpha.c ~ dnorm(0.0, 1e-06)
        alpha.tau ~ dgamma(0.001, 0.001)
        for (i in 1:N) {
            alpha[i] ~ dnorm(alpha.c, alpha.tau)
        }
        beta.c ~ dnorm(0.0, 1e-06)
        beta.tau ~ dgamma(0.001, 0.001)
        for (i in 1:N) {
            beta[i] ~ dnorm(beta.c, beta.tau)
        }
        for (i in 1:N) {
            for (j in 1:T) {
                mu[i, j] <- alpha[i] + beta[i] * (x[j] - xbar)
            }
        }
        for (i in 1:N) {
            for (j in 1:T) {
                Y[i, j] ≂ dnorm(mu[i, j], tau.c)
            }
        }
        alpha0 <- alpha.c - xbar * beta.c"""),
    "self_loop_reversed": (("model { x[10] ~ dnorm(0, 1)\n for (i in 1:9) { x[i] <- x[i + 1] + 1 }\n"
                            " y ~ dnorm(x[1], 1) }", {"y": 3.0}), """\
        x[10] ~ dnorm(0, 1)
        for (i in rev(1:9)) {
            x[i] <- x[i + 1] + 1
        }
        y ≂ dnorm(x[1], 1)"""),
    "self_loop_forward": (("model { x[1] ~ dnorm(0, 1)\n for (i in 2:4) { x[i] ~ dnorm(x[i - 1], 1) } }",
                           {}), """\
        x[1] ~ dnorm(0, 1)
        for (i in 2:4) {
            x[i] ~ dnorm(x[i - 1], 1)
        }"""),
    "fission": (("model { for (i in 1:N) { x[i] ~ dnorm(0, 1)\n y[i] ~ dnorm(x[N], i) } }",
                 {"N": 3, "y": [0.5, 1.0, -1.0]}), """\
        for (i in 1:N) {
            x[i] ~ dnorm(0, 1)
        }
        for (i in 1:N) {
            y[i] ≂ dnorm(x[N], i)
        }"""),
    "fusion_running_sum": (("model { x[1] ~ dnorm(0, 1)\n sumX[1] <- x[1]\n"
                            " for (i in 2:N) { sumX[i] <- sumX[i - 1] + x[i] }\n"
                            " for (i in 2:N) { x[i] ~ dnorm(sumX[i - 1], tau) } }",
                            {"N": 4, "tau": 2.0}), """\
        x[1] ~ dnorm(0, 1)
        sumX[1] <- x[1]
        for (i in 2:N) {
            x[i] ~ dnorm(sumX[i - 1], tau)
            sumX[i] <- sumX[i - 1] + x[i]
        }"""),
    "affine_unrolled": (("model { x[1] ~ dnorm(0, 1)\n sumX[1] <- x[1]\n"
                         " for (i in 2:N) { sumX[i] <- sumX[i - 1] + x[i] }\n"
                         " for (i in 1:M) { x[2 * i] ~ dnorm(sumX[2 * i - 1], tau) }\n"
                         " for (i in 1:M) { x[2 * i + 1] ~ dgamma(exp(sumX[2 * i]), tau) } }",
                         {"N": 5, "M": 2, "tau": 1.0}), """\
        x[1] ~ dnorm(0, 1)
        sumX[1] <- x[1]
        # unrolled
        x[2] ~ dnorm(sumX[1], tau)
        sumX[2] <- sumX[1] + x[2]
        x[3] ~ dgamma(exp(sumX[2]), tau)
        sumX[3] <- sumX[2] + x[3]
        x[4] ~ dnorm(sumX[3], tau)
        sumX[4] <- sumX[3] + x[4]
        x[5] ~ dgamma(exp(sumX[4]), tau)
        sumX[5] <- sumX[4] + x[5]"""),
    "nested_indexing_unrolled": (("model { z[2] <- exp(x[1])\n y[2] <- sqrt(x[2] * x[2])\n"
                                  " for (i in 1:3) { x[i] <- y[a[i]] + z[b[i]] }\n"
                                  " y[1] ~ dnorm(0, 1)\n y[3] ~ dnorm(0, 1)\n z[1] ~ dnorm(0, 1)\n"
                                  " z[3] ~ dnorm(0, 1)\n w ~ dnorm(x[3], 1) }",
                                  {"a": [2, 3, 1], "b": [3, 1, 2], "w": 1.0}), """\
        y[1] ~ dnorm(0, 1)
        y[3] ~ dnorm(0, 1)
        z[1] ~ dnorm(0, 1)
        z[3] ~ dnorm(0, 1)
        # unrolled
        x[2] <- y[3] + z[1]
        y[2] <- sqrt(x[2] * x[2])
        x[1] <- y[2] + z[3]
        z[2] <- exp(x[1])
        x[3] <- y[1] + z[2]
        w ≂ dnorm(x[3], 1)"""),
}


def _model(name):
    source = CASES[name][0]
    return compiled("rats") if source is None else B.compile(*source)


@pytest.mark.parametrize("name", sorted(CASES))
def test_program_text(name):
    assert _model(name).program() == textwrap.dedent(CASES[name][1])


@pytest.mark.parametrize("name", sorted(CASES))
def test_program_log_density(name):
    model = _model(name)
    rng = np.random.default_rng(1)
    for _ in range(3):
        theta = rng.normal(size=model.dim)
        np.testing.assert_allclose(model.logdensity(theta), reference_logdensity(model, theta),
                                   rtol=1e-10)
        value, grad = model.logdensity_and_grad(theta)
        h = 1e-6
        fd = [(model.logdensity(theta + h * e) - model.logdensity(theta - h * e)) / (2 * h)
              for e in np.eye(model.dim)]
        np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-5 + 1e-8 * abs(value))


def test_missing_data_splits_the_statement():
    from bugs_compile_cases import EXAMPLES
    d = EXAMPLES / "rats"
    model = B.compile(d / "model.txt", d / "missdata.txt", d / "inits.txt")
    missing = int(np.isnan(B.read_data(d / "missdata.txt")["Y"]).sum())
    assert missing == 58
    text = model.program()
    assert "Y[i, j] ~ dnorm(mu[i, j], tau.c)    # 58 of 150" in text
    assert "Y[i, j] ≂ dnorm(mu[i, j], tau.c)    # 92 of 150" in text
    assert model.dim == 65 + 58
    theta = model.initial_values(0)
    np.testing.assert_allclose(model.logdensity(theta), reference_logdensity(model, theta),
                               rtol=1e-10)


def test_self_loop_stays_a_loop():
    text = ("model { x[1] ~ dnorm(0, 1)\n for (i in 2:N) { x[i] ~ dnorm(x[i - 1], 10) }\n"
            " for (i in 1:N) { y[i] ~ dnorm(x[i], 1) } }")
    sizes = []
    for n in (20, 400):
        model = B.compile(text, {"N": n, "y": np.sin(np.arange(n))})
        src = model.source()
        assert f"for t in _range({n - 1}):" in src
        sizes.append(len(src.splitlines()))
        theta = np.random.default_rng(n).normal(size=n)
        np.testing.assert_allclose(model.logdensity(theta), reference_logdensity(model, theta),
                                   rtol=1e-10)
        _, grad = model.logdensity_and_grad(theta)
        h = 1e-6
        for k in (0, 1, n // 2, n - 1):
            e = np.zeros(n)
            e[k] = h
            fd = (model.logdensity(theta + e) - model.logdensity(theta - e)) / (2 * h)
            assert grad[k] == pytest.approx(fd, rel=1e-5, abs=1e-6)
        # the loop mutates no container, so the gradient runs through the compiled replay
        for _ in range(2):                            # learned on the second call, replayed after
            _, grad2 = model.logdensity_and_grad(theta)
            np.testing.assert_allclose(grad2, grad, rtol=1e-12)
        cache = model._vg.compiled
        assert cache.enabled and cache.reason is None and cache.stats["hits"] >= 1
        assert ".append(" not in model.source()
    assert sizes[0] == sizes[1]                       # code size does not grow with N


def test_reversed_loop_simulates_in_order():
    model = B.compile("model { x[10] ~ dnorm(0, 1)\n for (i in 1:9) { x[i] <- x[i + 1] + 1 } }", {})
    draw = model.simulate(np.random.default_rng(0))
    np.testing.assert_allclose(np.diff(draw["x"]), -1.0)
    theta = model.initial_values(0)
    assert model.constrained(theta)["x"][0] == pytest.approx(theta[0] + 9)


def test_prior_predictive_in_every_block_kind():
    """``simulate(observed=True)`` draws observed nodes whether vectorised or not (a ragged
    ``mean(x[1:i])`` is computed one instance at a time)."""
    ragged = B.compile("model { for (i in 1:3) { x[i] ~ dnorm(0, 1)\n"
                       " y[i] ~ dnorm(mean(x[1:i]), 1) } }", {"y": [0.5, 1.0, -1.0]})
    assert "n3 = " in ragged.source()                    # straight-line: one name per node
    theta = np.array([0.1, -0.4, 0.8])
    np.testing.assert_allclose(ragged.logdensity(theta), reference_logdensity(ragged, theta))
    for model in [ragged] + [_model(n) for n in ("nested_indexing_unrolled", "fission")]:
        data = model.graph.data
        observed = [p for p in model.parts if p.role == "observed"]
        draw = model.simulate(np.random.default_rng(2), observed=True)
        plain = model.simulate(np.random.default_rng(2))
        for p in observed:
            var = p.statement.ast.target.name
            offsets = [int(i.target[0]) for i in p.instances]
            np.testing.assert_array_equal(np.ravel(plain[var])[offsets], data[var].ravel()[offsets])
            assert not np.array_equal(np.ravel(draw[var])[offsets], data[var].ravel()[offsets])
