"""The rows of the accuracy table (sim.observable_table.accuracy_table)."""

from __future__ import annotations

import json

import mpmath
import pytest

from derive.models import load_model
from mfstein.ground.errors import ParameterError
from sim.observable_table import accuracy_table, parameter_at

SIR = {"beta": "2", "gamma": "1", "rho": "1", "a": "0.1"}


def test_heavy_traffic_quadratic_row_is_the_papers_table_1():
    """The core paper's Table 1 (gamma = 0.1, alpha = 0.05), "Asymptotic Tight Bound"
    row: 3.1872 at N = 10 and 3.5499 at N = 100 (its published digits)."""
    m = load_model("supermarket", b=10, d=2)
    tab = accuracy_table(m, {"lam": "1 - 0.1/N**0.05"}, "quadratic", [10, 100], exact=False)
    rows = tab["rows"]
    assert [r["mean_field"][:6] for r in rows] == ["3.1872", "3.5499"]
    with mpmath.workdps(40):  # every printed digit of lam = 1 - 0.1/10^0.05 holds
        lam = 1 - mpmath.mpf(1) / 10 / mpmath.power(10, mpmath.mpf(1) / 20)
        assert abs(mpmath.mpf(rows[0]["params"]["lam"]) - lam) < mpmath.mpf(10) ** -24
    assert rows[0]["order2"] is None and rows[0]["exact"] is None
    json.dumps(tab)  # JSON-ready


def test_sir_rows_order_two_is_closest_to_exact():
    m = load_model("sir")
    tab = accuracy_table(m, SIR, "infected", [10, 50], exact=True, dps=15)
    assert tab["observable"] == "infected" and tab["expression"] == "I"
    for r in tab["rows"]:
        exact = mpmath.mpf(r["exact"])
        errs = [abs(mpmath.mpf(r[k]) - exact) for k in ("mean_field", "order1", "order2")]
        assert errs[2] < errs[1] < errs[0]
        assert r["simulation"] is None and r["exact_note"] is None


def test_exact_too_large_is_a_note():
    m = load_model("supermarket", b=6, d=2)
    tab = accuracy_table(m, {"lam": "0.9"}, "busy", [200], order=1, exact_max_states=1000)
    row = tab["rows"][0]
    assert row["exact"] is None and "states" in row["exact_note"]
    assert row["order2"] is None


def test_user_model_from_a_file(tmp_path):
    src = tmp_path / "bd.py"
    src.write_text(
        "import sympy as sp\n"
        "from derive import Model, Transition\n"
        "from derive.spec import ModelInfo, Parameter, StateSpace\n"
        "def birth_death():\n"
        "    x, lam = sp.symbols('x lam')\n"
        "    return Model('bd', (x,), (lam,), [Transition((1,), lam*(1 - x)), "
        "Transition((-1,), x)], info=ModelInfo(parameters=(Parameter('lam', low=0),), "
        "state_space=StateSpace('box'), observables={'occupancy': 'x', 'pairs': x**2}))\n"
    )
    m = load_model(f"{src}:birth_death")
    tab = accuracy_table(m, {"lam": "2"}, "pairs", [5, 20], exact=True, dps=15)
    # the stationary law is Binomial(N, lam/(1+lam)): E[x^2] = p^2 + p(1-p)/N exactly
    p = mpmath.mpf(2) / 3
    for r in tab["rows"]:
        N = r["N"]
        assert float(r["exact"]) == pytest.approx(float(p**2 + p * (1 - p) / N), rel=1e-9)
        assert mpmath.mpf(r["order1"]) == pytest.approx(p**2 + p * (1 - p) / N, rel=1e-12)


@pytest.mark.parametrize(
    ("value", "words"),
    [("1 - q/N", "only depend on N"), ("1 -* N", "not a valid"), ("N.real", "may only")],
)
def test_bad_parameter_expressions(value, words):
    with pytest.raises(ParameterError, match=words):
        parameter_at("lam", value, 10, 20)


def test_bad_parameter_in_the_table_is_one_sentence():
    m = load_model("sir")
    with pytest.raises(ParameterError, match="parameter beta"):
        accuracy_table(m, {**SIR, "beta": "two and a half"}, "infected", [10], exact=False)


def test_quadratic_with_a_non_identity_M_is_simulated():
    """N E[(S - s*)^T M (S - s*)] with M != I (a dash before): the simulator's estimate
    of the centred form at the table's s*, times N, covers the exact value."""
    m = load_model("sir")
    g = ("quadratic", "diag:1,2,0")
    opts = {"steps": 400_000, "reps": 2, "seed": 1, "workers": 1}
    (row,) = accuracy_table(m, SIR, g, [10], dps=15, simulate=True, sim_options=opts)["rows"]
    assert row["simulation_note"] is None and row["exact_note"] is None
    mean, ci = (mpmath.mpf(row["simulation"][k]) for k in ("mean", "ci95"))
    exact = mpmath.mpf(row["exact"])
    assert 0 < ci < 0.02 * exact and abs(mean - exact) <= ci, (row, exact)


def test_centred_quadratic_in_the_loop_is_the_simulators_own_n_mse():
    """Two routes through one trajectory: the centred form with M = I integrated by
    the event loop, and the loop's by-parts sum of squares (n_mse)."""
    from numeric import solve
    from sim import simulate
    from sim.observable_table import centred_quadratic

    m = load_model("sir")
    g = centred_quadratic(m, "identity", solve(m, SIR, dps=20).s_star)
    r = simulate(m, SIR, N=10, steps=200_000, reps=2, seed=1, workers=1, observables=[g])
    est = next(iter(r.observables.values()))
    assert 10 * float(est.mean) == pytest.approx(float(r.n_mse.mean), rel=1e-12)
    assert 10 * float(est.ci95) == pytest.approx(float(r.n_mse.ci95), rel=1e-9)
