"""Summary tables as text: golden renders outside a terminal (natural width), split to a
terminal's width, through rich, and as HTML; nothing printed, no number or name ever cut."""

import io

import numpy as np
import pytest
from rich.console import Console

from dcgraph.infer import NUTS, Target, sample, summary
from dcgraph.infer.summary import Summary, SummaryRow
from dcgraph.infer.summary_table import format_number

ROWS = [
    SummaryRow("alpha0", 2.0, 0.1234567, 0.001234, 1.8, 2.0, 2.2, 1001, 4000, 3500.4, 2900.6, 1.0004),
    SummaryRow("beta.c[3]", -0.0715812, 0.0301, 0.000521, -0.131, -0.0716, -0.0127, 1001, 4000, 350.2, 3100.0, 1.0123),
    SummaryRow("a_very_long_parameter_name[12,3]", 123456789.125, 0.000012345, 3.2e-07, 123456788.9, 123456789.1,
               123456789.4, 1001, 4000, 4100.0, 3900.0, 0.9995),
]

PLAIN = """\
node                                   mean         sd   MC_error   val2.5pc     median  val97.5pc  start  sample  ess_bulk  ess_tail  r_hat  flags
-------------------------------------------------------------------------------------------------------------------------------------------------------
alpha0                                2.000     0.1235   0.001234      1.800      2.000      2.200   1001    4000      3500      2901  1.000
beta.c[3]                          -0.07158    0.03010  0.0005210    -0.1310   -0.07160   -0.01270   1001    4000       350      3100  1.012  r_hat ess
a_very_long_parameter_name[12,3]  123456789  1.234e-05  3.200e-07  123456789  123456789  123456789   1001    4000      4100      3900  1.000
4 chains x 1000 draws
! 3 transitions after warm-up diverged: the draws may be biased (raise target_accept or reparameterise)
! R-hat above 1.01 for beta.c[3]: the chains disagree; run longer
! bulk or tail ESS below 100 per chain for beta.c[3]
"""

SPLIT_72 = """\
node                                   mean         sd   MC_error
-----------------------------------------------------------------
alpha0                                2.000     0.1235   0.001234
beta.c[3]                          -0.07158    0.03010  0.0005210
a_very_long_parameter_name[12,3]  123456789  1.234e-05  3.200e-07

node                               val2.5pc     median  val97.5pc
-----------------------------------------------------------------
alpha0                                1.800      2.000      2.200
beta.c[3]                           -0.1310   -0.07160   -0.01270
a_very_long_parameter_name[12,3]  123456789  123456789  123456789

node                              start  sample  ess_bulk
---------------------------------------------------------
alpha0                             1001    4000      3500
beta.c[3]                          1001    4000       350
a_very_long_parameter_name[12,3]   1001    4000      4100

node                              ess_tail  r_hat  flags
------------------------------------------------------------
alpha0                                2901  1.000
beta.c[3]                             3100  1.012  r_hat ess
a_very_long_parameter_name[12,3]      3900  1.000
4 chains x 1000 draws
! 3 transitions after warm-up diverged: the draws may be biased (raise target_accept or reparameterise)
! R-hat above 1.01 for beta.c[3]: the chains disagree; run longer
! bulk or tail ESS below 100 per chain for beta.c[3]
"""

