"""Two-dimensional vectorised runs (``dcgraph.compiled.vector_grid``): a nested loop's unrolled
inner iterations as the columns of ``(n, m)`` arrays. Values equal the plain call's bits,
gradients the traced sweep's (1e-12) and central differences; shapes that do not fit (ragged
inner lengths, carried products) stay exact through the one-dimensional run or scalar code;
changed calls fail guards and retrace."""
import math
import re

import numpy as np
import pytest

import dcgraph
from dcgraph.compiled.vector_blocks import _crossings, inner_blocks

from test_compiled_vectorise import check, pair, source


def rect_sum(xs, ys, c):
    s = 0.0
    for i in range(len(xs)):
        a = xs[i] * c
        for j in range(4):
            s = s + a * ys[j] - 0.5 * math.sin(a + ys[j])
    return s


def row_sums(rows, w):
    total = 0.0
    for i in range(len(rows)):
        r = 0.0
        for j in range(4):
            r = r + rows[i][j] * w
        total = total + r * r
    return total


def ragged(xs, c):
    s = 0.0
    for i in range(len(xs)):
        for j in range(i % 3 + 1):
            s = s + math.sin(c * xs[i] + j)
    return s


def products(xs, c):
    s = 0.0
    for i in range(len(xs)):
        p = 1.0
        for j in range(4):
            p = p * (c + xs[i] * j)
        s = s + p
    return s


def flat_table(t, u, c):
    s = 0.0
    for i in range(20):
        a = u[i] * c
        for j in range(5):
            s = s + (t[5 * i + j] - a) * (t[5 * i + j] - a) / (j + 1.0)
    return s


def grids(code: str) -> list:
    """The ``(n, width)`` tables the 2-D sums of ``code`` accumulate."""
    return [tuple(map(int, m)) for m in re.findall(r"_vx_empty\(\((\d+), (\d+)\)\)", code)]


def fd(f, args, k, i=None, h=1e-6):
    """Central difference of ``f`` in argument ``k`` (item ``i`` of a list argument)."""
    def at(delta):
        a = list(args)
        if i is None:
            a[k] = a[k] + delta
        else:
            a[k] = list(a[k])
            a[k][i] = a[k][i] + delta
        return f(*a)
    return (at(h) - at(-h)) / (2 * h)


def data(seed=0, n=24, m=4):
    rng = np.random.default_rng(seed)
    xs = [float(x) for x in rng.normal(size=n)]
    ys = [float(y) for y in rng.normal(size=m)]
    rows = [[float(v) for v in rng.normal(size=m)] for _ in range(n)]
    return xs, ys, rows


def test_inner_blocks_are_found_from_codes():
    assert inner_blocks([0, 1, 2, 1, 2, 1, 2, 3]) [0] == (1, 2, 3)
    assert inner_blocks([5, 1, 1, 1, 1, 6])[0] == (1, 1, 4)
    assert inner_blocks([0, 1, 2, 3]) == []
    assert inner_blocks([0, 1, -3, 1, -3, 2]) == []          # a barrier is no inner line
    # two rotations of one period-2 stretch: the one whose copies read only their own
    # previous values (``s = s + x``) comes first, not the one cut between x and s
    lines = {0: ("v1", []), 1: ("v2", ["v1"]), 2: ("v3", ["v2"]), 3: ("v4", ["v1"]),
             4: ("v3", ["v3", "v4"]), 5: ("v5", ["v1"]), 6: ("v3", ["v3", "v5"]),
             7: ("v6", ["v3"])}
    codes = [9, 1, 2, 1, 2, 1, 2, 3]
    assert inner_blocks(codes, lines.get)[0] == (1, 2, 3)
    assert _crossings(lines.get, 2, 2, 2) > _crossings(lines.get, 1, 2, 3) == 0


def test_rectangular_loop_reading_outer_values_sums_over_both_indices():
    xs, ys, _ = data()
    fast, plain = pair(rect_sum, (0, 1, 2))
    for scale in (1.0, 1.0, 1.0, 0.5):
        args = ([x * scale for x in xs], ys, 0.7)
        check(fast, plain, rect_sum, args, (0, 1, 2))
    code = source(fast)
    assert any(width == 1 + len(ys) * 2 or width == len(ys) * 2 for _, width in grids(code)) \
        or any(width >= len(ys) for _, width in grids(code)), code
    assert "[:, None]" in code                    # the outer value broadcast over the copies
    assert re.search(r"_vx_acc\(_s1_\d+, 0\)", code)     # adjoints of ys: sums per copy
    assert re.search(r"_vx_acc\(_s1_\d+, 1\)", code)     # the adjoint of a: per group
    assert fast.compiled.stats["guard_failures"] == 0
    _, tape = dcgraph.track(rect_sum, xs, ys, 0.7)
    tape.lint()
    g = fast(xs, ys, 0.7)[1]
    assert abs(g[2] - fd(rect_sum, (xs, ys, 0.7), 2)) < 1e-6 * max(1.0, abs(g[2]))
    assert abs(g[0][5] - fd(rect_sum, (xs, ys, 0.7), 0, 5)) < 1e-6
    assert abs(g[1][3] - fd(rect_sum, (xs, ys, 0.7), 1, 3)) < 1e-6


