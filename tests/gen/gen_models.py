"""Test models shared by the gen tests (Gen.jl test-suite models and small hand models)."""
import numpy as np

from dcgraph.gen import ParameterStore, bernoulli, categorical, gen, normal, param


@gen
def normal_normal():
    x = normal(0.0, 1.0) @ "x"
    return normal(x, 1.0) @ "y"


@gen
def loopy():
    a = normal(0.0, 1.0) @ "a"
    for i in range(1, 6):
        normal(a, 1.0) @ ("data", i)
    return a


@gen
def bar(mu_z):
    theta1 = param("theta1")
    z = normal(mu_z + theta1, 1.0) @ "z"
    return z + mu_z


@gen
def foo(mu_a):
    theta2 = param("theta2")
    a = normal(mu_a, 1.0) @ "a"
    b = normal(a, 1.0) @ "b"
    c = a * b * (bar(a) @ "bar")
    return (normal(c, 1.0) @ "out") + 3.0 * theta2


@gen
def project_model():
    y = normal(0.0, 2.0) @ "y"
    x = normal(0.0, 1.0) @ ("z", "x")
    return x + y


@gen
def branchy(p):
    """A branch on a random value makes "y" or "z" appear."""
    x = bernoulli(p) @ "x"
    if x:
        return normal(0.0, 1.0) @ "y"
    return normal(1.0, 1.0) @ "z"


@gen
def leaf(mu):
    return normal(mu, 1.0) @ "v"


@gen
def middle(mu):
    return (leaf(mu) @ "l") + (leaf(mu + 1.0) @ "r")


@gen
def top(mu):
    m = middle(mu) @ "m"
    return normal(m, 1.0) @ "obs"


def shift(v, k):
    """A traced Python helper (not a generative function)."""
    return v * 0.5 + k


TRANS = np.array([[0.9, 0.1], [0.2, 0.8]])
MEANS = np.array([-1.0, 1.0])


@gen
def hmm(n):
    """A hidden Markov model as a plain Python loop (2 states, normal emissions)."""
    z = categorical(np.array([0.5, 0.5])) @ ("z", 0)
    normal(MEANS[z], 1.0) @ ("x", 0)
    for t in range(1, n):
        z = categorical(TRANS[z]) @ ("z", t)
        normal(MEANS[z], 1.0) @ ("x", t)
    return z


@gen
def walk(n, drift):
    """A random walk through a traced helper, with a branch on a continuous value."""
    x = normal(0.0, 1.0) @ "x0"
    total = 0.0
    for t in range(1, n):
        x = normal(shift(x, drift), 1.0) @ ("x", t)
        if x > 0:
            total = total + x
    flag = bernoulli(0.3) @ "flag"
    if flag:
        total = total + (normal(total, 1.0) @ "extra")
    return total


def foo_store(theta1=0.0, theta2=0.0) -> ParameterStore:
    """A parameter store for ``foo``/``bar``."""
    store = ParameterStore()
    store.init_param(bar, "theta1", theta1)
    store.init_param(foo, "theta2", theta2)
    return store
