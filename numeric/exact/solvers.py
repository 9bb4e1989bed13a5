"""Solvers for the balance equations ``pi Q = 0``, ``sum(pi) = 1`` of a finite CTMC.

Both solvers work on ``A x = e_r``: ``A`` is ``Q^T`` with row ``r`` (a reference
state) replaced by the unit row ``e_r``, so ``x = pi / pi_r`` and ``pi = x / sum(x)``.
For an irreducible chain ``A`` is nonsingular.

``"direct"``
    Sparse LU (SuperLU through :func:`scipy.sparse.linalg.spsolve`, COLAMD
    ordering).  Exact up to rounding, but on the ``b``-dimensional lattice the
    factors fill in badly: fine up to ~10^4 states, minutes beyond.
``"bicgstab"`` (default for large chains), ``"gmres"``
    BiCGSTAB (compiled, fused loops reading ``Q^T`` in place, on the split
    system of Eisenstat's trick: :mod:`numeric.exact.fused`) or restarted GMRES(40)
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

import math
import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as spla

from mfstein.ground import signals
from mfstein.ground.arguments import renamed_attribute
from numeric.exact.pinned import (  # noqa: F401  (the pinned system, re-exported here)
    DIRECT_ORDERING,
    METHODS,
    normalise,
    pinned,
    residual,
)


@dataclass
class Stationary:
    """The solution of the balance equations."""

    #: Stationary probabilities (float64, non-negative, summing to one).
    pi: np.ndarray
    #: ``||pi Q||_1``, recomputed from ``Q`` after solving.
    residual: float
    #: The linear solver used (``"direct"``, ``"bicgstab"``, ``"gmres"``).
    solver: str
    #: Krylov iterations (0 for the direct solver).
    iterations: int = 0
    #: ``||pi Q||_1`` of the normalised iterate at the start and at each check of the
    #: Krylov run (empty for the direct solver).
    history: list[float] = field(default_factory=list)

    method = renamed_attribute("Stationary", "method", "solver")


def solve_direct(QT: sps.csr_matrix, r: int) -> Stationary:
    """Solve by sparse LU on the pinned system (see module docstring)."""
    A = pinned(QT, r).tocsc()
    rhs = np.zeros(QT.shape[0])
    rhs[r] = 1.0
    x = spla.spsolve(A, rhs)
    pi = normalise(x)
    return Stationary(pi=pi, residual=residual(QT, pi), solver="direct")


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
    ``check_every`` iterations (sooner when the residual's rate of decrease
    predicts ``tol`` sooner) the residual ``||pi Q||_1`` of the normalised
    iterate is recomputed from ``Q`` (about 3 % of the work), and the run stops
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
        Iterations between checks of the true residual (fewer towards the end of a
        run: the next check comes when the residual's rate of decrease predicts the
        target, :meth:`_Monitor._next_gap`).
    max_iter:
        Iterations in all before giving up; the result then carries the best
        residual reached (callers decide whether it is good enough).
    patience:
        Iterations allowed for the true residual to halve before a restart.
    x0:
        Start, proportional to a guess of ``pi`` (non-negative, positive at
        ``r``; see :func:`gaussian_start`), or a function making it (or ``None``);
        default all ones.  A start this call makes (all ones, or by the function)
        is its own: the best iterate is kept in its buffer, where a start given
        as an array is left as it is (but scaled, below) and the best iterate
        copied, one vector more at the peak (8 bytes per state, issue 34).  A guess close to
        ``pi`` shortens the plateau (80 instead of 260 iterations for the
        supermarket with ``b = 3``, ``N = 240``).  A float64 ``x0`` is scaled in
        place to ``x0 / x0[r]`` (a proportional start: a later solve from it is
        the same).
    progress:
        Show a tqdm bar on standard error with the residual after each check.
    """
    if solver not in ("bicgstab", "gmres"):
        raise ValueError(f"solver must be 'bicgstab' or 'gmres', got {solver!r}")
    from numeric.exact import triangles

    QT = _sorted(QT)
    S = QT.shape[0]
    made = x0 is None or callable(x0)  # a start of this call's own: no one else reads it
    if callable(x0):
        x0 = x0()
    x = np.ones(S)
    if x0 is not None:
        x0 = np.asarray(x0, dtype=np.float64).ravel()
        if x0.shape != (S,) or not (np.all(np.isfinite(x0)) and np.all(x0 >= 0) and x0[r] > 0):
            raise ValueError("x0 must hold one finite non-negative value per state, > 0 at r")
        x = x0
        x /= x0[r]  # in place: a chain of millions of states keeps one vector less
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(desc=solver, unit="it", file=sys.stderr, leave=False)
    try:
        with triangles.split(QT) as m:  # QT's arrays rearranged until the block ends
            sweep = _preconditioner(m, r)
            mon = _Monitor(m, x, tol, check_every, max_iter, patience, bar)
            mon.own = made  # the best iterate then goes into the start's buffer
            del x, x0  # the monitor holds the start: one vector less once it has a better one
            _runs(solver, sweep, mon, max_iter)
    finally:
        if bar is not None:
            bar.close()
    pi = normalise(mon.x)
    return Stationary(
        pi=pi, residual=residual(QT, pi), solver=solver, iterations=mon.its, history=mon.history
    )


