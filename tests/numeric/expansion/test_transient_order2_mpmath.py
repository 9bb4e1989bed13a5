"""Order 2 on the mpmath route (digits asked for): the same moment equations as
the float64 route, integrated by mpmath's Taylor method at two precisions.

Checked against two independent computations: SciPy's solve_ivp on the float64
route at finite times, and the stationary expansion of ``numeric.solve(...,
order=2)`` (moment equations solved as linear systems, no ODE) at a time where
the transient has decayed below the claimed digits.
"""

from __future__ import annotations

import mpmath
import numpy as np

import numeric
from derive.models import load_model
from numeric.expansion.transient import transient

SIR = {"beta": "3", "gamma": "1", "rho": "0.5", "a": "0.1"}


def test_mpmath_order2_agrees_with_float64() -> None:
    # a conservation law (S + I + R = 1): integrated on two free coordinates
    model = load_model("sir")
    times = [0.0, 0.5]
    mp = transient(model, SIR, times=times, start="0.75,0.25,0", order=2, dps=12)
    assert mp.route == "mpmath" and mp.digits == 12 and mp.order == 2
    fl = transient(model, SIR, times=times, start="0.75,0.25,0", order=2, rtol=1e-12, atol=1e-14)
    for name in ("x", "V", "W", "A", "B"):
        a, b = getattr(fl, name), getattr(mp, name).astype(float)
        assert a.shape == b.shape
        scale = max(1.0, np.max(np.abs(b)))
        assert np.max(np.abs(a - b)) < 1e-10 * scale, (name, np.max(np.abs(a - b)))
    assert np.all(mp.A[0] == 0) and np.all(mp.B[0] == 0)


def test_mpmath_order2_long_time_limit_is_the_stationary_expansion() -> None:
    # b = 1, d = 3: third and fourth drift derivatives, dQ, d2Q and R all enter;
    # J = -5.18 at the fixed point, so by t = 7 the transient is within ~1e-12
    model = load_model("supermarket", b=1, d=3)
    params = {"lam": "2"}
    dps = 10
    res = transient(model, params, times=[0.0, 7.0], start=[0.0], order=2, dps=dps)
    assert res.digits == dps
    sol = numeric.solve(model, params, order=2, dps=20)
    tol = mpmath.mpf(10) ** -dps
    for name, ref in (("x", sol.s_star), ("V", sol.V), ("A", sol.A)):
        got = getattr(res, name)[-1][0]
        assert abs(got - ref[0]) < tol * max(1, abs(ref[0])), (name, got, ref[0])
    for name, ref in (("W", sol.W), ("B", sol.B)):
        got = getattr(res, name)[-1][0][0]
        assert abs(got - ref[0, 0]) < tol * max(1, abs(ref[0, 0])), (name, got, ref[0, 0])
