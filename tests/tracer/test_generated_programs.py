"""Differential tests of the tracer on generated Python programs.

1. ``test_generated_program_traced_equals_untraced``: a grammar (driven by hypothesis) builds a
   module: a fixed prelude (a recursive function, a generator, a class with a property, a context
   manager class) and a function ``f(a, b)`` with up to two helpers. Statements: int/float
   arithmetic, assignments, augmented assignment, tuple swaps and star unpacking, if/elif/else,
   while loops with a bounded counter (and else), for loops over ranges, list copies, dicts and
   enumerate (and else), break/continue, try/except/else/finally with re-raise and ``raise ...
   from``, ``with`` blocks, asserts, raises, early returns, global writes, list building,
   indexing, element and slice writes and deletes, dict writes, attribute writes. Expressions:
   helper calls (positional, keyword, ``*args``, ``**kwargs``, defaults), closures reading cells
   and writing them through ``nonlocal``, lambdas (also made in a comprehension with defaults),
   list/set/dict comprehensions and generator expressions, ternaries, and/or, walrus, chained
   comparisons, ``in``, ``isinstance``, ``is None``, f-strings, builtins.
   Each function runs untraced once, then traced 120 times (so the adaptive interpreter
   specialises the instrumented code), then under ``DepthLimitContext(0)`` and ``(1)``; every
   traced outcome must equal the untraced one: the ``repr`` of the returned value (so NaN and
   -0.0 compare), or the exception's type and message (the exception carrying its ``tape``). The
   last tape must build, lint, end in the outcome and print, and the function must still give
   the same outcome untraced afterwards.
2. ``test_fault_matrix``: a fault in each kind of instruction, in each frame position.
3. ``test_generated_program_slices_are_sound`` / ``test_slice_dependency``: ``Tape.slice`` misses
   no data dependency (checked by perturbing parameters along an unchanged path).

Deterministic: ``derandomize=True`` and no shrinking (each example costs 120 traced runs); on
failure the generated source is in the message.
"""
from __future__ import annotations

import linecache
import sys
import traceback
import types

import pytest
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

import dcgraph
from dcgraph import Argument, Branch, NestedCall, PrimitiveCall, Raise, Return
from dcgraph.tracer.instrument import instrument

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from suite_size import examples  # noqa: E402

RUNS = 120
WRAP = 10007          # loop bodies keep numbers bounded: every assignment there is taken mod WRAP
NVARS = 4             # locals v0..v3, all initialised on entry
MAX_STATEMENTS = 22   # per function body, nested statements included
GENERATOR = 0x20


PRELUDE = """\
K = 7
G = 0


def rec(n):
    n = int(n) % 6
    return 0 if n <= 0 else n + rec(n - 1)


def gen(n):
    for i in range(int(n) % 4):
        yield i * 2


class Acc:
    def __init__(self, start):
        self.total = start
        self.items = []

    def add(self, x):
        self.total = (self.total + x) % 10007
        self.items.append(x)
        return self

    @property
    def size(self):
        return len(self.items)


class CM:
    def __init__(self, log, swallow):
        self.log, self.swallow = log, swallow

    def __enter__(self):
        self.log.append(1)
        return len(self.log)

    def __exit__(self, typ, val, tb):
        self.log.append(2 if typ is None else 3)
        return self.swallow

"""


