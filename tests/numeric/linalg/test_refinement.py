"""Iterative refinement at the working precision (numeric.linalg.refinement): the
float64 seed (NumPy's LU, the Kronecker form of a small Lyapunov equation, or the
Schur method of a large one) only starts and corrects, so the refined answers are
the same numbers whichever seed ran, and they solve the equation to the precision."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from mfstein.ground.errors import NumericalError
from numeric.linalg import refinement


def _hurwitz(n: int, seed: int) -> mpmath.matrix:
    """A non-normal matrix with every eigenvalue in the left half-plane, with exact
    decimal entries (``A = M - (|M|_1 + 1) I``)."""
    rng = np.random.default_rng(seed)
    M = rng.integers(-9, 10, size=(n, n)) / 8
    shift = np.abs(M).sum(axis=1).max() + 1
    return mpmath.matrix([[mpmath.mpf(v) for v in row] for row in M - shift * np.eye(n)])


def _symmetric(n: int, seed: int) -> mpmath.matrix:
    rng = np.random.default_rng(seed)
    C = rng.integers(-9, 10, size=(n, n)) / 16
    C = C + C.T + n * np.eye(n)
    return mpmath.matrix([[mpmath.mpf(v) for v in row] for row in C])


def _largest(X: mpmath.matrix) -> mpmath.mpf:
    return max(abs(X[i, j]) for i in range(X.rows) for j in range(X.cols))


@pytest.mark.parametrize("n", [1, 3, 12, 13])
def test_the_lyapunov_seeds_give_the_same_refined_solution(n: int, monkeypatch) -> None:
    A, C = _hurwitz(n, n), _symmetric(n, n + 1)
    with mpmath.workdps(40):
        monkeypatch.setattr(refinement, "KRONECKER_MAX_N", n)  # NumPy's Kronecker form
        kron = refinement.lyapunov_refined(A, C)
        monkeypatch.setattr(refinement, "KRONECKER_MAX_N", n - 1)  # SciPy's Schur form
        schur = refinement.lyapunov_refined(A, C)
        assert kron == schur  # every bit at the working precision
        R = A * kron + kron * A.T + C
        assert _largest(R) <= mpmath.mpf(2) ** (-mpmath.mp.prec + 8) * _largest(C)
        assert all(kron[i, j] == kron[j, i] for i in range(n) for j in range(n))


@pytest.mark.parametrize("n", [1, 4, 30])
def test_a_linear_solve_is_mpmaths_to_the_working_precision(n: int) -> None:
    A = _hurwitz(n, 7 * n)
    rhs = [mpmath.mpf(k + 1) / 3 for k in range(n)]
    with mpmath.workdps(50):
        x = refinement.solve_linear(A, rhs)
        exact = mpmath.lu_solve(A, mpmath.matrix(rhs))
        scale = max(abs(v) for v in exact)
        assert max(abs(x[k] - exact[k]) for k in range(n)) <= mpmath.mpf(10) ** -48 * scale


def test_a_singular_system_is_a_numerical_error() -> None:
    singular = mpmath.matrix([[1, 2], [2, 4]])
    with pytest.raises(NumericalError, match="linear system is singular to float64"):
        refinement.solve_linear(singular, [mpmath.mpf(1), mpmath.mpf(1)])
    # the eigenvalue 0 of A is one of A (x) I + I (x) A: A X + X A^T is not invertible
    with pytest.raises(NumericalError, match="Lyapunov equation is singular to float64"):
        refinement.lyapunov_refined(mpmath.matrix([[0, 0], [0, -1]]), mpmath.eye(2))


def test_entries_beyond_float64_are_a_numerical_error() -> None:
    huge = mpmath.matrix([[mpmath.mpf("1e400"), 0], [0, 1]])
    with pytest.raises(NumericalError, match="beyond float64's range"):
        refinement.solve_linear(huge, [mpmath.mpf(1), mpmath.mpf(1)])
    with pytest.raises(NumericalError, match="beyond float64's range"):
        refinement.lyapunov_refined(-huge, mpmath.eye(2))
