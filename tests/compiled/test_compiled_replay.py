"""Compiled replay (``dcgraph.compiled``) of lists built on the path and caught exceptions:
the same values and gradients as trace-and-sweep (and central differences), guards that send
another path back to tracing, reasons for what does not compile, no user text in the code."""
import ast
import math
import re

import pytest

import dcgraph
from dcgraph import ad
from dcgraph.compiled import GuardFailed, NotCompilable, compile_path, why_not


class Odd(Exception):
    pass


def appends(x, y):
    xs = []
    for i in range(6):
        xs.append(math.sin(x * i) * y)
    return sum(xs) + xs[-1] * xs[2] - xs[-3]


def comprehension(x, y):
    zs = [x * w for w in [1.0, 2.0, 3.0]]
    ws = [math.exp(z) * y for z in zs if z > 1.0]       # the filter depends on x
    return sum(ws) + zs[1] * len(ws)


def extend_and_index(x, y):
    a = [x, 2.0 * y]
    b = []
    b.extend(a)
    b.extend((x * x, 3.0))
    b.append(b[1] * b[-1])
    return b[0] * b[-1] + b[1] * b[2] + len(b)


def nested(x, y):
    rows = [[x * i + y * j for j in range(3)] for i in range(3)]
    return sum([r[1] * r[2] for r in rows]) + rows[2][0]


def check(x):
    if x > 0.5:
        raise Odd("big")
    return x


def caught(x, y):
    try:
        z = check(x) * y                  # raises for x > 0.5: the handler is the path
    except (KeyError, Odd):
        z = -x * y * y
    try:
        if y > 2.0:
            raise ValueError("y")
        z = z + math.cos(y)
    except ValueError:
        z = z * 2.0
    finally:
        z = z + x
    return z


def caught_in_loop(x, y):
    total, kept = 0.0, []
    for i in range(5):
        try:
            total = total + check(x * i) * y
        except Odd:
            kept.append(x * i)
    return total + sum(kept) * y


def raises_class(x, y):
    s, terms = 0.0, [y]
    for i in range(4):
        try:
            if x * i > 1.0:
                raise ArithmeticError            # a class: the instance is made by raise
            terms.append(x * y * i)
        except ArithmeticError:
            s = s - y
    return s + sum(terms)


CASES = [(raises_class, (0.45, 1.2)), (appends, (0.3, 1.7)), (comprehension, (0.8, 1.3)), (extend_and_index, (0.7, 1.1)),
         (nested, (0.4, 0.9)), (caught, (0.9, 1.5)), (caught, (0.2, 2.5)),
         (caught_in_loop, (0.3, 0.8))]
IDS = [f"{f.__name__}{args}" for f, args in CASES]


def pair(f):
    fast, plain = ad.value_and_grad(f, (0, 1)), ad.value_and_grad(f, (0, 1))
    plain.compiled.enabled = False
    return fast, plain


def central(f, args, i, h=1e-6):
    up, down = list(args), list(args)
    up[i] += h
    down[i] -= h
    return (f(*up) - f(*down)) / (2 * h)


@pytest.mark.parametrize("f, args", CASES, ids=IDS)
def test_compiled_equals_trace_and_sweep_and_finite_differences(f, args):
    _, tape = dcgraph.track(f, *args)
    tape.lint()
    assert why_not(tape) is None
    fast, plain = pair(f)
    for s in (1.0, 1.0, 1.0, 1.0 + 1e-3, 1.0 - 1e-3):    # compiled from the second call
        new = tuple(a * s for a in args)
        (v1, g1), (v2, g2) = fast(*new), plain(*new)
        assert v1 == pytest.approx(f(*new), rel=1e-13) and v1 == pytest.approx(v2, rel=1e-13)
        assert g1 == pytest.approx(g2, rel=1e-12)
        assert g1 == pytest.approx([central(f, new, i) for i in (0, 1)], rel=1e-6, abs=1e-8)
    stats = fast.compiled.stats
    assert fast.compiled.reason is None, fast.compiled.reason
    assert stats["compiles"] == 1 and stats["hits"] == 3 and stats["guard_failures"] == 0


