"""Writes into existing arrays and through shared memory (once gaps of the tracer: the
gradient through such a write was silently zero). numpy functions that write into an argument
(``np.copyto``, a ufunc's ``out=``) are mutations; a write through a view makes its base a new
version and a read of a view sees writes to its base (``dcgraph.tracer.aliasing``)."""
import numpy as np
import pytest

from dcgraph import ad


def copyto_sum(x):
    a = np.zeros(3)
    np.copyto(a, x)
    return a.sum()


def ufunc_out_sum(x):
    out = np.empty(3)
    np.multiply(x, 2.0, out=out)
    return out.sum()


def test_copyto_gradient():
    assert np.allclose(ad.grad(copyto_sum)(np.ones(3)), 1.0)


def test_ufunc_out_gradient():
    assert np.allclose(ad.grad(ufunc_out_sum)(np.ones(3)), 2.0)


def view_then_write(x):
    a = np.zeros(3)
    v = a[1:]
    a[1] = x          # writes through the base; v sees it
    return v.sum()


def write_through_view(x):
    a = np.zeros(3)
    v = a[1:]
    v[0] = x          # writes through the view; a sees it
    return a.sum()


def test_read_view_after_write_to_base():
    assert ad.grad(view_then_write)(2.0) == 1.0


def test_read_base_after_write_through_view():
    assert ad.grad(write_through_view)(2.0) == 1.0


def rows_updated_in_a_loop(x):
    a = np.zeros((3, 2))
    for i in range(3):
        row = a[i]
        row[0] = x * (i + 1)        # through a fresh view each time
        a[i, 1] = row[0] ** 2       # through the base, reading the view's write
    return a.sum()


def test_rows_written_through_views_in_a_loop():
    # d/dx sum_i (x (i+1) + x^2 (i+1)^2) = 6 + 2 x * 14
    assert np.isclose(ad.grad(rows_updated_in_a_loop)(1.5), 6 + 2 * 1.5 * 14)


def test_unmappable_alias_is_an_error_not_a_silent_zero():
    def fortran(x):
        a = np.zeros((2, 2), order="F")
        v = a[0]
        a[0, 0] = x
        return v.sum()

    with pytest.raises(ad.MissingRuleError, match="positions of one in the other are unknown"):
        ad.grad(fortran)(2.0)
