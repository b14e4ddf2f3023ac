"""dcgraph.bugs.parser: the 19 examples, each construct, golden trees, bad models, hostile input."""
import dataclasses
import pickle

import pytest
from hypothesis import given, settings, strategies as st

from dcgraph.bugs import syntax as S
from dcgraph.bugs.errors import BUGSError, BUGSSyntaxError
from dcgraph.bugs.parser import MAX_DEPTH, parse, unparse

from examples_dir import EXAMPLES

MODELS = sorted(EXAMPLES.glob("*/model.txt"))


def strip(node):
    """The tree with every line/col set to 0 (to compare structure only)."""
    if isinstance(node, tuple):
        return tuple(strip(n) for n in node)
    if dataclasses.is_dataclass(node):
        return dataclasses.replace(node, **{f.name: 0 if f.name in ("line", "col") else strip(getattr(node, f.name))
                                            for f in dataclasses.fields(node)})
    return node


def body(text):
    return strip(parse(text).body)


def one(text):
    (st,) = body(f"model {{ {text} }}")
    return st


def V(name, *idx):
    return S.Var(name, tuple(idx))


def N(v):
    return S.Number(v)


def test_the_examples_are_there():
    assert len(MODELS) == 19


@pytest.mark.parametrize("path", MODELS, ids=[p.parent.name for p in MODELS])
def test_every_example_parses_and_round_trips(path):
    text = path.read_text()
    model = parse(text, filename=str(path))
    assert isinstance(model, S.Model) and model.body
    again = parse(unparse(model))
    assert strip(again) == strip(model)


def _count(stmts):
    return sum(1 + _count(s.body) if isinstance(s, S.For) else 1 for s in stmts)


def test_statement_counts_of_examples():
    counts = {p.parent.name: _count(parse(p.read_text()).body) for p in MODELS}
    assert counts["rats"] == 13 and counts["pumps"] == 6 and counts["dogs"] == 14
    assert counts["surgical"] == 3 and counts["magnesium"] == 38


def test_rats_golden_tree_with_positions():
    text = "model {\n  for (i in 1:N) {\n    Y[i] ~ dnorm(mu[i], tau.c)\n  }\n  tau.c ~ dgamma(0.001, 1.0E-3)\n}"
    m = parse(text)
    i = S.Var("i", (), 3, 7)
    expected = S.Model((
        S.For("i", S.Number(1, 2, 13), S.Var("N", (), 2, 15), (
            S.Stochastic(S.Var("Y", (i,), 3, 5),
                         S.Call("dnorm", (S.Var("mu", (S.Var("i", (), 3, 21),), 3, 18),
                                          S.Var("tau.c", (), 3, 25)), 3, 12),
                         None, 3, 5),
        ), 2, 3),
        S.Stochastic(S.Var("tau.c", (), 5, 3),
                     S.Call("dgamma", (S.Number(0.001, 5, 18), S.Number(0.001, 5, 25)), 5, 11), None, 5, 3),
    ), 1, 1)
    assert m == expected
    assert isinstance(m.body[1].dist.args[1].value, float) and isinstance(m.body[0].lower.value, int)


def test_statements_without_separators_on_one_line():
    got = body("model { xa[i, 1] <- 0; xs[i, 1] <- 0 p[i, 1] <- 0 }")
    assert got == (S.Logical(V("xa", V("i"), N(1)), N(0)), S.Logical(V("xs", V("i"), N(1)), N(0)),
                   S.Logical(V("p", V("i"), N(1)), N(0)))
    assert body("model { tau1 ~ dgamma(0.001, 0.001) sigma1 <- 1 / sqrt(tau1) }")[1] == S.Logical(
        V("sigma1"), S.Binary("/", N(1), S.Call("sqrt", (V("tau1"),))))


def test_expression_continues_on_a_line_starting_with_an_operator():
    st = one("a <- b - c\n  - d * e")
    assert st == S.Logical(V("a"), S.Binary("-", S.Binary("-", V("b"), V("c")), S.Binary("*", V("d"), V("e"))))