class Builder:
    """Draws every choice from hypothesis (``draw``), so the programs are reproducible."""

    def __init__(self, draw):
        self.draw = draw
        self.statements = 0
        self.counter = 0

    # -- choices -------------------------------------------------------------------------
    def pick(self, options):
        return self.draw(st.sampled_from(options))

    def num(self, lo, hi):
        return self.draw(st.integers(lo, hi))

    def chance(self, p_percent):
        return self.draw(st.integers(0, 99)) < p_percent

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    # -- expressions ---------------------------------------------------------------------
    def leaf(self, scope):
        kinds = ["var", "var", "var", "int", "float", "global"]
        if scope.lists:
            kinds += ["len", "item", "acc", "dict"]
        kind = self.pick(kinds)
        if kind == "global":
            return self.pick(["K", "G"])
        if kind == "var":
            return self.pick(scope.names)
        if kind == "int":
            return str(self.num(-3, 9))
        if kind == "float":
            return self.pick(["0.5", "2.25", "-1.5", "1e-3", "3.0"])
        if kind == "len":
            return "len(lst)"
        if kind == "acc":
            return self.pick(["acc.total", "acc.size"])
        if kind == "dict":
            return f"d.get({self.index(scope, 5)}, {self.num(0, 3)})"
        return f"lst[{self.index(scope)}]"

    def index(self, scope, modulus="len(lst)"):
        """An index: in range, except for a float operand now and then (a TypeError)."""
        name = self.pick(scope.names)
        return f"{name} % {modulus}" if self.chance(10) else f"int({name}) % {modulus}"

    def expr(self, scope, depth=2):
        if depth <= 0 or self.chance(30):
            return self.leaf(scope)
        kind = self.pick(["bin", "bin", "bin", "div", "unary", "call", "call", "ternary",
                          "andor", "builtin", "comp", "pow", "walrus", "str"] if scope.lists else
                         ["bin", "bin", "div", "unary", "ternary", "andor", "pow"])
        d = depth - 1
        if kind == "bin":
            return f"({self.expr(scope, d)} {self.pick(['+', '-', '*'])} {self.expr(scope, d)})"
        if kind == "div":
            op = self.pick(["/", "//", "%"])
            right = self.expr(scope, d)
            if self.chance(70):
                right = f"({right} or 1)"        # mostly safe; otherwise ZeroDivisionError
            return f"({self.expr(scope, d)} {op} {right})"
        if kind == "pow":
            return f"({self.expr(scope, d)} ** {self.pick(['2', '3', '0', '-1'])})" \
                if self.chance(50) else f"(abs({self.expr(scope, d)}) ** 0.5)"
        if kind == "unary":
            return self.pick([f"(-{self.expr(scope, d)})", f"abs({self.expr(scope, d)})",
                              f"(not {self.expr(scope, d)})", f"(~{self.int_expr(scope, d)})"])
        if kind == "call":
            return self.call(scope, d)
        if kind == "ternary":
            return f"({self.expr(scope, d)} if {self.cond(scope, d)} else {self.expr(scope, d)})"
        if kind == "andor":
            return f"({self.expr(scope, d)} {self.pick(['and', 'or'])} {self.expr(scope, d)})"
        if kind == "walrus":
            return f"({self.pick(scope.assignable)} := {self.expr(scope, d)})"
        if kind == "str":
            return self.pick([f"len(str({self.expr(scope, d)}))",
                              f"len(f'{{{self.leaf(scope)}!r}}-{{{self.leaf(scope)}:>6}}')",
                              f"'0123456789'.find(str({self.expr(scope, d)})[-1:])"])
        if kind == "builtin":
            return self.pick([f"min({self.expr(scope, d)}, {self.expr(scope, d)})",
                              f"max({self.expr(scope, d)}, {self.expr(scope, d)}, 0)",
                              f"round({self.expr(scope, d)}, 2)",
                              f"sum(lst[{self.num(0, 2)}:{self.num(1, 4)}])",
                              f"divmod({self.expr(scope, d)}, ({self.expr(scope, d)} or 3))[0]"])
        # comprehension
        x = self.fresh("c")
        inner = scope.with_names(x)
        k = self.num(0, 5)
        body = self.expr(inner, d)
        cond = f" if {self.cond(inner, 0)}" if self.chance(50) else ""
        return self.pick([f"sum([{body} for {x} in range({k}){cond}])",
                          f"len({{{body} for {x} in lst{cond}}})",
                          f"sum({body} for {x} in range({k}){cond})",
                          f"len({{{x}: {body} for {x} in range({k}){cond}}})",
                          f"max([{body} for {x} in lst[:3]{cond}], default=-1)",
                          f"sum([{body} for {x} in range({k}) for {x}_ in range({x})])"])

    def int_expr(self, scope, depth):
        return f"int({self.expr(scope, depth)} % {WRAP})"

    def call(self, scope, depth):
        options = ["lambda", "rec", "gen", "acc"] + (["helper"] * 4 if scope.helpers else []) + \
                  (["closure"] * 2 if scope.closures else [])
        kind = self.pick(options)
        e1, e2 = self.expr(scope, depth), self.expr(scope, depth)
        if kind == "helper":
            h = self.pick(scope.helpers)
            return self.pick([f"{h}({e1}, {e2})", f"{h}(x={e1}, y={e2})", f"{h}(*[{e1}, {e2}])",
                              f"{h}({e1}, **{{'y': {e2}}})", f"{h}({e1})"])
        if kind == "closure":
            return f"{self.pick(scope.closures)}({e1})"
        if kind == "rec":
            return f"rec({e1})"
        if kind == "gen":
            return self.pick([f"sum(gen({e1}))", f"list(gen({e1}))[-1:]"])
        if kind == "acc":
            return self.pick([f"Acc({e1}).add({e2}).total", f"acc.add({e1}).total"])
        z = self.fresh("z")
        return f"(lambda {z}: {self.expr(scope.with_names(z), depth)})({e1})"

    def cond(self, scope, depth=1):
        kinds = ["cmp", "cmp", "truth", "not", "boolop", "chain"] if depth > 0 else ["cmp", "truth"]
        if scope.lists:
            kinds += ["in", "isinstance", "none"]
        kind = self.pick(kinds)
        d = max(depth - 1, 0)
        if kind == "cmp":
            op = self.pick(["<", "<=", ">", ">=", "==", "!="])
            return f"{self.expr(scope, d)} {op} {self.expr(scope, d)}"
        if kind == "truth":
            return self.expr(scope, d)
        if kind == "not":
            return f"not ({self.cond(scope, d)})"
        if kind == "boolop":
            return f"({self.cond(scope, d)}) {self.pick(['and', 'or'])} ({self.cond(scope, d)})"
        if kind == "in":
            return f"{self.expr(scope, d)} {self.pick(['in', 'not in'])} lst"
        if kind == "isinstance":
            return f"isinstance({self.expr(scope, d)}, {self.pick(['int', 'float', '(int, bool)'])})"
        if kind == "none":
            return f"d.get({self.index(scope, 5)}) is {self.pick(['None', 'not None'])}"
        return f"{self.expr(scope, 0)} < {self.expr(scope, 0)} <= {self.expr(scope, 0)}"

    # -- statements ----------------------------------------------------------------------
    def assign_value(self, scope, value):
        return f"({value}) % {WRAP}" if scope.loops else value

    def block(self, scope, indent, n):
        lines = []
        for _ in range(n):
            if self.statements >= MAX_STATEMENTS:
                break
            lines += self.statement(scope, indent)
        return lines or [indent + "pass"]

    def statement(self, scope, indent):
        self.statements += 1
        nested = len(indent) // 4
        kinds = ["assign", "assign", "aug", "aug", "list", "list", "swap", "dict", "unpack",
                 "global", "assert", "acc"]
        if nested < 4:
            kinds += ["if", "if", "try", "try", "for", "while", "with"]
        if scope.loops:
            kinds += ["break", "continue"]
        kinds += ["return", "return", "raise"]
        kind = self.pick(kinds)
        v = self.pick(scope.assignable)
        if kind == "assign":
            return [f"{indent}{v} = {self.assign_value(scope, self.expr(scope))}"]
        if kind == "aug":
            op = self.pick(["+=", "-=", "*=", "//=", "%=", "/="])
            right = self.expr(scope, 1)
            if op in ("//=", "%=", "/=") and self.chance(70):
                right = f"({right} or 2)"
            lines = [f"{indent}{v} {op} {right}"]
            if scope.loops:
                lines.append(f"{indent}{v} %= {WRAP}")
            return lines
        if kind == "swap":
            w = self.pick(scope.assignable)
            return [f"{indent}{v}, {w} = {w}, {v}"]
        if kind == "unpack":
            w = self.pick(scope.assignable)
            return [self.pick([f"{indent}{v}, *_ = lst", f"{indent}{v}, {w} = lst[:2]",
                               f"{indent}{v}, {w} = divmod({self.expr(scope, 1)}, 7)"])]
        if kind == "global":
            return [f"{indent}G = {self.assign_value(scope, self.expr(scope, 1))}"]
        if kind == "assert":
            return [f"{indent}assert {self.cond(scope, 0)}, f'assert {{{v}}}'"]
        if kind == "acc":
            return [self.pick([f"{indent}acc.add({self.expr(scope, 1)})",
                               f"{indent}acc.total = {self.assign_value(scope, self.expr(scope, 1))}",
                               f"{indent}{v} = acc.size + acc.total"])]
        if kind == "dict":
            return [self.pick([f"{indent}d[{self.index(scope, 5)}] = {self.expr(scope, 1)}",
                               f"{indent}{v} = d.get({self.index(scope, 5)}, {self.expr(scope, 0)})",
                               f"{indent}{v} = sum(d[k] for k in sorted(d)) if d else {v}",
                               f"{indent}d.pop({self.index(scope, 5)}, None)"])]
        if kind == "list":
            which = self.pick(["append", "set", "get", "pop", "sort", "extend", "rawget", "del",
                               "slice"])
            idx = self.pick(scope.names)
            sub = self.index(scope)
            if which == "append":
                return [f"{indent}lst.append({self.expr(scope, 1)})"]
            if which == "set":
                return [f"{indent}lst[{sub}] = {self.expr(scope, 1)}"]
            if which == "get":
                return [f"{indent}{v} = lst[{sub}] + {self.expr(scope, 1)}"]
            if which == "pop":
                return [f"{indent}if len(lst) > 1:", f"{indent}    {v} = lst.pop()"]
            if which == "sort":
                return [f"{indent}lst.sort(reverse={self.pick(['True', 'False'])})"]
            if which == "extend":
                return [f"{indent}lst.extend([{self.expr(scope, 0)}, {self.expr(scope, 0)}])"]
            if which == "del":
                return [f"{indent}if len(lst) > 2:", f"{indent}    del lst[{sub}]"]
            if which == "slice":
                return [f"{indent}lst[1:{self.num(1, 3)}] = [{self.expr(scope, 0)}, "
                        f"{self.expr(scope, 0)}]"]
            return [f"{indent}{v} = lst[int({idx}) if abs({idx}) < 9 else 0]"]  # may IndexError
        if kind == "if":
            lines = [f"{indent}if {self.cond(scope)}:"]
            lines += self.block(scope, indent + "    ", self.num(1, 3))
            for _ in range(self.num(0, 1)):
                lines.append(f"{indent}elif {self.cond(scope)}:")
                lines += self.block(scope, indent + "    ", self.num(1, 2))
            if self.chance(60):
                lines.append(f"{indent}else:")
                lines += self.block(scope, indent + "    ", self.num(1, 2))
            return lines
        if kind == "try":
            lines = [f"{indent}try:"]
            lines += self.block(scope, indent + "    ", self.num(1, 3))
            handlers = self.num(0, 2) if self.chance(80) else 0
            for k in range(handlers):
                exc = self.pick(["ZeroDivisionError", "ZeroDivisionError", "ArithmeticError",
                                 "(ZeroDivisionError, IndexError)", "(ValueError, KeyError)",
                                 "Exception"])
                name = self.fresh("e")
                lines.append(f"{indent}except {exc} as {name}:")
                lines.append(f"{indent}    {v} = len(str({name})) + {self.expr(scope, 0)}")
                if self.chance(20):
                    lines += [f"{indent}    if {self.cond(scope, 0)}:",
                              f"{indent}        raise"]
                elif self.chance(15):
                    lines += [f"{indent}    if {self.cond(scope, 0)}:",
                              f"{indent}        raise RuntimeError('chained') from {name}"]
            if handlers and self.chance(30):
                lines.append(f"{indent}else:")
                lines += self.block(scope, indent + "    ", 1)
            if not handlers or self.chance(30):
                lines.append(f"{indent}finally:")
                lines += self.block(scope.without_returns(), indent + "    ", self.num(1, 2))
            return lines
        if kind == "with":
            lines = [f"{indent}with CM(lst, {self.pick(['True', 'False'])}) as {v}:"]
            lines += self.block(scope, indent + "    ", self.num(1, 3))
            return lines
        if kind == "for":
            x = self.fresh("i")
            inner = scope.in_loop(x)
            it = self.pick([f"range({self.num(0, 5)})", f"range({self.num(-2, 2)}, {self.num(0, 6)})",
                            "lst[:4]", f"range(int({self.pick(scope.names)}) % 4)",
                            f"range({self.num(0, 6)}, 0, -2)", "sorted(d)",
                            f"enumerate(lst[:3])"])
            if it.startswith("enumerate"):
                lines = [f"{indent}for {x}_, {x} in {it}:"]
            else:
                lines = [f"{indent}for {x} in {it}:"]
            lines += self.block(inner, indent + "    ", self.num(1, 3))
            if self.chance(20):
                lines.append(f"{indent}else:")
                lines += self.block(scope, indent + "    ", 1)
            return lines
        if kind == "while":
            w = self.fresh("w")
            inner = scope.in_loop(w)
            lines = [f"{indent}{w} = 0",
                     f"{indent}while {w} < {self.num(0, 5)}" +
                     (f" and ({self.cond(scope, 0)}):" if self.chance(40) else ":"),
                     f"{indent}    {w} += 1"]
            lines += self.block(inner, indent + "    ", self.num(1, 3))
            if self.chance(20):
                lines.append(f"{indent}else:")
                lines += self.block(scope, indent + "    ", 1)
            return lines
        if kind == "break":
            return [f"{indent}if {self.cond(scope, 0)}:", f"{indent}    break"]
        if kind == "continue":
            return [f"{indent}if {self.cond(scope, 0)}:", f"{indent}    continue"]
        if kind == "return":
            if not scope.returns:
                return [f"{indent}{v} = {self.assign_value(scope, self.expr(scope, 1))}"]
            return [f"{indent}if {self.cond(scope, 0)}:",
                    f"{indent}    return {scope.result(self.expr(scope, 1))}"]
        # raise
        return [f"{indent}if {self.cond(scope, 0)}:",
                f"{indent}    raise {self.pick(['ValueError', 'KeyError', 'RuntimeError'])}"
                f"(f'bad {{{self.pick(scope.names)}}}')"]


