"""pytest plugin for running third-party test suites under ``dcgraph.track``.

    python -m pytest -p corpus_plugin --dcgraph-track [--dcgraph-lint] [--dcgraph-outcomes F]

``--dcgraph-track`` runs each test function's body (with its fixtures as arguments) through
``dcgraph.track``; ``--dcgraph-lint`` also builds and lints every tape (a lint failure fails
the test); ``--dcgraph-values summary`` traces with ``values="summary"``;
``--dcgraph-outcomes F`` writes ``{test id: outcome}`` as JSON at the end, so that a
plain run and a traced run can be compared (``test_rel_corpus.py``).
"""
from __future__ import annotations

import inspect
import json

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("dcgraph")
    group.addoption("--dcgraph-track", action="store_true", help="trace each test body")
    group.addoption("--dcgraph-lint", action="store_true", help="build and lint every tape")
    group.addoption("--dcgraph-outcomes", default=None, help="write test outcomes to this file")
    group.addoption("--dcgraph-values", default="keep", choices=("keep", "summary"),
                    help="track(..., values=...): 'summary' keeps no object alive")


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    config = pyfuncitem.config
    if not config.getoption("--dcgraph-track"):
        return None
    fn = pyfuncitem.obj
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        return None                      # run by their own plugins, untraced
    import dcgraph
    args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    lint = config.getoption("--dcgraph-lint")
    try:
        _, tape = dcgraph.track(fn, values=config.getoption("--dcgraph-values"), **args)
    except BaseException as exc:
        tape = getattr(exc, "tape", None)
        if lint and isinstance(tape, dcgraph.Tape):
            tape.lint()
        raise
    if lint:
        tape.lint()
    return True


class _Outcomes:
    def __init__(self, path: str):
        self.path, self.outcomes = path, {}

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or report.outcome != "passed":
            previous = self.outcomes.get(report.nodeid)
            if previous is None or previous == "passed":
                self.outcomes[report.nodeid] = "xfailed" if hasattr(report, "wasxfail") \
                    and report.outcome == "skipped" else report.outcome

    def pytest_sessionfinish(self, session):
        with open(self.path, "w", encoding="utf-8") as out:
            json.dump(self.outcomes, out, indent=0, sort_keys=True)


def pytest_configure(config):
    path = config.getoption("--dcgraph-outcomes")
    if path:
        config.pluginmanager.register(_Outcomes(path), "dcgraph-outcomes")
