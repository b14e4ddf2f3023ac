"""Cost of ``dcgraph.dist`` log densities against the same arithmetic in raw numpy.

Run:  .venv/bin/python benchmarks/bench_dist.py [--rounds N] [--n 150]

For Normal, Gamma-free families with scalar parameters and ``n`` values (150 by default, the Rats
observations per week), each line times, in the same run and interleaved rounds:

* ``numpy``: the hand-written log density (``-0.5 z^2 - log(sd) - log(2 pi)/2`` summed);
* ``kernel``: ``np.sum(dcgraph.dist.kernels.normal_logpdf(x, mu, sd))``;
* ``dist (validate off)``: ``Normal(mu, sd, validate_args=False).logpdf(x)`` (construction included);
* ``dist (validate on)``: ``Normal(mu, sd).logpdf(x)`` (the default, construction included);
* ``logpdf only``: ``d.logpdf(x)`` on a prebuilt distribution, validation on and off.

The figure is the minimum over rounds of the mean time per call (process CPU time); the
ratio column divides by the numpy time of the same family. The Rats log density (30 x 5
normal observations, 2 x 30 normal random effects, 5 hyperpriors) is timed the same way.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.special import betaln, gammaln, xlog1py, xlogy

from dcgraph import dist
from dcgraph.dist import kernels

LOG_2PI = float(np.log(2 * np.pi))


def _time(fn, batch=200):
    t0 = time.process_time()
    for _ in range(batch):
        fn()
    return (time.process_time() - t0) / batch


def _cases(n, rng):
    x = rng.normal(1.0, 2.0, n)
    xp = rng.gamma(2.0, 1.0, n)
    xu = rng.uniform(0.05, 0.95, n)
    k = rng.poisson(3.0, n).astype(float)
    return {
        "Normal": (lambda: np.sum(-0.5 * ((x - 0.5) / 2.0) ** 2 - np.log(2.0) - 0.5 * LOG_2PI),
                   lambda: np.sum(kernels.normal_logpdf(x, 0.5, 2.0)),
                   lambda v: dist.Normal(0.5, 2.0, validate_args=v), x),
        "StudentT": (lambda: np.sum(gammaln(3.0) - gammaln(2.5) - 0.5 * np.log(5.0 * np.pi) - np.log(2.0)
                                    - 3.0 * np.log1p(((x - 0.5) / 2.0) ** 2 / 5.0)),
                     lambda: np.sum(kernels.studentt_logpdf(x, 5.0, 0.5, 2.0)),
                     lambda v: dist.StudentT(5.0, 0.5, 2.0, validate_args=v), x),
        "Beta": (lambda: np.sum(xlogy(1.0, xu) + xlog1py(2.0, -xu) - betaln(2.0, 3.0)),
                 lambda: np.sum(kernels.beta_logpdf(xu, 2.0, 3.0)),
                 lambda v: dist.Beta(2.0, 3.0, validate_args=v), xu),
        "Poisson": (lambda: np.sum(xlogy(k, 3.0) - 3.0 - gammaln(k + 1.0)),
                    lambda: np.sum(kernels.poisson_logpmf(k, 3.0)),
                    lambda v: dist.Poisson(3.0, validate_args=v), k),
        "Gamma(kernel only)": (lambda: np.sum(2.0 * np.log(1.5) - gammaln(2.0) + xlogy(1.0, xp) - 1.5 * xp),
                               lambda: np.sum(kernels.gamma_logpdf(xp, 2.0, 1.5)), None, xp),
    }


def _rats(rng):
    """The Rats log density (normal parts) written three ways, on fixed values."""
    N, T = 30, 5
    xs = np.array([8.0, 15.0, 22.0, 29.0, 36.0]) - 22.0
    y = rng.normal(240.0, 30.0, (N, T))
    alpha, beta = rng.normal(240.0, 10.0, N), rng.normal(6.0, 0.3, N)
    ac, bc, sd, sda, sdb = 240.0, 6.0, 6.0, 14.0, 0.5

    def numpy_version():
        mu = alpha[:, None] + beta[:, None] * xs
        lp = np.sum(-0.5 * ((y - mu) / sd) ** 2 - np.log(sd) - 0.5 * LOG_2PI)
        lp += np.sum(-0.5 * ((alpha - ac) / sda) ** 2 - np.log(sda) - 0.5 * LOG_2PI)
        lp += np.sum(-0.5 * ((beta - bc) / sdb) ** 2 - np.log(sdb) - 0.5 * LOG_2PI)
        return lp

    def kernel_version():
        mu = alpha[:, None] + beta[:, None] * xs
        return (np.sum(kernels.normal_logpdf(y, mu, sd)) + np.sum(kernels.normal_logpdf(alpha, ac, sda))
                + np.sum(kernels.normal_logpdf(beta, bc, sdb)))

    def dist_version(v):
        mu = alpha[:, None] + beta[:, None] * xs
        return (dist.Normal(mu, sd, validate_args=v).logpdf(y) + dist.Normal(ac, sda, validate_args=v).logpdf(alpha)
                + dist.Normal(bc, sdb, validate_args=v).logpdf(beta))

    assert np.isclose(numpy_version(), dist_version(True)) and np.isclose(numpy_version(), dist_version(False))
    return numpy_version, kernel_version, dist_version


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--n", type=int, default=150)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    rows = []
    for name, (raw, kern, make, x) in _cases(args.n, rng).items():
        methods = {"numpy": raw, "kernel": kern}
        if make is not None:
            on, off = make(True), make(False)
            assert np.isclose(on.logpdf(x), raw()) and np.isclose(off.logpdf(x), raw()), name
            methods.update({
                "dist (validate off)": lambda make=make, x=x: make(False).logpdf(x),
                "dist (validate on)": lambda make=make, x=x: make(True).logpdf(x),
                "logpdf only (off)": lambda off=off, x=x: off.logpdf(x),
                "logpdf only (on)": lambda on=on, x=x: on.logpdf(x),
            })
        rows.append((f"{name}, n={args.n}", methods))
    numpy_rats, kernel_rats, dist_rats = _rats(rng)
    rows.append(("Rats log density (normal parts)", {
        "numpy": numpy_rats, "kernel": kernel_rats,
        "dist (validate off)": lambda: dist_rats(False), "dist (validate on)": lambda: dist_rats(True)}))

    for title, methods in rows:
        best = {m: float("inf") for m in methods}
        for _ in range(args.rounds):
            for m, fn in methods.items():
                best[m] = min(best[m], _time(fn))
        print(title)
        base = best["numpy"]
        for m, t in best.items():
            print(f"  {m:<22s} {t * 1e6:9.2f} us   {t / base:6.2f}x numpy")


if __name__ == "__main__":
    main()