class Scope:
    def __init__(self, names, assignable, helpers, closures, loops=(), returns=True,
                 result=None, lists=True):
        self.names = list(names)
        self.assignable = list(assignable)
        self.helpers = list(helpers)
        self.closures = list(closures)
        self.loops = tuple(loops)
        self.returns = returns
        self.result = result or (lambda e: e)
        self.lists = lists

    def _copy(self, **kw):
        d = dict(names=self.names, assignable=self.assignable, helpers=self.helpers,
                 closures=self.closures, loops=self.loops, returns=self.returns,
                 result=self.result, lists=self.lists)
        d.update(kw)
        return Scope(**d)

    def with_names(self, *names):
        return self._copy(names=self.names + list(names))

    def in_loop(self, var):
        return self._copy(names=self.names + [var], loops=self.loops + (var,))

    def without_returns(self):
        return self._copy(returns=False)


def gen_function(b: Builder, name, params, helpers, main):
    b.statements = 0
    vs = [f"v{k}" for k in range(NVARS)]
    x, y = params
    lines = [f"def {name}({x}, {y}{'' if main else '=' + str(b.num(0, 3))}):"]
    lines += ["    global G"] + ([f"    G = {x}"] if main else [])
    lines.append(f"    v0, v1, v2, v3 = {x}, {y}, {b.num(-2, 5)}, {b.pick(['0.0', '1.5', '7'])}")
    scope = Scope([x, y] + vs, vs, helpers, [],
                  result=(lambda e: f"({e}, v0, v1, v2, v3, lst, d, acc.total)") if main else None)
    init = scope._copy(lists=False)
    lines.append(f"    lst = [{b.expr(init, 1)}, {b.expr(init, 1)}, {b.num(-5, 5)}]")
    lines.append(f"    d = {{{b.num(0, 4)}: {b.expr(init, 0)}}}")
    lines.append(f"    acc = Acc({b.expr(init, 0)})")
    closures = []
    if main and b.chance(50):   # a closure reading cells
        lines += ["    def inner(z):",
                  f"        return {b.expr(scope.with_names('z'), 1)}"]
        closures.append("inner")
    if main and b.chance(40):   # a closure writing one (nonlocal)
        lines += ["    def bump(z):",
                  "        nonlocal v1",
                  f"        v1 = (v1 + z) % {WRAP}",
                  "        lst.append(v1)",
                  "        return v1"]
        closures.append("bump")
    if main and b.chance(20):   # closures made in a comprehension, defaults capturing the loop
        j = b.fresh("j")
        lines += [f"    fs = [(lambda q, {j}={j}: q * {j} + {b.expr(init, 0)}) for {j} in range(3)]"]
        lines += ["    v2 = fs[int(v0) % 3](v1)"]
    scope = scope._copy(closures=closures)
    lines += b.block(scope, "    ", b.num(2, 8))
    if main:
        lines.append("    return (v0, v1, v2, v3, lst, d, acc.total, G)")
    else:
        lines.append(f"    return {b.expr(scope, 1)}")
    return lines


