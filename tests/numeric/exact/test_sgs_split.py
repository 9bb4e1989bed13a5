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


def test_in_place_sweep_is_the_two_triangular_solves() -> None:
    rng = np.random.default_rng(3)
    n, r = 400, 7
    QT = _generator_transpose(n)
    A = pinned(QT, r)
    D = sps.diags(A.diagonal())
    lower = (sps.tril(A, k=-1) + D).tocsr()
    upper = (sps.triu(A, k=1) + D).tocsr()
    for _ in range(3):
        v = rng.standard_normal(n)
        want = spsolve_triangular(upper, D @ spsolve_triangular(lower, v), lower=False)
        got = np.empty(n)
        fused.sgs_in_place(QT.indptr, QT.indices, QT.data, r, v, got)
        assert np.allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
        out = np.empty(n)
        fused.matvec(QT.indptr, QT.indices, QT.data, r, v, out)
        assert np.allclose(out, A @ v, rtol=1e-13, atol=1e-13 * np.abs(A @ v).max())
