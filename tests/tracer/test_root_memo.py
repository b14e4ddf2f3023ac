"""``tracer.roots``: a root decided by an earlier run is taken as decided only while every input
of that decision is the same object; any change decides it again, and the tape is the one a
fresh decision gives."""
import gc
import math
import types

import pytest

import dcgraph
from dcgraph.tracer import recorder, roots
from dcgraph.tracer import run as run_module


class Vec:
    def __init__(self, x):
        self.x = x

    def __mul__(self, other):
        return Vec(self.x * other)

    def __rmul__(self, other):
        return Vec(other * self.x)

    def __add__(self, other):
        return Vec(self.x + other)


K = 3.0
FACTORS = [2.0]


def times_k(x):
    return x * K + math.sin(0.0)


def times_first(x):
    return x * FACTORS[0]


def with_default(x, k=2.0):
    return x * k


def _scans(monkeypatch):
    """Count the operator scans ``Run.root`` makes (one per fresh decision)."""
    scanned = []
    scan = run_module.guards_operators

    def counting(fn, ctx, seen=None):
        scanned.append(fn)
        return scan(fn, ctx, seen)

    monkeypatch.setattr(run_module, "guards_operators", counting)
    return scanned


def _calls(tape):
    return [n.fn for n in tape.nodes if n.kind == "NestedCall"]


def test_a_root_decided_before_is_not_decided_again_and_records_the_same_tape(monkeypatch):
    scanned = _scans(monkeypatch)
    result, first = dcgraph.track(times_k, 2.0)
    before = len(scanned)
    again, second = dcgraph.track(times_k, 2.0)
    assert result == again == 6.0
    assert len(scanned) == before and id(times_k) in roots._ROOTS    # not scanned again
    first.lint()
    second.lint()
    assert str(first) == str(second)
    line = times_k.__code__.co_firstlineno + 1
    assert str(second) == f"""\
@0: Argument x = 2.0
@1: [L{line}] Constant K = 3.0
@2: [L{line}] @0 * @1 = 6.0
@3: [L{line}] sin(0.0) = 0.0
@4: [L{line}] @2 + @3 = 6.0
@5: return @4 = 6.0"""


def test_a_global_rebound_to_an_object_with_operators_is_seen(monkeypatch):
    global K
    dcgraph.track(times_k, 2.0)                  # remembered: K a float
    assert id(times_k) in roots._ROOTS
    K = Vec(3.0)
    try:
        result, tape = dcgraph.track(times_k, 2.0)
    finally:
        K = 3.0
    assert result.x == 6.0
    tape.lint()
    assert _calls(tape) == [Vec.__rmul__, Vec.__add__]   # the guards are on: traced


def test_a_global_the_scan_enters_is_never_remembered():
    dcgraph.track(times_first, 2.0)
    assert id(times_first) not in roots._ROOTS
    FACTORS[0] = Vec(2.0)                        # changed in place: the same list
    try:
        result, tape = dcgraph.track(times_first, 2.0)
    finally:
        FACTORS[0] = 2.0
    assert result.x == 4.0
    tape.lint()
    assert _calls(tape) == [Vec.__rmul__]


def test_new_defaults_and_new_code_are_decided_again():
    dcgraph.track(with_default, 1.0)
    assert id(with_default) in roots._ROOTS
    defaults, code = with_default.__defaults__, with_default.__code__
    try:
        with_default.__defaults__ = (Vec(5.0),)
        result, tape = dcgraph.track(with_default, 2.0)
        assert result.x == 10.0 and _calls(tape) == [Vec.__rmul__]
        tape.lint()
        with_default.__defaults__ = defaults
        with_default.__code__ = (lambda x, k=2.0: x - k).__code__
        result, tape = dcgraph.track(with_default, 2.0)
        assert result == 0.0
        tape.lint()
        assert [n.kind for n in tape.nodes][-1] == "Return" and tape.nodes[-1].value == 0.0
    finally:
        with_default.__defaults__, with_default.__code__ = defaults, code