@st.composite
def programs(draw):
    b = Builder(draw)
    lines = [PRELUDE]
    helpers = []
    for k in range(b.num(0, 2)):
        lines += gen_function(b, f"h{k}", ["x", "y"], helpers, main=False) + ["", ""]
        helpers.append(f"h{k}")
    lines += gen_function(b, "f", ["a", "b"], helpers, main=True)
    a = draw(st.sampled_from([0, 1, -1, 2, 3, 5, 7, -4, 10, 2.5, -0.5]))
    bb = draw(st.sampled_from([0, 1, -1, 3, 4, 6, 0.25, -2]))
    return "\n".join(lines) + "\n", (a, bb)


_serial = [0]


def compile_program(source):
    _serial[0] += 1
    filename = f"<generated-{_serial[0]}>"
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    namespace = {"__name__": "generated"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["f"], namespace


def outcome(fn, args):
    try:
        return ("value", repr(fn(*args)))
    except Exception as exc:  # noqa: BLE001 - compared by type and message
        return ("raised", type(exc), str(exc))


def traced(fn, args, ctx=None):
    try:
        result, tape = dcgraph.track(fn, *args, ctx=ctx)
    except Exception as exc:  # noqa: BLE001
        assert hasattr(exc, "tape"), f"{type(exc).__name__} propagated without a tape: {exc}"
        return ("raised", type(exc), str(exc)), exc.tape, exc
    return ("value", repr(result)), tape, result


def _functions(namespace):
    for name, obj in namespace.items():
        if isinstance(obj, type):
            for attr, member in vars(obj).items():
                member = member.fget if isinstance(member, property) else member
                if isinstance(member, types.FunctionType):
                    yield f"{name}.{attr}", member
        elif isinstance(obj, types.FunctionType):
            yield name, obj


def check_program(source, args, runs=RUNS):
    fn, namespace = compile_program(source)
    for name, func in _functions(namespace):
        if not func.__code__.co_flags & GENERATOR:
            err = instrument(func.__code__).error
            assert err is None, f"{name} not instrumented: {err}\n{source}"
    code_before = fn.__code__
    expected = outcome(fn, args)
    for run in range(runs):
        got, tape, value = traced(fn, args)
        assert got == expected, (f"traced run {run} of f{args!r}: {got!r} != untraced "
                                 f"{expected!r}\n{source}")
    tape.lint()
    assert len(list(tape.walk())) > 0
    end = tape.nodes[-1]
    if expected[0] == "value":
        assert isinstance(end, Return) and end.value is value
    else:
        assert isinstance(end, Raise) and end.value is value and tape.raised
    str(tape)  # printing renders every node
    # depth-limited tracing: deeper calls become primitive, the outcome is the same
    for depth in (0, 1):
        ctx = dcgraph.DepthLimitContext(depth)
        for _ in range(5):
            got, tape, _ = traced(fn, args, ctx)
            assert got == expected, f"DepthLimitContext({depth}): {got!r} != {expected!r}"
        tape.lint()
    assert fn.__code__ is code_before
    assert outcome(fn, args) == expected, "instrumented code leaked into a plain call"
    return tape


# No shrink phase: each example costs 120 traced runs, and shrinking a failure took minutes.
# The failing program's source is printed in full instead.
@settings(max_examples=examples(220), deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much])
@given(programs())
def test_generated_program_traced_equals_untraced(program):
    source, args = program
    note(source)
    note(f"args = {args!r}")
    check_program(source, args)