@pytest.mark.parametrize("f, args", CASES, ids=IDS)
def test_forward_only_code_gives_the_value(f, args):
    _, tape = dcgraph.track(f, *args)
    cp = compile_path(tape, args)
    assert cp(args, {}) == f(*args)
    new = tuple(a * (1.0 + 1e-3) for a in args)
    assert cp(new, {}) == f(*new)
    assert "raise Odd" not in cp.source and "for " not in cp.source


@pytest.mark.parametrize("f, first, other", [
    (caught, (0.9, 1.5), (0.2, 1.5)),            # check(x) no longer raises
    (caught, (0.2, 1.5), (0.9, 1.5)),            # now it does
    (caught, (0.2, 1.5), (0.2, 2.5)),            # the raise in the same frame happens
    (comprehension, (0.8, 1.3), (0.3, 1.3)),     # the filter keeps fewer items
    (caught_in_loop, (0.3, 0.8), (0.1, 0.8)),    # fewer iterations raise
    (raises_class, (0.45, 1.2), (0.2, 1.2)),     # raise SomeClass no longer reached
], ids=["stops-raising", "starts-raising", "same-frame", "filter", "loop", "class"])
def test_a_path_change_fails_a_guard_and_falls_back(f, first, other):
    _, tape = dcgraph.track(f, *first)
    cp = compile_path(tape, first)
    with pytest.raises(GuardFailed):
        cp(other, {})
    fast, plain = pair(f)
    for args in (first, first, first, other, other, other, first):
        (v1, g1), (v2, g2) = fast(*args), plain(*args)
        assert v1 == pytest.approx(v2, rel=1e-12) and g1 == pytest.approx(g2, rel=1e-12)
    stats = fast.compiled.stats
    assert stats["guard_failures"] >= 1 and stats["compiles"] == 2 and stats["hits"] >= 3


def sqrt_or_square(x):
    try:
        return math.sqrt(x - 10.0)
    except ValueError:
        return x * x


def grows_a_dict(x):
    d = {}
    d["k"] = x * x
    return d["k"]


def reads_then_grows(x):
    xs = [x]
    s = sum(xs)
    xs.append(s * x)
    return s * xs[1]


def raising(x):
    raise Odd(x)


def _at(f, text):
    """``file:line: text`` of the line of ``f`` holding ``text``."""
    code = f.__code__
    with open(code.co_filename) as fh:
        lines = fh.read().splitlines()
    n = next(i for i in range(code.co_firstlineno - 1, len(lines)) if text in lines[i]) + 1
    return f"{code.co_filename}:{n}: {lines[n - 1].strip()}"


def test_reasons_name_what_does_not_compile():
    def reason(f, *args):
        _, tape = dcgraph.track(f, *args)
        text = why_not(tape)
        with pytest.raises(NotCompilable) as exc:
            compile_path(tape, args)
        assert str(exc.value) == text
        return re.sub(r"\[L\d+\] ", "", text)

    assert reason(sqrt_or_square, 2.0) == (
        "an exception was caught whose raising call is not recorded (raised by an untraced "
        "call or as a class) (@2: Constant exception = ValueError('math domain error') at "
        f"{_at(sqrt_or_square, 'math.sqrt')})")
    assert reason(grows_a_dict, 2.0) == (
        "container mutation other than append/extend of a list built in the call "
        f"(@3: @1['k'] = @2 ⇒ {{'k': 4.0}} at {_at(grows_a_dict, 'd[')})")
    with pytest.raises(Odd):
        dcgraph.track(raising, 1.0)


def test_a_rule_reading_a_list_that_grows_later_is_refused_and_traced():
    fast, plain = pair(lambda x, y: reads_then_grows(x) * y)
    for x in (1.5, 1.6, 1.7):
        (v1, g1), (v2, g2) = fast(x, 2.0), plain(x, 2.0)
        assert v1 == pytest.approx(v2, rel=1e-12) and g1 == pytest.approx(g2, rel=1e-12)
    assert fast.compiled.reason.startswith("a rule reads a list that grows afterwards")
    # s = x, so the value is x^3 * y: d/dx = 3 x^2 y
    assert fast(1.5, 2.0)[1][0] == pytest.approx(3 * 1.5 ** 2 * 2.0, rel=1e-12)


