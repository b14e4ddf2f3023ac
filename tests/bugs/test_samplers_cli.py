"""``dcgraph bugs sample``: printed assignment and summary, CSV and SVG output, errors."""
import argparse

import numpy as np
import pytest

from bugs_compile_cases import EXAMPLES
from dcgraph.bugs.cli_sample import add_parser, main

PUMPS = EXAMPLES / "pumps"


def parse(argv):
    parser = argparse.ArgumentParser(prog="dcgraph bugs")
    add_parser(parser.add_subparsers(dest="bugs_command"))
    return parser.parse_args(argv)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_sample_prints_assignment_and_summary_and_writes_csv(tmp_path, capsys):
    csv = tmp_path / "draws.csv"
    args = parse(["sample", str(PUMPS / "model.txt"), str(PUMPS / "data.txt"), str(PUMPS / "inits.txt"),
                  "--chains", "2", "--draws", "50", "--warmup", "50", "--monitor", "alpha,beta",
                  "--csv", str(csv), "--svg", str(tmp_path / "trace.svg")])
    assert args.run is main and main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == ["[1] conjugate_dgamma_dpois (vectorised) sampler: theta[1:10] (10 nodes)",
                         "[2] slice (beta integrated out) sampler: alpha",
                         "[3] conjugate_dgamma_dgamma (with alpha) sampler: beta"]
    assert lines[3].split()[:8] == ["node", "mean", "sd", "MC_error", "val2.5pc", "median", "val97.5pc", "start"]
    assert [l.split()[0] for l in lines[5:7]] == ["alpha", "beta"]
    assert lines[5].split()[7:9] == ["51", "100"]                 # start, sample (OpenBUGS columns)
    table = np.genfromtxt(csv, delimiter=",", names=True)
    assert table.dtype.names[:4] == ("chain", "draw", "alpha", "beta") and len(table) == 100
    assert (tmp_path / "trace.svg").read_text().lstrip().startswith("<?xml")


def test_sample_reports_bad_monitor(capsys):
    args = parse(["sample", str(PUMPS / "model.txt"), str(PUMPS / "data.txt"), "--monitor", "gamma"])
    assert main(args) == 2
    assert "cannot monitor 'gamma'" in capsys.readouterr().err
