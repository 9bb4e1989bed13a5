"""``mfstein table --model ...`` fills every cell it can (issue 32): plain model
files (``sis`` without ``ModelInfo``), ``--start`` in every column, a cell that cannot be
computed is a dash with its reason and the command still exits 0, and a
simulated nonlinear observable at any N.

Each number is checked against a closed form independent of mfstein:

* ``sis``: a one-coordinate birth-death chain (births ``N (2x(1-x) + (1-x)/10)``,
  deaths ``N x``), whose stationary law is the detailed-balance product, summed
  here in exact fractions; its mean-field point is ``(0.9 + sqrt(1.61)) / 4``;
* ``cache``: ``K = 0.7 N`` items, each independently in ``a`` or ``b``
  (``a -> b`` at rate 2, ``b -> a`` at rate 1), so ``N a ~ Binomial(K, 1/3)`` and
  ``E[a b] = (2/9) K (K - 1) / N^2 = (2/9) (0.49 - 0.7/N)`` exactly.
"""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath
import pytest

from mfstein.cli import main

MODELS = '''
import sympy as sp
from derive import Model, Transition
from derive.spec import ModelInfo, StateSpace


def sis():
    x = sp.Symbol("x")
    birth = 2 * x * (1 - x) + sp.Rational(1, 10) * (1 - x)
    return Model("sis", (x,), (), [Transition((1,), birth), Transition((-1,), x)])


def cache():
    # declared on the box: a plain cache is inferred on the simplex a + b = 1
    a, b = sp.symbols("a b")
    return Model("cache", (a, b), (), [Transition((-1, 1), 2 * a), Transition((1, -1), b)],
                 info=ModelInfo(state_space=StateSpace("box")))
'''
STEPS = ["--sim-steps", "200000", "--reps", "2", "--workers", "1", "--seed", "1"]


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("plain") / "plain.py"
    path.write_text(MODELS)
    return str(path)


def sis_moment(N: int, power: int) -> Fraction:
    """E[x^power] of the SIS chain at N by detailed balance, in exact fractions."""
    weights = [Fraction(1)]
    for n in range(N):
        x = Fraction(n, N)
        weights.append(weights[-1] * (2 * x * (1 - x) + (1 - x) / 10) / Fraction(n + 1, N))
    return sum(w * Fraction(n, N) ** power for n, w in enumerate(weights)) / sum(weights)


def cache_ab(N: int) -> Fraction:
    return Fraction(2, 9) * (Fraction(49, 100) - Fraction(7, 10) / N)


def mpf(x: Fraction | str) -> mpmath.mpf:
    if isinstance(x, Fraction):
        return mpmath.mpf(x.numerator) / x.denominator
    return mpmath.mpf(x)


def close(text: str, value: Fraction, digits: int) -> bool:
    with mpmath.workdps(40):
        return abs(mpf(text) - mpf(value)) < mpmath.mpf(10) ** -digits


def covers(sim: dict, value: Fraction) -> bool:
    """The simulation's 95% CI holds ``value``, and is a real (not a wide) interval."""
    mean, ci = mpf(sim["mean"]), mpf(sim["ci95"])
    return 0 < ci < 0.02 * abs(mpf(value)) and abs(mean - mpf(value)) <= ci


def rows(capsys, argv: list[str]) -> list[dict]:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)["rows"]


def test_model_without_parameters_gets_its_exact_value(models, capsys):
    (r,) = rows(capsys, ["table", "--model", f"{models}:sis", "--observable", "x", "--exact",
                         "--N", "10"])  # fmt: skip
    with mpmath.workdps(40):
        assert abs(mpf(r["mean_field"]) - (mpf("0.9") + mpmath.sqrt(mpf("1.61"))) / 4) < 1e-18
    assert close(r["exact"], sis_moment(10, 1), 9) and r["exact_note"] is None


def test_nonlinear_observable_is_simulated_at_large_N_beside_every_column(models, capsys):
    """x**2 at N = 200 was refused ("needs the marginal histograms"), losing the
    columns already computed; now it is simulated in the event loop."""
    argv = ["table", "--model", f"{models}:sis", "--observable", "x**2", "--exact", "--simulate"]
    small, large = rows(capsys, [*argv, "--N", "10,200", *STEPS])
    for r in (small, large):
        assert close(r["exact"], sis_moment(r["N"], 2), 9)
        assert r["exact_note"] is None and r["simulation_note"] is None
    assert covers(small["simulation"], sis_moment(10, 2))
    # at N = 200 the order-2 remainder O(1/N^3) is far inside the CI
    assert covers(large["simulation"], Fraction(large["order2"]))


def test_start_fixes_the_conservation_law_in_every_column(models, capsys):
    argv = ["table", "--model", f"{models}:cache", "--observable", "a*b", "--start", "0.7,0"]
    for r in rows(capsys, [*argv, "--exact", "--simulate", "--N", "10,200", *STEPS]):
        N = r["N"]
        assert close(r["mean_field"], cache_ab(10**30), 18)  # the N -> inf limit
        assert close(r["order1"], cache_ab(N), 18) and close(r["order2"], cache_ab(N), 18)
        assert close(r["exact"], cache_ab(N), 9)
        assert covers(r["simulation"], cache_ab(N))


def test_a_cell_that_cannot_be_computed_is_a_dash_with_its_reason(models, capsys):
    """Started empty (a + b = 0) the cache's chain has no jump, so the simulation
    has nothing to estimate; the table keeps the other columns."""
    argv = ["table", "--model", f"{models}:cache", "--observable", "a*b", "--exact",
            "--simulate", "--start", "0,0", "--N", "10", *STEPS]  # fmt: skip
    (r,) = rows(capsys, argv)
    assert r["mean_field"] is not None and r["exact"] is not None
    assert r["simulation"] is None and "absorbing state" in r["simulation_note"]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2].split()[-1] == "-"  # the simulation cell
    assert any(line.startswith("N = 10: simulation: the chain of model cache") for line in out)


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--gamma", "0.1", "--alpha", "0.05", "--start", "0.5"], "--start needs --model"),
        (["--model", "{models}:cache", "--observable", "a", "--start", "0.7"], "start"),
        (["--model", "{models}:cache", "--observable", "a", "--start=-0.1,0.5"], "start"),
        (["--model", "{models}:cache", "--observable", "a", "--start", "0.7,0", "--simulate",
          "--reps", "1"], "reps"),
    ],
)
def test_bad_start_or_run_option_is_one_sentence_and_exit_2(models, argv, words, capsys):
    argv = [a.replace("{models}", models) for a in argv]
    assert main(["table", "--N", "10", *argv]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and words in err and not captured.out
