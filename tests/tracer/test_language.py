"""Every language corner: traced result equals the plain result, warm (120 runs), tape lints."""
import sys
import types
import threading

import pytest

import dcgraph
from dcgraph import Branch, NestedCall, Phi, PrimitiveCall, Raise

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import corners  # noqa: E402

WARM_RUNS = 120


def _outcome(fn, args):
    try:
        return ("ok", fn(*args))
    except Exception as exc:
        return ("raised", type(exc), str(exc))


@pytest.mark.parametrize("fn,args", corners.ALL, ids=[f"{f.__name__}{a!r}"[:60] for f, a in corners.ALL])
def test_corner_matches_plain_call(fn, args):
    expected = _outcome(fn, args)
    tape = None
    for _ in range(WARM_RUNS):
        result, tape = dcgraph.track(fn, *args)
        assert ("ok", result) == expected
    tape.lint()
    assert len(list(tape.walk())) > len(args)
    assert _outcome(fn, args) == expected, "instrumented code leaked into a plain call"


def test_uncaught_exception_propagates_with_tape_and_frames():
    for _ in range(WARM_RUNS):
        with pytest.raises(ValueError, match="bad 6") as info:
            dcgraph.track(corners.raise_uncaught, 3)
    tape = info.value.tape
    tape.lint()
    assert isinstance(tape[-1], Raise) and tape[-1].value is info.value
    call = tape.find(fn="helper_raises")[0]
    assert isinstance(call, NestedCall) and isinstance(call.child[-1], Raise)
    assert call.child[-1].value is info.value
    names = []
    tb = info.value.__traceback__
    while tb is not None:
        names.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    assert names[-2:] == ["raise_uncaught", "helper_raises"]


def test_exception_caught_in_caller_keeps_both_tapes():
    def caller(x):
        try:
            return corners.helper_raises(x)
        except ValueError as e:
            return "caught " + str(e)

    result, tape = dcgraph.track(caller, 2)
    assert result == "caught bad 4"
    tape.lint()
    nested = tape.find(fn="helper_raises")[0]
    assert isinstance(nested.child[-1], Raise)
    assert isinstance(nested.child[-1].value, ValueError)


def test_generators_are_primitive_calls_with_values():
    _, tape = dcgraph.track(corners.generators, 3)
    calls = tape.find(fn="gen")
    assert calls and all(isinstance(c, PrimitiveCall) and not isinstance(c, NestedCall) for c in calls)


def test_comprehension_is_a_nested_call():
    _, tape = dcgraph.track(corners.comprehensions, [1, 2, 3])
    listcomps = [n for n in tape if isinstance(n, NestedCall) and n.fn_name == "<listcomp>"]
    if sys.version_info >= (3, 12):      # PEP 709: list, dict and set comprehensions run inline
        assert listcomps == []
        squares = [n.value for n in tape if isinstance(n, PrimitiveCall)
                   and n.fn_name == "mul" and n.args[0] is n.args[1]]
        assert squares == [1, 9]         # x * x for the odd x of [1, 2, 3], in the root tape
        return
    assert len(listcomps) == 2
    assert listcomps[0].child.arguments[0].name == ".0"


def test_loop_records_phis_and_exit_branch():
    _, tape = dcgraph.track(corners.while_else, 3)
    assert [n.name for n in tape if isinstance(n, Phi)].count("i") >= 3
    branches = [n for n in tape if isinstance(n, Branch)]
    assert [b.taken for b in branches] == [True, True, True, False]


def test_closure_reads_depend_on_the_writer_in_another_frame():
    def outer(v):
        box = v * 2

        def read():
            return box + 1
        return read()

    _, tape = dcgraph.track(outer, 5)
    tape.lint()
    mul = tape.find(fn="mul")[0]
    add = tape.find(fn="add")[0]
    assert mul in tape.slice(add)


def test_global_write_then_read_dependency():
    _, tape = dcgraph.track(corners.globals_and_del)
    tape.lint()
    gt = tape.find(fn="gt")[0]
    assert any(getattr(n, "fn_name", "") == "iadd" for n in tape.slice(gt))


def test_element_write_then_read_dependency():
    def f(a, b):
        xs = [0, 0, 0]
        xs[1] = a * 2
        xs[2] = b
        return xs[1] + 1

    _, tape = dcgraph.track(f, 3.0, 4.0)
    tape.lint()
    result = tape[-1].inputs[0]
    sl = tape.slice(result)
    args = {n.name for n in sl if isinstance(n, dcgraph.Argument)}
    assert args == {"a"}, "a read of xs[1] must depend on a, not on the write of b to xs[2]"


def test_callee_mutating_a_list_is_seen_by_the_caller():
    def fill(xs, v):
        xs.append(v)

    def f(v):
        xs = []
        fill(xs, v)
        return sum(xs)

    _, tape = dcgraph.track(f, 7)
    tape.lint()
    total = tape.find(fn="sum")[0]
    assert any(isinstance(n, dcgraph.Argument) and n.name == "v" and n.tape is tape
               for n in tape.slice(total))


def test_untraced_root_builtin():
    result, tape = dcgraph.track(max, 3, 9)
    assert result == 9
    tape.lint()
    assert [n.kind for n in tape] == ["Argument", "Argument", "PrimitiveCall", "Return"]


