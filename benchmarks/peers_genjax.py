"""GenJAX peer for ``bench_gen.py``: the same models written in GenJAX, jit-compiled, timed in
steady state (compile time reported separately).

Runs under any interpreter that has GenJAX (it needs jax < 0.6 and numpy < 2, so usually a
separate venv); it never imports dcgraph. ``bench_gen.py`` runs it as a subprocess:

    python benchmarks/peers_genjax.py < request.json > result.json

The request holds ``ys`` (19 observations of the 20-choice model), ``xs`` (the HMM's
observations), ``rounds``, ``clock`` ("cpu" or "wall") and ``reps`` (operation -> repetitions).
The result maps "model|operation" to ``{"seconds": steady-state mean per call (min over rounds),
"compile": seconds of the first call}``, plus ``versions``.

Models (as in ``bench_gen.py``): ``twenty`` is a static generative function with the 19-choice
Python loop unrolled at trace time; the HMM is ``z0, x0`` then a ``scan`` combinator over the
remaining steps (a 1,000-step unrolled loop would take XLA minutes to compile); ``update``
is GenJAX's ``Trace.update`` (one compiled call; on the ``scan`` it edits every step's kernel,
re-scoring all 999 steps, i.e. not incremental in the number of steps).
Importance sampling of the normal-normal model (``y = 2``): ``jax.vmap`` of
``GenerativeFunction.importance`` over keys, and one jitted particle per call from Python.
"""
from __future__ import annotations

import json
import sys
import time

TRANS = [[0.9, 0.1], [0.2, 0.8]]
MEANS = [-1.0, 1.0]
INIT = [0.5, 0.5]


def build(ys, xs):
    """The jitted operations {"model|operation": (fn, args)} (each fn returns the new trace to
    Python, as dcgraph does, and the weight if any; the ", score only" variants return just the
    score or weight: the trace stays inside XLA, as in a jitted inference loop), and
    consistency checks {name: value} (update weights against score differences)."""
    import genjax
    import jax
    import jax.numpy as jnp
    from genjax import ChoiceMapBuilder as C

    ys, xs = jnp.asarray(ys), jnp.asarray(xs)
    steps = int(xs.shape[0])
    mid = steps // 2
    log_trans, log_init = jnp.log(jnp.array(TRANS)), jnp.log(jnp.array(INIT))
    means = jnp.array(MEANS)

    @genjax.gen
    def twenty(ys):
        mu = genjax.normal(0.0, 1.0) @ "mu"
        for i in range(ys.shape[0]):
            genjax.normal(mu, 1.0) @ f"y{i}"
        return mu

    @genjax.scan(n=steps - 1)
    @genjax.gen
    def hmm_step(z, _):
        z = genjax.categorical(log_trans[z]) @ "z"
        genjax.normal(means[z], 1.0) @ "x"
        return z, None

    @genjax.gen
    def hmm():
        z = genjax.categorical(log_init) @ "z0"
        genjax.normal(means[z], 1.0) @ "x0"
        return hmm_step(z, None) @ "steps"

    @genjax.gen
    def normal_normal():
        x = genjax.normal(0.0, 1.0) @ "x"
        return genjax.normal(x, 1.0) @ "y"

    obs20 = C.kw(**{f"y{i}": ys[i] for i in range(ys.shape[0])})
    obs_h = C["x0"].set(xs[0]) | C["steps", "x"].set(xs[1:])
    key = jax.random.key(0)
    tr20, _ = jax.jit(twenty.generate)(key, obs20, (ys,))
    trh, _ = jax.jit(hmm.generate)(key, obs_h, ())
    z_mid = trh.get_choices()["steps", mid - 1, "z"]
    flip = C["steps", mid - 1, "z"].set(1 - z_mid)
    move = C["mu"].set(0.3)
    y_obs = C["y"].set(2.0)

    def is_vmap(n):
        def run(k):
            _, w = jax.vmap(lambda kk: normal_normal.importance(kk, y_obs, ()))(
                jax.random.split(k, n))
            return jax.nn.logsumexp(w) - jnp.log(n)
        return jax.jit(run)

    one_particle = jax.jit(lambda k: normal_normal.importance(k, y_obs, ()))
    ops = {
        "20-choice|simulate": (jax.jit(lambda k: twenty.simulate(k, (ys,))), (key,)),
        "20-choice|generate": (jax.jit(lambda k: twenty.generate(k, obs20, (ys,))), (key,)),
        "20-choice|update": (jax.jit(lambda k, tr: tr.update(k, move)[:2]), (key, tr20)),
        "HMM|simulate": (jax.jit(lambda k: hmm.simulate(k, ())), (key,)),
        "HMM|generate": (jax.jit(lambda k: hmm.generate(k, obs_h, ())), (key,)),
        "HMM|update": (jax.jit(lambda k, tr: tr.update(k, flip)[:2]), (key, trh)),
        "20-choice|simulate, score only": (
            jax.jit(lambda k: twenty.simulate(k, (ys,)).get_score()), (key,)),
        "20-choice|generate, score only": (
            jax.jit(lambda k: twenty.generate(k, obs20, (ys,))[1]), (key,)),
        "20-choice|update, score only": (jax.jit(lambda k, tr: tr.update(k, move)[1]),
                                         (key, tr20)),
        "HMM|simulate, score only": (jax.jit(lambda k: hmm.simulate(k, ()).get_score()), (key,)),
        "HMM|generate, score only": (jax.jit(lambda k: hmm.generate(k, obs_h, ())[1]), (key,)),
        "HMM|update, score only": (jax.jit(lambda k, tr: tr.update(k, flip)[1]), (key, trh)),
        "IS|vmap 2000": (is_vmap(2000), (key,)),
        "IS|vmap 20000": (is_vmap(20_000), (key,)),
        "IS|one particle per call": (one_particle, (key,)),
    }
    checks = {}
    for label, tr, c in (("20-choice", tr20, move), ("HMM", trh, flip)):
        new, w, _, _ = jax.jit(lambda k, t, c=c: t.update(k, c))(key, tr)
        checks[f"{label} update weight - score change"] = float(
            w - (new.get_score() - tr.get_score()))
    checks["HMM z changed by update"] = int(new.get_choices()["steps", mid - 1, "z"]) != int(z_mid)
    return ops, checks


def check(ops) -> dict:
    """Log marginal of y = 2 estimated by GenJAX (exact: log N(2; 0, 2) = -2.2655)."""
    import jax
    return {"IS log marginal (20000)": float(ops["IS|vmap 20000"][0](jax.random.key(3)))}


def measure(req: dict) -> dict:
    import genjax
    import jax
    clock = time.process_time if req.get("clock", "cpu") == "cpu" else time.perf_counter
    ops, checks = build(req["ys"], req["xs"])
    out: dict = {"versions": {"genjax": genjax.__version__, "jax": jax.__version__}}
    timings = {}
    for name, (fn, args) in ops.items():
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        timings[name] = {"compile": time.perf_counter() - t0, "seconds": float("inf")}
    for _ in range(req.get("rounds", 5)):
        for name, (fn, args) in ops.items():
            reps = int(req.get("reps", {}).get(name, 200))
            t0 = clock()
            for _ in range(reps):
                r = fn(*args)
            jax.block_until_ready(r)
            t = (clock() - t0) / reps
            timings[name]["seconds"] = min(timings[name]["seconds"], t)
    out["timings"] = timings
    out["check"] = {**checks, **check(ops)}
    return out


if __name__ == "__main__":
    json.dump(measure(json.load(sys.stdin)), sys.stdout)
