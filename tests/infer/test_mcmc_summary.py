"""Summary table, result container, exports and plots."""

import io

import numpy as np
import pytest
from rich.console import Console

from dcgraph.infer import NUTS, SampleResult, Target, ess_bulk, mcse_mean, plot_trace, rhat, sample, summary
from dcgraph.infer.result import parse_layout


def small_result(names=None):
    target = Target(logdensity_and_grad=lambda q: (-0.5 * q.dot(q), -q), dim=3)
    return sample(target, NUTS(), draws=300, warmup=300, chains=2, seed=0, names=names)


def test_summary_numbers_match_their_definitions():
    x = np.random.default_rng(0).normal(2.0, 3.0, size=(4, 500, 2))
    s = summary(x, names=["a", "b"])
    assert s.names == ["a", "b"]
    a = x[:, :, 0]
    row = s["a"]
    assert row.mean == pytest.approx(a.mean())
    assert row.sd == pytest.approx(a.std(ddof=1))
    assert row.mc_error == pytest.approx(mcse_mean(a))
    assert (row.q2_5, row.median, row.q97_5) == pytest.approx(tuple(np.quantile(a, [0.025, 0.5, 0.975])))
    assert row.ess_bulk == pytest.approx(ess_bulk(a))
    assert row.rhat == pytest.approx(rhat(a))
    np.testing.assert_allclose(s.mean, x.mean(axis=(0, 1)))
    assert (row.start, row.sample) == (1, 2000)
    assert set(s.to_dict()) == {"name", "mean", "sd", "mc_error", "q2_5", "median", "q97_5", "start", "sample",
                                "ess_bulk", "ess_tail", "rhat"}


def test_summary_returns_the_table_without_printing_and_rich_prints_it(capsys):
    buf = io.StringIO()
    result = small_result(names={"mu": (), "beta": 2})
    s = summary(result)
    assert capsys.readouterr().out == ""
    Console(file=buf, width=150, color_system=None).print(s)
    text = buf.getvalue()
    for header in ("node", "mean", "sd", "MC_error", "val2.5pc", "median", "val97.5pc", "start", "sample",
                   "ess_bulk", "ess_tail", "r_hat"):
        assert header in text
    for name in ("mu", "beta[1]", "beta[2]"):
        assert name in text
    assert "2 chains x 300 draws" in text and "no divergences" in text
    assert s["mu"].start == 301 and s["mu"].sample == 600
    assert result.summary().names == s.names


def test_summary_accepts_dicts_and_plain_arrays():
    rng = np.random.default_rng(1)
    s = summary({"mu": rng.normal(size=(2, 100)), "sigma": rng.normal(size=(2, 100, 2, 2))})
    assert s.names == ["mu", "sigma[1,1]", "sigma[1,2]", "sigma[2,1]", "sigma[2,2]"]  # BUGS indices
    zero = summary({"sigma": rng.normal(size=(2, 100, 2))}, index_base=0)
    assert zero.names == ["sigma[0]", "sigma[1]"]
    assert summary(rng.normal(size=200)).names == ["x"]
    assert len(summary(rng.normal(size=(3, 100, 4)))) == 4
    with pytest.raises(ValueError, match="2 names for 4 quantities"):
        summary(rng.normal(size=(3, 100, 4)), names=["a", "b"])


def test_result_layout_names_and_plain_dict_export():
    result = small_result(names={"mu": (), "beta": (2,)})
    assert result.names == ["mu", "beta[1]", "beta[2]"]
    assert result["beta"].shape == (2, 300, 2)
    np.testing.assert_array_equal(result["beta"][..., 1], result.draws[:, :, 2])
    d = result.to_dict()
    assert set(d) == {"posterior", "sample_stats"}
    assert d["posterior"]["mu"].shape == (2, 300)
    for stat in ("accept_prob", "n_leapfrog", "tree_depth", "divergent", "energy", "step_size", "logdensity"):
        assert d["sample_stats"][stat].shape == (2, 300)
    with pytest.raises(KeyError, match="no parameter 'nope'"):
        result["nope"]
    assert "divergences=0" in repr(result)