def test_threads_get_separate_correct_tapes():
    results = {}

    def work(k):
        for _ in range(30):
            r, tape = dcgraph.track(corners.recursion, k)
            tape.lint()
            depth = 0
            node = tape
            while True:
                nested = [n for n in node if isinstance(n, NestedCall)]
                if not nested:
                    break
                node, depth = nested[0].child, depth + 1
            results.setdefault(k, set()).add((r, depth))

    threads = [threading.Thread(target=work, args=(k,)) for k in (4, 7)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {4: {(24, 3)}, 7: {(5040, 6)}}


def test_track_inside_traced_function_is_independent():
    def inner(x):
        return x + 1

    def outer(x):
        r, t = dcgraph.track(inner, x)
        return r * 2, len(t)

    (value, inner_len), tape = dcgraph.track(outer, 1)
    assert value == 4 and inner_len == 3   # Argument, x + 1, Return
    tape.lint()


def test_depth_limit_context():
    ctx = dcgraph.DepthLimitContext(1)
    _, tape = dcgraph.track(corners.recursion, 5, ctx=ctx)
    tape.lint()
    first = tape.find(fn="recursion")
    top = [n for n in tape if isinstance(n, (NestedCall, PrimitiveCall)) and n.fn_name == "recursion"]
    assert isinstance(top[0], NestedCall)
    inner = [n for n in top[0].child if isinstance(n, PrimitiveCall) and n.fn_name == "recursion"]
    assert inner and not isinstance(inner[0], NestedCall)
    assert len(first) == 2


def test_primitive_modules_context():
    ctx = dcgraph.Context(primitive_modules=("corners",))
    _, tape = dcgraph.track(corners.mutual_recursion, 4, ctx=ctx)
    assert not [n for n in tape if isinstance(n, NestedCall)]


def test_untraced_code_is_reported_not_silent():
    # an expression compiled on its own reads its names with LOAD_NAME: left untraced
    expression = types.FunctionType(compile("n + 1", "<expression>", "eval"), {"n": 4})

    def user():
        return expression()

    result, tape = dcgraph.track(user)
    assert result == 5
    reasons = {code.co_name: why for code, why in tape.untraced.items()}
    assert reasons == {"<module>": "opcode LOAD_NAME is not traced"}


def test_all_corners_instrument_without_fallback():
    for fn, args in corners.ALL:
        _, tape = dcgraph.track(fn, *args)
        bad = {c.co_name: why for c, why in tape.untraced.items() if "generators" not in why}
        assert not bad, f"{fn.__name__}: {bad}"


def test_context_hooks_annotate_nodes():
    class Marker(dcgraph.Context):
        def on_PrimitiveCall(self, node):
            node.meta["seen"] = node.fn_name

        def on_Branch(self, node):
            node.meta["branch"] = node.taken

    _, tape = dcgraph.track(corners.while_else, 2, ctx=Marker())
    assert {n.meta["seen"] for n in tape.find(kind="PrimitiveCall")} == {"iadd", "imul"}
    assert [n.meta["branch"] for n in tape.find(kind="Branch")] == [True, True, False]
    assert not any(n.has_meta for n in tape.find(kind="Phi"))


def test_deep_recursion_builds_and_lints():
    def rec(n):
        return 0 if n == 0 else 1 + rec(n - 1)

    result, tape = dcgraph.track(rec, 900)
    assert result == 900
    assert sum(isinstance(n, NestedCall) for n in tape.walk()) == 900
    tape.lint()


def test_a_failed_build_is_never_shown_half_built():
    tape = dcgraph.Tape()
    calls = []

    def broken(t):
        calls.append(1)
        tape.append(dcgraph.Return((), None))
        raise RuntimeError("replay failed")

    tape._build = broken
    for _ in range(2):
        with pytest.raises(RuntimeError, match="replay failed"):
            len(tape)
    assert calls == [1]


def test_attribute_read_depends_only_on_its_own_write():
    class Box:
        pass

    def f(a, b):
        box = Box()
        box.x = a * 2
        box.y = b
        return box.x + 1

    _, tape = dcgraph.track(f, 1.0, 2.0)
    tape.lint()
    sl = tape.slice(tape[-1].inputs[0])
    assert {n.name for n in sl if isinstance(n, dcgraph.Argument)} == {"a"}


def test_unreachable_blocks_get_no_probes():
    def f(x):
        for i in range(3):
            if x:
                return i
            else:
                continue
            x = 1          # unreachable
        return -1

    for arg in (0, 1):
        result, tape = dcgraph.track(f, arg)
        assert result == f(arg) and not tape.untraced
        tape.lint()


def test_read_of_a_written_key_depends_on_that_write_only():
    def f(a, b):
        z = [0, 0, 0]
        z[0] = a
        z[1] = b
        return z[1] * 1.0

    _, tape = dcgraph.track(f, 1.0, 2.0)
    sl = tape.slice(tape[-1].inputs[0])
    assert {n.name for n in sl if isinstance(n, dcgraph.Argument)} == {"b"}
    assert not [n for n in sl if isinstance(n, PrimitiveCall) and n.fn_name == "setitem"]


def test_context_substitute_replaces_a_call_and_records_it_under_the_original():
    import math

    class Fake(dcgraph.Context):
        def substitute(self, fn, depth):
            return (lambda x: 42.0) if fn is math.sqrt else None

    def f(x):
        return math.sqrt(x) + 1

    result, tape = dcgraph.track(f, 4.0, ctx=Fake())
    assert result == 43.0
    call = tape.find(fn=math.sqrt)[0]
    assert call.value == 42.0


def test_replacing_defaults_during_a_run_is_seen():
    def with_default(x, k=1):
        return x * k

    def f():
        first = with_default(2)
        with_default.__defaults__ = (10,)
        return first, with_default(2)

    try:
        assert dcgraph.track(f)[0] == (2, 20)
    finally:
        with_default.__defaults__ = (1,)