def test_comments_and_dotted_names():
    st = one("p.lung.cancer <- alpha.c # a comment ~ dnorm(\n")
    assert st == S.Logical(V("p.lung.cancer"), V("alpha.c"))


@pytest.mark.parametrize("text,value", [("1.0E-10", 1e-10), (".5", 0.5), ("2.0", 2.0), ("3", 3), ("1e3", 1000.0),
                                        ("2.5e+2", 250.0), ("10.", 10.0)])
def test_numbers_are_parsed_to_int_or_float(text, value):
    got = one(f"x <- {text}").expr
    assert got == N(value) and type(got.value) is type(value)


def test_link_functions_on_the_left():
    for link in ("logit", "log", "cloglog", "probit"):
        assert one(f"{link}(p[i]) <- a + b") == S.Logical(V("p", V("i")), S.Binary("+", V("a"), V("b")), link)


@pytest.mark.parametrize("text,kind,lo,hi", [
    ("y ~ dnorm(0, 1)T(0, )", "T", N(0), None),
    ("y ~ dflat()T(, -0.00001)", "T", None, S.Unary("-", N(0.00001))),
    ("t[i] ~ dweib(r, mu[i])C(t.cen[i], )", "C", V("t.cen", V("i")), None),
    ("y ~ dnorm(0, 1) I(a, b)", "I", V("a"), V("b")),
    ("y ~ dnorm(0, 1) T (,)", "T", None, None),
])
def test_truncation_censoring_and_interval_bounds(text, kind, lo, hi):
    assert one(text).bounds == S.Bounds(kind, lo, hi)


def test_keywords_do_not_swallow_names():
    got = body("model { index <- 1 format <- 2 inn <- 3 models <- 4 i <- 5 Tx <- T C <- I * T[1] true <- in.x }")
    assert [st.target.name for st in got] == ["index", "format", "inn", "models", "i", "Tx", "C", "true"]
    assert got[6].expr == S.Binary("*", V("I"), V("T", N(1))) and got[7].expr == V("in.x")


def test_a_variable_called_T_is_not_truncation():
    st = body("model { y ~ dnorm(0, 1) T[i] <- 2 }")
    assert st[0].bounds is None and st[1] == S.Logical(V("T", V("i")), N(2))


def test_indices_ranges_empty_and_nested():
    st = one("y <- a + inprod(x[i, ], b[]) + mean(R[ , ]) + sum(x[1:K]) + mu[group[i]] + s[T[i, k]]")
    terms = []
    e = st.expr
    while isinstance(e, S.Binary):
        terms.append(e.right)
        e = e.left
    terms.append(e)
    terms.reverse()
    assert terms[1] == S.Call("inprod", (V("x", V("i"), None), V("b", None)))
    assert terms[2] == S.Call("mean", (V("R", None, None),))
    assert terms[3] == S.Call("sum", (V("x", S.Range(N(1), V("K"))),))
    assert terms[4] == V("mu", V("group", V("i")))
    assert terms[5] == V("s", V("T", V("i"), V("k")))


def test_range_binds_loosest_and_loop_bounds_are_expressions():
    assert one("y <- sum(x[3 : K - 2])").expr.args[0].indices[0] == S.Range(N(3), S.Binary("-", V("K"), N(2)))
    loop = one("for (j in culm[i - 1] + 1 : culm[i]) { r[j] <- 1 }")
    assert loop.lower == S.Binary("+", V("culm", S.Binary("-", V("i"), N(1))), N(1))
    assert loop.upper == V("culm", V("i"))
    assert one("for (k in (n10 + 1):(n10 + n01)) { r[k] <- 1 }").upper == S.Binary("+", V("n10"), V("n01"))


def test_nested_loops():
    st = one("for (i in 1:N) { for (j in 1:T) { Y[i, j] ~ dnorm(0, 1) } }")
    assert st.var == "i" and st.body[0].var == "j" and isinstance(st.body[0].body[0], S.Stochastic)


