"""A sum whose terms are another line's vector (``t = math.sin(...)``; ``s = s + t``) adds its
initial value into the first term instead of joining it with ``np.concatenate``
(``vector_sums.without_joined_inits``) when nothing else reads that vector; the bits stay
those of the plain left-to-right sum, signed zeros included."""
import math

import numpy as np

import dcgraph
from dcgraph import ad
from dcgraph.ad.compiled import compile_gradient


def zero_terms(x):
    s = 0.0
    for i in range(40):
        t = math.sin(x * i * 0.0)          # -0.0 for x < 0: 0.0 + -0.0 is 0.0
        s = s + t
    return s


def exp_terms(x):
    s = 1.5
    for i in range(40):
        t = math.exp(x * (i + 1) * 0.01)   # the backward pass reads t: no rewrite
        s = s + t
    return s


def code(f, x) -> str:
    _, tape = dcgraph.track(f, x)
    tape.lint()
    return compile_gradient(tape, [tape.arguments[0]], (x,)).source


def pair(f):
    fast, plain = ad.value_and_grad(f), ad.value_and_grad(f)
    plain.compiled.enabled = False
    return fast, plain


def test_unread_terms_take_the_initial_value_in_place_with_the_plain_bits():
    text = code(zero_terms, -0.7)
    assert "_vx_cat" not in text and "[0] += 0.0" in text
    fast, plain = pair(zero_terms)
    for x in (-0.7, -0.7, -0.7, 0.4, -2.0):
        (value, g), (want, g_want) = fast(x), plain(x)
        assert value == want == zero_terms(x) == 0.0
        assert math.copysign(1.0, value) == math.copysign(1.0, zero_terms(x)) == 1.0
        assert g == g_want
    assert fast.compiled.stats["hits"] >= 3 and fast.compiled.stats["guard_failures"] == 0


def test_terms_read_elsewhere_are_joined_and_left_intact():
    text = code(exp_terms, 0.3)
    assert "_vx_acc(_vx_cat(([1.5]," in text
    fast, plain = pair(exp_terms)
    for x in (0.3, 0.3, 0.3, -0.8):
        (value, g), (want, g_want) = fast(x), plain(x)
        assert value == want == exp_terms(x)
        closed = sum(0.01 * (i + 1) * math.exp(x * (i + 1) * 0.01) for i in range(40))
        assert abs(g - g_want) <= 1e-12 * abs(g_want) and abs(g - closed) <= 1e-12 * closed
    assert fast.compiled.stats["hits"] >= 2
    assert np.isfinite(fast(0.3)[1])
