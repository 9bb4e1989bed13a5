"""Every order-1 object of the working-precision route at one precision.

At the fixed point ``s*`` (Newton's method at ``wp`` digits from the route's float64
point, :func:`numeric.meanfield.fixed_point.newton`), on the free coordinates
(``s = s0 + T x``, :mod:`numeric.invariants`): ``J_r = Df(s*) T``, ``Q_r``, the
observable ``M_r = T^T M T``, ``W_r`` solving ``J_r W_r + W_r J_r^T + Q_r = 0`` and
``W = T W_r T^T``; ``covariance = tr(M_r W_r)``; ``V = -J^{-1} h`` with
``h_i = 1/2 sum_jk (d^2 f_i/ds_j ds_k)(s*) W_jk`` (N. Gast and B. Van Houdt, "A
Refined Mean Field Approximation", 2017); with ``full``, Stein's ``P_r`` solving
``P_r J_r + J_r^T P_r + M_r = 0`` and ``stein = tr(P_r Q_r)``; with ``kronecker``
(at most :data:`KRONECKER_MAX_N` free coordinates), ``tr(P Q)`` with ``P`` from the
dense Kronecker system, an independent route (Section 3 and Theorem 1 of "Beyond
Scaling: Calculable Error Bound of the Power-of-Two-Choices Mean-Field Model in
Heavy-Traffic").  :func:`objects_at` computes them for a route record
(:class:`numeric.meanfield.working_route.WorkingRoute`), which keeps them per
precision.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

import mpmath
from mpmath import mpf

from numeric.linalg.mp_entries import matrix_of, rows_of, transposed
from numeric.linalg.refinement import KRONECKER_MAX_N as REFINE_KRONECKER_MAX_N
from numeric.linalg.refinement import lyapunov_refined, solve_linear
from numeric.meanfield import fixed_point as fp
from numeric.params import kernel_vector
from numeric.precision import limited_blas

#: The dense Kronecker route runs for at most this many free coordinates.
KRONECKER_MAX_N = 8


def trace_product(A: mpmath.matrix, B: mpmath.matrix) -> mpf:
    """``tr(A B)`` (exact sum of the products, :func:`mpmath.fsum`)."""
    n, a, b = A.rows, rows_of(A), rows_of(B)
    return mpmath.fsum(a[i][j] * b[j][i] for i in range(n) for j in range(n) if a[i][j])


def _sparse_rows(T: list[list[mpf]]) -> list[list[tuple[int, mpf]]]:
    return [[(a, t) for a, t in enumerate(row) if t] for row in T]


def congruence(T: list[list[mpf]], X: mpmath.matrix) -> mpmath.matrix:
    """``T X T^T`` for the sparse ``b x n`` map ``T`` (free rows are unit vectors)."""
    rows, x = _sparse_rows(T), rows_of(X)
    b = len(rows)
    out = {}
    for i in range(b):
        for j in range(i + 1):
            v = mpmath.fsum(t * u * x[a][c] for a, t in rows[i] for c, u in rows[j])
            out[i, j] = out[j, i] = v
    return matrix_of(b, b, out)


def reduce_form(T: list[list[mpf]], M: mpmath.matrix, n: int) -> mpmath.matrix:
    """``T^T M T``: the quadratic form ``M`` on the free coordinates."""
    rows, mm = _sparse_rows(T), rows_of(M)
    b = len(rows)
    zero = mpmath.mp.zero
    out: dict[tuple[int, int], mpf] = {}  # summed as ``out[a, c] += ...``
    for i in range(b):
        for j in range(b):
            m = mm[i][j]
            if m:
                for a, t in rows[i]:
                    for c, u in rows[j]:
                        out[a, c] = out.get((a, c), zero) + t * m * u
    return matrix_of(n, n, out)


@dataclass(frozen=True)
class Objects:
    """Every order-1 object at one working precision (:func:`objects_at`).

    ``s``, ``p``: the fixed point (all coordinates) and the kernels' parameters;
    ``Jr``, ``Qr``, ``Wr``, ``Mr``: ``J``, ``Q``, ``W`` and the observable on the free
    coordinates; ``Q``, ``W``, ``M``, ``V``: in all coordinates; ``covariance``:
    ``tr(M W)``.  With ``full``: ``Pr`` (Stein's ``P`` on the free coordinates) and
    ``stein = tr(P Q)``; with ``kronecker`` (at most :data:`KRONECKER_MAX_N` free
    coordinates): ``tr(P Q)`` with ``P`` from the dense Kronecker system."""

    s: list[mpf]
    p: list[mpf]
    Jr: mpmath.matrix
    Q: mpmath.matrix
    Qr: mpmath.matrix
    Wr: mpmath.matrix
    W: mpmath.matrix
    M: mpmath.matrix
    Mr: mpmath.matrix
    covariance: mpf
    V: list[mpf]
    Pr: mpmath.matrix | None = None
    stein: mpf | None = None
    kronecker: mpf | None = None

    def copied(self) -> Objects:
        """A copy whose matrices and lists are its own (their numbers are immutable)."""
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, mpmath.matrix):
                v = v.copy()
            elif isinstance(v, list):
                v = list(v)
            out[f.name] = v
        return Objects(**out)

    def merged(self, other: Objects) -> Objects:
        """These objects with the optional ones ``other`` has and these lack (the same
        problem at the same precision)."""
        extra = {k: getattr(other, k) for k in ("Pr", "stein", "kronecker")}
        return replace(
            self, **{k: v for k, v in extra.items() if getattr(self, k) is None and v is not None}
        )


def objects_at(route: Any, wp: int, *, full: bool, kronecker: bool) -> Objects:
    """Every object at ``wp`` significant digits for the route record ``route``
    (:class:`numeric.meanfield.working_route.WorkingRoute`: its prepared problem, its
    accepted float64 point and its observable)."""
    problem = route.problem
    model, red, rm = problem.model, problem.reduction, problem.reduced
    out: dict[str, Any] = {}
    if red.n > REFINE_KRONECKER_MAX_N:  # the Schur route's BLAS, loaded before the limit
        import scipy.linalg  # noqa: F401
    # one BLAS thread limit for the whole computation: the refined solves inside
    # (about a dozen) nest in it instead of each setting and restoring it
    with mpmath.workdps(wp), limited_blas():
        p = kernel_vector(model, problem.values_now())
        q = red.values(problem.start_now())
        s = fp.newton(rm, route.primary, q, p, wp)
        F = list(red.free)
        Jr = rm.jac_mp(s, p)
        Q = rm.kmp.Q(s, p)
        qs, k = rows_of(Q), len(F)
        Qr = matrix_of(k, k, {(a, c): qs[i][j] for a, i in enumerate(F) for c, j in enumerate(F)})
        T = rm.Tmp
        M = route.M_of(model.n)
        Mr = reduce_form(T, M, red.n)
        Wr = lyapunov_refined(Jr, Qr)
        W = congruence(T, Wr)
        out.update(s=s, p=p, Jr=Jr, Q=Q, Qr=Qr, Wr=Wr, W=W, M=M, Mr=Mr)
        out["covariance"] = trace_product(Mr, Wr)
        h = [mpf(0)] * model.n
        hess = rm.kmp.hess_values(s, p)
        for (i, j, k), v in zip(rm.k64.hess_index.tolist(), hess, strict=True):
            if v:
                h[i] += v * W[j, k] / 2
        Vr = solve_linear(Jr, [-h[i] for i in F])
        out["V"] = [mpmath.fsum(T[i][m] * Vr[m] for m in range(red.n)) for i in range(model.n)]
        if full:
            Pr = lyapunov_refined(transposed(Jr), Mr)
            out["Pr"] = Pr
            out["stein"] = trace_product(Pr, Qr)
        if kronecker and red.n <= KRONECKER_MAX_N:
            from numeric.linalg.tridiagonal import solve_vectorised

            out["kronecker"] = trace_product(solve_vectorised(Jr, Mr), Qr)
    return Objects(**out)
