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
    s = summary(x, names=["a", "b"], show=False)
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
    assert set(s.to_dict()) == {"name", "mean", "sd", "mc_error", "q2_5", "median", "q97_5", "ess_bulk", "ess_tail", "rhat"}


def test_summary_prints_a_table_with_the_openbugs_columns():
    buf = io.StringIO()
    result = small_result(names={"mu": (), "beta": 2})
    s = summary(result, console=Console(file=buf, width=150, color_system=None))
    text = buf.getvalue()
    for header in ("mean", "sd", "MC error", "2.5%", "median", "97.5%", "ESS bulk", "ESS tail", "R-hat"):
        assert header in text
    for name in ("mu", "beta[0]", "beta[1]"):
        assert name in text
    assert "2 chains x 300 draws" in text and "no divergences" in text
    assert f"{s['mu'].mean:.4g}" in text


def test_summary_accepts_dicts_and_plain_arrays():
    rng = np.random.default_rng(1)
    s = summary({"mu": rng.normal(size=(2, 100)), "sigma": rng.normal(size=(2, 100, 2, 2))}, show=False)
    assert s.names == ["mu", "sigma[0,0]", "sigma[0,1]", "sigma[1,0]", "sigma[1,1]"]
    assert summary(rng.normal(size=200), show=False).names == ["x"]
    assert len(summary(rng.normal(size=(3, 100, 4)), show=False)) == 4
    with pytest.raises(ValueError, match="2 names for 4 quantities"):
        summary(rng.normal(size=(3, 100, 4)), names=["a", "b"], show=False)


def test_result_layout_names_and_plain_dict_export():
    result = small_result(names={"mu": (), "beta": (2,)})
    assert result.names == ["mu", "beta[0]", "beta[1]"]
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
    result = small_result(names=["a", "b", "c"])
    try:
        import arviz  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="ArviZ"):
            result.to_arviz()
        return
    idata = result.to_arviz()
    assert idata.posterior["a"].shape == (2, 300)
    assert int(idata.sample_stats["diverging"].sum()) == result.divergences
    assert idata.sample_stats["n_steps"].shape == (2, 300)


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
    assert fig.axes[0].get_ylabel() == "theta[0]"


def test_sample_result_rejects_bad_shapes():
    with pytest.raises(ValueError, match=r"\(chains, draws, dim\)"):
        SampleResult(np.zeros((10, 2)), {}, parse_layout(None, 2))