def _normalised_residual(
    m: tuple[Any, ...], x: np.ndarray, scratch: np.ndarray | None = None
) -> float:
    """``residual(QT, normalise(x))`` in one compiled pass (``m``: ``Q^T`` in the
    triangles' layout, :mod:`numeric.exact.triangles`), the normalised vector kept in
    ``scratch`` (a vector of the caller's that is free, else a temporary one)."""
    from numeric.exact import fused

    return float(fused.normalised_residual(m, x, np.empty_like(x) if scratch is None else scratch))


def _sorted(QT: sps.csr_matrix) -> sps.csr_matrix:
    """``QT`` with its column indices sorted within each row (a copy only if they
    were not), as the sweeps of :mod:`numeric.exact.fused` read them."""
    if QT.has_sorted_indices:
        return QT
    QT = QT.copy()
    QT.sort_indices()
    return QT


@dataclass
class _Sweep:
    """The pinned system ``A x = e_r`` read from ``Q^T`` in the triangles' layout
    ``m`` (:mod:`numeric.exact.triangles`; :mod:`numeric.exact.fused`: ``A`` is not
    formed) and its symmetric Gauss--Seidel preconditioner."""

    m: tuple[Any, ...]
    r: int

    @property
    def S(self) -> int:
        """The number of states."""
        return int(self.m[3].shape[0])

    def operators(self) -> tuple[spla.LinearOperator, spla.LinearOperator]:
        """``A`` and ``M^-1`` as SciPy operators (for GMRES)."""
        from numeric.exact import fused

        S, m, r = self.S, self.m, self.r

        def apply(v: np.ndarray) -> np.ndarray:
            out = np.empty(S)
            fused.matvec(m, r, np.ascontiguousarray(v).ravel(), out)
            return out

        def precondition(v: np.ndarray) -> np.ndarray:
            out = np.empty(S)
            fused.sgs_in_place(m, r, np.ascontiguousarray(v).ravel(), out)
            return out

        return (
            spla.LinearOperator((S, S), matvec=apply),
            spla.LinearOperator((S, S), matvec=precondition),
        )


def _preconditioner(m: tuple[Any, ...], r: int) -> _Sweep:
    """The pinned system of ``Q^T`` (the triangles' layout ``m``) and its
    preconditioner ``M = (D + L) D^-1 (D + U)`` of ``A``: one symmetric Gauss--Seidel
    sweep, forward along the entries left of the diagonal, backward along those right
    of it."""
    return _Sweep(m, r)


