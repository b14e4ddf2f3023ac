"""The call that compiles a path answers with the compiled code: from then on the same input
gives the same bits, and with ``compile_after = 1`` (what the sampling layers set) every call
does, so a seeded sampler repeats its draws on a warm function."""
import math

import numpy as np

import dcgraph

_T = np.random.default_rng(5).uniform(1, 100, 10)
_XS = np.random.default_rng(5).integers(1, 20, 10).astype(float)


def pumps_like(w):
    """Pumps' log density by hand: here the traced sweep and the compiled code sum the
    adjoint of ``w[11]`` in different orders (one ulp apart at the point below)."""
    theta, a, b = np.exp(w[:10]), np.exp(w[10]), np.exp(w[11])
    lp = np.sum(_XS * np.log(theta * _T) - theta * _T)
    lp = lp + np.sum(a * np.log(b) + (a - 1) * np.log(theta) - b * theta) + 10 * -math.lgamma(a)
    lp = lp + (-a + w[10]) + (-1.0 * b + w[11])
    return lp + np.sum(w[:10])


POINT = np.random.default_rng(1).standard_normal(12)


def _bits(out):
    value, grad = out
    return float(value), np.asarray(grad).tobytes()


def test_the_compiling_call_answers_as_later_calls():
    vg = dcgraph.value_and_grad(pumps_like)
    first, second, third = (vg(POINT) for _ in range(3))
    assert vg.compiled.stats["compiles"] == 1 and vg.compiled.stats["hits"] == 1
    assert _bits(second) == _bits(third)
    # the first call (traced, not compiled yet) is the sweep's: equal to 1e-12, not bitwise
    np.testing.assert_allclose(first[1], third[1], rtol=1e-12)


def test_compile_after_one_gives_the_same_bits_from_the_first_call():
    vg = dcgraph.value_and_grad(pumps_like)
    vg.compiled.compile_after = 1
    outs = [_bits(vg(POINT)) for _ in range(3)]
    assert vg.compiled.stats == {"hits": 2, "traces": 1, "compiles": 1, "guard_failures": 0,
                                 "errors": 0}
    assert outs[0] == outs[1] == outs[2]
    fresh = dcgraph.value_and_grad(pumps_like)
    fresh.compiled.compile_after = 1
    assert _bits(fresh(POINT)) == outs[0]


def test_the_sweep_and_compiled_code_differ_here():
    """The point above is one where the two answers differ, so the tests above can fail."""
    vg = dcgraph.value_and_grad(pumps_like)
    vg.compiled.enabled = False
    swept = _bits(vg(POINT))
    compiled = dcgraph.value_and_grad(pumps_like)
    compiled.compiled.compile_after = 1
    assert swept != _bits(compiled(POINT))


def test_infer_autogradient_answers_the_same_bits_from_its_first_call():
    """Chains run one after another in a process share the target: the second chain must not
    start from other bits than the first (or than a chain run in its own process)."""
    from dcgraph.infer.target import AutoGradient
    g = AutoGradient(pumps_like)
    outs = [_bits(g(POINT)) for _ in range(3)]
    assert outs[0] == outs[1] == outs[2]
