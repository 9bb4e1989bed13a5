"""Solvers for the balance equations ``pi Q = 0``, ``sum(pi) = 1`` of a finite CTMC.

Both solvers work on ``A x = e_r``: ``A`` is ``Q^T`` with row ``r`` (a reference
state) replaced by the unit row ``e_r``, so ``x = pi / pi_r`` and ``pi = x / sum(x)``.
For an irreducible chain ``A`` is nonsingular.

``"direct"``
    Sparse LU (SuperLU through :func:`scipy.sparse.linalg.spsolve`, COLAMD
    ordering).  Exact up to rounding, but on the ``b``-dimensional lattice the
    factors fill in badly: fine up to ~10^4 states, minutes beyond.
``"bicgstab"`` (default for large chains), ``"gmres"``
    BiCGSTAB (:func:`scipy.sparse.linalg.bicgstab`) or restarted GMRES(40)
    (:func:`scipy.sparse.linalg.gmres`), preconditioned by one
    symmetric Gauss--Seidel sweep (``M = (D + L) D^-1 (D + U)``) in level order
    (states sorted by the total number of jobs, so the forward sweep follows the
    arrivals and the backward sweep the departures).  Memory is linear in the
    number of states.  Run in rounds from the current iterate until the residual
    ``||pi Q||_1`` is below the tolerance.

Every answer carries the residual ``||pi Q||_1`` computed afresh from ``Q``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numba
import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as spla

#: Solver names accepted by :func:`stationary`.
METHODS: tuple[str, ...] = ("auto", "direct", "bicgstab", "gmres")

#: ``"auto"`` uses the direct solver up to this many states.
DIRECT_MAX_STATES = 3000


@dataclass
class Stationary:
    """The solution of the balance equations.

    Attributes
    ----------
    pi:
        Stationary probabilities (float64, non-negative, summing to one).
    residual:
        ``||pi Q||_1``, recomputed from ``Q`` after solving.
    method:
        The solver used.
    iterations:
        Krylov iterations (0 for the direct solver).
    """

    pi: np.ndarray
    residual: float
    method: str
    iterations: int = 0
    history: list[float] = field(default_factory=list)


def residual(QT: sps.csr_matrix, pi: np.ndarray) -> float:
    """``||pi Q||_1 = ||Q^T pi||_1``."""
    return float(np.abs(QT @ pi).sum())


def _pinned(QT: sps.csr_matrix, r: int) -> sps.csr_matrix:
    """``Q^T`` with row ``r`` replaced by ``e_r`` (sharing the index arrays)."""
    data = QT.data.copy()
    lo, hi = QT.indptr[r], QT.indptr[r + 1]
    cols = QT.indices[lo:hi]
    data[lo:hi] = np.where(cols == r, 1.0, 0.0)
    return sps.csr_matrix((data, QT.indices, QT.indptr), shape=QT.shape)


@numba.njit(cache=True)
def _diagonal(indptr, indices, data):
    n = indptr.shape[0] - 1
    d = np.zeros(n)
    for i in range(n):
        for q in range(indptr[i], indptr[i + 1]):
            if indices[q] == i:
                d[i] = data[q]
    return d


@numba.njit(cache=True)
def _sgs(indptr, indices, data, diag, v):
    """Apply ``M^-1 v`` with ``M = (D + L) D^-1 (D + U)`` (symmetric Gauss--Seidel)."""
    n = v.shape[0]
    y = np.empty(n)
    for i in range(n):
        acc = v[i]
        for q in range(indptr[i], indptr[i + 1]):
            j = indices[q]
            if j < i:
                acc -= data[q] * y[j]
        y[i] = acc / diag[i]
    z = np.empty(n)
    for i in range(n - 1, -1, -1):
        acc = diag[i] * y[i]
        for q in range(indptr[i], indptr[i + 1]):
            j = indices[q]
            if j > i:
                acc -= data[q] * z[j]
        z[i] = acc / diag[i]
    return z


@numba.njit(cache=True)
def _split_triangles(indptr, indices, data):
    """The strictly lower and strictly upper parts of a CSR matrix as two CSR
    matrices (32-bit column indices), each row keeping the original entry order."""
    n = indptr.shape[0] - 1
    lp = np.zeros(n + 1, np.int64)
    up = np.zeros(n + 1, np.int64)
    for i in range(n):
        nl = 0
        nu = 0
        for q in range(indptr[i], indptr[i + 1]):
            j = indices[q]
            if j < i:
                nl += 1
            elif j > i:
                nu += 1
        lp[i + 1] = lp[i] + nl
        up[i + 1] = up[i] + nu
    li = np.empty(lp[n], np.int32)
    lx = np.empty(lp[n])
    ui = np.empty(up[n], np.int32)
    ux = np.empty(up[n])
    for i in range(n):
        a = lp[i]
        c = up[i]
        for q in range(indptr[i], indptr[i + 1]):
            j = indices[q]
            if j < i:
                li[a] = j
                lx[a] = data[q]
                a += 1
            elif j > i:
                ui[c] = j
                ux[c] = data[q]
                c += 1
    return lp, li, lx, up, ui, ux


@numba.njit(cache=True)
def _sgs_split(lp, li, lx, up, ui, ux, diag, v):
    """:func:`_sgs` on the parts of :func:`_split_triangles`: the same operations in
    the same order (identical results), but each sweep reads only its triangle."""
    n = v.shape[0]
    y = np.empty(n)
    for i in range(n):
        acc = v[i]
        for q in range(lp[i], lp[i + 1]):
            acc -= lx[q] * y[li[q]]
        y[i] = acc / diag[i]
    z = np.empty(n)
    for i in range(n - 1, -1, -1):
        acc = diag[i] * y[i]
        for q in range(up[i], up[i + 1]):
            acc -= ux[q] * z[ui[q]]
        z[i] = acc / diag[i]
    return z


def _normalise(x: np.ndarray) -> np.ndarray:
    # entries that are negative by rounding only (|x| at the level of the residual)
    x = np.where(x < 0.0, 0.0, x)
    return x / x.sum()


def solve_direct(QT: sps.csr_matrix, r: int) -> Stationary:
    """Solve by sparse LU on the pinned system (see module docstring)."""
    A = _pinned(QT, r).tocsc()
    rhs = np.zeros(QT.shape[0])
    rhs[r] = 1.0
    x = spla.spsolve(A, rhs)
    pi = _normalise(x)
    return Stationary(pi=pi, residual=residual(QT, pi), method="direct")


def solve_krylov(
    QT: sps.csr_matrix,
    r: int,
    *,
    solver: str = "bicgstab",
    tol: float = 1e-11,
    chunk: int = 100,
    max_rounds: int = 50,
    progress: bool = False,
) -> Stationary:
    """Solve by BiCGSTAB or GMRES with a symmetric Gauss--Seidel preconditioner.

    The states are in level order, so one preconditioner application is a
    forward sweep along the arrivals and a backward sweep along the departures.
    The Krylov solver runs in rounds of ``chunk`` iterations; after each round
    ``||pi Q||_1`` is recomputed from ``Q`` and the loop stops once it is at most
    ``tol``.

    Parameters
    ----------
    QT:
        The transposed generator (CSR).
    r:
        Index of the reference state.
    solver:
        ``"bicgstab"`` (:func:`scipy.sparse.linalg.bicgstab`, the default: short
        recurrences, memory ``~8 S`` floats) or ``"gmres"``
        (:func:`scipy.sparse.linalg.gmres`, restart 40).
    tol:
        Target for ``||pi Q||_1``.
    chunk:
        Iterations per round.
    max_rounds:
        Rounds before giving up; the result then carries the residual reached.
    progress:
        Show a tqdm bar on standard error with the residual after each round.
    """
    A = _pinned(QT, r)
    S = QT.shape[0]
    diag = _diagonal(A.indptr, A.indices, A.data)
    # the two sweeps read separate triangles (half the memory traffic of _sgs)
    parts = _split_triangles(A.indptr, A.indices, A.data)
    M = spla.LinearOperator(
        (S, S),
        matvec=lambda v: _sgs_split(*parts, diag, np.ascontiguousarray(v).ravel()),
    )
    rhs = np.zeros(S)
    rhs[r] = 1.0
    x = np.ones(S)
    history: list[float] = []
    count = [0]

    def cb(_):
        count[0] += 1

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=max_rounds, desc=solver, unit="round", file=sys.stderr, leave=False)
    rtol = 1e-13
    res = float("inf")
    pi = _normalise(x)
    try:
        for _ in range(max_rounds):
            if solver == "gmres":
                x_new, _info = spla.gmres(
                    A,
                    rhs,
                    x0=x,
                    rtol=rtol,
                    atol=0.0,
                    restart=40,
                    maxiter=max(1, chunk // 40),
                    M=M,
                    callback=cb,
                    callback_type="pr_norm",
                )
            else:
                x_new, _info = spla.bicgstab(
                    A, rhs, x0=x, rtol=rtol, atol=0.0, maxiter=chunk, M=M, callback=cb
                )
            if np.all(np.isfinite(x_new)) and x_new.sum() > 0:
                x = x_new
            pi = _normalise(x)
            res = residual(QT, pi)
            history.append(res)
            if bar is not None:
                bar.update(1)
                bar.set_postfix(residual=f"{res:.1e}", iterations=count[0])
            if res <= tol:
                break
            rtol = max(rtol * 1e-1, 1e-16)
    finally:
        if bar is not None:
            bar.close()
    return Stationary(pi=pi, residual=res, method=solver, iterations=count[0], history=history)


def stationary(
    QT: sps.csr_matrix,
    reference: int = 0,
    *,
    method: str = "auto",
    tol: float = 1e-11,
    progress: bool = False,
) -> Stationary:
    """Stationary distribution of the chain with transposed generator ``QT``.

    Parameters
    ----------
    QT:
        ``Q^T`` in CSR form (rows: rates into each state; diagonal ``-q_i``).
    reference:
        Index of the state whose balance equation is replaced by ``x_r = 1``.
    method:
        ``"auto"`` (direct up to :data:`DIRECT_MAX_STATES` states, else BiCGSTAB),
        ``"direct"``, ``"bicgstab"`` or ``"gmres"``.
    tol:
        Residual target of the iterative solver.
    progress:
        Show progress on standard error (iterative solver only).
    """
    if method == "auto":
        method = "direct" if QT.shape[0] <= DIRECT_MAX_STATES else "bicgstab"
    if method == "direct":
        return solve_direct(QT, reference)
    return solve_krylov(QT, reference, solver=method, tol=tol, progress=progress)
