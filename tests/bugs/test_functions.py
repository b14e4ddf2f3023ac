"""The BUGS function library: values against numpy/scipy/hand values, OpenBUGS conventions pinned,
the built ``ast`` calls only whitelisted modules, and dcgraph.grad differentiates through it."""
import ast

import numpy as np
import pytest
from scipy import special, stats

import dcgraph
from dcgraph.bugs.functions import FUNCTIONS, LINKS, build_call, build_link_inverse, namespace

X = np.array([0.2, 0.5, 0.9])
V = np.array([3.0, 1.0, 2.0, 2.0, 5.0])
M = np.array([[2.0, 0.3], [0.3, 1.0]])

# name -> (arguments, expected value)
VALUES = {
    "abs": ((np.array([-1.5, 2.0]),), [1.5, 2.0]),
    "arccos": ((X,), np.arccos(X)), "arcsin": ((X,), np.arcsin(X)), "arctan": ((X,), np.arctan(X)),
    "arccosh": ((1 + X,), np.arccosh(1 + X)), "arcsinh": ((X,), np.arcsinh(X)), "arctanh": ((X,), np.arctanh(X)),
    "cloglog": ((X,), np.log(-np.log(1 - X))),
    "cos": ((X,), np.cos(X)), "cosh": ((X,), np.cosh(X)), "sin": ((X,), np.sin(X)), "sinh": ((X,), np.sinh(X)),
    "tan": ((X,), np.tan(X)), "tanh": ((X,), np.tanh(X)),
    "cut": ((X,), X),
    "equals": ((np.array([1.0, 2.0]), 2.0), [0.0, 1.0]),
    "exp": ((X,), np.exp(X)), "log": ((X,), np.log(X)),
    "icloglog": ((np.array([-1.0, 0.0, 2.0]),), 1 - np.exp(-np.exp([-1.0, 0.0, 2.0]))),
    "ifelse": ((np.array([0.0, 1.0]), 5.0, 7.0), [7.0, 5.0]),
    "ilogit": ((np.array([-2.0, 0.0, 3.0]),), 1 / (1 + np.exp(-np.array([-2.0, 0.0, 3.0])))),
    "logit": ((X,), np.log(X / (1 - X))),
    "logfact": ((np.array([0.0, 1.0, 5.0]),), np.log([1.0, 1.0, 120.0])),
    "loggam": ((np.array([0.5, 4.0]),), [np.log(np.sqrt(np.pi)), np.log(6.0)]),
    "phi": ((np.array([-1.0, 0.0, 1.96]),), stats.norm.cdf([-1.0, 0.0, 1.96])),
    "probit": ((X,), stats.norm.ppf(X)),
    "pow": ((np.array([2.0, 9.0]), np.array([3.0, 0.5])), [8.0, 3.0]),
    "round": ((np.array([1.4, 1.5, 2.5, -1.5, -1.6, -0.4]),), [1.0, 2.0, 3.0, -2.0, -2.0, 0.0]),
    "sqrt": ((np.array([4.0, 2.0]),), [2.0, np.sqrt(2.0)]),
    "step": ((np.array([-1.0, 0.0, 1e-300, 2.0]),), [0.0, 1.0, 1.0, 1.0]),
    "trunc": ((np.array([1.7, -1.5, 3.0]),), [1.0, -2.0, 3.0]),
    "inprod": ((np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])), 32.0),
    "interp.lin": ((np.array([-1.0, 0.5, 2.0, 9.0]), np.array([0.0, 1.0, 3.0]), np.array([1.0, 2.0, 0.0])),
                   [1.0, 1.5, 1.0, 0.0]),
    "inverse": ((M,), np.linalg.inv(M)),
    "eigen.vals": ((M,), np.sort(np.linalg.eigvals(M).real)),
    "logdet": ((M,), np.log(np.linalg.det(M))),
    "max": ((np.array([1.0, 5.0]), np.array([3.0, 2.0])), [3.0, 5.0]),
    "min": ((np.array([1.0, 5.0]), np.array([3.0, 2.0])), [1.0, 2.0]),
    "mean": ((V,), 2.6), "prod": ((V,), 60.0), "sum": ((V,), 13.0),
    "sd": ((V,), np.std(V, ddof=1)),
    "sort": ((V,), [1.0, 2.0, 2.0, 3.0, 5.0]),
    "rank": ((V, 3), 3), "ranked": ((V, 2), 2.0),
    "t": ((np.array([[1.0, 2.0], [3.0, 4.0]]),), [[1.0, 3.0], [2.0, 4.0]]),
}


