"""The symmetric Gauss--Seidel preconditioner of the iterative exact solver
(numeric.exact.fused: the sweeps read Q^T's sorted rows in place, with the pinned
row r taken as the unit row) is ``M^-1 v`` with ``M = (D + L) D^-1 (D + U)`` of
the pinned matrix, computed here independently by two sparse triangular solves;
and the fused matrix product is the pinned matrix's."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sps
from scipy.sparse.linalg import spsolve_triangular

from numeric.exact import fused
from numeric.exact.solvers import pinned


def _generator_transpose(n: int) -> sps.csr_matrix:
    Q = sps.random(n, n, density=0.02, random_state=4, format="csr")
    Q = Q + sps.diags(-np.asarray(Q.sum(axis=1)).ravel() - 1.0)
    QT = Q.T.tocsr()
    QT.sort_indices()
    return QT


def _parts(n: int, r: int) -> tuple:
    """``Q^T``, the pinned matrix ``A``, its diagonal ``D``, ``D + L`` and ``D + U``."""
    QT = _generator_transpose(n)
    A = pinned(QT, r)
    D = sps.diags(A.diagonal())
    return QT, A, D, (sps.tril(A, k=-1) + D).tocsr(), (sps.triu(A, k=1) + D).tocsr()


def test_in_place_sweep_is_the_two_triangular_solves() -> None:
    rng = np.random.default_rng(3)
    n, r = 400, 7
    QT, A, D, lower, upper = _parts(n, r)
    for _ in range(3):
        v = rng.standard_normal(n)
        want = spsolve_triangular(upper, D @ spsolve_triangular(lower, v), lower=False)
        got = np.empty(n)
        fused.sgs_in_place(QT.indptr, QT.indices, QT.data, r, v, got)
        assert np.allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
        out = np.empty(n)
        fused.matvec(QT.indptr, QT.indices, QT.data, r, v, out)
        assert np.allclose(out, A @ v, rtol=1e-13, atol=1e-13 * np.abs(A @ v).max())


def test_the_split_operator_is_the_preconditioned_matrix_in_one_pass() -> None:
    """Eisenstat's form of the split system the BiCGSTAB runs on: ``split_apply`` is
    ``(D + L)^-1 A (D + U)^-1 D v``, ``unsplit`` is ``(D + U)^-1 D z``, and
    ``split_start`` gives ``z`` with ``unsplit(z) = x`` and the residual ``(D + L)^-1
    (e_r - A x)``, each against SciPy's triangular solves of the pinned matrix."""
    rng = np.random.default_rng(5)
    n, r = 400, 11
    QT, A, D, lower, upper = _parts(n, r)
    arrays = (QT.indptr, QT.indices, QT.data, r)
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
    fused.split_start(*arrays, x, z, res, rhat, p, w)
    again = np.empty(n)
    fused.unsplit(*arrays, z, again)
    assert np.allclose(again, x, rtol=1e-12, atol=0.0)
    e_r = np.zeros(n)
    e_r[r] = 1.0
    want = spsolve_triangular(lower, e_r - A @ x)
    assert np.allclose(res, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
    assert np.array_equal(rhat, res) and not p.any() and not w.any()
