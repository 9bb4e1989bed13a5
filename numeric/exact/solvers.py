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
    number of states.  One run while the true residual ``||pi Q||_1`` keeps
    falling, restarted only when it stalls, from all ones or from a guess
    (:func:`gaussian_start`).

Every answer carries the residual ``||pi Q||_1`` computed afresh from ``Q``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as spla

from mfstein.jit import numba

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


class _Done(Exception):
    """Raised from the Krylov callback to stop the iteration early."""


def solve_krylov(
    QT: sps.csr_matrix,
    r: int,
    *,
    solver: str = "bicgstab",
    tol: float = 1e-11,
    check_every: int = 20,
    max_iter: int = 5_000,
    patience: int = 400,
    x0: np.ndarray | None = None,
    progress: bool = False,
) -> Stationary:
    """Solve by BiCGSTAB or GMRES with a symmetric Gauss--Seidel preconditioner.

    The states are in level order, so one preconditioner application is a
    forward sweep along the arrivals and a backward sweep along the departures.

    One Krylov run continues as long as it makes progress: every
    ``check_every`` iterations the residual ``||pi Q||_1`` of the normalised
    iterate is recomputed from ``Q`` (about 2 % of the work), and the run stops
    as soon as it is at most ``tol``.  Only when the run ends without reaching
    ``tol`` (its own recursive residual has converged while the true one has
    not, a drift of rounding) or the true residual has not halved within
    ``patience`` iterations, is it restarted from the best iterate, which
    recomputes the residual afresh (iterative refinement); a run that does not
    halve the best residual at all ends the solve.

    BiCGSTAB on these chains shows a plateau before it converges whose length
    grows with the lattice (about 150 iterations at ``N = 240``, 200 at ``N =
    320`` for the supermarket with ``b = 3``): restarting on a fixed cycle of
    100 iterations (this function's behaviour before) threw the Krylov space
    away before it had captured the slow modes, and the solve never converged
    (``benchmarks/bench_exact_large.py`` runs the two side by side).

    Parameters
    ----------
    QT:
        The transposed generator (CSR).
    r:
        Index of the reference state.
    solver:
        ``"bicgstab"`` (:func:`scipy.sparse.linalg.bicgstab`, the default: short
        recurrences, memory ``~8 S`` floats) or ``"gmres"``
        (:func:`scipy.sparse.linalg.gmres`, restart 40; its residual is checked
        once per cycle).
    tol:
        Target for ``||pi Q||_1``.
    check_every:
        Iterations between checks of the true residual.
    max_iter:
        Iterations in all before giving up; the result then carries the best
        residual reached (callers decide whether it is good enough).
    patience:
        Iterations allowed for the true residual to halve before a restart.
    x0:
        Start, proportional to a guess of ``pi`` (non-negative, positive at
        ``r``; see :func:`gaussian_start`); default all ones.  A guess close to
        ``pi`` shortens the plateau (80 instead of 260 iterations for the
        supermarket with ``b = 3``, ``N = 240``).
    progress:
        Show a tqdm bar on standard error with the residual after each check.
    """
    if solver not in ("bicgstab", "gmres"):
        raise ValueError(f"solver must be 'bicgstab' or 'gmres', got {solver!r}")
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
    if x0 is not None:
        x0 = np.asarray(x0, dtype=np.float64).ravel()
        if x0.shape != (S,) or not (np.all(np.isfinite(x0)) and np.all(x0 >= 0) and x0[r] > 0):
            raise ValueError("x0 must hold one finite non-negative value per state, > 0 at r")
        x = x0 / x0[r]
    pi = _normalise(x)
    # its: iterations so far; since: since the last check; best, x: the best iterate;
    # mark: a residual the run must halve, at_mark: the iteration it was set
    res0 = residual(QT, pi)
    state = {"its": 0, "since": 0, "best": res0, "x": x, "mark": res0, "at_mark": 0}
    history: list[float] = [state["best"]]

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(desc=solver, unit="it", file=sys.stderr, leave=False)

    def check(xk: np.ndarray, steps: int, now: bool = False) -> None:
        state["its"] += steps
        state["since"] += steps
        if bar is not None:
            bar.update(steps)
        if state["since"] < check_every and not now:
            return
        state["since"] = 0
        if not (np.all(np.isfinite(xk)) and xk.sum() > 0):
            raise _Done
        res = residual(QT, _normalise(xk))
        history.append(res)
        if bar is not None:
            bar.set_postfix(residual=f"{res:.1e}")
        if res < state["best"]:
            state["best"], state["x"] = res, xk.copy()
        if res <= 0.5 * state["mark"]:
            state["mark"], state["at_mark"] = res, state["its"]
        stalled = state["its"] - state["at_mark"] >= patience
        if res <= tol or state["its"] >= max_iter or stalled:
            raise _Done

    def on_bicgstab(xk: np.ndarray) -> None:
        check(xk, 1)

    def on_gmres(xk: np.ndarray) -> None:  # once per cycle of 40
        check(xk, 40, now=True)

    rtol = 1e-15
    try:
        while state["its"] < max_iter and state["best"] > tol:
            before, best = state["its"], state["best"]
            state["mark"], state["at_mark"] = best, before
            cycle = max_iter - state["its"]
            try:
                if solver == "gmres":
                    x_new, _ = spla.gmres(
                        A, rhs, x0=state["x"], rtol=rtol, atol=0.0, restart=40,
                        maxiter=max(1, cycle // 40), M=M, callback=on_gmres,
                        callback_type="x",
                    )  # fmt: skip
                else:
                    x_new, _ = spla.bicgstab(
                        A, rhs, x0=state["x"], rtol=rtol, atol=0.0, maxiter=cycle, M=M,
                        callback=on_bicgstab,
                    )  # fmt: skip
                check(x_new, 0, now=True)  # the end point
            except _Done:
                pass
            if state["its"] == before or not state["best"] < 0.5 * best:
                break  # a breakdown at the start, or a whole run without halving the residual
            rtol = max(rtol * 0.1, 1e-16)
    finally:
        if bar is not None:
            bar.close()
    pi = _normalise(state["x"])
    return Stationary(
        pi=pi, residual=residual(QT, pi), method=solver, iterations=state["its"], history=history
    )


def gaussian_start(
    states: np.ndarray, centre: np.ndarray, N: int, W: np.ndarray
) -> np.ndarray | None:
    """A start for :func:`solve_krylov` from the central limit of the chain.

    The scaled fluctuation ``(n - N s*) / sqrt(N)`` is approximately normal with
    covariance ``W`` (the core paper's Lyapunov equation), so
    ``x0(n) = exp(-q(n) / 2)`` with ``q(n) = (n - N s*)^T W^+ (n - N s*) / N``,
    shifted so that its largest entry is 1 (``W^+`` the pseudo-inverse: with
    conservation laws ``W`` is singular along them, and the chain moves on the
    complement).  Only a start: the solver's residual decides the answer.
    Returns ``None`` when ``W`` is not a finite covariance.
    """
    W = np.asarray(W, dtype=np.float64)
    if not np.all(np.isfinite(W)):
        return None
    vals = np.linalg.eigvalsh(0.5 * (W + W.T))
    if vals.size == 0 or vals.max() <= 0 or vals.min() < -1e-8 * vals.max():
        return None
    y = (np.asarray(states, dtype=np.float64) - np.asarray(centre, dtype=np.float64)) / np.sqrt(N)
    q = np.einsum("ij,jk,ik->i", y, np.linalg.pinv(W, rcond=1e-10, hermitian=True), y)
    return np.exp(-0.5 * (q - q.min()))


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