RICH_TERMINAL_72 = """\
                     Posterior summary

  node                                    mean          sd
 ──────────────────────────────────────────────────────────
  alpha0                                 2.000      0.1235
  beta.c[3]                           -0.07158     0.03010
  a_very_long_parameter_name[12,3]   123456789   1.234e-05


  node                                MC_error    val2.5pc
 ──────────────────────────────────────────────────────────
  alpha0                              0.001234       1.800
  beta.c[3]                          0.0005210     -0.1310
  a_very_long_parameter_name[12,3]   3.200e-07   123456789


  node                                  median   val97.5pc   start
 ──────────────────────────────────────────────────────────────────
  alpha0                                 2.000       2.200    1001
  beta.c[3]                           -0.07160    -0.01270    1001
  a_very_long_parameter_name[12,3]   123456789   123456789    1001


  node                               sample   ess_bulk   ess_tail
 ─────────────────────────────────────────────────────────────────
  alpha0                               4000       3500       2901
  beta.c[3]                            4000        350       3100
  a_very_long_parameter_name[12,3]     4000       4100       3900


  node                               r_hat   flags
 ──────────────────────────────────────────────────────
  alpha0                             1.000
  beta.c[3]                          1.012   r_hat ess
  a_very_long_parameter_name[12,3]   1.000

4 chains x 1000 draws
! 3 transitions after warm-up diverged: the draws may be biased (raise
target_accept or reparameterise)
! R-hat above 1.01 for beta.c[3]: the chains disagree; run longer
! bulk or tail ESS below 100 per chain for beta.c[3]
"""


def golden_summary():
    return Summary(ROWS, 4, 1000, divergences=3)


def test_plain_text_is_the_natural_width_table_with_flags_and_notes():
    s = golden_summary()
    assert s.render() == PLAIN
    assert str(s) == PLAIN == repr(s)  # pytest's stdout is not a terminal: natural width, never 80 columns
    assert max(len(line) for line in PLAIN.splitlines()) > 120


def test_split_render_fits_the_width_and_keeps_every_number_whole():
    text = golden_summary().render(72)
    assert text == SPLIT_72
    table_lines = [line for line in text.splitlines() if not line.startswith("!")]
    assert max(len(line) for line in table_lines) <= 72
    for token in ("123456789", "a_very_long_parameter_name[12,3]", "0.0005210", "1.234e-05", "-0.07158"):
        assert token in text
    assert "…" not in text


def test_rich_render_on_a_narrow_terminal_splits_instead_of_cutting():
    buf = io.StringIO()
    Console(file=buf, width=72, force_terminal=True, color_system=None).print(golden_summary())
    text = "\n".join(line.rstrip() for line in buf.getvalue().splitlines()) + "\n"
    assert text == RICH_TERMINAL_72
    assert "…" not in text and "123456789" in text


def test_html_repr_escapes_names_and_flags_cells():
    rows = [ROWS[1]._replace(name="<b>&x")]
    page = Summary(rows, 4, 1000, divergences=0)._repr_html_()
    assert "&lt;b&gt;&amp;x" in page and "<b>&x" not in page
    assert page.count('style="color:#b00"') == 3  # r_hat, ess_bulk, ess_tail
    assert "val97.5pc" in page and "no divergences" in page


@pytest.mark.parametrize("x, text", [
    (2.0, "2.000"), (0.0715812, "0.07158"), (123456.789, "123457"), (123456789.125, "123456789"),
    (1.2e-5, "1.200e-05"), (3e20, "3.000e+20"), (0.0, "0.0"), (float("nan"), "nan"), (-float("inf"), "-inf"),
])
def test_numbers_keep_four_significant_digits_and_every_integer_digit(x, text):
    assert format_number(x) == text


def test_flags_follow_stan_and_arviz_thresholds():
    s = golden_summary()
    assert s.flagged == {"beta.c[3]": ["r_hat", "ess"]}
    rows = [ROWS[0]._replace(ess_tail=399.0), ROWS[0]._replace(name="b", rhat=float("nan"))]
    assert Summary(rows, 4, 1000).flagged == {"alpha0": ["ess"], "b": ["r_hat"]}


def test_summary_of_a_run_names_incomplete_chains_and_refuses_no_draws(capsys):
    target = Target(logdensity_and_grad=lambda q: (-0.5 * q.dot(q), -q), dim=2)
    result = sample(target, NUTS(), draws=100, warmup=100, chains=2, seed=0, parallel=False)
    s = summary(result)
    assert capsys.readouterr().out == ""
    assert s.names == ["theta[1]", "theta[2]"] and s["theta[1]"].start == 101 and s["theta[1]"].sample == 200
    with pytest.raises(ValueError, match="no draws to summarise"):
        summary(np.zeros((2, 0, 3)))
