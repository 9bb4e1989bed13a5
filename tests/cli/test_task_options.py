"""``--model``, ``--param``, ``--start`` and ``--observable`` on every task (``solve``,
``transient``, ``exact``, ``simulate``): the observables beside the usual output,
checked against independent routes (the SIS model's closed-form expansion and
its exact birth-death law, :mod:`derive.models.sis`), JSON that parses, and a
bad ``--observable`` as one sentence with exit status 2."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import mpmath
import pytest
import sympy as sp
from deadlines import deadline
from in_process import run_main

from mfstein.cli import main

ROOT = Path(__file__).resolve().parents[2]

SIS = ["--model", "sis", "--param", "a=0.1", "--param", "beta=2", "--param", "gamma=1"]
VALUES = {"a": sp.Rational(1, 10), "beta": 2, "gamma": 1}


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    """``mfstein ARGV --json`` run in this process (:func:`in_process.run_main`): the
    parsed answer."""
    out = run_main([*argv, "--json"], ROOT, capsys, timeout=180)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _closed(g: sp.Expr) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    from derive.models.sis import closed_form, expansion

    return expansion(g, closed_form(**VALUES))


def _agrees(text: str, digits: int, exact: sp.Expr) -> None:
    """``text`` claims ``digits`` significant digits of ``exact``: all of them true."""
    value = mpmath.mpf(text)
    truth = mpmath.mpf(sp.N(exact, 50))
    assert digits >= 12
    assert abs(value - truth) <= abs(truth) * mpmath.mpf(10) ** (1 - digits), (text, truth)


def test_solve_prints_each_observable_s_expansion_with_true_digits(capsys) -> None:
    data = _json(
        capsys, "solve", *SIS, "--order", "2", "--observable", "infected", "--observable", "I**2"
    )
    I = sp.Symbol("I")
    for name, g in (("infected", I), ("I**2", I**2)):
        e = data["observables"][name]
        for key, exact in zip(("g0", "g1", "g2"), _closed(g), strict=True):
            _agrees(e[key], e["digits"][key], exact)


def test_solve_text_shows_only_true_digits(capsys) -> None:
    assert main(["solve", *SIS, "--observable", "infected"]) == 0
    row = next(r for r in capsys.readouterr().out.splitlines() if r.strip().startswith("infected"))
    g0, g1, _ = _closed(sp.Symbol("I"))
    cells = row.split()  # infected, g0, (n, digits), g1, (n, digits), ...
    for text, exact in ((cells[1], g0), (cells[4], g1)):
        shown = len(text.lstrip("-0.").replace(".", ""))
        assert shown == 12
        _agrees(text, 12, exact)


def test_exact_and_transient_print_the_observable(capsys) -> None:
    from derive.models.sis import exact_law

    N = 10
    law = exact_law(N, "0.1", "2", "1")
    truth = mpmath.fsum(p * k / N for k, p in enumerate(law))
    code = main(["exact", *SIS, "--N", str(N), "--observable", "infected", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    e = data["observables"]["infected"]
    # printed rounded to its digits (docs/design.md, "Printed digits"): off the truth by
    # the claim, 10^-digits relative, plus at most half a unit of its last digit
    half_unit = 10.0 ** (math.floor(math.log10(abs(float(e["mean"])))) - e["digits"] + 1) / 2
    claim = 10.0 ** -e["digits"] * abs(float(truth))
    assert abs(float(e["mean"]) - float(truth)) <= half_unit + claim
    # transient: at t = 40 the trajectory has reached the fixed point, so g(x) and the
    # 1/N coefficient are the stationary ones of the closed form
    code = main(
        ["transient", *SIS, "--start", "0.1", "--t", "0:40:41", "--observable", "I**2", "--json"]
    )
    tr = json.loads(capsys.readouterr().out)["observables"]["I**2"]
    assert code == 0 and tr["mean_field"][0] == pytest.approx(0.01, rel=1e-15)
    from scipy.integrate import solve_ivp  # the mean field on its own: x' = (1-x)(a+bx) - x

    ode = solve_ivp(lambda t, x: (1 - x) * (0.1 + 2 * x) - x, (0, 1), [0.1], rtol=1e-12, atol=1e-14)
    assert tr["mean_field"][1] == pytest.approx(ode.y[0, -1] ** 2, rel=1e-8)
    g0, g1, _ = _closed(sp.Symbol("I") ** 2)
    assert tr["mean_field"][-1] == pytest.approx(float(g0), rel=1e-8)
    assert tr["g1"][-1] == pytest.approx(float(g1), rel=1e-6)
    code = main(["transient", *SIS, "--start", "0.1", "--t", "0:1:2", "--observable", "infected"])
    text = capsys.readouterr().out
    assert code == 0 and "g1[infected]" in text


@pytest.mark.parametrize(
    ("command", "words"),
    [
        (["solve"], "uses q, which is not a symbol of model sis"),
        (["exact", "--N", "5"], "uses q, which is not a symbol of model sis"),
        (["simulate", "--N", "5", "--steps", "1000"], "uses q, which is not a symbol of model sis"),
        (["transient", "--t", "0:1:2"], "uses q, which is not a symbol of model sis"),
        (["transient", "--t", "0:1:2", "--observable", "quadratic"], "--observable quadratic"),
        (["solve", "--observable", "I"], "--observable I is given twice"),
    ],
)
def test_bad_observable_is_one_sentence_and_exit_2(capsys, command, words) -> None:
    bad = "I+q" if "--observable" not in command else "I"
    code = main([*command, *SIS, "--observable", bad])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], err


def test_bad_observable_from_the_command_line() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "mfstein", "solve", *SIS, "--observable", "sin(I)"],
        capture_output=True,
        text=True,
        timeout=deadline(120),
        check=False,
    )
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "may only hold numbers" in out.stderr


@pytest.mark.slow
def test_simulated_observable_covers_the_exact_value(capsys) -> None:
    from derive.models.sis import exact_law

    N = 10
    law = exact_law(N, "0.1", "2", "1")
    truth = float(mpmath.fsum(p * k / N for k, p in enumerate(law)))
    data = _json(
        capsys, "simulate", *SIS, "--N", str(N), "--steps", "400000", "--observable", "infected"
    )
    est = data["observables"]["infected"]
    assert abs(est["mean"] - truth) <= est["ci95"]
