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
  temporaries, and seven vectors (the iterate ``z``, the residual, the shadow
  residual, the direction, two operator images and one scratch vector, which also
  receives ``x`` for a check), about 56 bytes per state for the solver instead of
  ~200;
* passes over memory: BiCGSTAB runs on the split system ``(D + L)^-1 A (D + U)^-1
  D z = (D + L)^-1 e_r`` (``x = (D + U)^-1 D z``), whose operator is applied in one
  pass over ``Q^T`` by Eisenstat's trick (:func:`split_apply`; S. C. Eisenstat,
  "Efficient implementation of a class of preconditioned conjugate gradient
  methods", SIAM J. Sci. Stat. Comput. 2 (1981)): an iteration reads ``Q^T``
  twice, where the right-preconditioned ``A M^-1`` (two sweeps and two products,
  :func:`sgs_in_place` and :func:`matvec`, which GMRES still uses) read it four
  times; each iteration's vector updates are fused with the inner products that
  follow them.  The split operator is similar to ``A M^-1`` (the same spectrum),
  so the iterations needed are about the same: the supermarket with ``b = 3`` at
  ``N = 120`` (302,621 states) from all ones, 120 iterations and 1.45 s of CPU
  against 133 and 2.51 s.

The preconditioner is the one SciPy's run used before (``M = (D + L) D^-1 (D +
U)``, here split into ``(D + L)`` on the left and ``D^-1 (D + U)`` on the right),
and the iteration the textbook BiCGSTAB (H. A. van der Vorst, SIAM J. Sci. Stat.
Comput. 13 (1992)); one call of :func:`split_step` is one iteration, so the caller
checks the true residual (forming ``x`` only then: :func:`unsplit`) and Ctrl-C
between iterations.
"""

from __future__ import annotations

import numpy as np

from mfstein.ground.jit import numba

#: Indices into the scalar state of one run: ``rho``, ``alpha``, ``omega``.
RHO, ALPHA, OMEGA = range(3)
#: ``rho`` or ``omega`` below this is a breakdown (SciPy's ``eps^2``).
TINY = np.finfo(np.float64).eps ** 2


@numba.njit(cache=True)
def sgs_in_place(indptr, indices, data, r, v, out):
    """``out = M^-1 v`` with ``M = (D + L) D^-1 (D + U)`` of ``A`` (sorted rows; the
    diagonal is read where each row's entries cross it, ``1`` in the pinned row)."""
    forward(indptr, indices, data, r, v, v, out, False)
    unsplit(indptr, indices, data, r, out, out)  # in place: the backward sweep


@numba.njit(cache=True)
def forward(indptr, indices, data, r, v, t, out, split):
    """The forward sweep (rows from the first; ``L`` the entries left of the diagonal,
    none in the pinned row, whose diagonal is 1): ``out = (D + L)^-1 v``, the first
    half of :func:`sgs_in_place`; with ``split``, ``out = (D + L)^-1 D (v - t)``, the
    second half of :func:`split_apply` (``t`` is not read without it).

    Each keeps the order of operations it had as a sweep of its own, so the bits are
    those: ``v_i`` less each product in turn; ``D_ii (v_i - t_i)`` less the products'
    sum.  Against the two sweeps written out (benchmarks/bench_forward_sweep.py, stop 44,
    30,000 and 300,000 states, seven runs at load 2.3 to 4.3 on two cores): the same bits
    and the same time within the noise (new / old 0.93 to 1.13 at the minimum, 0.94 to 1.09 at
    the median); one row's products as a jitted helper (stop 43) had made both 1.6x
    slower."""
    for i in range(v.shape[0]):
        if i == r:
            out[i] = v[i] - t[i] if split else v[i]
            continue
        acc = 0.0 if split else v[i]
        d = 0.0
        for q in range(indptr[i], indptr[i + 1]):
            j = indices[q]
            if j >= i:
                if j == i:
                    d = data[q]
                break
            if split:
                acc += data[q] * out[j]
            else:
                acc -= data[q] * out[j]
        out[i] = (d * (v[i] - t[i]) - acc if split else acc) / d


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
def _diagonal(indptr, indices, data, i):
    """``A_ii`` of a row ``i`` that is not the pinned one (``0`` when not stored)."""
    for q in range(indptr[i], indptr[i + 1]):
        if indices[q] >= i:
            return data[q] if indices[q] == i else 0.0
    return 0.0


@numba.njit(cache=True)
def unsplit(indptr, indices, data, r, v, t):
    """``t = (D + U)^-1 D v`` (rows from the last; ``U`` the entries right of the
    diagonal, none in the pinned row, whose diagonal is 1): the iterate ``x`` of the
    split system's ``z`` (:func:`split_step`), and the first half of
    :func:`split_apply`."""
    for i in range(v.shape[0] - 1, -1, -1):
        if i == r:
            t[i] = v[i]
            continue
        acc = 0.0
        d = 0.0
        for q in range(indptr[i + 1] - 1, indptr[i] - 1, -1):
            j = indices[q]
            if j <= i:
                if j == i:
                    d = data[q]
                break
            acc += data[q] * t[j]
        t[i] = (d * v[i] - acc) / d


@numba.njit(cache=True)
def split_apply(indptr, indices, data, r, v, out, t):
    """``out = (D + L)^-1 A (D + U)^-1 D v`` in one pass over ``A`` (S. C. Eisenstat,
    "Efficient implementation of a class of preconditioned conjugate gradient methods",
    SIAM J. Sci. Stat. Comput. 2 (1981)): with ``A = (D + L) + (D + U) - D`` and
    ``t = (D + U)^-1 D v`` it is ``t + (D + L)^-1 (D v - D t)``, a backward sweep over
    the entries right of the diagonal and a forward one over those left of it, where
    the preconditioned product ``A M^-1`` takes two sweeps and a product.  ``t`` is
    scratch."""
    n = v.shape[0]
    unsplit(indptr, indices, data, r, v, t)
    forward(indptr, indices, data, r, v, t, out, True)  # out = (D + L)^-1 D (v - t)
    for i in range(n):
        out[i] += t[i]


@numba.njit(cache=True)
def split_start(indptr, indices, data, r, x, z, res, rhat, p, v):
    """A run of :func:`split_step` from ``x``: ``z = D^-1 (D + U) x`` (so that ``x =
    (D + U)^-1 D z``), ``res = (D + L)^-1 (e_r - A x)``, ``rhat = res``, ``p = v = 0``."""
    n = x.shape[0]
    matvec(indptr, indices, data, r, x, res)
    for i in range(n):
        res[i] = -res[i]
        p[i] = 0.0
        v[i] = 0.0
        z[i] = x[i]
    res[r] += 1.0
    for i in range(n):
        if i == r:
            continue
        d = _diagonal(indptr, indices, data, i)
        up = 0.0
        acc = 0.0
        for q in range(indptr[i], indptr[i + 1]):
            j = indices[q]
            if j > i:
                up += data[q] * x[j]
            elif j < i:
                acc += data[q] * res[j]
        z[i] = x[i] + up / d
        res[i] = (res[i] - acc) / d
    rhat[:] = res


@numba.njit(cache=True)
def split_step(indptr, indices, data, r, z, res, rhat, p, v, t, tmp, sc):
    """One BiCGSTAB iteration on the split system ``(D + L)^-1 A (D + U)^-1 D z =
    (D + L)^-1 e_r`` (:func:`split_apply`), in place; ``sc`` holds ``rho, alpha,
    omega`` between calls (``1, 1, 1`` at a run's start).  Returns the 2-norm of the
    new recursive residual, or ``-1`` at a breakdown (the run must end)."""
    n = z.shape[0]
    rho = 0.0
    for i in range(n):
        rho += rhat[i] * res[i]
    if abs(rho) < TINY or abs(sc[OMEGA]) < TINY:
        return -1.0
    beta = (rho / sc[RHO]) * (sc[ALPHA] / sc[OMEGA])
    om = sc[OMEGA]
    for i in range(n):
        p[i] = res[i] + beta * (p[i] - om * v[i])
    split_apply(indptr, indices, data, r, p, v, tmp)
    rv = 0.0
    for i in range(n):
        rv += rhat[i] * v[i]
    if rv == 0.0:
        return -1.0
    alpha = rho / rv
    for i in range(n):
        z[i] += alpha * p[i]
        res[i] -= alpha * v[i]  # res holds s from here
    split_apply(indptr, indices, data, r, res, t, tmp)
    tt = 0.0
    ts = 0.0
    for i in range(n):
        tt += t[i] * t[i]
        ts += t[i] * res[i]
    omega = ts / tt if tt > 0.0 else 0.0
    norm = 0.0
    for i in range(n):
        z[i] += omega * res[i]
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
