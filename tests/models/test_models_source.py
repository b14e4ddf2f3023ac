"""Models defined where ``inspect.getsource`` cannot look: ``exec`` of a string, sources
registered in ``linecache`` (as IPython and Jupyter do), the interactive interpreter's readline
history, and ``model(fn, source=text)``; a clear error naming the function when nothing works."""
import linecache
import math
import sys
import types

import numpy as np
import pytest
from scipy import stats

import dcgraph.models as models
from dcgraph.models import ModelError, model

SOURCE = """\
import numpy as np
from dcgraph.models import param, normal, gamma

def conjugate(y):
    mu = param()
    tau = param(lower=0.0)
    mu |= normal(0.0, 10.0)
    tau |= gamma(2.0, 1.0)
    y |= normal(mu, 1.0 / np.sqrt(tau))
"""


def by_hand(theta, y):
    mu, u = theta
    tau = math.exp(u)
    return (stats.norm(0, 10).logpdf(mu) + stats.gamma(2.0, scale=1.0).logpdf(tau) + u
            + stats.norm(mu, 1 / math.sqrt(tau)).logpdf(y).sum())


def run(source, filename, name="conjugate"):
    namespace = {"__name__": "m10_generated"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


Y = np.array([0.3, -1.2, 0.8, 2.0])


def check(m):
    bound = m(Y)
    assert [n for n in bound.layout] == ["mu", "tau"]
    for theta in (np.array([0.4, -0.3]), np.array([-1.0, 0.7])):
        assert bound.logdensity(theta) == pytest.approx(by_hand(theta, Y), rel=1e-12, abs=1e-12)
        value, grad = bound.logdensity_and_grad(theta)
        eps = 1e-6
        fd = [(by_hand(theta + eps * e, Y) - by_hand(theta - eps * e, Y)) / (2 * eps)
              for e in np.eye(2)]
        assert grad == pytest.approx(fd, rel=1e-6, abs=1e-6)


def test_plain_exec_is_read_from_its_bytecode():
    fn = run(SOURCE, "<string>")
    m = model(fn)
    assert m._source is None                  # no text: the bytecode reader made it
    check(m)


def test_exec_with_source_given():
    fn = run(SOURCE, "<string>")
    check(model(fn, source=SOURCE))
    check(model(source=SOURCE)(fn))


def test_source_given_that_does_not_match_is_refused():
    fn = run(SOURCE, "<string>")
    other = SOURCE.replace("gamma(2.0, 1.0)", "gamma(3.0, 1.0)")
    with pytest.raises(ModelError, match="compiles to that function's code"):
        model(fn, source=other)
    with pytest.raises(ModelError, match="no def 'conjugate'"):
        model(fn, source="def other(y):\n    pass\n")


def test_linecache_registered_source(monkeypatch):
    filename = "<m10-cell-7>"
    monkeypatch.setitem(linecache.cache, filename,
                        (len(SOURCE), None, SOURCE.splitlines(True), filename))
    fn = run(SOURCE, filename)
    m = model(fn)
    check(m)
    # errors quote the registered text of the failing statement
    with pytest.raises(ModelError, match=r"<m10-cell-7>:7: `mu \|= normal\(0.0, 10.0\)`: .*NaN"):
        m(Y).logdensity(np.array([np.nan, 0.0]))


def test_linecache_lookup_without_inspect(monkeypatch):
    """The direct ``linecache`` lookup at ``co_firstlineno`` (for entries ``inspect`` refuses)."""
    filename = "<m10-cell-8>"
    monkeypatch.setitem(linecache.cache, filename,
                        (len(SOURCE), None, SOURCE.splitlines(True), filename))
    fn = run(SOURCE, filename)

    def refuse(obj):
        raise OSError("could not get source code")

    monkeypatch.setattr("inspect.getsourcelines", refuse)
    check(model(fn))


def test_stale_linecache_entry_is_not_used(monkeypatch):
    filename = "<m10-cell-9>"
    fn = run(SOURCE, filename)
    stale = SOURCE.replace("1.0 / np.sqrt(tau)", "2.0 / np.sqrt(tau)")
    monkeypatch.setitem(linecache.cache, filename,
                        (len(stale), None, stale.splitlines(True), filename))
    monkeypatch.setattr("inspect.getsourcelines",
                        lambda obj: (_ for _ in ()).throw(OSError("no source")))
    m = model(fn)                             # the stale text is refused: read from bytecode
    assert m._source is None
    check(m)


def test_interactive_interpreter_history(monkeypatch):
    """Code typed at the ``>>>`` prompt (file ``<stdin>``) is found in the readline history."""
    history = ["import numpy as np", "x = 1"] + SOURCE.splitlines()[3:] + [""]
    fake = types.SimpleNamespace(get_current_history_length=lambda: len(history),
                                 get_history_item=lambda i: history[i - 1])
    monkeypatch.setitem(sys.modules, "readline", fake)
    namespace = {"__name__": "__main__", "np": np, "param": models.param,
                 "normal": models.normal, "gamma": models.gamma}
    typed = "\n".join(SOURCE.splitlines()[3:]) + "\n"
    exec(compile(typed, "<stdin>", "exec"), namespace)
    check(model(namespace["conjugate"]))


def test_closure_defined_by_exec_with_source():
    source = ("from dcgraph.models import param, normal\n"
              "def make(scale):\n"
              "    def inner(y):\n"
              "        m = param()\n"
              "        m |= normal(0.0, scale)\n"
              "        y |= normal(m, 1.0)\n"
              "    return inner\n")
    namespace = {"__name__": "m10_closure"}
    exec(compile(source, "<string>", "exec"), namespace)
    inner = namespace["make"](2.0)
    bound = model(inner, source=source)(Y)
    theta = np.array([0.7])
    want = stats.norm(0, 2).logpdf(0.7) + stats.norm(0.7, 1).logpdf(Y).sum()
    assert bound.logdensity(theta) == pytest.approx(want, rel=1e-12)
