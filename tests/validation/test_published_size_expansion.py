"""The library's supermarket and SIS models against the numbers published in

N. Gast, L. Bortolussi and M. Tribastone, "Size expansions of mean field
approximation: transient and steady-state analysis", Performance Evaluation 129
(2019):

* the two-choice table at rho = 0.9 with queues cut at 10 (b = 10): the mean queue
  length sum_k x_k at order 0, with the 1/N term and with the 1/N^2 term, for
  N = 10 and 20, printed to four decimals;
* the SIS ("malware") example with a = beta = gamma = 1 (infection (1 - x)(1 + x),
  recovery x): the exact E[X] for N = 5 .. 50, printed to seven decimals, and the
  closed form E[X] = pi (1 - 1/(5N)) + (sqrt 5 - 3)/(50 N^2) + o(1/N^2),
  pi = (sqrt 5 - 1)/2;

and the refined mean-field sums stored in rmf_tool's test data (N. Gast,
tests/output_tests/d_choice.pickle: two-choice and three-choice with K = 10
queues, ten digits).  Each value is reproduced through ``mfstein table`` (default
tier) and through :mod:`numeric` (``--run-slow``) to the digits printed
(|ours - printed| <= half a unit of the last printed digit).  The paper's
simulation column is an estimate, not compared.
"""

from __future__ import annotations

import json
import math

import pytest

from derive.models import load_model
from mfstein.cli import main

#: (N, mean field, + 1/N, + 1/N^2) of the paper's two-choice table (rho = 0.9, b = 10).
TWO_CHOICE = [(10, "2.3527", "2.7513", "2.8045"), (20, None, "2.5520", "2.5653")]
#: N -> E[X] of the paper's SIS exact column (a = beta = gamma = 1).
SIS_EXACT = {5: "0.5929041", 10: "0.6055449", 20: "0.6118184", 30: "0.6138977", 50: "0.6155559"}
SIS = {"a": 1, "beta": 1, "gamma": 1}


def _agrees(value, printed: str) -> bool:
    """``value`` rounds to ``printed`` (half a unit of its last decimal)."""
    decimals = len(printed.split(".")[1])
    return abs(float(value) - float(printed)) <= 0.5 * 10.0**-decimals


@pytest.mark.slow  # the same numbers as the table command's test below, by the Python route
def test_two_choice_table_through_numeric():
    import numeric

    m = load_model("supermarket", b=10, d=2)
    sol = numeric.solve(m, {"lam": "0.9"}, dps=20, order=2)
    e = sol.observable(m, "queue_length")
    for N, g0, o1, o2 in TWO_CHOICE:
        orders = (e.g0, e.g0 + e.g1 / N, e.g0 + e.g1 / N + e.g2 / N**2)
        for value, printed in zip(orders, (g0, o1, o2), strict=True):
            assert printed is None or _agrees(value, printed), (N, value, printed)


@pytest.mark.parametrize(
    ("d", "key", "printed"),
    [(2, "pi", "2.3526516396"), (2, "V", "3.9864269872"), (3, "V", "4.1135422112")],
)
def test_rmf_tool_sums(d, key, printed):
    import numeric

    sol = numeric.solve(load_model("supermarket", b=10, d=d), {"lam": "0.9"}, dps=20)
    value = sum(sol.s_star) if key == "pi" else sum(sol.V)
    assert _agrees(value, printed), (d, key, value)


@pytest.mark.slow  # the same numbers as the table command's test below, by the Python route
def test_sis_exact_column_and_closed_form_through_numeric():
    import numeric
    import numeric.exact

    m = load_model("sis")
    for N, printed in SIS_EXACT.items():
        r = numeric.exact.solve(m, SIS, N=N)
        assert _agrees(r.mean[0], printed), (N, r.mean[0], printed)
    sol = numeric.solve(m, SIS, dps=20, order=2)
    e = sol.observable(m, "infected")
    pi = (math.sqrt(5) - 1) / 2
    for N in SIS_EXACT:
        closed = pi * (1 - 1 / (5 * N)) + (math.sqrt(5) - 3) / (50 * N**2)
        assert float(e.g0 + e.g1 / N + e.g2 / N**2) == pytest.approx(closed, rel=1e-14)


def _table(capsys, argv: list[str]) -> list[dict]:
    assert main(["table", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["rows"]


def test_two_choice_table_through_the_table_command(capsys):
    rows = _table(capsys, ["--model", "supermarket", "--param", "b=10", "--param", "lam=0.9",
                           "--observable", "queue_length", "--N", "10,20"])  # fmt: skip
    for row, (N, g0, o1, o2) in zip(rows, TWO_CHOICE, strict=True):
        assert row["N"] == N
        for key, printed in (("mean_field", g0), ("order1", o1), ("order2", o2)):
            assert printed is None or _agrees(row[key], printed), (N, key, row[key])


def test_sis_exact_column_through_the_table_command(capsys):
    rows = _table(capsys, ["--model", "sis", "--param", "a=1", "--param", "beta=1",
                           "--param", "gamma=1", "--observable", "infected", "--exact",
                           "--N", ",".join(map(str, SIS_EXACT))])  # fmt: skip
    pi = (math.sqrt(5) - 1) / 2
    for row, (N, printed) in zip(rows, SIS_EXACT.items(), strict=True):
        assert row["N"] == N and _agrees(row["exact"], printed), (N, row["exact"], printed)
        closed = pi * (1 - 1 / (5 * N)) + (math.sqrt(5) - 3) / (50 * N**2)
        assert float(row["order2"]) == pytest.approx(closed, rel=1e-14)
