"""Cost of ``dcgraph.grad(f)`` relative to calling ``f``, beside autograd, jax and torch.

Run:  .venv/bin/python benchmarks/bench_grad.py [--rounds N] [--clock cpu|wall]

Sampler cases (``--cases rats_vec,quad,params_list,params_array``): ``value_and_grad`` as a
sampler calls it, beside ``jax.jit(value_and_grad)`` (gradient converted back to numpy):
a vectorised Rats log density over one 65-vector, ``-0.5 * q @ q`` (the fixed cost per call),
and Rats in scalar code over 65 parameters given as a list and as an array.

Gradient cases: a scalar loop with ``math.sin`` (200 iterations), the same terms gathered in a
list (``sin_list``: a comprehension, appends and a caught exception), a Rats-style hierarchical log
density written with scalar loops (30 x 5), and logistic regression on 20000 x 10 arrays.
Every method of every case is timed in interleaved rounds (numpy timings depend on allocation
patterns, and the machine may be shared), each round a small batch of calls; the figure is the
minimum over rounds of the mean time per call, in process CPU time by default (``--clock
wall`` for wall time). dcgraph is timed twice: ``grad (compiled)`` is one ``grad(f)`` called
repeatedly, so after its second call it runs the compiled path (``dcgraph.ad.compiled``);
``grad (traced)`` has compilation turned off and traces every call, split into recording
(running f instrumented), tape building (the replay of the event log, lazy on first access)
and the backward sweep. The one-off cost of compiling each path is printed too. autograd,
``jax.grad`` (eager, float64) and torch (``backward``) are measured when installed and
skipped otherwise; ``jax.jit(value_and_grad)`` of the two scalar loops is shown beside the compiled
path, with the wall time of its first call (tracing and XLA compilation).
"""
from __future__ import annotations

import argparse
import math
import platform
import sys
import time

import numpy as np
from scipy import special

import dcgraph
from dcgraph import ad
from dcgraph.ad.compiled import compile_gradient
from dcgraph.ad.core import Sweep


# -- the three functions, plain Python / numpy ------------------------------------------------
def sin_loop(x):
    s = 0.0
    for i in range(200):
        s = s + math.sin(x * i)
    return s


def sin_list(x):
    """The sin loop building a list (a comprehension, then appends) and catching an
    exception on every call: what compiled replay did not cover before issue #17."""
    terms = [math.sin(x * i) for i in range(100)]
    for i in range(100, 200):
        try:
            terms.append(math.sin(x * i))
            if i == 199:
                raise StopIteration          # left the same way on every call
        except StopIteration:
            pass
    return sum(terms)


XS = [8.0, 15.0, 22.0, 29.0, 36.0]


def rats_logp(alpha, beta, mu_a, mu_b, sig_a, sig_b, sig_y, y):
    lp = 0.0
    for i in range(len(y)):
        za = (alpha[i] - mu_a) / sig_a
        zb = (beta[i] - mu_b) / sig_b
        lp += -0.5 * za * za - math.log(sig_a) - 0.5 * zb * zb - math.log(sig_b)
        for j in range(5):
            r = (y[i][j] - alpha[i] - beta[i] * (XS[j] - 22.0)) / sig_y
            lp += -0.5 * r * r - math.log(sig_y)
    return lp


def logistic(w, X, y):
    p = special.expit(X @ w)
    return np.sum(y * np.log(p) + (1 - y) * np.log1p(-p))


# -- what samplers call: one parameter vector in, log density out -----------------------------
XV = np.array(XS) - 22.0


def rats_vec(th, y):
    """The Rats log density over one 65-vector (30 alphas, 30 betas, 2 means, 3 log scales)."""
    alpha, beta, mu_a, mu_b = th[0:30], th[30:60], th[60], th[61]
    log_sa, log_sb, log_sy = th[62], th[63], th[64]
    za = (alpha - mu_a) / np.exp(log_sa)
    zb = (beta - mu_b) / np.exp(log_sb)
    r = (y - alpha[:, None] - beta[:, None] * XV) / np.exp(log_sy)
    return (-0.5 * np.sum(za * za) - 30 * log_sa - 0.5 * np.sum(zb * zb) - 30 * log_sb
            - 0.5 * np.sum(r * r) - 150 * log_sy)


def quad(q):
    return -0.5 * q @ q


def rats_params(th, y):
    """Rats with scalar code over 65 parameters read one by one (a list or an array)."""
    mu_a, mu_b, sa, sb, sy = th[60], th[61], math.exp(th[62]), math.exp(th[63]), math.exp(th[64])
    lp = -30 * (th[62] + th[63]) - 150 * th[64]
    for i in range(30):
        a, b = th[i], th[30 + i]
        lp -= 0.5 * (((a - mu_a) / sa) ** 2 + ((b - mu_b) / sb) ** 2)
        for j in range(5):
            r = (y[i][j] - a - b * XV[j]) / sy
            lp -= 0.5 * r * r
    return lp