# -- hand-written programs of the grammar's shapes, as fixed regression cases ------------------

FIXED = [
    ("""
def f(a, b):
    v0, v1, v2, v3 = a, b, 0, 0.0
    lst = [a, b, 1]
    for i in range(4):
        if i == 2:
            continue
        w = 0
        while w < 3:
            w += 1
            if w == b:
                break
            lst[w % len(lst)] = lst[(w + 1) % len(lst)] + i
        v2 = (v2 + sum([x * i for x in lst if x % 2])) % 10007
    try:
        v3 = v0 / (v1 - 3)
    except ZeroDivisionError as e:
        v3 = len(str(e))
    else:
        v3 += 1
    finally:
        v1 = -v1
    return (v0, v1, v2, v3, lst)
""", (2, 3)),
    ("""
def h0(x, y):
    return x * y if x > y else (x or y) - 1

def f(a, b):
    v0, v1, v2, v3 = a, b, 1, 7
    lst = [a, b, 2]
    def inner(z):
        return z + v0 * 2
    def bump(z):
        nonlocal v1
        v1 = (v1 + z) % 10007
        lst.append(v1)
        return v1
    for i in range(3):
        v0 = h0(inner(i), bump(i)) % 10007
        v2 += (lambda q: q * v2)(i) % 5
    if v0 and not v2:
        raise ValueError(f"bad {v0}")
    return (v0, v1, v2, v3, lst)
""", (3, 4)),
    ("""
def f(a, b):
    v0, v1, v2, v3 = a, b, 0, 1.5
    lst = [a, 0, 1]
    v2 = lst[a]
    v3 //= b
    return (v0, v1, v2, v3, lst)
""", (7, 1)),
    ("""
def f(a, b):
    v0, v1, v2, v3 = a, b, 0, 1.5
    lst = [a, 0, 1]
    v3 //= b
    return (v0, v1, v2, v3, lst)
""", (1, 0)),
]


@pytest.mark.parametrize("source,args", FIXED, ids=[f"fixed{k}" for k in range(len(FIXED))])
def test_fixed_program(source, args):
    check_program(source, args)


# -- a fault in every kind of instruction, in every kind of frame position ---------------------
#
# Each fault is a statement (after its setup) that raises for ``a == 0``; each wrapper places it
# at the root, in a callee (uncaught, caught by the caller, two frames down), caught in the same
# frame, in a loop whose handler continues, under try/finally, in nested try blocks, in a with
# block and in a callee called from an except handler. Traced and untraced outcomes must agree
# (BaseException included), the tape must lint, a root that raised must end in Raise (the
# exception), and a callee ``g`` that raised must have a child tape ending in Raise.

