"""The pinned system of the balance equations ``pi Q = 0``, ``sum(pi) = 1``: what a
direct solve needs, apart from the iterative solvers (:mod:`numeric.exact.solvers`,
which re-exports the names it used to define here).

``A`` is ``Q^T`` with row ``r`` (a reference state) replaced by the unit row ``e_r``
(:func:`pinned`), so ``A x = e_r`` gives ``x = pi / pi_r`` and ``pi = x / sum(x)``
(:func:`normalise`); :func:`factor` makes the one sparse LU of ``A``; every answer's
residual ``||pi Q||_1`` is computed afresh from ``Q`` (:func:`residual`).  A first
exact call in a new process that solves by sparse LU imports this module only: the
Krylov solvers' module, with its records, is not loaded for it (some 0.7 ms of CPU).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sps

#: SuperLU's column ordering: the minimum degree of ``A^T + A`` (measured against
#: SciPy's default ``COLAMD``, factor and solve: SIR N = 100, 5,151 states, 11.5 ms
#: against 14.0; N = 200 90 against 99; supermarket b = 3, N = 28, 22.5 against 36.2;
#: b = 2, N = 300, 153 against 167).  Not the fastest for every chain
#: (``benchmarks/bench_exact_lu.py``, stop 47, in one process, min ms): SIR N = 100 / 200
#: / 400 5.7 / 39 / 352 against COLAMD 8.4 / 48 / 474 and MMD_ATA 7.7 / 42 / 358, the
#: supermarket b = 3, N = 20 / 40 4.0 / 87 against 5.2 / 216 and 6.8 / 234; but on a
#: 2-coordinate box (``benchmarks/models/tandem_user.py``, N = 20 / 40, 3,721 / 14,641
#: states) 6.2 / 95 against 5.4 / 30 and 4.9 / 29.  Any other ordering changes the
#: law's last bits.
DIRECT_ORDERING = "MMD_AT_PLUS_A"

#: Solver names accepted by the exact solve (:func:`numeric.exact.general.stationary_checked`).
METHODS: tuple[str, ...] = ("auto", "direct", "bicgstab", "gmres")


def exit_rates(QT: sps.csr_matrix) -> np.ndarray:
    """The exit rates ``q_i = -Q_ii``, read off ``Q^T``'s diagonal.  The assembly
    (:mod:`numeric.exact.assembly`, :func:`numeric.exact.small.transposed_generator`)
    stores ``-q_i`` there, one entry per row, and a negation is exact (``-(-0.0)`` is
    ``0.0``, as a ``q_i`` summed from ``0.0``): these are its sums, bit for bit.  Read
    once the balance equations are solved instead of kept beside ``Q^T``: 8 bytes per
    state less at the solve's peak (issue 34)."""
    return -QT.diagonal()


def residual(QT: sps.csr_matrix, pi: np.ndarray) -> float:
    """``||pi Q||_1 = ||Q^T pi||_1``."""
    return float(np.abs(QT @ pi).sum())


def pinned(QT: sps.csr_matrix, r: int) -> sps.csr_matrix:
    """``Q^T`` with row ``r`` replaced by ``e_r`` (sharing the index arrays).

    An absorbing ``r`` (exit rate 0: the closed class is that one state) has no
    stored diagonal entry, since SciPy drops the zero ``-q_r``; it is stored first,
    so the pinned row really is ``e_r`` (it was a zero row: a singular system).
    """
    lo, hi = QT.indptr[r], QT.indptr[r + 1]
    if not np.any(QT.indices[lo:hi] == r):
        QT = (QT + sps.csr_matrix(([1.0], ([r], [r])), shape=QT.shape)).tocsr()
        QT.sort_indices()
        lo, hi = QT.indptr[r], QT.indptr[r + 1]
    data = QT.data.copy()
    cols = QT.indices[lo:hi]
    data[lo:hi] = np.where(cols == r, 1.0, 0.0)
    return sps.csr_matrix((data, QT.indices, QT.indptr), shape=QT.shape)


def factor(QT: sps.csr_matrix, r: int) -> tuple[sps.csc_matrix, Any]:
    """``A`` (CSC), ``Q^T`` :func:`pinned` at ``r``, and its sparse LU
    (:func:`scipy.sparse.linalg.splu`, :data:`DIRECT_ORDERING`): the one factorisation
    of the direct solve (:func:`numeric.exact.general._direct`) and of the law's
    condition estimate (:func:`numeric.exact.law_error.condition`)."""
    import scipy.sparse.linalg as spla

    A = pinned(QT, r).tocsc()
    return A, spla.splu(A, permc_spec=DIRECT_ORDERING)


def normalise(x: np.ndarray) -> np.ndarray:
    """``x / sum(x)`` with the entries that are negative by rounding only (``|x|`` at
    the level of the residual) set to zero."""
    x = np.where(x < 0.0, 0.0, x)
    return x / x.sum()