def make_data():
    rng = np.random.default_rng(0)
    alpha = list(rng.normal(240, 10, size=30))
    beta = list(rng.normal(6, 0.5, size=30))
    y = [[a + b * (x - 22.0) + rng.normal(0, 6) for x in XS] for a, b in zip(alpha, beta)]
    rats = (alpha, beta, 241.0, 6.2, 11.0, 0.6, 5.5, y)
    X = rng.normal(size=(20000, 10))
    w = rng.normal(size=10) * 0.1
    yy = (rng.uniform(size=20000) < special.expit(X @ w)).astype(float)
    th = np.concatenate([alpha, beta, [241.0, 6.2, math.log(11.0), math.log(0.6),
                                       math.log(5.5)]])
    ya = np.array(y)
    return {"sin": (0.3,), "sin_list": (0.3,), "rats": rats, "logistic": (w, X, yy), "rats_vec": (th, ya),
            "quad": (rng.normal(size=100),), "params_list": (list(map(float, th)), y),
            "params_array": (th, ya)}


# -- other frameworks (each returns {case: callable(args) -> gradient} or None) ---------------
def autograd_methods():
    try:
        import autograd
        import autograd.numpy as anp
        from autograd.scipy import special as asp
    except ImportError:
        return None

    def a_sin(x):
        s = 0.0
        for i in range(200):
            s = s + anp.sin(x * i)
        return s

    def a_rats(alpha, beta, mu_a, mu_b, sig_a, sig_b, sig_y, y):
        lp = 0.0
        for i in range(len(y)):
            za = (alpha[i] - mu_a) / sig_a
            zb = (beta[i] - mu_b) / sig_b
            lp = lp + (-0.5 * za * za - anp.log(sig_a) - 0.5 * zb * zb - anp.log(sig_b))
            for j in range(5):
                r = (y[i][j] - alpha[i] - beta[i] * (XS[j] - 22.0)) / sig_y
                lp = lp + (-0.5 * r * r - anp.log(sig_y))
        return lp

    def a_logistic(w, X, y):
        p = asp.expit(anp.dot(X, w))
        return anp.sum(y * anp.log(p) + (1 - y) * anp.log1p(-p))

    g_sin, g_rats, g_log = (autograd.grad(a_sin), autograd.grad(a_rats, 0),
                            autograd.grad(a_logistic))
    return {"sin": g_sin, "rats": g_rats, "logistic": g_log}


def _jax_scalar_loops(jnp):
    """The sin loop and the scalar Rats log density written with ``jnp``."""
    def j_sin(x):
        s = 0.0
        for i in range(200):
            s = s + jnp.sin(x * i)
        return s

    def j_rats(alpha, beta, mu_a, mu_b, sig_a, sig_b, sig_y, y):
        lp = 0.0
        for i in range(len(y)):
            za = (alpha[i] - mu_a) / sig_a
            zb = (beta[i] - mu_b) / sig_b
            lp = lp + (-0.5 * za * za - jnp.log(sig_a) - 0.5 * zb * zb - jnp.log(sig_b))
            for j in range(5):
                r = (y[i][j] - alpha[i] - beta[i] * (XS[j] - 22.0)) / sig_y
                lp = lp + (-0.5 * r * r - jnp.log(sig_y))
        return lp
    return j_sin, j_rats


def jax_methods():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    j_sin, j_rats = _jax_scalar_loops(jnp)

    def j_logistic(w, X, y):
        p = jax.nn.sigmoid(X @ w)
        return jnp.sum(y * jnp.log(p) + (1 - y) * jnp.log1p(-p))

    with jax.disable_jit():
        g_sin, g_rats, g_log = jax.grad(j_sin), jax.grad(j_rats, 0), jax.grad(j_logistic)

    def eager(g):
        def run(*args):
            with jax.disable_jit():
                return g(*args)
        return run
    return {"sin": eager(g_sin), "rats": eager(g_rats), "logistic": eager(g_log)}


