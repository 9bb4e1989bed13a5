"""All routes (shooting, covariance/duality, spectral, Kronecker) agree at 30 digits."""

from __future__ import annotations

import mpmath
from hypothesis import given, settings
from hypothesis import strategies as st

from mfstein.families.supermarket.solver import KRONECKER_MAX_B, solve_supermarket


@settings(max_examples=12, deadline=None, derandomize=True)
@given(
    lam=st.decimals(min_value="0.05", max_value="0.999", places=4),
    b=st.integers(min_value=1, max_value=8),
    d=st.integers(min_value=1, max_value=3),
)
def test_routes_agree_at_30_digits(lam, b, d) -> None:
    sol = solve_supermarket(str(lam), b, d, dps=30)
    assert sol.digits == 30
    assert {"shooting", "covariance"} <= set(sol.routes)
    if b <= KRONECKER_MAX_B:
        assert "kronecker" in sol.routes
    with mpmath.workdps(40):
        ref = mpmath.mpf(sol.routes["shooting"])
        for name, value in sol.routes.items():
            assert abs(mpmath.mpf(value) - ref) <= mpmath.mpf(10) ** -29 * abs(ref), name


def test_duality_trace_P_Q_equals_trace_W_for_general_M() -> None:
    sol = solve_supermarket("0.8", 5, 2, dps=30, M="diag:1,0,2")
    with mpmath.workdps(40):
        M = mpmath.diag([1, 0, 2, 0, 0])
        n = sol.n
        trPQ = mpmath.fsum(sol.P[i, j] * sol.Q[j, i] for i in range(n) for j in range(n))
        trMW = mpmath.fsum(M[i, j] * sol.W[j, i] for i in range(n) for j in range(n))
        assert abs(trPQ - trMW) <= mpmath.mpf(10) ** -29 * trPQ
        assert set(sol.routes) == {"shooting", "covariance", "spectral", "kronecker", "iterative"}


def test_claimed_digits_hold_against_a_higher_precision_run() -> None:
    low = solve_supermarket("0.9999", 30, dps=20)
    high = solve_supermarket("0.9999", 30, dps=45)
    assert low.digits == 20 and high.digits == 45
    with mpmath.workdps(60):
        err = abs(low.constant - high.constant) / high.constant
        assert err <= mpmath.mpf(10) ** -20
