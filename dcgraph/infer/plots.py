"""Trace and density plots, drawn with matplotlib when it is installed (never required)."""

from __future__ import annotations

import numpy as np

from .summary import _flatten

__all__ = ["plot_trace"]


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError("plot_trace needs matplotlib (pip install matplotlib)") from exc
    return plt


def plot_trace(draws, names=None, max_params: int = 10):
    """Trace (left) and kernel density per chain (right) for up to ``max_params`` quantities.

    ``draws`` as for :func:`dcgraph.infer.summary`.  Returns the matplotlib
    figure; raises ImportError naming matplotlib when it is absent.
    """
    plt = _pyplot()
    from scipy.stats import gaussian_kde

    arr, flat_names, *_ = _flatten(draws, names, 1)
    k = min(arr.shape[2], max_params)
    fig, axes = plt.subplots(k, 2, figsize=(10, 2.2 * k), squeeze=False)
    for j in range(k):
        trace_ax, density_ax = axes[j]
        for c in range(arr.shape[0]):
            x = arr[c, :, j]
            trace_ax.plot(x, lw=0.5, alpha=0.8)
            if np.ptp(x) > 0:
                grid = np.linspace(x.min(), x.max(), 200)
                density_ax.plot(grid, gaussian_kde(x)(grid), lw=1)
        trace_ax.set_ylabel(flat_names[j])
        density_ax.set_yticks([])
    axes[0, 0].set_title("trace")
    axes[0, 1].set_title("density")
    fig.tight_layout()
    return fig