FAULTS = {
    "unbound_local": ("if a > 100:\n    u = 1", "x = u"),
    "unbound_local_aug": ("if a > 100:\n    u = 1", "u += 1\nx = u"),
    "walrus_unbound": ("", "x = (u := u)"),
    "del_fast_unbound": ("if a > 100:\n    u = 1", "del u\nx = 0"),
    "name_error": ("", "x = undefined_name_zz"),
    "unbound_free": ("def g2():\n    return c\nx0 = g2()\nc = 1", "x = x0"),
    "unbound_cell_own": ("def g2():\n    return c", "x = c\nc = 1"),
    "global_unbound_aug": ("", "global zz_g2\nzz_g2 += 1\nx = 0"),
    "del_global_unbound": ("", "global zz_undefined\ndel zz_undefined\nx = 0"),
    "attribute": ("", "x = a.nope"),
    "method_missing": ("", "x = a.nope()"),
    "method_raises": ("", "x = 'abc'.index('z')"),
    "method_bad_kwarg": ("", "x = 'a,b'.split(sepp=',')"),
    "binary_op": ("", "x = a + 's'"),
    "zero_division": ("", "x = a // (a - a)"),
    "inplace_op": ("x = [a]", "x += a"),
    "subscript_index": ("", "x = [1][a + 5]"),
    "subscript_key": ("", "x = {}[a]"),
    "subscript_custom": ("", "x = Bad()[a]"),
    "store_subscript": ("l = []", "l[a] = 1\nx = l"),
    "store_slice": ("", "x = 's'\nx[0:1] = a"),
    "delete_subscript": ("", "del {}[a]\nx = 0"),
    "store_attr": ("", "a.x = 1\nx = a"),
    "unpack_sequence": ("", "x, y = [a]"),
    "unpack_ex": ("", "x, *y, z = [a]"),
    "compare": ("", "x = a < 's'"),
    "compare_folded": ("x = 0", "if a < 's':\n    x = 1"),
    "compare_chained": ("", "x = 1 < a < 's' or -1 < a < 's'"),
    "contains": ("", "x = a in 5"),
    "contains_folded": ("x = 0", "if a in 5:\n    x = 1"),
    "get_iter": ("x = 0", "for i in a:\n    x = i"),
    "for_iter": ("x = 0\ndef gen():\n    yield 1\n    raise KeyError('it')",
                 "for i in gen():\n    x = i"),
    "format_value": ("", "x = f'{a:q}'"),
    "build_map": ("", "x = {[a]: 1}"),
    "build_set": ("", "x = {[a]}"),
    "list_extend": ("", "x = [*a]"),
    "dict_merge": ("", "x = {**a}"),
    "not_callable": ("", "x = a()"),
    "call_arity": ("", "x = len(a, a)"),
    "call_kw_names": ("", "x = int('1', bse=2)"),
    "call_function_ex": ("", "x = len(*a)"),
    "call_function_ex_kw": ("def h(**k):\n    return k", "x = h(**a)"),
    "call_star_missing": ("def h(p, q):\n    return p", "x = h(*[a])"),
    "lambda_call": ("", "x = (lambda q: q.nope)(a)"),
    "default_arg_eval": ("def g2(q=[][a]):\n    return q", "x = g2()"),
    "import_name": ("", "import nonexistent_mod_zz\nx = 0"),
    "import_from": ("", "from os import nope_zz\nx = nope_zz"),
    "raise_stmt": ("", "raise ValueError(a)"),
    "raise_from": ("", "raise ValueError(a) from KeyError('cause')"),
    "bare_raise": ("", "raise"),
    "assert_stmt": ("", "assert a < 0, a\nx = 0"),
    "unary": ("", "x = -'s' if a else ~1.5"),
    "bool_raises": ("x = 0", "if Bad():\n    x = 1"),
    "not_bool_raises": ("", "x = not Bad()"),
    "and_bool_raises": ("", "x = Bad() and a"),
    "while_bool_raises": ("x = 0", "while Bad():\n    x += 1"),
    "property_raises": ("", "x = Bad().prop"),
    "deep_recursive_method": ("", "x = Bad().rec(0)"),
    "comprehension": ("", "x = [1 // (i - i) for i in range(2)]"),
    "comprehension_nested": ("", "x = {i: [j // i for j in range(2)] for i in range(2)}"),
    "generator_expression": ("", "x = sum(1 // (i - i) for i in range(2))"),
    "with_not_context_manager": ("", "with a:\n    x = 1"),
    "with_body_raises": ("x = 0", "with CM():\n    x = 1 // (a - a)"),
    "with_exit_raises": ("x = 0", "with CM(fail=True):\n    x = 1"),
    "raise_in_handler": ("", "try:\n    x = 1 // (a - a)\nexcept ZeroDivisionError:\n"
                             "    x = [][a]"),
    "raise_in_finally": ("", "try:\n    x = 1\nfinally:\n    y = [][a]"),
    "primitive_callback": ("", "x = sorted([3, 1], key=lambda v: 1 // (v - v))"),
    "stop_iteration": ("", "x = next(iter([]))"),
    "system_exit": ("", "raise SystemExit(a)"),
    "keyboard_interrupt": ("", "raise KeyboardInterrupt('k')"),
    "class_body": ("", "class Q:\n    y = 1 // (a - a)\nx = Q"),
    "del_deref_unbound": ("def g2():\n    return c\nif a > 100:\n    c = 1", "del c\nx = 0"),
    "bad_except_class": ("", "try:\n    x = 1 // (a - a)\nexcept 5:\n    x = 0"),
    "except_star": ("", "try:\n    raise ExceptionGroup('g', [KeyError(a)])\n"
                        "except* ValueError:\n    x = 0"),
    "match_class": ("", "match a:\n    case int(1, 2):\n        x = 1\n    case _:\n"
                        "        x = [][a]"),
    "with_exit_raises_during_exception": ("x = 0", "with CM(fail=True):\n    x = 1 // (a - a)"),
    "python_call_bad_kwarg": ("def h(p):\n    return p", "x = h(zz=1)"),
    "python_call_missing_arg": ("def h(p):\n    return p", "x = h()"),
    "python_method_bad_args": ("", "x = Bad().rec()"),
    "format_str_raises": ("", "x = f'{Bad()!s:>{a}}' + str(a)"),
    "exception_group_uncaught": ("", "raise ExceptionGroup('g', [KeyError(a)])"),
}

FAULT_PRELUDE = """\
class Bad:
    def __bool__(self):
        raise ValueError('bool')

    @property
    def prop(self):
        raise AttributeError('prop')

    def __getitem__(self, k):
        raise LookupError('getitem %r' % (k,))

    def rec(self, n):
        return self.rec(n + 1) if n < 40 else [][n]

    def __str__(self):
        raise RuntimeError('str')


class CM:
    def __init__(self, fail=False):
        self.fail = fail

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.fail:
            raise OSError('exit')
        return False

"""