def test_row_sums_restart_in_every_group_and_feed_an_outer_sum():
    _, _, rows = data(1)
    fast, plain = pair(row_sums, (0, 1))
    for w in (0.3, 0.3, 0.3, -1.25):
        check(fast, plain, row_sums, (rows, w), (0, 1))
    code = source(fast)
    assert "_vx_lengths(" in code and "_vx_acc(_s0_" in code and ", 1)" in code, code
    assert fast.compiled.stats["guard_failures"] == 0
    g = fast(rows, 0.3)[1]
    assert abs(g[1] - fd(row_sums, (rows, 0.3), 1)) < 1e-6 * max(1.0, abs(g[1]))
    _, tape = dcgraph.track(row_sums, rows, 0.3)
    tape.lint()


def test_flat_reads_in_progression_through_both_indices():
    rng = np.random.default_rng(2)
    t = [float(v) for v in rng.normal(size=100)]
    u = [float(v) for v in rng.normal(size=20)]
    fast, plain = pair(flat_table, (0, 1, 2))
    for c in (0.1, 0.1, 0.1, 0.4):
        check(fast, plain, flat_table, (t, u, c), (0, 1, 2))
    code = source(fast)
    assert re.search(r"_r0_\d+ = v0\[\d+:100:1\]", code) and "_vx_empty(" in code, code
    g = fast(t, u, 0.1)[1]
    assert abs(g[2] - fd(flat_table, (t, u, 0.1), 2)) < 1e-6 * max(1.0, abs(g[2]))
    assert abs(g[0][33] - fd(flat_table, (t, u, 0.1), 0, 33)) < 1e-6


def test_ragged_inner_lengths_stay_exact():
    xs, _, _ = data(3, n=48)
    fast, plain = pair(ragged, (0, 1))
    for c in (0.4, 0.4, 0.4, 1.3):
        check(fast, plain, ragged, (xs, c), (0, 1))
    assert fast.compiled.stats["guard_failures"] == 0
    g = fast(xs, 0.4)[1]
    assert abs(g[1] - fd(ragged, (xs, 0.4), 1)) < 1e-6 * max(1.0, abs(g[1]))
    shorter = xs[:47]                            # another ragged shape: traced again
    assert fast(shorter, 0.4)[0] == ragged(shorter, 0.4)


def test_carried_products_are_no_2d_sums_and_stay_exact():
    xs, _, _ = data(4)
    fast, plain = pair(products, (0, 1))
    for c in (0.9, 0.9, 0.9, 1.1):
        check(fast, plain, products, (xs, c), (0, 1))
    g = fast(xs, 0.9)[1]
    assert abs(g[1] - fd(products, (xs, 0.9), 1)) < 1e-6 * max(1.0, abs(g[1]))


def test_changed_rows_fail_guards_and_retrace():
    _, _, rows = data(5)
    fast, plain = pair(row_sums, (0, 1))
    for _ in range(3):
        check(fast, plain, row_sums, (rows, 0.5), (0, 1))
    ints = [list(r) for r in rows]
    ints[7][2] = 3                               # an int where a float was recorded
    check(fast, plain, row_sums, (ints, 0.5), (0, 1))
    longer = [list(r) + [1.0] for r in rows]     # rows of five: items 0-3 still read
    check(fast, plain, row_sums, (longer, 0.5), (0, 1))
    assert fast.compiled.stats["traces"] >= 3


def test_a_zero_divisor_in_the_inner_body_raises_the_plain_error():
    def divided(xs, d):
        s = 0.0
        for i in range(len(xs)):
            for j in range(3):
                s = s + xs[i] / (d - j)
        return s
    xs, _, _ = data(6)
    fast, plain = pair(divided, (0, 1))
    for _ in range(3):
        check(fast, plain, divided, (xs, 5.0), (0, 1))
    assert "_vx_nozero(" in source(fast) or " == 0: raise _GF(" in source(fast)
    with pytest.raises(ZeroDivisionError):
        fast(xs, 2.0)


def test_rows_longer_than_the_inner_loop_are_read_by_items_and_guarded():
    _, _, rows = data(7, m=6)                   # 6 items a row, the loop reads 4
    fast, plain = pair(row_sums, (0, 1))
    for _ in range(3):
        check(fast, plain, row_sums, (rows, 0.25), (0, 1))
    code = source(fast)
    assert "_vx_longer(" in code and "_vk_items" in code, code
    g = fast(rows, 0.25)[1]
    assert abs(g[1] - fd(row_sums, (rows, 0.25), 1)) < 1e-6 * max(1.0, abs(g[1]))
    assert all(gi[4] == 0.0 and gi[5] == 0.0 for gi in g[0])


def test_guard_failures_of_the_2d_read_name_the_inner_read():
    from dcgraph.ad.compiled import compile_gradient
    from dcgraph.compiled import GuardFailed
    _, _, rows = data(8)
    _, tape = dcgraph.track(row_sums, rows, 0.5)
    tape.lint()
    cg = compile_gradient(tape, list(tape.arguments), (rows, 0.5))
    assert "_vx_lengths(" in cg.source
    ints = [list(r) for r in rows]
    ints[7][2] = 3
    longer = [list(r) + [1.0] for r in rows]
    for changed in (ints, longer):
        with pytest.raises(GuardFailed) as failure:
            cg((changed, 0.5), {})
        assert "r = r + rows[i][j] * w" in cg.describe(failure.value)
