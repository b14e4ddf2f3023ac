"""Differential tests of the tracer on randomly generated Python functions.

A small grammar builds the source of a module-level function ``f(a, b)`` (and a few helpers it
may call): int/float arithmetic, local assignments, augmented assignment, if/elif/else, while
loops with a bounded counter, for loops over ranges and list copies, break/continue, helper and
closure calls (``nonlocal`` writes included), lambdas, list building, indexing and element
writes, try/except ZeroDivisionError (with else/finally), list/set/dict comprehensions and
generator expressions, ternaries, and/or, early returns and raised exceptions.

Each generated function runs untraced once, then traced 120 times (so the adaptive interpreter
specialises the instrumented code); every traced outcome must equal the untraced one: the
``repr`` of the returned value (so NaN and -0.0 compare), or the exception's type and message
(the exception must carry its ``tape``). The last tape must build and lint, and the function
must still give the same outcome untraced afterwards.

Deterministic: ``derandomize=True``. On failure the generated source is in the message.
"""
from __future__ import annotations

import linecache

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import dcgraph
from dcgraph import NestedCall, Raise, Return
from dcgraph.instrument import instrument

RUNS = 120
WRAP = 10007          # loop bodies keep numbers bounded: every assignment there is taken mod WRAP
NVARS = 4             # locals v0..v3, all initialised on entry
MAX_STATEMENTS = 22   # per function body, nested statements included


class Builder:
    """Draws every choice from hypothesis, so failing programs shrink."""

    def __init__(self, data):
        self.data = data
        self.statements = 0
        self.counter = 0

    # -- choices -------------------------------------------------------------------------
    def pick(self, options):
        return self.data.draw(st.sampled_from(options))

    def num(self, lo, hi):
        return self.data.draw(st.integers(lo, hi))

    def chance(self, p_percent):
        return self.data.draw(st.integers(0, 99)) < p_percent

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    # -- expressions ---------------------------------------------------------------------
    def leaf(self, scope):
        kinds = ["var", "var", "var", "int", "float", "global"]
        if scope.lists:
            kinds += ["len", "item"]
        kind = self.pick(kinds)
        if kind == "global":
            return "K"
        if kind == "var":
            return self.pick(scope.names)
        if kind == "int":
            return str(self.num(-3, 9))
        if kind == "float":
            return self.pick(["0.5", "2.25", "-1.5", "1e-3", "3.0"])
        if kind == "len":
            return "len(lst)"
        return f"lst[{self.index(scope)}]"

    def index(self, scope):
        """An index into ``lst``: in range, except for a float operand now and then."""
        name = self.pick(scope.names)
        return f"{name} % len(lst)" if self.chance(15) else f"int({name}) % len(lst)"

    def expr(self, scope, depth=2):
        if depth <= 0 or self.chance(30):
            return self.leaf(scope)
        kind = self.pick(["bin", "bin", "bin", "div", "unary", "call", "ternary", "andor",
                          "builtin", "comp", "pow"] if scope.lists else
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
                          f"max([{body} for {x} in lst[:3]{cond}], default=-1)"])

    def int_expr(self, scope, depth):
        return f"int({self.expr(scope, depth)} % {WRAP})"

    def call(self, scope, depth):
        options = ["lambda"] + (["helper"] * 3 if scope.helpers else []) + \
                  (["closure"] * 2 if scope.closures else [])
        kind = self.pick(options)
        if kind == "helper":
            return f"{self.pick(scope.helpers)}({self.expr(scope, depth)}, {self.expr(scope, depth)})"
        if kind == "closure":
            return f"{self.pick(scope.closures)}({self.expr(scope, depth)})"
        z = self.fresh("z")
        return f"(lambda {z}: {self.expr(scope.with_names(z), depth)})({self.expr(scope, depth)})"

    def cond(self, scope, depth=1):
        kinds = ["cmp", "cmp", "truth", "not", "boolop", "chain"] if depth > 0 else ["cmp", "truth"]
        if scope.lists:
            kinds.append("in")
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
        kinds = ["assign", "assign", "aug", "aug", "list", "list", "swap"]
        if nested < 4:
            kinds += ["if", "if", "try", "for", "while"]
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
        if kind == "list":
            which = self.pick(["append", "set", "get", "pop", "sort", "extend", "rawget"])
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
            exc = self.pick(["ZeroDivisionError", "ZeroDivisionError",
                             "(ZeroDivisionError, IndexError)", "ArithmeticError"])
            name = self.fresh("e")
            lines.append(f"{indent}except {exc} as {name}:")
            lines.append(f"{indent}    {v} = len(str({name})) + {self.expr(scope, 0)}")
            if self.chance(30):
                lines.append(f"{indent}else:")
                lines += self.block(scope, indent + "    ", 1)
            if self.chance(30):
                lines.append(f"{indent}finally:")
                lines += self.block(scope.without_returns(), indent + "    ", 1)
            return lines
        if kind == "for":
            x = self.fresh("i")
            inner = scope.in_loop(x)
            it = self.pick([f"range({self.num(0, 5)})", f"range({self.num(-2, 2)}, {self.num(0, 6)})",
                            "lst[:4]", f"range(int({self.pick(scope.names)}) % 4)",
                            f"range({self.num(0, 6)}, 0, -2)"])
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
        self.lists = lists
        self.names = list(names)
        self.assignable = list(assignable)
        self.helpers = list(helpers)
        self.closures = list(closures)
        self.loops = tuple(loops)
        self.returns = returns
        self.result = result or (lambda e: e)

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
    lines = [f"def {name}({', '.join(params)}):"]
    lines.append(f"    v0, v1, v2, v3 = {params[0]}, {params[1]}, {b.num(-2, 5)}, {b.pick(['0.0', '1.5', '7'])}")
    scope = Scope(params + vs, vs, helpers, [],
                  result=(lambda e: f"({e}, v0, v1, v2, v3, lst)") if main else None)
    init = scope._copy(lists=False)
    lines.append(f"    lst = [{b.expr(init, 1)}, {b.expr(init, 1)}, {b.num(-5, 5)}]")
    closures = []
    if main and b.chance(50):   # a closure reading a cell, and one writing it via nonlocal
        lines += ["    def inner(z):",
                  f"        return {b.expr(scope.with_names('z'), 1)}"]
        closures.append("inner")
    if main and b.chance(40):
        lines += ["    def bump(z):",
                  "        nonlocal v1",
                  f"        v1 = (v1 + z) % {WRAP}",
                  "        lst.append(v1)",
                  "        return v1"]
        closures.append("bump")
    scope = scope._copy(closures=closures)
    lines += b.block(scope, "    ", b.num(2, 8))
    if main:
        lines.append("    return (v0, v1, v2, v3, lst)")
    else:
        lines.append(f"    return {b.expr(scope, 1)}")
    return lines


