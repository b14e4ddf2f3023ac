"""Inline forms (``dcgraph.compiled.inline.definline``): a registered form writes a call as
code; its guard sends other arguments back to tracing; a form returning None keeps the call;
a callee read from a guarded global is called without a second identity test."""
import math

import pytest

import dcgraph
from dcgraph.compiled import GuardFailed, compile_path
from dcgraph.compiled.inline import INLINE_FORMS, definline


def ldexp_form(site):
    """``ldexp(x, k)`` for the recorded int ``k`` only: ``x * 2.0 ** k`` written out (exact)."""
    k = site.node.args[1]
    if type(k.value) is not int:
        return None
    lines = [] if site.known(k) else [site.guard(f"{site.args[1]} != {site.literal(k.value)}")]
    factor = site.literal(math.ldexp(1.0, k.value))
    return lines + [f"v{site.k} = {site.args[0]} * {factor}"], f"v{site.k}", None


def uses_ldexp(x, k):
    return math.sin(math.ldexp(x, k)) + math.ldexp(x, 3)


@pytest.fixture
def ldexp_inline():
    definline(math.ldexp, ldexp_form)
    try:
        yield
    finally:
        INLINE_FORMS.pop(math.ldexp)


EXPECTED = """\
def compiled(_a, _kw):
    try:
        v0 = _a[0]
        v1 = _a[1]
        if v1 != 2: raise _GF(2)
        v1 = v0 * 4.0
        v3 = sin(v1)
        v1 = v0 * 8.0
        v0 = v3 + v1
        return v0
    except StopIteration:           # an iterator ran out early
        raise _GF(-1) from None
"""


def test_an_inline_form_writes_the_call_as_code_and_guards_its_arguments(ldexp_inline):
    _, tape = dcgraph.track(uses_ldexp, 0.7, 2)
    tape.lint()
    cp = compile_path(tape, (0.7, 2))
    assert cp.source == EXPECTED
    assert cp((0.7, 2), {}) == uses_ldexp(0.7, 2)
    assert cp((1.3, 2), {}) == math.sin(5.2) + 10.4
    with pytest.raises(GuardFailed):              # k is guarded equal to the recorded 2
        cp((0.7, 5), {})


def test_a_form_returning_none_keeps_the_call(ldexp_inline):
    _, tape = dcgraph.track(uses_ldexp, 0.7, True)  # a bool k: the form declines
    cp = compile_path(tape, (0.7, True))
    assert cp.source.count("ldexp(") == 1           # the call with k = 3 is inlined
    assert cp((0.9, True), {}) == uses_ldexp(0.9, True)


def test_gradients_through_an_inlined_call_equal_the_traced_sweep(ldexp_inline):
    fast = dcgraph.value_and_grad(uses_ldexp, argnums=0)
    for x in (0.7, 0.7, 0.7, 1.1):
        v, g = fast(x, 2)
        assert v == uses_ldexp(x, 2)
        assert g == pytest.approx(4.0 * math.cos(4.0 * x) + 8.0, rel=1e-15)
    assert fast.compiled.stats["hits"] >= 2
    v, g = fast(0.7, 1)                               # the guard fails: traced again
    assert v == uses_ldexp(0.7, 1) and g == pytest.approx(2 * math.cos(1.4) + 8.0, rel=1e-15)
    assert fast.compiled.stats["guard_failures"] >= 1


def scaled(x, k):
    return x * k


def uses_scaled(x, k):
    return math.sin(scaled(x, k)) + scaled(x, 3)


def test_a_global_callee_is_tested_once_where_it_is_read():
    _, tape = dcgraph.track(uses_scaled, 0.7, 2)        # traced into: its name is guarded
    cp = compile_path(tape, (0.7, 2))
    assert cp.source.count("is not scaled") == 1
    assert cp((0.4, 2), {}) == uses_scaled(0.4, 2)


def fabs_form(site):
    """``fabs(y[i])`` of a float64 vector's item: ``abs(float(y[i]))``, the vector's type guarded
    once; a line after the forward code re-traces when the total is NaN."""
    guards = site.typed_item(site.node.args[0])
    if guards is None:
        return None
    if site.once("total test"):
        ret = site.code.tape.returned.inputs[0]
        site.closing(lambda: [f"if {site.code.v(ret)} != {site.code.v(ret)}: raise _GF(-2)"])
    return guards + [f"v{site.k} = abs({site.bind(float, '_float')}({site.args[0]}))"], \
        f"v{site.k}", "typed"


def uses_fabs(y):
    return math.fabs(y[0]) + math.fabs(y[-1])


EXPECTED_FABS = """\
def compiled(_a, _kw):
    try:
        v0 = _a[0]
        v1 = v0[0]
        if _type(v0) is not _ndarray or v0.ndim != 1 or v0.dtype != _F8: raise _GF(2)
        v2 = abs(_float(v1))
        v1 = v0[(-1)]
        v0 = abs(_float(v1))
        v1 = v2 + v0
        if v1 != v1: raise _GF(-2)
        return v1
    except StopIteration:           # an iterator ran out early
        raise _GF(-1) from None
"""


def test_a_vector_read_is_typed_by_one_guard_and_closing_lines_follow_the_forward_code():
    import numpy as np
    definline(math.fabs, fabs_form)
    try:
        y = np.array([-1.5, 2.0, -0.25])
        _, tape = dcgraph.track(uses_fabs, y)
        tape.lint()
        cp = compile_path(tape, (y,))
    finally:
        INLINE_FORMS.pop(math.fabs)
    assert cp.source == EXPECTED_FABS               # no type guard after each read
    assert cp((y,), {}) == 1.75 and type(cp((y,), {})) is float
    assert cp((np.array([3.0, -4.0]),), {}) == 7.0
    for other in (y.astype(np.float32), y.reshape(1, 3), [1.0, 2.0]):
        with pytest.raises(GuardFailed):
            cp((other,), {})
    with pytest.raises(GuardFailed):                 # the closing line
        cp((np.array([np.nan, 1.0]),), {})


def closure_reading(k):
    def f(x):
        return x * k
    return f


def test_cells_a_function_names_fixed_are_read_once_and_others_each_call():
    from dcgraph.compiled.plan import FIXED_CELLS
    plain, fixed = closure_reading(3.0), closure_reading(3.0)
    setattr(fixed, FIXED_CELLS, frozenset({"k"}))
    paths = []
    for f in (plain, fixed):
        _, tape = dcgraph.track(f, 2.0)
        tape.lint()
        paths.append(compile_path(tape, (2.0,), f=f))
        assert paths[-1]((5.0,), {}) == 15.0
    assert paths[0].source.count(".cell_contents") == 1
    assert ".cell_contents" not in paths[1].source
    plain.__closure__[0].cell_contents = 4.0          # a rebound cell: its guard fails
    with pytest.raises(GuardFailed):
        paths[0]((5.0,), {})
