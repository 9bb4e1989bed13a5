"""BiCGSTAB on the pinned balance equations in compiled loops, one pass per operation.

The system is ``A x = e_r`` with ``A`` the transposed generator ``Q^T`` whose row
``r`` is replaced by ``e_r`` (:mod:`numeric.exact.solvers`).  Here ``A`` is never
formed: the loops read ``Q^T`` itself (CSR, column indices sorted within each
row, so the entries left of the diagonal come first) and treat row ``r`` as the
unit row.  Against SciPy's :func:`~scipy.sparse.linalg.bicgstab` with the
symmetric Gauss--Seidel preconditioner as a ``LinearOperator`` this saves

* memory: no pinned copy of ``Q^T``'s values, no split triangles (the sorted
  row is split at the diagonal on the fly, and the diagonal read there), a
  preconditioner applied in place (its backward sweep overwrites the forward
  sweep's result entry by entry: the entries it reads are already final), no
  temporaries, and seven vectors (the preconditioned direction and the preconditioned
  residual share one, as ``x`` takes the first before the second is formed), about
  56 bytes per state for the solver instead of ~200;
* passes over memory: each iteration's vector updates are fused with the inner
  products that follow them (one loop computes ``s = r - alpha v`` and nothing
  else allocates), so an iteration reads ``Q^T`` four times (two products, two
  sweeps) and the vectors a few times.

The preconditioner is the one SciPy's run used before (the backward sweep sums a
row's products before subtracting them, a different rounding of the same
operator), and the iteration the textbook BiCGSTAB (H. A. van der Vorst, SIAM J.
Sci. Stat. Comput. 13 (1992)), preconditioned on the right as SciPy does; one
call of :func:`step` is one iteration, so the caller checks the true residual and
Ctrl-C between iterations.
"""

from __future__ import annotations

import numpy as np

from mfstein.jit import numba

#: Indices into the scalar state of one run: ``rho``, ``alpha``, ``omega``.
RHO, ALPHA, OMEGA = range(3)
#: ``rho`` or ``omega`` below this is a breakdown (SciPy's ``eps^2``).
TINY = np.finfo(np.float64).eps ** 2


@numba.njit(cache=True)
def sgs_in_place(indptr, indices, data, r, v, out):
    """``out = M^-1 v`` with ``M = (D + L) D^-1 (D + U)`` of ``A`` (sorted rows; the
    diagonal is read where each row's entries cross it, ``1`` in the pinned row)."""
    n = v.shape[0]
    for i in range(n):
        acc = v[i]
        d = 1.0
        if i != r:
            d = 0.0
            for q in range(indptr[i], indptr[i + 1]):
                j = indices[q]
                if j >= i:
                    if j == i:
                        d = data[q]
                    break
                acc -= data[q] * out[j]
        out[i] = acc / d
    for i in range(n - 1, -1, -1):
        if i == r:
            continue  # the unit row: out[r] = v[r] from the forward sweep
        acc = 0.0
        d = 0.0
        for q in range(indptr[i + 1] - 1, indptr[i] - 1, -1):
            j = indices[q]
            if j <= i:
                if j == i:
                    d = data[q]
                break
            acc += data[q] * out[j]
        out[i] = (d * out[i] - acc) / d


@numba.njit(cache=True)
def matvec(indptr, indices, data, r, x, out):
    """``out = A x``."""
    n = x.shape[0]
    for i in range(n):
        acc = 0.0
        for q in range(indptr[i], indptr[i + 1]):
            acc += data[q] * x[indices[q]]
        out[i] = acc
    out[r] = x[r]


@numba.njit(cache=True)
def start(indptr, indices, data, r, x, res, rhat, p, v):
    """A run from ``x``: ``res = e_r - A x``, ``rhat = res``, ``p = v = 0``."""
    matvec(indptr, indices, data, r, x, res)
    for i in range(x.shape[0]):
        res[i] = -res[i]
        p[i] = 0.0
        v[i] = 0.0
    res[r] += 1.0
    rhat[:] = res


@numba.njit(cache=True)
def step(indptr, indices, data, r, x, res, rhat, p, v, h, t, sc):
    """One preconditioned BiCGSTAB iteration, in place; ``sc`` holds ``rho, alpha,
    omega`` between calls (``1, 1, 1`` at a run's start).  Returns the 2-norm of
    the new recursive residual, or ``-1`` at a breakdown (the run must end)."""
    n = x.shape[0]
    rho = 0.0
    for i in range(n):
        rho += rhat[i] * res[i]
    if abs(rho) < TINY or abs(sc[OMEGA]) < TINY:
        return -1.0
    beta = (rho / sc[RHO]) * (sc[ALPHA] / sc[OMEGA])
    om = sc[OMEGA]
    for i in range(n):
        p[i] = res[i] + beta * (p[i] - om * v[i])
    sgs_in_place(indptr, indices, data, r, p, h)  # h = phat
    matvec(indptr, indices, data, r, h, v)
    rv = 0.0
    for i in range(n):
        rv += rhat[i] * v[i]
    if rv == 0.0:
        return -1.0
    alpha = rho / rv
    for i in range(n):
        x[i] += alpha * h[i]
        res[i] -= alpha * v[i]  # res holds s from here
    sgs_in_place(indptr, indices, data, r, res, h)  # h = shat
    matvec(indptr, indices, data, r, h, t)
    tt = 0.0
    ts = 0.0
    for i in range(n):
        tt += t[i] * t[i]
        ts += t[i] * res[i]
    omega = ts / tt if tt > 0.0 else 0.0
    norm = 0.0
    for i in range(n):
        x[i] += omega * h[i]
        res[i] -= omega * t[i]
        norm += res[i] * res[i]
    sc[RHO], sc[ALPHA], sc[OMEGA] = rho, alpha, omega
    return np.sqrt(norm)


@numba.njit(cache=True)
def normalised_residual(indptr, indices, data, x):
    """``||Q^T pi||_1`` of ``pi = max(x, 0) / sum(max(x, 0))`` (the residual of
    :func:`numeric.exact.solvers.normalise` ``(x)``), with no temporary vector."""
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            total += x[i]
    acc = 0.0
    for i in range(indptr.shape[0] - 1):
        row = 0.0
        for q in range(indptr[i], indptr[i + 1]):
            v = x[indices[q]]
            if v > 0.0:
                row += data[q] * (v / total)
        acc += abs(row)
    return acc


@numba.njit(cache=True)
def quadratic_forms(states, centre, N, inverse):
    """``q_i = y_i^T inverse y_i`` with ``y_i = (states[i] - centre) / sqrt(N)``, one
    state at a time (the Gaussian start of :func:`numeric.exact.solvers.gaussian_start`
    without ``(S, b)`` temporaries)."""
    S, b = states.shape
    out = np.empty(S)
    y = np.empty(b)
    scale = 1.0 / np.sqrt(N)
    for i in range(S):
        for k in range(b):
            y[k] = (states[i, k] - centre[k]) * scale
        acc = 0.0
        for j in range(b):
            row = 0.0
            for k in range(b):
                row += inverse[j, k] * y[k]
            acc += y[j] * row
        out[i] = acc
    return out


@numba.njit(cache=True)
def nearest(states, centre, eligible):
    """The index of the state nearest ``centre`` (squared Euclidean distance, the
    first on a tie) among those with ``eligible`` true; ``-1`` if none."""
    best, where = np.inf, -1
    for i in range(states.shape[0]):
        if not eligible[i]:
            continue
        d = 0.0
        for k in range(states.shape[1]):
            e = states[i, k] - centre[k]
            d += e * e
        if d < best:
            best, where = d, i
    return where
