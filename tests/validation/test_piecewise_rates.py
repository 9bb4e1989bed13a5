"""Issue 23: rates as users write them.

``Min``, ``Max``, ``Abs``, ``Heaviside`` are written as ``Piecewise``
(:func:`derive.model.piecewise_form`), which SymPy differentiates branch by
branch and every back end prints: away from a kink, ``V`` and ``W`` are those
of the model written with the active branch only; a fixed point on a kink is
refused in one sentence; the exact chain and the simulation of such a model
agree.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from derive import Model, Transition
from derive.model import kinks, piecewise_form
from derive.spec import ModelInfo, Parameter, StateSpace
from mfstein.ground.errors import ParameterError

x, lam = sp.symbols("x lam")


def _station(departure: sp.Expr, arrival: sp.Expr = lam, name: str = "station") -> Model:
    """Arrivals at rate ``arrival``, departures at rate ``departure`` (one queue per unit)."""
    return Model(
        name,
        (x,),
        (lam,),
        [Transition((1,), arrival, "arrival"), Transition((-1,), departure, "departure")],
        info=ModelInfo(
            parameters=(Parameter("lam", low=0),),
            state_space=StateSpace("orthant"),
            reference=(sp.Rational(1, 2),),
        ),
    )


def test_min_max_abs_heaviside_become_piecewise() -> None:
    for rate in (sp.Min(x, 2), sp.Max(x, 1), sp.Abs(x - 1), sp.Heaviside(x - 1) + x):
        pw = piecewise_form(rate)
        assert not pw.has(sp.Min, sp.Max, sp.Abs, sp.Heaviside) and pw.has(sp.Piecewise)
        for v in (sp.Rational(1, 3), sp.Rational(5, 2)):  # same function off the kink
            assert pw.subs(x, v) == rate.subs(x, v)
        assert not sp.diff(pw, x, 2).has(sp.DiracDelta)
    assert kinks(piecewise_form(sp.Min(x, 2))) == [x - 2]


@pytest.mark.parametrize(
    "departure",
    [sp.Min(x**2, 2), -sp.Max(-(x**2), -2), sp.Piecewise((x**2, x < sp.sqrt(2)), (2, True))],
    ids=["Min", "Max", "Piecewise"],
)
def test_v_and_w_are_those_of_the_active_branch(departure) -> None:
    """lam = 1.5: x* = sqrt(1.5) < sqrt(2), where the branch x^2 is active."""
    from numeric.meanfield.entry import solve as solve_model

    kinked = solve_model(_station(departure), {"lam": "1.5"}, dps=20, order=2)
    branch = solve_model(_station(x**2, name="branch"), {"lam": "1.5"}, dps=20, order=2)
    for name in ("s_star", "V", "A"):
        for a, b in zip(getattr(kinked, name), getattr(branch, name), strict=True):
            assert abs(a - b) < 1e-18
    for a, b in ((kinked.W, branch.W), (kinked.B, branch.B)):
        assert abs(a[0, 0] - b[0, 0]) < 1e-18
    # the branch model's own closed forms: x* = sqrt(lam), J = -2 x*, W = Q/(2|J|) = lam/(2 x*)
    xs = float(np.sqrt(1.5))
    assert float(kinked.W[0, 0]) == pytest.approx(1.5 / (2 * xs), rel=1e-14)


def test_capped_arrival_away_from_its_kink() -> None:
    from numeric.meanfield.entry import solve as solve_model

    capped = solve_model(_station(x, lam * sp.Min(1, 3 - x)), {"lam": "1.5"}, dps=20)
    plain = solve_model(_station(x, name="plain"), {"lam": "1.5"}, dps=20)
    assert abs(capped.constant - plain.constant) < 1e-18 and abs(capped.W[0, 0] - 1.5) < 1e-18


def test_fixed_point_on_a_kink_is_refused() -> None:
    from numeric.meanfield.entry import solve as solve_model

    with pytest.raises(ParameterError) as exc:
        solve_model(_station(sp.Min(x**2, 2)), {"lam": "2"}, dps=15)  # x* = sqrt(2)
    text = str(exc.value)
    assert "lies on the kink" in text and "differentiable" in text and "\n" not in text


def test_exact_chain_and_simulation_agree_for_a_min_rate() -> None:
    from numeric.exact.general import solve as solve_exact
    from sim import simulate

    model = _station(sp.Min(x, 1))  # an M/M/c-like station: c = N servers
    params = {"lam": "0.8"}
    exact = solve_exact(model, params, N=10, truncation=3)
    sim = simulate(model, params, N=10, truncation=3, steps=4 * 10**5, reps=2, seed=3,
                         workers=1)
    assert abs(float(sim.n_mse.mean) - exact.n_mse) < 3 * float(sim.n_mse.ci95) + 0.02
    assert abs(float(sim.mean.mean[0]) - exact.mean[0]) < 3 * float(sim.mean.ci95[0]) + 1e-3


def test_transient_of_a_min_rate_is_that_of_its_active_branch() -> None:
    """From x(0) = 1/2 the mean field of Min(x^2, 2) climbs to sqrt(1.5) < sqrt(2): the
    path never reaches the kink, so x(t), V(t), W(t) are those of the branch x^2 (the
    transient once ended in an internal error on Min)."""
    from numeric.expansion.transient import transient

    times = [0.0, 0.5, 1.0, 3.0]
    kinked = transient(_station(sp.Min(x**2, 2)), {"lam": "1.5"}, times=times, start=["0.5"])
    branch = transient(_station(x**2, name="branch"), {"lam": "1.5"}, times=times, start=["0.5"])
    assert kinked.x[-1, 0] > 1.1
    for name in ("x", "V", "W"):
        np.testing.assert_array_equal(getattr(kinked, name), getattr(branch, name))


def test_sign_is_piecewise_and_gives_the_active_branch() -> None:
    """sign ended in an internal error (an unevaluated Derivative no back end prints)."""
    from numeric.meanfield.entry import solve as solve_model

    rate = x * (3 + sp.sign(x - 3))  # 2x below the kink at 3, 4x above it
    assert not Transition((-1,), rate).rate.has(sp.sign)
    signed = solve_model(_station(rate), {"lam": "1.5"}, dps=20)
    branch = solve_model(_station(2 * x, name="branch"), {"lam": "1.5"}, dps=20)
    assert abs(signed.constant - branch.constant) < 1e-18
    assert abs(signed.s_star[0] - sp.Rational(3, 4)) < 1e-18


@pytest.mark.parametrize(
    ("rate", "words"),
    [
        (sp.Piecewise((x, x < 2)), "is undefined where none of x < 2 holds"),
        (x + sp.floor(2 * x) / 2, "uses floor, whose derivative SymPy cannot evaluate"),
        (x * sp.ceiling(x), "uses ceiling"),
    ],
)
def test_rates_no_route_can_use_are_refused_where_the_model_is_built(rate, words) -> None:
    with pytest.raises(ParameterError) as exc:
        Transition((-1,), rate)
    text = str(exc.value)
    assert words in text and "\n" not in text and text.endswith(".")


@pytest.mark.parametrize(
    ("departure", "words"),
    [
        # gamma differentiates into polygamma, which neither math nor mpmath's printer has
        (x * sp.gamma(1 + x), "back end cannot print polygamma"),
        # neither back end prints polylog (NumPy printed it by name, a NameError
        # at the first call; besselj, the earlier example, is SciPy's jv since the
        # float64 forms take SciPy's special functions: tests/derive/test_special_functions.py)
        (x * (1 + sp.polylog(2, x / 4) ** 2), "back end cannot print polylog"),
    ],
    ids=["polygamma", "polylog"],
)
def test_a_function_a_back_end_cannot_print_is_one_sentence(departure, words) -> None:
    from numeric.meanfield.entry import solve as solve_model

    with pytest.raises(ParameterError) as exc:
        solve_model(_station(departure), {"lam": "0.7"}, dps=15)
    text = str(exc.value)
    assert words in text and "\n" not in text


def test_a_drift_that_jumps_where_the_flow_would_stop_is_refused_not_chased() -> None:
    """Deaths x (1 + sign(x - 3)): x' = lam < 3 below 3 and lam - 2x < 0 above it, so
    the flow chatters at x = 3 and the ODE search never ended; its time stalls there
    (steps of about 1e-8), which ends the search within 10,000 drift evaluations."""
    from mfstein.ground.errors import NumericalError
    from numeric.meanfield.entry import solve as solve_model

    with pytest.raises(NumericalError, match="did not settle within") as refused:
        solve_model(_station(x * (1 + sp.sign(x - 3))), {"lam": "0.7"}, dps=15)
    # caught by the stalled time (numeric.meanfield.fixed_point.STALL_WINDOW), some 1.5 s,
    # not by the bound on all evaluations (ODE_MAX_EVALUATIONS, 20-40 s)
    assert "its time advanced by only" in str(refused.value)


def test_exact_answers_a_kink_at_the_fixed_point_without_the_expansion() -> None:
    """Deaths Max(x, 2x - 1), lam = 1: x* = 1 on the kink.  The chain needs only the
    rates: its law is the birth-death product form, and s*, V, W, c are NaN with the
    refusal's sentence as a note (exact refused the model)."""
    from numeric.exact.general import solve as solve_exact

    N, T = 4, 3
    r = solve_exact(_station(sp.Max(x, 2 * x - 1)), {"lam": "1"}, N=N, truncation=T)
    weights = [1.0]
    for n in range(1, N * T + 1):
        weights.append(weights[-1] / max(n / N, 2 * n / N - 1))
    np.testing.assert_allclose(r.marginal_pmf[0], np.array(weights) / sum(weights), rtol=1e-9)
    assert np.isnan(r.constant) and any("lies on the kink" in n for n in r.notes)