class _Monitor:
    """The true residual ``||pi Q||_1`` of the Krylov iterates (:func:`solve_krylov`).

    :meth:`check` is the solvers' callback: every ``check_every`` iterations (fewer,
    :meth:`_next_gap`, when the target is near; or ``now``) it recomputes the
    residual of the normalised iterate, keeps the best iterate (``x``, ``best``),
    and stops the run (:class:`_Done`) at ``tol``, at ``max_iter`` or when the
    residual has not halved since ``mark`` within ``patience`` iterations.
    """

    def __init__(
        self,
        m: tuple[Any, ...],
        x: np.ndarray,
        tol: float,
        check_every: int,
        max_iter: int,
        patience: int,
        bar: Any,
    ) -> None:
        self.m, self.tol, self.bar = m, tol, bar
        self.check_every, self.max_iter, self.patience = check_every, max_iter, patience
        res0 = _normalised_residual(m, x)
        # its: iterations so far; since: since the last check; best, x: the best iterate;
        # mark: a residual the run must halve, at_mark: the iteration it was set
        self.its, self.since, self.best, self.x = 0, 0, res0, x
        # gap: iterations from one check to the next; last: the residual at the last check
        self.gap, self.last = check_every, res0
        self.own = False  # whether self.x is the monitor's own buffer
        self.mark, self.at_mark = res0, 0
        self.history: list[float] = [res0]

    def check(
        self, xk: np.ndarray, steps: int, now: bool = False, scratch: np.ndarray | None = None
    ) -> None:
        signals.check()  # every iteration: a Ctrl-C a library lost is raised again here
        self.its += steps
        self.since += steps
        if self.bar is not None:
            self.bar.update(steps)
        if self.since < self.gap and not now:
            return
        steps, self.since = self.since, 0
        if not (np.all(np.isfinite(xk)) and xk.sum() > 0):
            raise _Done
        res = _normalised_residual(self.m, xk, scratch)
        self.history.append(res)
        if self.bar is not None:
            self.bar.set_postfix(residual=f"{res:.1e}")
        if res < self.best:
            if self.own:  # the best iterate's buffer is reused: no second copy at the peak
                np.copyto(self.x, xk)
            else:
                self.x, self.own = xk.copy(), True
            self.best = res
        if res <= 0.5 * self.mark:
            self.mark, self.at_mark = res, self.its
        self.gap, self.last = self._next_gap(res, steps), res
        stalled = self.its - self.at_mark >= self.patience
        if res <= self.tol or self.its >= self.max_iter or stalled:
            raise _Done

    def _next_gap(self, res: float, steps: int) -> int:
        """Iterations to the next check: :attr:`check_every`, or fewer when the
        residual's geometric rate since the last check, ``rho = (res / last)^(1 /
        steps)``, reaches a tenth of ``tol`` sooner (``log(tol / (10 res)) / log(rho)``
        iterations, at least 1).  A check costs about 0.6 of an iteration, and at the
        end of a run the residual falls by orders of magnitude in a few iterations:
        the supermarket with ``b = 3`` at ``N = 320`` stops after 106 iterations
        instead of 120 (residual 2.8e-13 against 1.6e-12, ``N E||S - s*||^2`` the same
        to 12 digits).  The tenth is a margin: a check that comes too early costs
        another, and the answer's residual stays well below ``tol``."""
        if steps <= 0 or not (0.0 < res < self.last) or res <= self.tol:
            return self.check_every
        rate = (res / self.last) ** (1.0 / steps)
        need = math.log(0.1 * self.tol / res) / math.log(rate)
        return int(min(self.check_every, max(1, math.ceil(need))))


