"""Third-party test suites run under ``dcgraph.track`` (every test body traced, every tape
built and linted, by ``corpus_plugin``): each outcome equals the plain run's.

The default run takes two toolz modules; ``-m slow`` runs the corpus: toolz (dev extra, through
dask), networkx's ``utils`` and ``classes`` and five opt_einsum modules (bench extra, through
jax and torch), 2,110 tests.
"""
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

CORPUS = [
    pytest.param("toolz", ["tests/test_functoolz.py", "tests/test_itertoolz.py"], 90,
                 id="toolz-part"),
    pytest.param("toolz", ["."], 190, id="toolz", marks=pytest.mark.slow),
    pytest.param("networkx", ["utils"], 210, id="networkx-utils", marks=pytest.mark.slow),
    pytest.param("networkx", ["classes"], 1300, id="networkx-classes", marks=pytest.mark.slow),
    pytest.param("opt_einsum", [f"tests/test_{m}.py" for m in
                                ("paths", "parser", "blas", "input", "sharing")], 290,
                 id="opt_einsum", marks=pytest.mark.slow),
]
# Known to differ with the default ``values="keep"`` (the tape keeps every value alive): these
# tests assert that objects are collected (networkx graphs by gc.get_objects(), opt_einsum's
# weakref cache of intermediates). With ``values="summary"`` they pass
# (``test_lifetime_tests_pass_with_summary_values``).
KNOWN_LIFETIME = ("::test_memory_leak", "test_sharing.py::test_sharing_nesting[")
LIFETIME_CORPUS = [
    pytest.param("networkx", ["classes"], "test_memory_leak", 12, id="networkx-classes"),
    pytest.param("opt_einsum", ["tests/test_sharing.py"], "test_sharing_nesting", 2,
                 id="opt_einsum-sharing"),
]


def _outcomes(tmp_path: Path, root: Path, paths: list, traced: bool, extra=()) -> dict:
    out = tmp_path / ("traced.json" if traced else "plain.json")
    ini = tmp_path / "empty.ini"
    ini.write_text("[pytest]\n")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "corpus_plugin", "-p", "no:cacheprovider",
           "-c", str(ini), f"--rootdir={root}", "--dcgraph-outcomes", str(out)]
    cmd += [str(root / p) for p in paths] + list(extra)
    if traced:
        cmd += ["--dcgraph-track", "--dcgraph-lint"]
    env = {"PYTHONPATH": f"{HERE}:{HERE.parent.parent}",   # the plugin; this checkout's dcgraph
           "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=3000)
    return json.loads(out.read_text())


@pytest.mark.parametrize("package, paths, at_least", CORPUS)
def test_outcomes_equal_the_plain_run(tmp_path, package, paths, at_least):
    spec = importlib.util.find_spec(package)
    if spec is None:
        pytest.skip(f"{package} is not installed")
    root = Path(spec.origin).parent
    plain = _outcomes(tmp_path, root, paths, traced=False)
    traced = _outcomes(tmp_path, root, paths, traced=True)
    assert len(plain) >= at_least
    assert sum(o == "passed" for o in plain.values()) >= 0.8 * len(plain)   # ran, not skipped
    differ = {k: (plain[k], traced.get(k)) for k in plain if traced.get(k) != plain[k]
              and not any(known in k for known in KNOWN_LIFETIME)}
    assert differ == {}
    assert set(traced) == set(plain)


@pytest.mark.slow
@pytest.mark.parametrize("package, paths, selected, count", LIFETIME_CORPUS)
def test_lifetime_tests_pass_with_summary_values(tmp_path, package, paths, selected, count):
    """The known lifetime failures pass when traced with ``values="summary"``."""
    spec = importlib.util.find_spec(package)
    if spec is None:
        pytest.skip(f"{package} is not installed")
    root = Path(spec.origin).parent
    extra = ["-k", selected]
    plain = _outcomes(tmp_path, root, paths, traced=False, extra=extra)
    summary = _outcomes(tmp_path, root, paths, traced=True,
                        extra=extra + ["--dcgraph-values", "summary"])
    assert sum(o == "passed" for o in plain.values()) == count
    assert summary == plain