def jax_jit_scalar_methods():
    """``jax.jit(value_and_grad)`` of the scalar loops (traced once, unrolled by XLA), the
    gradient back in numpy; ``compile_seconds[case]``: wall time of the first call of a fresh
    jit (tracing plus XLA compilation), what dcgraph's compile time compares with."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    j_sin, j_rats = _jax_scalar_loops(jnp)

    def numpy_out(vg):
        def run(*args):
            value, g = vg(*args)
            return float(value), jax.tree_util.tree_map(np.asarray, g)
        return run
    data = make_data()
    out, seconds = {}, {}
    for case, fn in (("sin", j_sin), ("rats", j_rats)):
        t0 = time.perf_counter()
        numpy_out(jax.jit(jax.value_and_grad(fn)))(*data[case])
        seconds[case] = time.perf_counter() - t0
        out[case] = numpy_out(jax.jit(jax.value_and_grad(fn)))
    out["compile_seconds"] = seconds
    return out


def jax_jit_methods():
    """``jax.jit(value_and_grad)`` for the sampler cases, with the gradient back in numpy."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    def j_rats_vec(th, y):
        alpha, beta, mu_a, mu_b = th[0:30], th[30:60], th[60], th[61]
        log_sa, log_sb, log_sy = th[62], th[63], th[64]
        za = (alpha - mu_a) / jnp.exp(log_sa)
        zb = (beta - mu_b) / jnp.exp(log_sb)
        r = (y - alpha[:, None] - beta[:, None] * XV) / jnp.exp(log_sy)
        return (-0.5 * jnp.sum(za * za) - 30 * log_sa - 0.5 * jnp.sum(zb * zb) - 30 * log_sb
                - 0.5 * jnp.sum(r * r) - 150 * log_sy)

    def numpy_out(vg):
        def run(*args):
            value, g = vg(*args)
            return float(value), np.asarray(g)
        return run
    vg_rats = numpy_out(jax.jit(jax.value_and_grad(j_rats_vec)))
    vg_quad = numpy_out(jax.jit(jax.value_and_grad(lambda q: -0.5 * q @ q)))
    return {"rats_vec": vg_rats, "quad": vg_quad}


def torch_methods():
    try:
        import torch
    except ImportError:
        return None

    def t_sin(x):
        x = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        s = torch.zeros((), dtype=torch.float64)
        for i in range(200):
            s = s + torch.sin(x * i)
        s.backward()
        return x.grad

    def t_rats(alpha, beta, mu_a, mu_b, sig_a, sig_b, sig_y, y):
        a = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in alpha]
        lp = torch.zeros((), dtype=torch.float64)
        for i in range(len(y)):
            za = (a[i] - mu_a) / sig_a
            zb = (beta[i] - mu_b) / sig_b
            lp = lp + (-0.5 * za * za - math.log(sig_a) - 0.5 * zb * zb - math.log(sig_b))
            for j in range(5):
                r = (y[i][j] - a[i] - beta[i] * (XS[j] - 22.0)) / sig_y
                lp = lp + (-0.5 * r * r - math.log(sig_y))
        lp.backward()
        return [v.grad for v in a]

    def t_logistic(w, X, y):
        wt = torch.tensor(w, requires_grad=True)
        Xt, yt = torch.from_numpy(X), torch.from_numpy(y)
        p = torch.sigmoid(Xt @ wt)
        (yt * torch.log(p) + (1 - yt) * torch.log1p(-p)).sum().backward()
        return wt.grad
    return {"sin": t_sin, "rats": t_rats, "logistic": t_logistic}


# -- timing -----------------------------------------------------------------------------------
PLAIN = {"sin": sin_loop, "sin_list": sin_list, "rats": rats_logp, "logistic": logistic, "rats_vec": rats_vec,
         "quad": quad, "params_list": rats_params, "params_array": rats_params}
BATCH = {"sin": 20, "sin_list": 20, "rats": 5, "logistic": 5, "rats_vec": 100, "quad": 500,
         "params_list": 20, "params_array": 20}
SAMPLER_CASES = ("rats_vec", "quad", "params_list", "params_array")


def dcgraph_parts(case):
    f = PLAIN[case]
    compiled, traced = ad.grad(f), ad.grad(f)
    traced.compiled.enabled = False
    if case in SAMPLER_CASES:              # what samplers call, and only that
        return {"dcgraph.value_and_grad (compiled)": ad.value_and_grad(f)}

    def record(*args):
        return dcgraph.track(f, *args)

    def build(*args):
        _, tape = dcgraph.track(f, *args)
        return tape.nodes
    return {"dcgraph.grad (compiled)": compiled, "dcgraph.grad (traced)": traced,
            "  record (track)": record, "  record+build tape": build}


def compile_cost(case, args, clock) -> float:
    """Seconds to compile the path of one traced call (paid once per path)."""
    _, tape = dcgraph.track(PLAIN[case], *args)
    tape.nodes
    t0 = clock()
    compile_gradient(tape, [tape.arguments[0]], args)
    return clock() - t0


def sweep_only(case, args):
    """A callable timing only the backward sweep over an already built tape."""
    f = PLAIN[case]
    _, tape = dcgraph.track(f, *args)
    tape.nodes
    wrt = {tape.arguments[0]}

    def sweep(*_):
        Sweep(tape, wrt=wrt).run(tape, 1.0)
    return sweep


