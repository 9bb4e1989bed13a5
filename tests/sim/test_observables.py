"""Simulation estimates of observables (sim.observables) cover the exact values
of the same finite-N chains (numeric.exact), seeded."""

from __future__ import annotations

import pytest

from derive.models import load_model
from mfstein.ground.errors import ParameterError
from numeric.exact import solve as exact_solve
from sim import simulate


@pytest.mark.parametrize(
    ("name", "options", "params", "N", "gs"),
    [
        (
            "supermarket",
            {"b": 3, "d": 2},
            {"lam": "0.8"},
            20,
            # the last two were refused while observables came from stored marginals
            [
                "queue_length", "s1**2", "s1*s2", "exp(s2) - s3", "blocking", "1 + s1*s3",
                "s1*exp(s2)", "Min(s1, 2*s2)*s3",
            ],
        ),
        (
            "sir",
            {},
            {"beta": "2", "gamma": "1", "rho": "1", "a": "0.1"},
            30,
            ["infected", "S*I", "I**2 + R", "log(1 + I)"],
        ),
        ("sis", {}, {"a": "0.1", "beta": "2", "gamma": "1"}, 25, ["infected", "I**3"]),
        pytest.param(
            "jiq",
            {"b": 3, "r": 2, "L": 3},
            {"lam": "0.7"},
            20,
            ["queue_length", "occupied", "x1*z1"],
            marks=pytest.mark.slow,  # compiles a six-dimensional model: about 10 s of CPU
        ),
    ],
)
def test_simulated_observables_cover_the_exact_values(name, options, params, N, gs):
    m = load_model(name, **options)
    r = simulate(m, params, N=N, steps=2_000_000, reps=2, seed=3, observables=gs, workers=1)
    x = exact_solve(m, params, N=N)
    assert list(r.observables) == gs
    for g in gs:
        est = r.observables[g]
        exact = x.expect(g, m).mean
        assert 0 < est.ci95 < 0.02 * max(abs(exact), 0.1)  # a real interval, not a wide one
        assert abs(est.mean - exact) <= est.ci95, (g, est, exact)


def test_unknown_symbol_is_refused_before_running():
    m = load_model("supermarket", b=3, d=2)
    with pytest.raises(ParameterError, match="not a symbol of model"):
        simulate(m, {"lam": "0.8"}, N=10, steps=10_000, observables=["s1 + q"])


#: An observable the stored statistics could not give (a non-polynomial cross
#: term): the event loop evaluates it at every state it visits.
CROSS = "S*exp(I)"
SIR = {"beta": "2", "gamma": "1", "rho": "1", "a": "0.1"}


@pytest.mark.parametrize("seed", [1, 2])
def test_nonlinear_cross_term_covers_the_exact_value_at_N_10(seed):
    m = load_model("sir")
    r = simulate(m, SIR, N=10, steps=400_000, reps=2, seed=seed, observables=[CROSS, "S"])
    exact = exact_solve(m, SIR, N=10).expect(CROSS, m).mean
    est = r.observables[CROSS]
    assert 0 < est.ci95 < 0.02 * exact and abs(est.mean - exact) <= est.ci95, (est, exact)
    # the time average of g = S in the loop is the by-parts integral of the counts
    assert float(r.observables["S"].mean) == pytest.approx(float(r.mean.mean[0]), rel=1e-12)


def test_nonlinear_cross_term_covers_the_order_two_expansion_at_N_200():
    """At N = 200 the expansion's remainder O(1/N^3) is far inside the CI."""
    from numeric import solve

    m = load_model("sir")
    e = solve(m, SIR, dps=15, order=2, observables=[CROSS]).observables[CROSS]
    # the observables of the test above: the same compiled loop
    r = simulate(m, SIR, N=200, steps=400_000, reps=2, seed=1, observables=[CROSS, "S"])
    est, order2 = r.observables[CROSS], float(e.value(200, 2))
    assert 0 < est.ci95 < 0.01 * order2 and abs(est.mean - order2) <= est.ci95, (est, order2)


def test_an_observable_that_is_no_number_where_the_chain_goes_is_one_sentence():
    m = load_model("sir")
    with pytest.raises(ParameterError, match="not a finite real number on every state"):
        simulate(m, SIR, N=10, steps=20_000, reps=2, observables=["log(I - 0.5)"])
