"""Lemma 4's integral by quadrature against closed forms and independent routes."""

from __future__ import annotations

import mpmath
import numpy as np
from scipy.linalg import solve_continuous_lyapunov

from numeric.lemmas import lyapunov_integral


def test_scalar_closed_form():
    with mpmath.workdps(50):
        P = lyapunov_integral(mpmath.matrix([[mpmath.mpf("-2.7")]]))
        assert abs(P[0, 0] - 1 / mpmath.mpf("5.4")) < mpmath.mpf(10) ** -48


def test_against_entrywise_mpmath_quad():
    # independent route: mpmath.quad on [0, inf] with mpmath.expm at every node
    J = mpmath.matrix([["-1.8", "1", "0"], ["0.8", "-1.5", "1"], ["0", "0.5", "-1.2"]])
    memo: dict = {}

    def integrand(t):
        if t not in memo:
            E = mpmath.expm(J * t)
            memo[t] = E.T * E
        return memo[t]

    with mpmath.workdps(20):
        P = lyapunov_integral(J)
        for i, j in [(0, 0), (0, 2), (1, 1), (2, 2)]:
            ref = mpmath.quad(lambda t, i=i, j=j: integrand(t)[i, j], [0, 2, mpmath.inf])
            assert abs(P[i, j] - ref) < mpmath.mpf(10) ** -15 * abs(ref)


def test_random_hurwitz_against_scipy():
    rng = np.random.default_rng(7)
    b = 6
    sub = rng.uniform(0.1, 2, b - 1)
    sup = rng.uniform(0.1, 1, b - 1)
    Jf = np.diag(-(rng.uniform(0.5, 1, b) + np.r_[sub, 0] + np.r_[0, sup])) + np.diag(sup, 1)
    Jf += np.diag(sub, -1)
    with mpmath.workdps(30):
        P = lyapunov_integral(mpmath.matrix(Jf.tolist()))
    Pf = solve_continuous_lyapunov(Jf.T, -np.eye(b))
    assert np.max(np.abs(np.array(P.tolist(), dtype=float) - Pf)) < 1e-12 * np.max(np.abs(Pf))