CATCH = "('caught', type(e).__name__, str(e))"
WRAPPERS = {
    "root": "def f(a):\n{s4}    return x\n",
    "callee": "def g(a):\n{s4}    return x\n\ndef f(a):\n    return g(a)\n",
    "callee_caught": ("def g(a):\n{s4}    return x\n\ndef f(a):\n    try:\n        return g(a)\n"
                      f"    except BaseException as e:\n        return {CATCH}\n"),
    "callee_deep": ("def g(a):\n{s4}    return x\n\ndef m(a):\n    return [g(a)]\n\n"
                    "def f(a):\n    try:\n        return m(a)\n"
                    f"    except BaseException as e:\n        return {CATCH}\n"),
    "caught": f"def f(a):\n    try:\n{{s8}}    except BaseException as e:\n        return {CATCH}\n"
              "    return x\n",
    "loop_continue": ("def f(a):\n    n = 0\n    for k in range(3):\n        try:\n{s12}"
                      "        except BaseException as e:\n            n += 1\n            continue\n"
                      "        n -= 100\n    return n\n"),
    "try_finally": ("def f(a):\n    log = []\n    try:\n        try:\n{s12}        finally:\n"
                    "            log.append(1)\n    except BaseException as e:\n"
                    f"        return {CATCH[:-1]}, log)\n    return x\n"),
    "nested_try": ("def f(a):\n    try:\n        try:\n{s12}        except (OSError, ImportError):\n"
                   "            return 'inner'\n"
                   f"    except BaseException as e:\n        return {CATCH}\n    return x\n"),
    "with_block": ("def f(a):\n    try:\n        with CM():\n{s12}"
                   f"    except BaseException as e:\n        return {CATCH}\n    return x\n"),
    "callee_in_handler": ("def g(a):\n{s4}    return x\n\ndef f(a):\n    try:\n        1 / a\n"
                          "    except ZeroDivisionError:\n        try:\n            return g(a)\n"
                          f"        except BaseException as e:\n            return {CATCH}\n"),
}


def fault_program(fault, wrapper):
    setup, stmt = FAULTS[fault]
    body = (setup + "\n" if setup else "") + stmt + "\n"
    fills = {f"s{n}": "".join(" " * n + line + "\n" for line in body.splitlines())
             for n in (4, 8, 12)}
    return FAULT_PRELUDE + WRAPPERS[wrapper].format(**fills)


def base_outcome(fn, args):
    try:
        return ("value", repr(fn(*args)))
    except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt included
        return ("raised", type(exc), str(exc))


def generated_frames(exc):
    """The traceback of ``exc`` within generated code: (file, function, line, column span)."""
    return [(fr.filename, fr.name, fr.lineno, fr.colno, fr.end_colno)
            for fr in traceback.extract_tb(exc.__traceback__)
            if fr.filename.startswith("<generated-")]


@pytest.mark.parametrize("wrapper", list(WRAPPERS))
@pytest.mark.parametrize("fault", list(FAULTS))
def test_fault_matrix(fault, wrapper):
    source = fault_program(fault, wrapper)
    fn, _ = compile_program(source)
    expected = base_outcome(fn, (0,))
    plain_frames = None
    try:
        fn(0)
    except BaseException as exc:  # noqa: BLE001
        plain_frames = generated_frames(exc)
    for run in range(RUNS):
        try:
            result, tape = dcgraph.track(fn, 0)
            got, value = ("value", repr(result)), result
        except BaseException as exc:  # noqa: BLE001
            assert hasattr(exc, "tape"), f"{type(exc).__name__} propagated without a tape"
            got, tape, value = ("raised", type(exc), str(exc)), exc.tape, exc
            # the traceback points at the same lines and columns of the user's code
            assert generated_frames(exc) == plain_frames
        assert got == expected, f"traced run {run}: {got!r} != untraced {expected!r}\n{source}"
    tape.lint()
    end = tape.nodes[-1]
    if expected[0] == "raised":
        assert isinstance(end, Raise) and end.value is value, \
            f"the root raised {expected[1].__name__} but its tape ends with {end!r}"
    else:
        assert isinstance(end, Return) and end.value is value, f"root tape ends with {end!r}"
    for node in tape.walk():
        if isinstance(node, NestedCall) and getattr(node.fn, "__name__", None) == "g":
            last = node.child.nodes[-1]
            assert isinstance(last, Raise), f"g raised but its tape ends with {last!r}"
    assert base_outcome(fn, (0,)) == expected, "instrumented code leaked into a plain call"


# -- data-flow soundness of Tape.slice, by perturbation ----------------------------------------
#
# ``Tape.slice(node)`` is "node and every node it depends on". So if a returned value's slice does
# not reach parameter ``p``, changing ``p`` (while the run takes the very same path: same node
# kinds, callees and branch outcomes) must not change that value. A change means the slice
# missed a dependency (an unsound backward pass / random-variable analysis downstream).

def _shape(tape):
    out = []
    for n in tape.walk():
        if isinstance(n, Branch):
            out.append(("branch", n.edge, bool(n.taken)))
        elif isinstance(n, PrimitiveCall):
            out.append((n.kind, n.fn_name))
        else:
            out.append((n.kind,))
    return out


def _returned_parts(tape):
    """The returned value's parts: the items of a returned tuple display, else the value."""
    ret = tape.nodes[-1].inputs[0]
    if isinstance(ret, PrimitiveCall) and ret.fn_name == "build_tuple":
        return list(ret.args)
    return [ret]


def _reached_params(tape, node):
    return {n.name for n in tape.slice(node) if isinstance(n, Argument) and n.tape is tape}


def _perturbations(v):
    return [v + 1, v * 2 + 3, -v - 1, v - 0.5]


