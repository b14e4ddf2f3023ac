"""``model.graph(...)``: parameters, data, statements and data/control edges of a traced run."""
import numpy as np

from dcgraph.models import bernoulli, model, normal, param, poisson, uniform


@model
def regression(X, y):
    w = param(shape=X.shape[1])
    b = param()
    s = param(lower=0.0)
    w |= normal(0.0, 10.0)
    b |= normal(0.0, 10.0)
    s |= uniform(0.0, 5.0)
    y |= normal(X @ w + b, s)


@model
def mixture(y):
    z = param(kind="int", lower=0, upper=1)
    z |= bernoulli(0.3)
    m = param()
    m |= normal(0.0, 1.0)
    if z == 1:
        y |= normal(m + 1.0, 1.0)
    else:
        y |= normal(m - 1.0, 1.0)


@model
def varying(obs):
    n = param(kind="int", lower=1, upper=4)
    n |= poisson(2.0)
    mu = param()
    mu |= normal(0.0, 1.0)
    for i in range(n):
        obs[i] |= normal(mu, 1.0)


def lines_of(fn):
    first = fn.fn.__code__.co_firstlineno
    return lambda k: first + k


def test_regression_graph_printout():
    g = regression.graph(np.zeros((4, 2)), np.zeros(4))
    at = lines_of(regression)
    assert repr(g) == "\n".join([
        "<ModelGraph regression: params w, b, s; data y",
        f"  line {at(5)}: w |= normal",
        f"  line {at(6)}: b |= normal",
        f"  line {at(7)}: s |= uniform",
        f"  line {at(8)}: y |= normal  <- w(data), b(data), s(data)>"])
    assert g.edges == [("w", "y", "data"), ("b", "y", "data"), ("s", "y", "data")]
    g.tape.lint()


def test_branch_on_a_discrete_parameter_is_a_control_edge():
    g = mixture.graph(np.array([0.1, 0.3]))
    assert g.params == ["z", "m"] and g.data == ["y"]
    assert g.edges == [("m", "y", "data"), ("z", "y", "control")]
    g.tape.lint()


def test_loop_bound_on_a_parameter_is_a_control_edge_and_indexed_data_stays_data():
    g = varying.graph(np.zeros(4))
    assert g.data == ["obs[i]"]
    assert g.edges == [("mu", "obs[i]", "data"), ("n", "obs[i]", "control")]
    assert [s.observed for s in g.statements] == [False, False, True]


def test_svg():
    svg = mixture.graph(np.array([0.1])).to_svg()
    assert svg.lstrip().startswith("<?xml") and "control" in svg and "bernoulli" in svg