def test_every_function_has_a_value_case():
    assert set(FUNCTIONS) == set(VALUES)


def compiled(name, n):
    """``def f(A, B, ...): return <built expression>`` compiled in ``namespace()``."""
    names = ["A", "B", "C", "D"][:n]
    body = build_call(name, *[ast.Name(a, ast.Load()) for a in names])
    fn = ast.FunctionDef("f", ast.arguments(posonlyargs=[], args=[ast.arg(a) for a in names], kwonlyargs=[],
                                            kw_defaults=[], defaults=[]), [ast.Return(body)], [])
    g = namespace()
    exec(compile(ast.fix_missing_locations(ast.Module([fn], [])), f"<{name}>", "exec"), g)
    return g["f"]


@pytest.mark.parametrize("name", sorted(VALUES))
def test_value_through_built_ast_and_plain_callable(name):
    args, expected = VALUES[name]
    np.testing.assert_allclose(compiled(name, len(args))(*args), expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(FUNCTIONS[name].evaluate(*args), expected, rtol=1e-12, atol=1e-14)


def test_openbugs_conventions():
    assert FUNCTIONS["step"].evaluate(0.0) == 1.0                        # step(0) = 1
    assert FUNCTIONS["trunc"].evaluate(-0.5) == -1.0                     # floor, per the OpenBUGS manual (JAGS: 0)
    # OpenBUGS MathFunc.Round: halves away from zero (numpy rounds half to even, floor(x + 0.5) gives -2)
    assert FUNCTIONS["round"].evaluate(2.5) == 3.0 and FUNCTIONS["round"].evaluate(-2.5) == -3.0
    assert FUNCTIONS["round"].evaluate(0.5) == 1.0 and FUNCTIONS["round"].evaluate(-0.5) == -1.0
    assert FUNCTIONS["rank"].evaluate(np.array([3.0, 1.0, 2.0, 2.0]), 3) == 3   # number of components <= v[3]
    assert FUNCTIONS["rank"].evaluate(np.array([3.0, 1.0, 2.0, 2.0]), 1) == 4
    assert FUNCTIONS["ranked"].evaluate(np.array([3.0, 1.0, 2.0]), 1) == 1.0
    assert FUNCTIONS["sd"].evaluate(np.array([1.0, 3.0])) == np.sqrt(2.0)      # n - 1 denominator
    assert FUNCTIONS["max"].evaluate(np.array([1.0, 7.0, 3.0])) == 7.0        # one array: its largest component
    assert FUNCTIONS["max"].evaluate(1.0, 7.0, 3.0) == 7.0                    # several: the largest


def test_links_map_to_their_inverses():
    assert dict(LINKS) == {"logit": "ilogit", "log": "exp", "cloglog": "icloglog", "probit": "phi"}
    y = np.array([-1.0, 0.3, 2.0])
    for link, inverse in LINKS.items():
        x = FUNCTIONS[inverse].evaluate(y)
        np.testing.assert_allclose(FUNCTIONS[link].evaluate(x), y, rtol=1e-10)
        expr = build_link_inverse(link, ast.Name("A", ast.Load()))
        g = namespace()
        got = eval(compile(ast.fix_missing_locations(ast.Expression(expr)), "<link>", "eval"), g, {"A": y})
        np.testing.assert_allclose(got, x)
    with pytest.raises(KeyError, match="unknown link function 'sqrt'"):
        build_link_inverse("sqrt", ast.Name("A", ast.Load()))


def _names_used(expr):
    out = set()
    for node in ast.walk(expr):
        if isinstance(node, ast.Name):
            out.add(node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            out.add(f"{node.value.id}.{node.attr}")
    return out


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_built_code_names_only_the_whitelisted_modules_and_its_arguments(name):
    fn = FUNCTIONS[name]
    n = fn.arity[0] if fn.arity[1] is not None else 2
    args = [ast.Name(f"arg{i}", ast.Load()) for i in range(n)]
    expr = fn.build(*args)
    used = _names_used(expr)
    allowed = {"np", "sp"} | {f"arg{i}" for i in range(n)}
    assert {u for u in used if "." not in u} <= allowed
    for dotted in (u for u in used if "." in u):
        module, attr = dotted.split(".", 1)
        if module in namespace():
            assert hasattr(namespace()[module], attr)
            assert not attr.startswith("_")


def test_wrong_arity_and_unknown_names():
    with pytest.raises(TypeError, match="'pow' takes 2 arguments, got 1"):
        FUNCTIONS["pow"].build(ast.Constant(1.0))
    with pytest.raises(KeyError, match="unknown BUGS function 'eval'"):
        build_call("eval", ast.Constant(1.0))


SMOOTH = [("exp", (0.3,)), ("log", (1.7,)), ("ilogit", (0.4,)), ("logit", (0.3,)), ("icloglog", (0.2,)),
          ("cloglog", (0.3,)), ("phi", (0.5,)), ("probit", (0.8,)), ("pow", (1.5, 2.5)), ("sqrt", (2.0,)),
          ("loggam", (2.5,)), ("logfact", (3.2,)), ("sin", (0.7,)), ("arctan", (0.7,)), ("tanh", (0.7,)),
          ("inprod", (np.array([1.0, 2.0]), np.array([0.5, -1.0]))), ("mean", (np.array([1.0, 2.0, 4.0]),)),
          ("sd", (np.array([1.0, 2.0, 4.0]),)), ("sum", (np.array([1.0, 2.0]),)),
          ("logdet", (M,)), ("interp.lin", (1.7, np.array([0.0, 1.0, 3.0]), np.array([1.0, 2.0, 0.0]))),
          ("max", (1.0, 3.0)), ("abs", (-2.0,)), ("inverse", (M,)), ("sort", (np.array([3.0, 1.0, 2.0]),)),
          ("prod", (np.array([3.0, 1.5, 2.0]),)), ("t", (M,)), ("min", (np.array([3.0, 1.0, 2.0]),)),
          ("cut", (0.4,)), ("arccosh", (1.5,)), ("cosh", (0.3,)), ("tan", (0.3,)), ("arcsin", (0.3,)),
          ("arccos", (0.3,)), ("arcsinh", (0.3,)), ("arctanh", (0.3,)), ("cos", (0.3,)), ("sinh", (0.3,))]


@pytest.mark.parametrize("name,args", SMOOTH, ids=[s[0] for s in SMOOTH])
def test_dcgraph_grad_through_built_code_matches_finite_differences(name, args):
    f = compiled(name, len(args))
    for k in range(len(args)):
        def scalar(v, k=k):
            a = list(args)
            a[k] = v
            return np.sum(f(*a))
        g = dcgraph.grad(scalar)(np.array(args[k], dtype=float))
        x0 = np.array(args[k], dtype=float)
        fd = np.zeros_like(x0)
        for idx in np.ndindex(x0.shape):
            e = np.zeros_like(x0)
            e[idx] = 1e-6
            fd[idx] = (scalar(x0 + e) - scalar(x0 - e)) / 2e-6
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7, err_msg=f"{name} argument {k}")


def test_eigen_vals_gradient_is_the_symmetric_one():
    f = compiled("eigen.vals", 1)
    weights = np.array([0.3, 1.7])
    def scalar(a):
        return np.sum(weights * f(a))
    g = dcgraph.grad(scalar)(M)
    np.testing.assert_allclose(g, g.T)
    h = 1e-6
    for i, j in [(0, 0), (1, 1), (1, 0)]:
        e = np.zeros_like(M)
        e[i, j] = e[j, i] = h
        fd = (scalar(M + e) - scalar(M - e)) / (2 * h)
        assert np.isclose(fd, g[i, j] if i == j else g[i, j] + g[j, i], rtol=1e-6)


def test_step_and_rank_have_zero_gradient():
    f = compiled("step", 1)
    assert dcgraph.grad(lambda x: f(x) * x)(0.5) == 1.0
    r = compiled("rank", 2)
    assert np.allclose(dcgraph.grad(lambda v: r(v, 2) * 1.0 + np.sum(v))(V), np.ones_like(V))


def test_table_rows_document_themselves():
    for name, fn in FUNCTIONS.items():
        assert fn.name == name and fn.doc and fn.kind in ("scalar", "vector")
        lo, hi = fn.arity
        assert lo >= 1 and (hi is None or hi >= lo)
    assert special.expit is namespace()["sp"].expit


def test_readme_lists_every_function_and_distribution_and_its_example_runs():
    import doctest
    import pathlib

    from dcgraph.bugs.distributions import DISTRIBUTIONS
    readme = pathlib.Path(__file__).resolve().parents[2] / "dcgraph" / "bugs" / "README.md"
    text = readme.read_text()
    for name in FUNCTIONS:
        assert f"| `{name}` |" in text, name
    for name, spec in DISTRIBUTIONS.items():
        assert f"`{name}({', '.join(spec.params)})`" in text or f"`{name}`" in text, name
    result = doctest.testfile(str(readme), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted >= 5