def slice_violations(fn, args):
    """(part index, parameter, value, perturbed value) for each missed dependency found."""
    try:
        _, tape = dcgraph.track(fn, *args)
    except Exception:  # noqa: BLE001 - only returning runs are checked
        return []
    if not isinstance(tape.nodes[-1], Return):
        return []
    parts = _returned_parts(tape)
    shape = _shape(tape)
    params = [a.name for a in tape.arguments][:len(args)]
    found = []
    for k, name in enumerate(params):
        blind = [i for i, part in enumerate(parts) if name not in _reached_params(tape, part)]
        if not blind:
            continue
        for alt in _perturbations(args[k]):
            moved = args[:k] + (alt,) + args[k + 1:]
            try:
                _, other = dcgraph.track(fn, *moved)
            except Exception:  # noqa: BLE001
                continue
            if _shape(other) != shape:
                continue
            other_parts = _returned_parts(other)
            for i in blind:
                before, after = repr(parts[i].value), repr(other_parts[i].value)
                if before != after:
                    found.append((i, name, f"{name}={args[k]!r}: {before}",
                                  f"{name}={alt!r}: {after}"))
            if found:
                return found
    return found


@settings(max_examples=examples(150), deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.filter_too_much])
@given(programs())
def test_generated_program_slices_are_sound(program):
    source, args = program
    note(source)
    fn, _ = compile_program(source)
    found = slice_violations(fn, args)
    assert not found, (f"returned part {found[0][0]} does not depend on parameter "
                       f"{found[0][1]!r} per Tape.slice, yet {found[0][2]} but {found[0][3]}"
                       f"\n{source}")


SLICE_PRELUDE = """\
class Holder:
    def __init__(self):
        self.x = 0

    @property
    def doubled(self):
        return self.x * 2


class Log:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        self.log.append(len(self.log))
        return False

"""

# (id, source of f(a), whether a returned part must reach parameter ``a``)
SLICE_CASES = [
    ("negative_index_aliases_positive", """
def f(a):
    lst = [0, 0, 0]
    lst[-1] = a
    return lst[2]
""", True),
    ("property_reads_another_attribute", """
def f(a):
    h = Holder()
    h.x = a
    return h.doubled
""", True),
    ("dunder_dict_read_after_setattr", """
def f(a):
    h = Holder()
    h.x = a
    return h.__dict__['x']
""", True),
    ("generator_expression_reads_closure", """
def f(a):
    return sum(a for _ in range(2))
""", True),
    ("lambda_closure_called_by_builtin", """
def f(a):
    return list(map(lambda v: v + a, [1, 2]))
""", True),
    ("with_exit_mutates_through_self", """
def f(a):
    log = [a]
    with Log(log):
        pass
    return log
""", True),
    ("caught_exception_carries_raised_value", """
def f(a):
    try:
        raise ValueError(a)
    except ValueError as e:
        return e.args[0]
""", True),
    ("caught_exception_raised_by_callee", """
def raiser(a):
    raise ValueError(a)

def f(a):
    try:
        raiser(a)
    except ValueError as e:
        return e.args[0]
""", True),
    ("assert_message_caught", """
def f(a):
    try:
        assert False, a
    except AssertionError as e:
        return str(e)
""", True),
    # controls: these already hold
    ("exact_key_write", """
def f(a):
    lst = [0, 0, 0]
    lst[2] = a
    return lst[2]
""", True),
    ("closure_called_traced", """
def f(a):
    def g():
        return a
    return g()
""", True),
    ("list_comprehension_reads_closure", """
def f(a):
    return [a for _ in range(2)]
""", True),
    ("other_key_write_is_not_a_dependency", """
def f(a):
    lst = [0, 0, 0]
    lst[0] = a
    return lst[1]
""", False),
]


@pytest.mark.parametrize("source,depends", [c[1:] for c in SLICE_CASES],
                         ids=[c[0] for c in SLICE_CASES])
def test_slice_dependency(source, depends):
    fn, _ = compile_program(SLICE_PRELUDE + source)
    result, tape = dcgraph.track(fn, 3)
    tape.lint()
    reached = set().union(*(_reached_params(tape, p) for p in _returned_parts(tape)))
    assert ("a" in reached) == depends, (
        f"Tape.slice of the returned value {'misses' if depends else 'includes'} parameter a "
        f"(result {result!r})\n{source}")
    if depends:
        assert repr(fn(3)) != repr(fn(4)), "the case must really depend on a"


# -- code objects equal across files -----------------------------------------------------------
#
# Code objects compare equal when their bytecode, constants, names and line table are equal,
# whatever their file (co_filename) and qualified name: the same function text at the same
# line of two modules. Tracing one must not borrow the other's file.

TWO_FILES = """\
G = 0


def inner():
    return G


def boom(x):
    return 1 // x


def f(a):
    global G
    G = a * {k}
    return inner()
"""


def _two_modules():
    fns = []
    for k in (1, 2):
        source = TWO_FILES.format(k=k)
        filename = f"<two-files-{k}-{_serial[0]}>"
        _serial[0] += 1
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        ns = {"__name__": f"two_files_{k}"}
        exec(compile(source, filename, "exec"), ns)
        fns.append(ns)
    assert fns[0]["inner"].__code__ == fns[1]["inner"].__code__   # equal, not identical
    return fns


def test_equal_code_in_another_file_keeps_its_own_file():
    first, second = _two_modules()
    dcgraph.track(first["f"], 1)          # instruments first's inner and boom
    _, tape = dcgraph.track(second["f"], 5)
    tape.lint()
    call = tape.find(fn="inner")[0]
    assert call.child.nodes[0].loc.filename == second["f"].__code__.co_filename
    # the global written by second.f is what second.inner read: a data dependency
    assert any(isinstance(n, Argument) and n.name == "a" for n in tape.slice(tape.nodes[-1]))

    def last_file(call):
        try:
            call()
        except ZeroDivisionError as exc:
            return traceback.extract_tb(exc.__traceback__)[-1].filename
        raise AssertionError("no ZeroDivisionError")

    dcgraph.track(first["boom"], 1)
    assert last_file(lambda: dcgraph.track(second["boom"], 0)) == last_file(
        lambda: second["boom"](0)), "the traceback names the other file"
