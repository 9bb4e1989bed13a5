"""The symmetric Gauss--Seidel preconditioner of the iterative exact solver
(numeric.exact.fused: the sweeps read Q^T's arrays rearranged in place into its
triangles, numeric.exact.triangles, with the pinned row r taken as the unit row)
is ``M^-1 v`` with ``M = (D + L) D^-1 (D + U)`` of the pinned matrix, computed
here independently by two sparse triangular solves; and the fused matrix product
is the pinned matrix's.  The layout's blocks are small here (``BLOCK`` rows, not
dividing the states), so that the kernels cross blocks."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sps
from scipy.sparse.linalg import spsolve, spsolve_triangular

from numeric.exact import fused, triangles
from numeric.exact.solvers import pinned

#: Rows per block of the triangles' layout in these tests.
BLOCK = 37


def _generator_transpose(n: int) -> sps.csr_matrix:
    Q = sps.random(n, n, density=0.02, random_state=4, format="csr")
    Q = Q + sps.diags(-np.asarray(Q.sum(axis=1)).ravel() - 1.0)
    QT = Q.T.tocsr()
    QT.sort_indices()
    return QT


def _parts(n: int, r: int) -> tuple:
    """``Q^T``, the pinned matrix ``A``, its diagonal ``D``, ``D + L`` and ``D + U``."""
    QT = _generator_transpose(n)
    A = pinned(QT, r).copy()  # not sharing QT's indices, which the layout rearranges
    D = sps.diags(A.diagonal())
    return QT, A, D, (sps.tril(A, k=-1) + D).tocsr(), (sps.triu(A, k=1) + D).tocsr()


def test_in_place_sweep_is_the_two_triangular_solves() -> None:
    rng = np.random.default_rng(3)
    n, r = 400, 7
    QT, A, D, lower, upper = _parts(n, r)
    for _ in range(3):
        v = rng.standard_normal(n)
        want = spsolve_triangular(upper, D @ spsolve_triangular(lower, v), lower=False)
        got, out = np.empty(n), np.empty(n)
        with triangles.split(QT, BLOCK) as m:
            fused.sgs_in_place(m, r, v, got)
            fused.matvec(m, r, v, out)
        assert np.allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
        assert np.allclose(out, A @ v, rtol=1e-13, atol=1e-13 * np.abs(A @ v).max())


def test_the_split_operator_is_the_preconditioned_matrix_in_one_pass() -> None:
    """Eisenstat's form of the split system the BiCGSTAB runs on: ``split_apply`` is
    ``(D + L)^-1 A (D + U)^-1 D v``, ``unsplit`` is ``(D + U)^-1 D z``, and
    ``split_start`` gives ``z`` with ``unsplit(z) = x`` and the residual ``(D + L)^-1
    (e_r - A x)``, each against SciPy's triangular solves of the pinned matrix."""
    rng = np.random.default_rng(5)
    n, r = 400, 11
    QT, A, D, lower, upper = _parts(n, r)
    with triangles.split(QT, BLOCK) as m:
        _check_split_operator(m, r, A, D, lower, upper, rng)


def _check_split_operator(m: tuple, r: int, A, D, lower, upper, rng) -> None:
    n = A.shape[0]
    arrays = (m, r)
    for _ in range(3):
        v = rng.standard_normal(n)
        want = spsolve_triangular(lower, A @ spsolve_triangular(upper, D @ v, lower=False))
        got, scratch = np.empty(n), np.empty(n)
        fused.split_apply(*arrays, v, got, scratch)
        assert np.allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
        x = np.empty(n)
        fused.unsplit(*arrays, v, x)
        back = spsolve_triangular(upper, D @ v, lower=False)
        assert np.allclose(x, back, rtol=1e-12, atol=1e-12 * np.abs(back).max())
    x = rng.random(n) + 0.5
    z, res, rhat, p, w = (np.empty(n) for _ in range(5))
    fused.split_start(*arrays, x, z, res, rhat, p, w, np.empty(4))
    again = np.empty(n)
    fused.unsplit(*arrays, z, again)
    assert np.allclose(again, x, rtol=1e-12, atol=0.0)
    e_r = np.zeros(n)
    e_r[r] = 1.0
    want = spsolve_triangular(lower, e_r - A @ x)
    assert np.allclose(res, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
    assert np.array_equal(rhat, res) and not p.any() and not w.any()


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """``a . b`` summed from the first entry, one product at a time (as the compiled
    loops sum; not NumPy's pairwise sum, nor Python's compensated ``sum``)."""
    acc = 0.0
    for x, y in zip(a.tolist(), b.tolist(), strict=True):
        acc += x * y
    return acc


def test_the_fused_iteration_is_the_textbook_bicgstab_bit_for_bit() -> None:
    """``split_step`` does BiCGSTAB's vector updates and inner products inside the
    operator's sweeps; the iterates must be those of the textbook iteration written
    as separate passes (each update in NumPy, each inner product summed from the first
    entry, the operator ``split_apply``), to the last bit, and so must the norms."""
    n, r = 400, 11
    with triangles.split(_generator_transpose(n), BLOCK) as m:
        _check_textbook(m, r, n)


def _check_textbook(m: tuple, r: int, n: int) -> None:
    arrays = (m, r)
    x = np.random.default_rng(6).random(n) + 0.5
    z, res, rhat, p, v, t, tmp = (np.empty(n) for _ in range(7))
    sc = np.empty(4)
    fused.split_start(*arrays, x, z, res, rhat, p, v, sc)
    Z, R, P, V, T = z.copy(), res.copy(), p.copy(), v.copy(), np.empty(n)
    rho0, alpha, omega = 1.0, 1.0, 1.0
    for _ in range(8):
        norm = fused.split_step(*arrays, z, res, rhat, p, v, t, tmp, sc)
        rho = _dot(rhat, R)
        beta = (rho / rho0) * (alpha / omega)
        P = R + beta * (P - omega * V)
        fused.split_apply(*arrays, P, V, np.empty(n))
        alpha = rho / _dot(rhat, V)
        Z += alpha * P
        R -= alpha * V
        fused.split_apply(*arrays, R, T, np.empty(n))
        omega = _dot(T, R) / _dot(T, T)
        Z += omega * R
        R -= omega * T
        rho0 = rho
        assert norm == np.sqrt(_dot(R, R))
        for got, want in ((z, Z), (res, R), (p, P), (v, V), (t, T)):
            assert np.array_equal(got.view(np.uint64), want.view(np.uint64))
        assert sc[3] == _dot(rhat, R)


def test_the_fused_iteration_solves_the_pinned_system() -> None:
    """Run to a small recursive residual, ``x = unsplit(z)`` solves ``A x = e_r``
    (against SciPy's sparse LU)."""
    n, r = 400, 7
    QT, A, *_ = _parts(n, r)
    z, res, rhat, p, v, t, tmp = (np.empty(n) for _ in range(7))
    sc = np.empty(4)
    x = np.empty(n)
    with triangles.split(QT, BLOCK) as m:
        fused.split_start(m, r, np.ones(n), z, res, rhat, p, v, sc)
        for _ in range(200):
            norm = fused.split_step(m, r, z, res, rhat, p, v, t, tmp, sc)
            assert norm >= 0.0
            if norm < 1e-14:
                break
        fused.unsplit(m, r, z, x)
    e_r = np.zeros(n)
    e_r[r] = 1.0
    want = spsolve(A.tocsc(), e_r)
    assert np.allclose(x, want, rtol=1e-9, atol=1e-12 * np.abs(want).max())