def test_layout_validation():
    assert parse_layout(None, 4)[0].shape == (4,)
    with pytest.raises(ValueError, match="cover 3 coordinates, the target has 4"):
        parse_layout({"a": 1, "b": 2}, 4)
    with pytest.raises(ValueError, match="unique"):
        parse_layout(["a", "a"], 2)


def test_to_arviz_when_installed_and_clear_error_otherwise():
    result = small_result(names={"a": (), "beta": 2})
    try:
        import arviz
    except ImportError:
        with pytest.raises(ImportError, match="ArviZ"):
            result.to_arviz()
        return
    idata = result.to_arviz()
    assert idata.posterior["a"].shape == (2, 300)
    assert list(idata.posterior["beta"].coords["beta_dim_0"].values) == [1, 2]  # BUGS indices as coordinates
    np.testing.assert_array_equal(idata.posterior["beta"].sel(beta_dim_0=2).values, result["beta"][..., 1])
    assert int(idata.sample_stats["diverging"].sum()) == result.divergences
    assert idata.sample_stats["n_steps"].shape == (2, 300)
    table = arviz.summary(idata, var_names=["a"])
    assert table.loc["a", "mean"] == pytest.approx(result.summary()["a"].mean, abs=1e-3)


def test_to_csv_round_trips_every_draw_in_full_precision(tmp_path):
    result = small_result(names={"mu": (), "beta": 2})
    path = result.to_csv(tmp_path / "draws.csv")
    with open(path) as f:
        header = f.readline().strip().split(",")
    assert header[:5] == ["chain", "draw", "mu", "beta[1]", "beta[2]"]
    assert {"accept_prob", "n_leapfrog", "divergent", "logdensity"} <= set(header)
    table = np.loadtxt(path, delimiter=",", skiprows=1)
    assert table.shape == (600, len(header))
    np.testing.assert_array_equal(table[:, 0], np.repeat([0, 1], 300))
    np.testing.assert_array_equal(table[:300, 1], np.arange(301, 601))  # iterations after 300 warm-up
    np.testing.assert_array_equal(table[:, 2:5], result.draws.reshape(600, 3))  # %.17g round-trips floats
    np.testing.assert_array_equal(table[:, header.index("n_leapfrog")], result.stats["n_leapfrog"].reshape(600))


def test_plot_trace_when_matplotlib_is_installed_and_clear_error_otherwise():
    result = small_result()
    try:
        import matplotlib

        matplotlib.use("Agg")
    except ImportError:
        with pytest.raises(ImportError, match="matplotlib"):
            plot_trace(result)
        return
    fig = plot_trace(result)
    assert len(fig.axes) == 2 * 3
    assert fig.axes[0].get_ylabel() == "theta[1]"


def test_sample_result_rejects_bad_shapes():
    with pytest.raises(ValueError, match=r"\(chains, draws, dim\)"):
        SampleResult(np.zeros((10, 2)), {}, parse_layout(None, 2))


def test_transformed_and_extra_quantities_keep_the_run():
    result = small_result(names={"mu": (), "log_sigma": 2})
    constrained = result.transformed(lambda t: np.concatenate([t[:1], np.exp(t[1:])]), names={"mu": (), "sigma": 2})
    np.testing.assert_array_equal(constrained["sigma"], np.exp(result["log_sigma"]))
    assert constrained.names == ["mu", "sigma[1]", "sigma[2]"]
    assert constrained.stats["n_leapfrog"] is result.stats["n_leapfrog"] and constrained.warmup == 300 and constrained.summary()["mu"].start == 301
    more = result.with_draws({"mu2": result["mu"] ** 2})
    assert more.names == ["mu", "log_sigma[1]", "log_sigma[2]", "mu2"]
    np.testing.assert_array_equal(more["mu2"], result["mu"] ** 2)
    with pytest.raises(ValueError, match="'mu' is already a parameter"):
        result.with_draws({"mu": result["mu"]})
    with pytest.raises(ValueError, match=r"'x': draws have shape \(2, 10\)"):
        result.with_draws({"x": np.zeros((2, 10))})