GENERATED = re.compile(r"(_[A-Za-z0-9_]*|[vg]\d+(_\d+)?|c(_\d+)?|compiled)$")


def odd_names(x, **kw):
    table = {"we'ird key": x, "__import__('os')": 2.0}
    return x * kw["sp ace\"q"] + table["we'ird key"] * table["__import__('os')"]


def test_generated_code_holds_no_text_of_the_users():
    kwargs = {"sp ace\"q": 3.0}
    _, tape = dcgraph.track(odd_names, 1.5, **kwargs)
    for cp in (compile_path(tape, (1.5,), kwargs),
               ad.compiled.compile_gradient(tape, None, (1.5,), kwargs)):
        for text in ("we'ird", "sp ace", "import", "os"):
            assert text not in cp.source
        bound = set(cp._fn.__globals__)
        for node in ast.walk(ast.parse(cp.source)):
            if isinstance(node, ast.Constant):
                assert type(node.value) in (int, float, bool, type(None)), node.value
            if isinstance(node, ast.Name):
                assert GENERATED.match(node.id) or node.id in bound | {"StopIteration"}, node.id
    assert compile_path(tape, (1.5,), kwargs)((2.0,), kwargs) == odd_names(2.0, **kwargs)


def loop_of(x, n):
    s = 0.0
    for i in range(n):
        s = s + math.sin(x * i)
    return s


def test_a_loop_over_a_computed_range_is_unrolled_with_its_bound_guarded():
    _, tape = dcgraph.track(loop_of, 0.3, 4)
    cp = compile_path(tape, (0.3, 4))
    assert "_next" not in cp.source and "!= 4: raise _GF" in cp.source
    assert cp((0.5, 4), {}) == loop_of(0.5, 4)
    for n in (3, 5, 0):
        with pytest.raises(GuardFailed):
            cp((0.5, n), {})
    g, plain = ad.value_and_grad(loop_of), ad.value_and_grad(loop_of)
    plain.compiled.enabled = False
    for n in (4, 4, 4, 5, 5, 5, 4):
        assert g(0.7, n) == plain(0.7, n)


def make_scaler(k):
    def scale(x):
        return x * k

    def set_k(value):
        nonlocal k
        k = value
    return scale, set_k


TWO = 2.0
SCALE_A, SET_A = make_scaler(TWO)
SCALE_B, SET_B = make_scaler(TWO)         # same code, same object in another cell


def both_scales(x):
    return SCALE_A(x) + SCALE_B(x)


def test_closure_cells_of_one_code_object_are_guarded_each():
    _, tape = dcgraph.track(both_scales, 1.5)
    cp = compile_path(tape, (1.5,))
    assert cp((1.5,), {}) == 6.0
    SET_B(3.0)
    try:
        with pytest.raises(GuardFailed):
            cp((1.5,), {})
    finally:
        SET_B(TWO)


def test_structure_key_describes_lists_by_length_not_items():
    """Lists and tuples are described by type and length only (the compiled code guards the
    items it reads: ``tests/ad/test_grad_compiled_keys.py``); arrays by shape and dtype, dicts
    by keys and values, scalars by type."""
    import numpy as np
    from dcgraph.compiled.plan import structure, structure_key
    rows = [[1.0, 2.0], [3.0, np.float64(4.0)], [5.0, 6.0]]
    key = structure_key((rows, 0.5), {})
    assert key == ((list, 3), float)
    assert key == structure_key(([[7.0], (9, True), np.ones(3)], 1.5), {})   # items: not seen
    changed = [[[1.0, 2.0], [3.0, 4.0]], ((1.0, 2.0), (3.0, 4.0), (5.0, 6.0)), [[1.0]] * 4]
    keys = {structure_key((c, 0.5), {}) for c in changed} | {structure_key((rows, 1), {})}
    assert len(keys) == len(changed) + 1 and key not in keys
    assert structure(np.zeros((2, 3), np.float32)) == (np.ndarray, (2, 3), np.dtype(np.float32))
    assert structure({"a": [1.0], "b": 2}) == (dict, ("a", "b"), ((list, 1), int))
    assert structure(np.float32(1.0)) is np.float32 and structure(True) is bool
    assert structure_key((1.0,), {"s": 2.0}) == ((float,), ("s",), (float,))
