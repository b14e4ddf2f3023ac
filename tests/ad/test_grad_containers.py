"""Exact gradients through container writes and reads after them (lists, dicts, arrays,
nested containers, mutation across calls), checked against finite differences and closed forms."""
import numpy as np
import pytest

import dcgraph
from dcgraph import ad


def fill(out, x, n):
    for i in range(n):
        out.append(x * (i + 1))


def callee_mutates_caller_reads(x):
    lst = [x]
    fill(lst, x * x, 3)
    return lst[-1] * lst[1] + lst[0]


def nested_list_writes(x, y):
    m = [[0.0, 0.0], [0.0, 0.0]]
    m[0][1] = x
    m[1][0] += x * y
    m[1][1] = m[0][1] * 2
    row = m[1]
    row[0] *= y
    return m[0][1] * m[1][0] + m[1][1] * row[0]


def read_then_append(x, y):
    lst = [x, y]
    first = lst[-1]           # position 1 now; later appends must not move it
    lst.append(x * y)
    lst.append(y)
    return first * lst[-1] + lst[-2] + len(lst)


def pops_and_removes(x, y):
    lst = [x, y, x * y, x + y, 2.0]
    a = lst.pop(0)
    b = lst.pop()
    lst.remove(y)
    del lst[0]
    lst.insert(0, a * b)
    lst[1:1] = [x, x]
    lst.clear() if False else None
    return lst[0] + lst[1] * lst[-1] + sum(lst)


def slices(x, y):
    lst = [x, y, x * y, x - y]
    lst[1:3] = [y * y]
    part = lst[::-1]
    del lst[:1]
    return part[0] * part[1] + sum(lst) + lst[-1] * 2


def dict_methods(x, y):
    d = {"a": x}
    d.setdefault("b", y * 2)
    d.setdefault("a", 100.0)
    v = d.pop("a")
    d["c"] = v * y
    k, w = d.popitem()
    d.update(e=x, f=y * y)
    return v * w + sum(d.values()) + d.get("e") * d.get("zzz", 3.0)


def array_writes_in_callee(v, s):
    out = np.zeros(3)
    write_into(out, v, s)
    out[2] = out[0] * out[1]
    return out.sum() + out[2]


def write_into(arr, v, s):
    for i in range(2):
        arr[i] = v[i] * s


def array_inplace_ops(v, s):
    a = v.copy()
    a += s
    a *= v
    a[1:] -= 2 * s
    a /= 1.5 + s
    a **= 2
    return a.sum()


def array_fancy_and_mask_writes(v, s):
    a = np.ones(4) * s
    a[[0, 2]] = v[:2] * 2
    a[a > 1.0] = a[a > 1.0] ** 2
    a[np.array([1, 3])] += v[2:]
    return (a * v).sum()


def matrix_rows(a):
    out = np.zeros_like(a)
    for i in range(a.shape[0]):
        out[i] = a[i] * (i + 1)
        out[i, 0] = out[i, 1] * a[i, 2]
    return (out ** 2).sum()


def aliasing_read_before_write(v):
    b = v * 1.0
    c = [b * v, b.sum()]       # the array b before the writes below
    b[0] = 5.0
    b[1] += v[0]
    return c[0].sum() + c[1] + (b * v).sum()


def list_of_arrays(v):
    parts = []
    for i in range(3):
        parts.append(v * (i + 1))
    parts[1] = parts[1] ** 2
    total = np.stack(parts).sum(axis=0)
    return (total * v).sum() + np.concatenate(parts)[-1]


CASES = [
    (callee_mutates_caller_reads, (1.3,)),
    (nested_list_writes, (1.3, 0.7)),
    (read_then_append, (1.3, 0.7)),
    (pops_and_removes, (1.3, 0.7)),
    (slices, (1.3, 0.7)),
    (dict_methods, (1.3, 0.7)),
    (array_writes_in_callee, (np.array([0.5, -1.2, 2.0]), 0.8)),
    (array_inplace_ops, (np.array([0.5, -1.2, 2.0]), 0.8)),
    (array_fancy_and_mask_writes, (np.array([0.9, 0.3, -1.2, 2.0]), 0.8)),
    (matrix_rows, (np.arange(12.0).reshape(4, 3) / 7,)),
    (aliasing_read_before_write, (np.array([0.5, -1.2, 2.0]),)),
    (list_of_arrays, (np.array([0.5, -1.2, 2.0]),)),
]


@pytest.mark.parametrize("f, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_container_code_matches_finite_differences(check, f, args):
    report = check(f, *args, tol=1e-5)
    assert report.worst < 1e-5


def test_element_write_gradient_is_exact():
    # a[i] = v overwrites: the old value must get no gradient, v gets exactly the reads' share
    def f(x, y):
        a = [x, x]
        a[0] = y
        return a[0] * 3.0 + a[1]
    assert ad.grad(f, (0, 1))(2.0, 5.0) == (1.0, 3.0)


def test_read_after_augmented_write_is_exact():
    def f(v):
        a = np.zeros(2)
        a[0] += v[0] * v[1]
        a[0] += v[1]
        return a[0] * a[0]
    v = np.array([2.0, 3.0])
    g = ad.grad(f)(v)
    s = 2.0 * 3.0 + 3.0
    assert np.array_equal(g, np.array([2 * s * 3.0, 2 * s * (2.0 + 1.0)]))


def test_random_array_mutated_after_read_is_an_error():
    def f(v):
        b = np.random.default_rng(0).normal(size=3)
        c = (b * v).sum()       # needs b as it was before the write below
        b[0] = 1.0
        return c + b.sum()
    with pytest.raises(ad.StaleValueError, match="cannot be rebuilt"):
        ad.grad(f)(np.ones(3))


def test_backward_meta_holds_container_adjoints():
    _, tape = dcgraph.track(read_then_append, 1.3, 0.7)
    grads = ad.backward(tape)
    tape.lint()
    assert grads["x"] == pytest.approx(0.7)       # d/dx of (first*y + x*y + 4)
    assert grads["y"] == pytest.approx(2 * 0.7 + 1.3)
    built = tape.find(fn="build_list")[0]
    assert isinstance(built.meta["adjoint"], ad.Sparse)