def test_operator_precedence_unary_minus_and_power():
    assert one("y <- -a^2").expr == S.Unary("-", S.Binary("^", V("a"), N(2)))
    assert one("y <- a^b^c").expr == S.Binary("^", V("a"), S.Binary("^", V("b"), V("c")))
    assert one("y <- 2^-1").expr == S.Binary("^", N(2), S.Unary("-", N(1)))
    assert one("y <- a - b - c").expr == S.Binary("-", S.Binary("-", V("a"), V("b")), V("c"))
    assert one("y <- a / b * c").expr == S.Binary("*", S.Binary("/", V("a"), V("b")), V("c"))
    assert one("y <- a + b * -c").expr == S.Binary("+", V("a"), S.Binary("*", V("b"), S.Unary("-", V("c"))))
    assert one("y <- beta * -0.5").expr == S.Binary("*", V("beta"), S.Unary("-", N(0.5)))
    assert one("y <- (a + b) * c").expr == S.Binary("*", S.Binary("+", V("a"), V("b")), V("c"))


def test_multivariate_and_flat():
    st = one("x[1:K] ~ dmnorm(mu[], T[,])")
    assert st == S.Stochastic(V("x", S.Range(N(1), V("K"))), S.Call("dmnorm", (V("mu", None), V("T", None, None))))
    assert one("a ~ dflat()").dist == S.Call("dflat", ())
    assert one("W[1:2, 1:2] ~ dwish(R[, ], 2)").dist.name == "dwish"


def test_unparse_prints_bugs_text():
    m = parse("model { for (i in 1:N) { logit(p[i]) <- -(a+b)^2 - (c - d) y[i] ~ dnorm(0, 1) T(0,) } }")
    assert unparse(m) == ("model {\n    for (i in 1:N) {\n        logit(p[i]) <- -(a + b)^2 - (c - d)\n"
                          "        y[i] ~ dnorm(0, 1) T(0, )\n    }\n}")


def test_windows_line_endings():
    m = parse("model {\r\n  a <- 1\r\n  b ~ dnorm(a, 1)\r\n}\r\n")
    assert (m.body[1].line, m.body[1].col) == (3, 3)


def test_bytes_and_byte_order_mark():
    assert strip(parse(b"\xef\xbb\xbfmodel { a <- 1 }")) == strip(parse("model { a <- 1 }"))


