"""``mfstein table --model ... --observable G`` (mfstein/cli/model_table.py) and
its result type :class:`sim.accuracy.AccuracyTable`.

The user model in a file is the birth-death process of ``examples/birth_death.py``:
its N*cap slots are independent two-state chains, so the stationary count is
Binomial(N cap, p) with p = lam/(1 + lam), and E[x] = cap p, E[x^2] = (cap p)^2 +
cap p (1 - p)/N exactly -- a closed form independent of every mfstein route.
"""

from __future__ import annotations

import csv
import io
import json
from fractions import Fraction
from pathlib import Path

import mpmath
import pytest

from mfstein.cli import main

ROOT = Path(__file__).resolve().parents[2]
BD = [
    "table",
    "--model",
    f"{ROOT / 'examples' / 'birth_death.py'}:birth_death",
    "--param",
    "lam=0.5",
    "--param",
    "cap=2",
    "--N",
    "5,20",
]
SIR = [
    "table",
    "--model",
    "sir",
    *("--param", "beta=2", "--param", "gamma=1", "--param", "rho=1", "--param", "a=0.1"),
    "--observable",
    "infected",
    "--N",
    "10,50",
]
P = Fraction(1, 3)  # lam / (1 + lam) at lam = 1/2
CAP = 2


def second_moment(N: int) -> Fraction:
    """E[x^2] of the birth-death chain: (cap p)^2 + cap p (1 - p) / N."""
    return (CAP * P) ** 2 + CAP * P * (1 - P) / N


def close(text: str, value: Fraction, digits: int) -> bool:
    """``text`` agrees with ``value`` to ``digits`` decimals (compared at 40 digits)."""
    with mpmath.workdps(40):
        diff = mpmath.mpf(text) - mpmath.mpf(value.numerator) / value.denominator
        return abs(diff) < mpmath.mpf(10) ** -digits


