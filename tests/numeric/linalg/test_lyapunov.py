"""P, W and Lemma 13: residuals, symmetry, positive definiteness, invertibility."""

from __future__ import annotations

import mpmath
import pytest

from mfstein.families.supermarket.solver import solve_supermarket
from numeric.linalg.tridiagonal import eigenvalues, kronecker_sum


@pytest.mark.parametrize(("lam", "b", "d"), [("0.9", 6, 2), ("0.99", 12, 2), ("0.6", 5, 3)])
def test_P_and_W_solve_their_equations(lam: str, b: int, d: int) -> None:
    sol = solve_supermarket(lam, b, d, dps=30)
    with mpmath.workdps(40):
        J, P, W, Q = sol.J, sol.P, sol.W, sol.Q
        assert mpmath.mnorm(P * J + J.T * P + mpmath.eye(b), 1) < 1e-28 * mpmath.mnorm(P, 1)
        assert mpmath.mnorm(J * W + W * J.T + Q, 1) < 1e-28 * mpmath.mnorm(W, 1)
        assert mpmath.mnorm(P - P.T, 1) < 1e-28 * mpmath.mnorm(P, 1)
        mpmath.cholesky(P)  # raises ValueError unless P is symmetric positive definite
        assert min(mpmath.eigsy(P)[0]) > 0
        ft = sol.ftilde
        assert all(abs(Q[i, i] - 2 * ft[i]) < 1e-28 for i in range(b))
        c = 2 * mpmath.fsum(P[i, i] * ft[i] for i in range(b))
        assert abs(c - sol.constant) < 1e-28 * sol.constant


def test_lemma13_kronecker_sum_invertible() -> None:
    b = 4
    sol = solve_supermarket("0.95", b, dps=30)
    with mpmath.workdps(40):
        mu = eigenvalues(sol.J)
        assert all(x < 0 for x in mu)
        assert all(mu[i] + mu[j] < 0 for i in range(b) for j in range(b))
        det = mpmath.det(kronecker_sum(sol.J))
        prod = mpmath.fprod(mu[i] + mu[j] for i in range(b) for j in range(b))
        assert det != 0
        assert abs(det - prod) <= 1e-25 * abs(prod)
        # the eigenvalues are those of J: the characteristic polynomial vanishes there
        for m in mu:
            assert abs(mpmath.det(sol.J - m * mpmath.eye(b))) < 1e-25


def test_refined_bias_solves_its_equation() -> None:
    from derive import supermarket

    b = 5
    sol = solve_supermarket("0.9", b, dps=30)
    k = supermarket(b, 2).kernels("mpmath")
    with mpmath.workdps(40):
        H = k.hess(sol.s_star, [sol.lam])
        h = [
            mpmath.fsum(H[i][j][l] * sol.W[j, l] for j in range(b) for l in range(b)) / 2
            for i in range(b)
        ]
        JV = sol.J * mpmath.matrix(sol.V)
        assert max(abs(JV[i] + h[i]) for i in range(b)) < 1e-27