def measure(rounds: int, clock=time.process_time, cases=tuple(PLAIN)):
    data = make_data()
    others = {"autograd.grad": autograd_methods(), "jax.grad (eager)": jax_methods(),
              "torch backward": torch_methods(), "jax.jit(value_and_grad)": jax_jit_methods(),
              "jax.jit(value_and_grad) scalar": jax_jit_scalar_methods()}
    results = {}
    for case, args in data.items():
        if case not in cases:
            continue
        methods = {"f": PLAIN[case]}
        methods.update(dcgraph_parts(case))
        if case not in SAMPLER_CASES:
            methods["  backward sweep"] = sweep_only(case, args)
        for name, table in others.items():
            if table is not None and case in table:
                methods[name] = table[case]
        for _ in range(2):                   # warm up (code caches, jax dispatch, compiling)
            for fn in methods.values():
                fn(*args)
        cache = (methods.get("dcgraph.grad (compiled)")
                 or methods["dcgraph.value_and_grad (compiled)"]).compiled
        if cache.reason is not None or cache.stats["compiles"] != 1:
            raise RuntimeError(f"{case}: the compiled path is not in use: {cache.reason}")
        best = {name: math.inf for name in methods}
        for _ in range(rounds):
            for name, fn in methods.items():
                n = BATCH[case] if name != "jax.grad (eager)" and name != "autograd.grad" \
                    else max(1, BATCH[case] // 5)
                t0 = clock()
                for _ in range(n):
                    fn(*args)
                best[name] = min(best[name], (clock() - t0) / n)
        if cache.stats["traces"] != 2 or cache.stats["guard_failures"]:
            raise RuntimeError(f"{case}: the compiled path was left: {cache.stats}")
        compiling = min(compile_cost(case, args, clock) for _ in range(3))
        jit_table = others["jax.jit(value_and_grad) scalar"]
        jit_compile = jit_table["compile_seconds"].get(case) if jit_table else None
        results[case] = (best, {k: v is None for k, v in others.items()
                                if (k == "jax.jit(value_and_grad)") == (case in SAMPLER_CASES)},
                         (compiling, jit_compile))
    return results


def report(results, rounds, clock_name):
    print(f"dcgraph.grad vs f  (python {platform.python_version()}, numpy {np.__version__}, "
          f"{rounds} interleaved rounds, min per call, {clock_name} time)")
    titles = {"sin": "scalar loop, math.sin x 200",
              "sin_list": "the same terms in a list (comprehension, append, try/except)", "rats": "Rats-style scalar loops, 30 x 5",
              "logistic": "logistic regression, 20000 x 10",
              "rats_vec": "value_and_grad: vectorised Rats log density, one 65-vector",
              "quad": "value_and_grad: -0.5 * q @ q over 100 values (the fixed cost)",
              "params_list": "value_and_grad: Rats scalar code, 65 parameters in a list",
              "params_array": "value_and_grad: the same code, 65 parameters in an array"}
    for case, (best, missing, (compiling, jit_compile)) in results.items():
        base = best["f"]
        jit = best.get("jax.jit(value_and_grad)")
        print(f"\n{titles[case]}: f = {base * 1e6:.1f} us")
        for name, t in best.items():
            if name == "f":
                continue
            vs_jit = f"  {t / jit:>6.2f} x jax.jit" if jit else ""
            print(f"  {name:<34} {t * 1e6:>10.1f} us  {t / base:>7.2f} x f{vs_jit}")
        if case == "quad":
            vg = best["dcgraph.value_and_grad (compiled)"]
            print(f"  fixed cost per call (value_and_grad - f): {(vg - base) * 1e6:.2f} us")
        for name, absent in missing.items():
            if absent:
                print(f"  {name:<34} {'not installed':>10}")
        print(f"  (compiling the path, once: {compiling * 1e3:.1f} ms"
              + (f"; jax.jit(value_and_grad) first call: {jit_compile:.2f} s wall)"
                 if jit_compile is not None else ")"))
    if "params_list" in results and "params_array" in results:
        name = "dcgraph.value_and_grad (compiled)"
        ratio = results["params_list"][0][name] / results["params_array"][0][name]
        print(f"\n65 parameters in a list vs in an array (value_and_grad): {ratio:.2f} x")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--cases", default=",".join(PLAIN),
                   help="comma-separated subset of: " + ", ".join(PLAIN))
    p.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = p.parse_args(argv)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    name = "process CPU" if args.clock == "cpu" else "wall"
    cases = tuple(c.strip() for c in args.cases.split(",") if c.strip())
    unknown = [c for c in cases if c not in PLAIN]
    if unknown:
        p.error(f"unknown case(s) {', '.join(unknown)}; choose from {', '.join(PLAIN)}")
    report(measure(args.rounds, clock, cases), args.rounds, name)


if __name__ == "__main__":
    sys.exit(main())
