"""BiCGSTAB on the pinned balance equations in compiled loops, one pass per operation.

The system is ``A x = e_r`` with ``A`` the transposed generator ``Q^T`` whose row
``r`` is replaced by ``e_r`` (:mod:`numeric.exact.solvers`).  Here ``A`` is never
formed: the loops read ``Q^T`` itself (CSR, column indices sorted within each
row, so the entries left of the diagonal come first) and treat row ``r`` as the
unit row.  Against SciPy's :func:`~scipy.sparse.linalg.bicgstab` with the
symmetric Gauss--Seidel preconditioner as a ``LinearOperator`` this saves

* memory: no pinned copy of ``Q^T``'s values, no split triangles (the sorted
  row is split at the diagonal on the fly), a preconditioner applied in place
  (its backward sweep overwrites the forward sweep's result entry by entry: the
  entries it reads are already final), and eight vectors in all, with no
  temporaries (about 64 bytes per state for the solver instead of ~200);
* passes over memory: each iteration's vector updates are fused with the inner
  products that follow them (one loop computes ``s = r - alpha v`` and nothing
  else allocates), so an iteration reads ``Q^T`` four times (two products, two
  sweeps) and the vectors a few times.

The operations are those of :func:`numeric.exact.solvers._sgs_split` and of the
textbook BiCGSTAB (H. A. van der Vorst, SIAM J. Sci. Stat. Comput. 13 (1992)),
preconditioned on the right as SciPy does; one call of :func:`step` is one
iteration, so the caller checks the true residual and Ctrl-C between iterations.
"""

from __future__ import annotations

import numpy as np

from mfstein.jit import numba

#: Indices into the scalar state of one run: ``rho``, ``alpha``, ``omega``.
RHO, ALPHA, OMEGA = range(3)
#: ``rho`` or ``omega`` below this is a breakdown (SciPy's ``eps^2``).
TINY = np.finfo(np.float64).eps ** 2


@numba.njit(cache=True)
def diagonal(indptr, indices, data, r):
    """The diagonal of ``A`` (``Q^T`` pinned at ``r``: ``A[r, r] = 1``)."""
    n = indptr.shape[0] - 1
    d = np.zeros(n)
    for i in range(n):
        for q in range(indptr[i], indptr[i + 1]):
            if indices[q] == i:
                d[i] = data[q]
    d[r] = 1.0
    return d


@numba.njit(cache=True)
def sgs_in_place(indptr, indices, data, diag, r, v, out):
    """``out = M^-1 v`` with ``M = (D + L) D^-1 (D + U)`` of ``A`` (sorted rows)."""
    n = v.shape[0]
    for i in range(n):
        acc = v[i]
        if i != r:
            for q in range(indptr[i], indptr[i + 1]):
                j = indices[q]
                if j >= i:
                    break
                acc -= data[q] * out[j]
        out[i] = acc / diag[i]
    for i in range(n - 1, -1, -1):
        acc = diag[i] * out[i]
        if i != r:
            for q in range(indptr[i + 1] - 1, indptr[i] - 1, -1):
                j = indices[q]
                if j <= i:
                    break
                acc -= data[q] * out[j]
        out[i] = acc / diag[i]


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
def step(indptr, indices, data, diag, r, x, res, rhat, p, v, ph, sh, t, sc):
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
    sgs_in_place(indptr, indices, data, diag, r, p, ph)
    matvec(indptr, indices, data, r, ph, v)
    rv = 0.0
    for i in range(n):
        rv += rhat[i] * v[i]
    if rv == 0.0:
        return -1.0
    alpha = rho / rv
    for i in range(n):
        res[i] -= alpha * v[i]  # res holds s from here
    sgs_in_place(indptr, indices, data, diag, r, res, sh)
    matvec(indptr, indices, data, r, sh, t)
    tt = 0.0
    ts = 0.0
    for i in range(n):
        tt += t[i] * t[i]
        ts += t[i] * res[i]
    omega = ts / tt if tt > 0.0 else 0.0
    norm = 0.0
    for i in range(n):
        x[i] += alpha * ph[i] + omega * sh[i]
        res[i] -= omega * t[i]
        norm += res[i] * res[i]
    sc[RHO], sc[ALPHA], sc[OMEGA] = rho, alpha, omega
    return np.sqrt(norm)