# --------------------------------------------------------------------------- bad models
BAD = [
    ("model { y <- 1 ", "1:16: unexpected end of text; expected one of '*' or '/', '+' or '-', ';', '^', 'for', '}', "
     "a name\n    model { y <- 1 \n                   ^"),
    ("x <- 1", "1:1: unexpected name 'x'; expected 'model'\n    x <- 1\n    ^"),
    ("", "1:1: unexpected end of text; expected 'model'"),
    ("model {\n  x = 1\n}", "2:5: unexpected character '=' (use '<-' for a logical node or '~' for a stochastic one)"
     "\n      x = 1\n        ^"),
    ("model {\n  y ~ dnrom(0, 1)\n}", "2:7: unknown distribution 'dnrom' (did you mean 'dnorm'?)\n"
     "      y ~ dnrom(0, 1)\n          ^"),
    ("model { y ~ dnorm(0) }", "1:13: distribution 'dnorm' takes 2 parameters (mu, tau), got 1"),
    ("model { y ~ dflat(1) }", "1:13: distribution 'dflat' takes 0 parameters, got 1"),
    ("model { y <- dnorm(0, 1) }", "1:14: 'dnorm' is a distribution: it can only follow '~'"),
    ("model { y ~ exp(1) }", "1:13: unknown distribution 'exp' (it is a function: use '<-')"),
    ("model { y ~ mu }", "1:13: the right of '~' must be a distribution, such as dnorm(mu, tau)"),
    ("model { sqrt(y) <- 1 }", "1:9: 'sqrt' is not a link function: only logit, log, cloglog, probit may be "
     "applied to the left of '<-'"),
    ("model { y <- pow(2) }", "1:14: function 'pow' takes 2 arguments, got 1"),
    ("model { y <- fo(2) }", "1:14: unknown function 'fo'"),
    ("model { y <- expp(2) }", "1:14: unknown function 'expp' (did you mean 'exp'?)"),
    ("model {\n\ty <- x $ 2 }", "2:9: unexpected character '$'\n     y <- x $ 2 }\n            ^"),
    ("model { y[i ~ dnorm(0, 1) }", "1:13: unexpected '~'; expected one of '(', '*' or '/', '+' or '-', ',', ':', '[', ']', '^'"),
    ("model { y ~ dnorm(0, 1) T(0) }", "1:28: unexpected ')'; expected ','"),
    ("model { for (i 1:N) { y[i] <- 1 } }", "1:16: unexpected number '1'; expected 'in'"),
    ("model { for (i in 1:N) y[i] <- 1 }", "1:24: unexpected name 'y'; expected '{'"),
    ("model { y <- 123456789012345678901234567890 }",
     "1:14: number 123456789012345678901234567890 is too large for a 64-bit integer"),
    ("model { y <- 1e999 }", "1:14: number 1e999 is too large for a 64-bit float"),
    ("model { y <- a[1:2:3] }", "1:19: unexpected ':'; expected one of ',', ']'"),
    ("model { } extra", "1:11: unexpected name 'extra'; expected end of text"),
    ("model { a <- 1 } }", "1:18: unexpected '}'; expected end of text"),
    ("model { y <- -(a) ^ }", "1:21: unexpected '}'; expected one of '(', '+' or '-', a name, a number"),
]


