"""Issue 23: ``sqrt``, ``exp`` and ``log`` rates on every route that needs them.

They failed in ``transient`` and ``exact``.  Each model is one queue on the
orthant, ``x -> x + 1/N`` at rate ``N a(x)`` and ``x -> x - 1/N`` at rate
``N d(x)``, so every route has an independent answer:

* the exact chain of a birth-death process is reversible,
  ``pi(n) / pi(n - 1) = a((n - 1)/N) / d(n/N)`` (truncated at ``n <= N T``);
* the mean field ``x' = a(x) - d(x)`` is integrated by mpmath's Taylor method
  (``mpmath.odefun``), and at a large time ``V(t)``, ``W(t)`` reach the
  stationary ``V``, ``W`` of :func:`numeric.solve`;
* in one dimension ``W = (a + d) / (2 |a' - d'|)`` at ``x*`` (the Lyapunov
  equation ``2 J W + Q = 0``).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp

from derive import Model, Transition
from derive.spec import ModelInfo, Parameter, StateSpace

x, lam = sp.symbols("x lam")
LAM = "0.7"

#: (name, arrival a(x), departure d(x))
RATES = [
    ("sqrt", lam, sp.sqrt(x)),
    ("exp", lam * sp.exp(-x), x),
    ("log", lam, sp.log(1 + x)),
]


def _queue(name: str, arrival: sp.Expr, departure: sp.Expr) -> Model:
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


def _rates(arrival: sp.Expr, departure: sp.Expr):
    a = sp.lambdify(x, arrival.subs(lam, sp.Rational(LAM)), "mpmath")
    d = sp.lambdify(x, departure.subs(lam, sp.Rational(LAM)), "mpmath")
    return a, d


@pytest.mark.parametrize(("name", "arrival", "departure"), RATES, ids=[r[0] for r in RATES])
def test_exact_chain_is_the_reversible_product_form(name, arrival, departure) -> None:
    from numeric.exact.general import solve as solve_exact

    N, T = 6, 3
    r = solve_exact(_queue(name, arrival, departure), {"lam": LAM}, N=N, truncation=T)
    a, d = _rates(arrival, departure)
    weights = [1.0]
    for n in range(1, N * T + 1):
        weights.append(weights[-1] * float(a(mpmath.mpf(n - 1) / N) / d(mpmath.mpf(n) / N)))
    law = np.array(weights) / sum(weights)
    np.testing.assert_allclose(r.marginal_pmf[0], law, rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize(("name", "arrival", "departure"), RATES, ids=[r[0] for r in RATES])
def test_transient_follows_the_ode_and_settles_on_the_stationary_expansion(
    name, arrival, departure
) -> None:
    import numeric

    model = _queue(name, arrival, departure)
    times = [0.0, 0.5, 1.0, 2.0, 80.0]  # the slowest, log, relaxes like e^(-t/2)
    tr = numeric.transient(model, {"lam": LAM}, times=times, start=["0.5"])
    a, d = _rates(arrival, departure)
    with mpmath.workdps(30):
        path = mpmath.odefun(lambda t, y: a(y) - d(y), 0, mpmath.mpf("0.5"))
        for t, xt in zip(times[:4], tr.x[:4, 0], strict=True):
            assert abs(xt - float(path(t))) < 1e-8, (t, xt)
    sol = numeric.solve(model, {"lam": LAM}, dps=20)
    xs = float(sol.s_star[0])
    assert tr.x[-1, 0] == pytest.approx(xs, abs=1e-9)
    assert tr.V[-1, 0] == pytest.approx(float(sol.V[0]), abs=1e-7)
    assert tr.W[-1, 0, 0] == pytest.approx(float(sol.W[0, 0]), abs=1e-7)
    # the one-dimensional Lyapunov equation, independently of both routes
    with mpmath.workdps(30):
        slope = mpmath.diff(lambda y: a(y) - d(y), mpmath.mpf(xs))
        w = (a(mpmath.mpf(xs)) + d(mpmath.mpf(xs))) / (2 * abs(slope))
    assert math.isclose(float(sol.W[0, 0]), float(w), rel_tol=1e-12)