@st.composite
def programs(draw):
    b = Builder(draw_adapter(draw))
    lines = ["K = 7", ""]
    helpers = []
    for k in range(b.num(0, 2)):
        lines += gen_function(b, f"h{k}", ["x", "y"], helpers, main=False) + [""]
        helpers.append(f"h{k}")
    lines += gen_function(b, "f", ["a", "b"], helpers, main=True)
    a = draw(st.sampled_from([0, 1, -1, 2, 3, 5, 7, -4, 10, 2.5, -0.5]))
    bb = draw(st.sampled_from([0, 1, -1, 3, 4, 6, 0.25, -2]))
    return "\n".join(lines) + "\n", (a, bb)


class draw_adapter:
    """Lets ``Builder`` call ``data.draw(strategy)`` inside a composite strategy."""

    def __init__(self, draw):
        self.draw = draw


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


def traced(fn, args):
    try:
        result, tape = dcgraph.track(fn, *args)
    except Exception as exc:  # noqa: BLE001
        assert hasattr(exc, "tape"), f"{type(exc).__name__} propagated without a tape: {exc}"
        return ("raised", type(exc), str(exc)), exc.tape, exc
    return ("value", repr(result)), tape, result


def check_program(source, args, runs=RUNS):
    fn, namespace = compile_program(source)
    for name, obj in namespace.items():
        if callable(obj) and hasattr(obj, "__code__"):
            err = instrument(obj.__code__).error
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
    assert fn.__code__ is code_before
    assert outcome(fn, args) == expected, "instrumented code leaked into a plain call"
    return tape


@settings(max_examples=220, deadline=None, derandomize=True, database=None,
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