@pytest.mark.parametrize("change", ["primitive set", "primitive modules", "function attribute",
                                    "patched is_primitive", "instance's is_primitive",
                                    "function's module"])
def test_what_makes_the_root_primitive_is_asked_again(change, monkeypatch):
    ctx = dcgraph.Context()
    dcgraph.track(times_k, 2.0, ctx=ctx)
    assert id(times_k) in roots._ROOTS
    if change == "primitive set":
        ctx.primitive.add(times_k)
    elif change == "primitive modules":
        ctx.primitive_modules = ctx.primitive_modules + (__name__.partition(".")[0],)
    elif change == "function attribute":
        monkeypatch.setattr(times_k, "_dcgraph_vjp", None, raising=False)
    elif change == "patched is_primitive":
        monkeypatch.setattr(dcgraph.Context, "is_primitive", lambda self, fn, depth: True)
    elif change == "function's module":
        monkeypatch.setattr(times_k, "__module__", "numpy.stand_in")
    else:
        ctx.is_primitive = lambda fn, depth: True
    result, tape = dcgraph.track(times_k, 2.0, ctx=ctx)
    assert result == 6.0
    tape.lint()
    assert [n.kind for n in tape.nodes] == ["Argument", "PrimitiveCall", "Return"]


def test_an_entry_goes_with_its_function_and_the_table_is_bounded():
    scope = {"math": math}
    exec("def short_lived(x):\n    return x + math.sin(x)\n", scope)
    fn = scope.pop("short_lived")
    dcgraph.track(fn, 1.0)
    key = id(fn)
    assert key in roots._ROOTS
    del fn
    gc.collect()
    assert key not in roots._ROOTS
    made = []
    for k in range(roots._ROOTS_BOUND + 10):
        exec(f"def f{k}(x):\n    return x + {k}\n", scope)
        made.append(scope[f"f{k}"])
        assert dcgraph.track(made[-1], 1.0)[0] == 1.0 + k
    assert len(roots._ROOTS) <= roots._ROOTS_BOUND
    assert id(made[-1]) in roots._ROOTS and id(made[0]) not in roots._ROOTS


def test_summary_runs_and_guarded_runs_decide_as_before():
    result, tape = dcgraph.track(times_k, 2.0, values="summary")
    assert result == 6.0
    tape.lint()
    result, tape = dcgraph.track(times_k, Vec(2.0))      # guards on from the argument
    assert result.x == 6.0 and _calls(tape) == [Vec.__mul__, Vec.__add__]
    tape.lint()


def test_keyword_defaults_set_later_are_decided_again():
    dcgraph.track(with_default, 1.0)
    assert roots.known(with_default, dcgraph.Context()) is not None
    try:
        with_default.__kwdefaults__ = {}
        assert roots.known(with_default, dcgraph.Context()) is None
    finally:
        with_default.__kwdefaults__ = None
    assert roots.known(with_default, dcgraph.Context()) is not None


def test_a_function_made_where_a_remembered_one_died_is_decided_afresh(monkeypatch):
    """An entry goes as its function dies (the weak reference's callback), so a new function
    given the same id, the same code, globals and module (every input ``known`` tests) is not
    taken for it."""
    scope = {"math": math, "__name__": __name__}
    exec("def reborn(x):\n    return x + math.sin(x)\n", scope)
    code = scope.pop("reborn").__code__
    fn = types.FunctionType(code, scope)
    dcgraph.track(fn, 1.0)
    key = id(fn)
    assert roots.known(fn, dcgraph.Context()) is not None
    del fn
    gc.collect()
    assert key not in roots._ROOTS
    kept = []                       # made until one lands where ``fn`` was
    for _ in range(10_000):
        again = types.FunctionType(code, scope)
        if id(again) == key:
            break
        kept.append(again)
    else:
        pytest.skip("the allocator gave no function the dead one's address")
    assert roots.known(again, dcgraph.Context()) is None
    scanned = _scans(monkeypatch)
    result, tape = dcgraph.track(again, 1.0)
    assert result == 1.0 + math.sin(1.0) and scanned == [again]     # decided afresh
    tape.lint()