def _runs(solver: str, sweep: _Sweep, mon: _Monitor, max_iter: int) -> None:
    """Krylov runs from the best iterate while each halves the best residual
    (:func:`solve_krylov`); the answer is ``mon.x``."""
    rtol = 1e-15
    while mon.its < max_iter and mon.best > mon.tol:
        before, best = mon.its, mon.best
        mon.mark, mon.at_mark = best, before
        cycle = max_iter - mon.its
        try:
            if solver == "gmres":
                A, M = sweep.operators()
                rhs = np.zeros(sweep.S)
                rhs[sweep.r] = 1.0
                x_new, _ = spla.gmres(
                    A, rhs, x0=mon.x, rtol=rtol, atol=0.0, restart=40,
                    maxiter=max(1, cycle // 40), M=M, callback=lambda xk: mon.check(xk, 40, True),
                    callback_type="x",
                )  # fmt: skip
            else:
                x_new = _bicgstab(sweep, mon, rtol, cycle)
            mon.check(x_new, 0, now=True)  # the end point
        except _Done:
            pass
        if mon.its == before or not mon.best < 0.5 * best:
            break  # a breakdown at the start, or a whole run without halving the residual
        rtol = max(rtol * 0.1, 1e-16)


def _bicgstab(sweep: _Sweep, mon: _Monitor, rtol: float, iterations: int) -> np.ndarray:
    """One BiCGSTAB run from ``mon.x`` on the split system (:mod:`numeric.exact.fused`:
    compiled, in place, one pass over ``Q^T`` per operator), ``mon.check`` after every
    iteration (the iterate ``x = (D + U)^-1 D z`` formed only when the residual is
    checked), until the recursive residual's 2-norm is below ``rtol``, a breakdown,
    or ``iterations``; returns the iterate."""
    from numeric.exact import fused

    m, S, r = sweep.m, sweep.S, sweep.r
    z, res, rhat, p, v, t, tmp = (np.empty(S) for _ in range(7))
    sc = np.empty(4)
    fused.split_start(m, r, mon.x, z, res, rhat, p, v, sc)
    for _ in range(iterations):
        norm = fused.split_step(m, r, z, res, rhat, p, v, t, tmp, sc)
        if norm < 0.0:
            break  # a breakdown: z is the last iterate
        if mon.since + 1 >= mon.gap:
            fused.unsplit(m, r, z, tmp)  # x, for the check
        mon.check(tmp, 1, scratch=t)  # t is free between iterations
        if norm < rtol:
            break
    fused.unsplit(m, r, z, tmp)
    return tmp


def gaussian_start(
    states: np.ndarray, centre: np.ndarray, N: int, W: np.ndarray, *, compiled: bool = True
) -> np.ndarray | None:
    """A start for :func:`solve_krylov` from the central limit of the chain.

    The scaled fluctuation ``(n - N s*) / sqrt(N)`` is approximately normal with
    covariance ``W`` (the core paper's Lyapunov equation), so
    ``x0(n) = exp(-q(n) / 2)`` with ``q(n) = (n - N s*)^T W^+ (n - N s*) / N``,
    shifted so that its largest entry is 1 (``W^+`` the pseudo-inverse: with
    conservation laws ``W`` is singular along them, and the chain moves on the
    complement).  Only a start: the solver's residual decides the answer.
    Returns ``None`` when ``W`` is not a finite covariance.  The quadratic forms are
    a compiled loop, or NumPy's (``compiled=False``, a small chain:
    :mod:`numeric.exact.small`).
    """
    W = np.asarray(W, dtype=np.float64)
    if not np.all(np.isfinite(W)):
        return None
    vals = np.linalg.eigvalsh(0.5 * (W + W.T))
    if vals.size == 0 or vals.max() <= 0 or vals.min() < -1e-8 * vals.max():
        return None
    from numeric.exact.small import routines

    inverse = np.linalg.pinv(W, rcond=1e-10, hermitian=True)
    q = routines(compiled).quadratic_forms(
        np.ascontiguousarray(states), np.asarray(centre, dtype=np.float64), float(N), inverse
    )
    q -= q.min()
    q *= -0.5
    return np.exp(q, out=q)