@pytest.mark.parametrize("text,message", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_models_name_the_place(text, message):
    with pytest.raises(BUGSSyntaxError) as info:
        parse(text, filename=None)
    assert str(info.value).startswith(message), str(info.value)


def test_error_carries_filename_line_col_and_caret():
    with pytest.raises(BUGSError) as info:
        parse("model {\n  a <- 1\n  b <- dnorm(a, 1)\n}", filename="m.txt")
    e = info.value
    assert (e.filename, e.line, e.col) == ("m.txt", 3, 8)
    assert str(e) == "m.txt:3:8: 'dnorm' is a distribution: it can only follow '~'\n      b <- dnorm(a, 1)\n           ^"
    assert str(pickle.loads(pickle.dumps(e))) == str(e)


def test_bugs_error_formatting_without_source():
    assert str(BUGSError("boom")) == "boom"
    assert str(BUGSError("boom", 3, 4)) == "3:4: boom"
    assert str(BUGSError("boom", filename="f.txt")) == "f.txt: boom"
    assert str(BUGSError("boom", 2, 1, "a\nbc", "f")) == "f:2:1: boom\n    bc\n    ^"


# --------------------------------------------------------------------------- hostile input
HOSTILE = [
    ("model { y <- __import__(\"os\") }", "unexpected character '_' (names start with a letter)"),
    ("model { y <- os.system(1) }", "unknown function 'os.system'"),
    ("model { os.system(y) <- 1 }", "'os.system' is not a link function"),
    ("model { y <- \"x\" }", "unexpected character '\"' (BUGS has no strings)"),
    ("model { y <- 'x' }", "unexpected character \"'\" (BUGS has no strings)"),
    ("model { y <- x\x00 }", "unexpected character '\\x00'"),
    ("model { y <- exec(x) }", "unknown function 'exec'"),
    ("model { y <- 9" + "9" * 400 + " }", "is too large for a 64-bit integer"),
    ("model { y <- 1e99999 }", "is too large for a 64-bit float"),
    ("model { y <- " + "-" * 10_000 + "x }", f"nesting deeper than {MAX_DEPTH} levels"),
    ("model { y <- " + "+".join(["x"] * 5000) + " }", f"nesting deeper than {MAX_DEPTH} levels"),
    ("model { y <- " + "exp(" * 10_000 + "x" + ")" * 10_000 + " }", f"nesting deeper than {MAX_DEPTH} levels"),
    ("model { y <- " + "a[" * 10_000 + "1" + "]" * 10_000 + " }", f"nesting deeper than {MAX_DEPTH} levels"),
    ("model { " + "for (i in 1:2) { " * 10_000 + "y ~ dnorm(0, 1)" + " }" * 10_000 + " }",
     f"nesting deeper than {MAX_DEPTH} levels"),
    ("model { y <- " + "(" * 10_000 + "x" + " }", "unexpected '}'"),
]


@pytest.mark.parametrize("text,message", HOSTILE, ids=[str(i) for i in range(len(HOSTILE))])
def test_hostile_input_gives_a_clear_error(text, message):
    with pytest.raises(BUGSSyntaxError) as info:
        parse(text)
    assert message in str(info.value)
    assert len(str(info.value)) < 2000


def test_python_looking_names_are_just_bugs_names():
    # a dotted name is one BUGS name; the compiler maps it to a generated identifier
    assert one("y <- x.__class__ + os.path").expr == S.Binary("+", V("x.__class__"), V("os.path"))


def test_redundant_parentheses_do_not_nest():
    st = one("y <- " + "(" * 10_000 + "x" + ")" * 10_000)
    assert st == S.Logical(V("y"), V("x"))


def test_newlines_inside_statements_are_whitespace():
    assert body("model { y\n <- x\n z ~ dnorm(0,\n 1) }") == (S.Logical(V("y"), V("x")),
                                                          S.Stochastic(V("z"), S.Call("dnorm", (N(0), N(1)))))


def test_not_text_is_a_type_error():
    with pytest.raises(TypeError, match="must be a str"):
        parse(42)


def test_long_lines_are_shown_as_a_window_around_the_caret():
    e = BUGSError("bad", 1, 400, "x" * 399 + "$" + "y" * 300)
    first, shown, caret = str(e).splitlines()
    assert first == "1:400: bad" and len(shown) == 4 + 200
    assert shown[caret.index("^")] == "$"


# --------------------------------------------------------------------------- fuzzing
_TOKENS = ["model", "{", "}", "(", ")", "[", "]", ",", ";", ":", "~", "<-", "+", "-", "*", "/", "^", "for", "in",
           "x", "y.z", "T", "C(", "I(", "dnorm", "dflat", "exp", "logit", "sum", "1", "2.5", "1e3", ".5", "#c\n",
           "\n", " ", "=", "$", "'", "\"", "_", "é", "\t", "9" * 30]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), max_size=40))
def test_random_token_soup_only_ever_raises_bugs_syntax_errors(tokens):
    text = " ".join(tokens)
    try:
        model = parse(text)
    except BUGSSyntaxError as e:
        assert e.line is not None and e.col is not None and str(e)
    else:
        assert isinstance(model, S.Model)
        assert strip(parse(unparse(model))) == strip(model)


_names = st.sampled_from(["a", "b.c", "T", "mu", "x1"])
_leaf = st.one_of(st.integers(0, 50).map(str), st.sampled_from(["0.5", "1.0E-3", "2.0"]), _names,
                  _names.map(lambda n: f"{n}[i]"))


def _grow(inner):
    return st.one_of(
        st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "^"]), inner).map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
        inner.map(lambda e: f"-{e}"), inner.map(lambda e: f"({e})"), inner.map(lambda e: f"exp({e})"),
        st.tuples(inner, inner).map(lambda t: f"pow({t[0]}, {t[1]})"))


_exprs = st.recursive(_leaf, _grow, max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(_exprs, _exprs)
def test_generated_models_round_trip_through_unparse(e1, e2):
    text = f"model {{ for (i in 1:N) {{ y[i] ~ dnorm({e1}, 1) }} z <- {e2} }}"
    model = parse(text)
    assert strip(parse(unparse(model))) == strip(model)