def test_user_model_json_rows_match_the_binomial_closed_form(capsys):
    assert main([*BD, "--observable", "x**2", "--exact", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"model", "observable", "rows"}
    assert out["model"] == "birth-death" and [r["N"] for r in out["rows"]] == [5, 20]
    for r in out["rows"]:
        assert {"N", "mean_field", "order1", "order2", "exact", "simulation"} <= set(r)
        assert close(r["mean_field"], (CAP * P) ** 2, 18)
        # E[x^2] is exactly linear in 1/N: order 1 is exact, order 2 adds nothing
        assert close(r["order1"], second_moment(r["N"]), 18)
        assert close(r["order2"], second_moment(r["N"]), 18)
        assert close(r["exact"], second_moment(r["N"]), 9)
        assert r["simulation"] is None and r["simulation_seed"] is None


def test_user_model_csv_one_row_per_N(capsys):
    assert main([*BD, "--observable", "x", "--order", "1", "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["N"] for r in rows] == ["5", "20"]
    for r in rows:
        assert close(r["mean_field"], CAP * P, 18) and close(r["order1"], CAP * P, 18)
        assert r["order2"] == "" and r["exact"] == "" and r["simulation_mean"] == ""


def test_sir_text_prints_every_row_and_order_two_is_closest(capsys):
    assert main([*SIR, "--exact"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("infected = I, sir model")
    body = {int(line.split()[0]): line.split() for line in lines[2:4]}
    assert sorted(body) == [10, 50]
    for cells in body.values():
        mf, o1, o2, ex = (mpmath.mpf(c) for c in cells[1:5])
        assert abs(o2 - ex) < abs(o1 - ex) < abs(mf - ex)
    assert lines[-1] == "no simulation"


def test_simulation_covers_the_exact_value_and_reports_its_seed(tmp_path, capsys):
    png = tmp_path / "bd.png"
    argv = [*BD, "--observable", "x**2", "--simulate", "--sim-steps", "20000", "--reps", "2"]
    assert main([*argv, "--seed", "7", "--workers", "1", "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(tmp_path.glob("*.tmp*"))  # nothing half-written beside it
    assert main([*argv, "--seed", "7", "--workers", "1", "--json"]) == 0
    out = capsys.readouterr().out
    assert "seed = 7" in out
    rows = json.loads(out.splitlines()[-1])["rows"]
    for r in rows:
        assert r["simulation_seed"] == 7
        mean, ci = (mpmath.mpf(r["simulation"][k]) for k in ("mean", "ci95"))
        exact = second_moment(r["N"])
        assert 0 < ci < 0.1
        assert abs(mean - mpmath.mpf(exact.numerator) / exact.denominator) <= ci


@pytest.mark.parametrize(
    "g, words",
    [
        ("y", "not a symbol"),
        ("x +", "syntax error"),
        ("x < 1", "may only hold numbers"),
        ("sqrt(-1 - x)", "not a finite real number"),
    ],
)
def test_bad_observable_is_one_sentence_and_exit_2(g, words, capsys):
    assert main([*BD, "--observable", g]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err and "observable" in err


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--observable", "x", "--gamma", "0.1"], "--gamma"),
        (["--observable", "x", "--b", "3"], "--b"),
        (["--observable", "x", "--order", "3"], "order must be an integer >= 1 and <= 2"),
        ([], "observable is required"),
    ],
)
def test_conflicting_flags_exit_2(extra, words, capsys):
    assert main([*BD, *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err


@pytest.mark.parametrize(
    "argv, words",
    [
        (
            ["--N", "10", "--observable", "busy", "--gamma", "0.1", "--alpha", "0.05"],
            "--observable",
        ),
        (["--N", "10"], "gamma and alpha are required"),
    ],
)
def test_supermarket_table_refuses_model_options(argv, words, capsys):
    assert main(["table", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err


def test_python_entry_returns_an_accuracy_table():
    import sim
    from derive.models import load_model

    m = load_model(f"{ROOT / 'examples' / 'birth_death.py'}:birth_death", cap=2)
    tab = sim.accuracy_table(m, {"lam": "0.5"}, "x**2", [4], exact=False)
    assert isinstance(tab, sim.AccuracyTable)
    assert close(tab.rows[0]["order1"], second_moment(4), 18)
    assert json.loads(tab.to_json()) == tab.to_dict()
    assert len(repr(tab).splitlines()) <= 12 and "N = 4" in repr(tab)
    assert tab._repr_html_().startswith("<table>")


def test_parameter_in_N_is_evaluated_at_each_N(capsys):
    argv = ["table", "--model", "supermarket", "--param", "b=4", "--param"]
    argv += ["lam=1 - 0.1/N**0.05", "--observable", "queue_length", "--N", "10,100"]
    assert main([*argv, "--order", "1"]) == 0
    text = capsys.readouterr().out
    assert main([*argv, "--order", "1", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    for r in rows:
        with mpmath.workdps(40):
            lam = 1 - mpmath.mpf("0.1") / mpmath.power(r["N"], mpmath.mpf("0.05"))
            assert abs(mpmath.mpf(r["params"]["lam"]) - lam) < mpmath.mpf(10) ** -20
        assert f"N = {r['N']}: lam = {r['params']['lam']}" in text
    # heavier traffic at larger N: the mean-field queue grows
    assert mpmath.mpf(rows[1]["mean_field"]) > mpmath.mpf(rows[0]["mean_field"])


SIS = [
    "table",
    "--model",
    f"{ROOT / 'tests' / 'plain_models' / 'sis.py'}:sis",
    "--start",
    "0.5",
    "--N",
    "5,20",
    "--exact",
]
SIMULATE = ["--simulate", "--sim-steps", "20000", "--reps", "2", "--workers", "1", "--seed", "3"]
TWO = ["x", "x**2 + 1/(1 + x)"]


@pytest.mark.parametrize(
    "simulate",
    # each observable set compiles its own event loop: three compilations
    [False, pytest.param(True, marks=pytest.mark.slow)],
)
def test_repeated_observable_gives_each_its_own_table(simulate, capsys):
    """``--observable`` twice on a plain model (no parameters, its sum from the start):
    each observable's rows in the JSON, CSV and text equal, cell for cell, those of
    its own one-observable run (mean field, orders, exact, simulation and notes)."""
    base = [*SIS, *(SIMULATE if simulate else [])]
    alone = {}
    for g in TWO:
        assert main([*base, "--observable", g, "--json"]) == 0
        alone[g] = json.loads(capsys.readouterr().out)
    both = [*base, *(a for g in TWO for a in ("--observable", g))]
    assert main([*both, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"] == "sis" and out["observables"] == TWO
    assert out["tables"] == [alone[g] for g in TWO]
    rows = [r for t in out["tables"] for r in t["rows"]]
    assert all(r["exact"] and (r["simulation"] is not None) == simulate for r in rows)
    assert main([*both, "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["observable"], r["N"]) for r in rows] == [(g, n) for g in TWO for n in ("5", "20")]
    for r in rows:
        (one,) = [x for x in alone[r["observable"]]["rows"] if x["N"] == int(r["N"])]
        assert r["exact"] == one["exact"] and r["order2"] == one["order2"]
        assert r["simulation_mean"] == (one["simulation"] or {}).get("mean", "")
    assert main(both) == 0
    text = capsys.readouterr().out
    assert text.count("sis model, order 2") == 2
    assert text.count("seed = 3" if simulate else "no simulation") == 1


def test_the_same_observable_twice_is_one_sentence(capsys):
    assert main([*BD, "--observable", "x", "--observable", " x"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "given twice" in err
