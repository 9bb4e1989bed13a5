"""BiCGSTAB on the pinned balance equations in compiled loops, one pass per operation.

The system is ``A x = e_r`` with ``A`` the transposed generator ``Q^T`` whose row
``r`` is replaced by ``e_r`` (:mod:`numeric.exact.solvers`).  Here ``A`` is never
formed: the loops read ``Q^T``'s own arrays, rearranged in place into its
triangles stored apart (:mod:`numeric.exact.triangles`: per block of rows the
entries left of the diagonals, the diagonals, the entries right of them, each
row's entries in their CSR order; the tuple ``m`` the kernels take), and treat
row ``r`` as the unit row.  Against SciPy's :func:`~scipy.sparse.linalg.bicgstab` with the
symmetric Gauss--Seidel preconditioner as a ``LinearOperator`` this saves

* memory: no pinned copy of ``Q^T``'s values, no copy of its triangles (they
  are ``Q^T``'s arrays rearranged, two bytes per state besides), a
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
  times; and the iteration's vector updates and inner products run inside the
  operator's sweeps (:func:`split_step`: five passes over the vectors, not about
  twelve, with the same bits).  The split operator is similar to ``A M^-1`` (the
  same spectrum), so the iterations needed are about the same: the supermarket with
  ``b = 3`` at ``N = 120`` (302,621 states) from all ones, 120 iterations and 1.45 s
  of CPU against 133 and 2.51 s.

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

#: Indices into the scalar state of one run: ``rho``, ``alpha``, ``omega`` and the next
#: iteration's ``rho`` (summed by the iteration before, :func:`split_step`).
RHO, ALPHA, OMEGA, NEXT = range(4)
#: ``rho`` or ``omega`` below this is a breakdown (SciPy's ``eps^2``).
TINY = np.finfo(np.float64).eps ** 2
#: The sweeps' type of positions: NumPy's indexing of a signed integer checks whether
#: it counts from the end, and at ``N = 200`` (1.4e6 states) that check made a
#: backward sweep some 40 % slower than with unsigned positions (same loads, same bits).
U = np.uint64


@numba.njit(cache=True)
def sgs_in_place(m, r, v, out):
    """``out = M^-1 v`` with ``M = (D + L) D^-1 (D + U)`` of ``A`` (``m`` the
    triangles' layout, :mod:`numeric.exact.triangles`; ``1`` the pinned row's diagonal)."""
    forward(m, r, v, out, out, v, v, False)
    unsplit(m, r, out, out)  # in place: the backward sweep


@numba.njit(cache=True)
def matvec(m, r, x, out):
    """``out = A x`` (each row's products summed in the row's order: left of the
    diagonal, the diagonal, right of it)."""
    indptr, indices, data, lower, upper, dstart, block = m
    S, ub = U(x.shape[0]), U(block)
    for k in range(dstart.shape[0]):
        r0 = U(k) * ub
        r1 = min(S, r0 + ub)
        pl, pd = U(indptr[r0]), U(dstart[k])
        pu = pd + (r1 - r0)
        for i in range(r0, r1):
            nl, nu = U(lower[i]), U(upper[i])
            out[i] = _row(indices, data, pl, pl + nl, pd, pu, pu + nu, x)
            pl, pd, pu = pl + nl, pd + U(1), pu + nu
    out[r] = x[r]


@numba.njit(inline="always", cache=True)
def _row(indices, data, l0, l1, d, u0, u1, x):
    """``sum_j Q^T_ij x_j`` over a row of the triangles' layout, in the row's order:
    its entries left of the diagonal (``l0`` to ``l1``), the diagonal (``d``), its
    entries right of it (``u0`` to ``u1``)."""
    acc = 0.0
    for q in range(l0, l1):
        acc += data[q] * x[U(indices[q])]
    acc += data[d] * x[U(indices[d])]
    for q in range(u0, u1):
        acc += data[q] * x[U(indices[q])]
    return acc


@numba.njit(cache=True)
def unsplit(m, r, v, t):
    """``t = (D + U)^-1 D v`` (rows from the last; ``U`` the entries right of the
    diagonal, none in the pinned row, whose diagonal is 1; ``t`` may be ``v``): the
    iterate ``x`` of the split system's ``z`` (:func:`split_step`), and the first half
    of :func:`split_apply`."""
    _backward_updating(m, r, v, t, 0, 0.0, 0.0, v, v, v)


@numba.njit(cache=True)
def split_apply(m, r, v, out, t):
    """``out = (D + L)^-1 A (D + U)^-1 D v`` in one pass over ``A`` (S. C. Eisenstat,
    "Efficient implementation of a class of preconditioned conjugate gradient methods",
    SIAM J. Sci. Stat. Comput. 2 (1981)): with ``A = (D + L) + (D + U) - D`` and
    ``t = (D + U)^-1 D v`` it is ``t + (D + L)^-1 (D v - D t)``, a backward sweep over
    the entries right of the diagonal and a forward one over those left of it, where
    the preconditioned product ``A M^-1`` takes two sweeps and a product.  ``t`` is
    scratch (it ends holding ``(D + L)^-1 D (v - t)``)."""
    unsplit(m, r, v, t)
    forward(m, r, v, t, out, v, v, True)


@numba.njit(cache=True)
def _backward_updating(m, r, v, t, mode, c1, c2, a, b, z):
    """``t = (D + U)^-1 D v`` (:func:`unsplit`, rows from the last, each row's entries
    right of the diagonal from the last, as in CSR) with the vector update that
    precedes it in :func:`split_step` done at each row just before the row reads
    ``v_i`` (row ``i`` reads ``v`` only at ``i`` and ``t`` only at ``j > i``, so the
    update may run row by row; each entry is the same operations as the update's own
    pass, so the same bits):

    * ``mode == 1``, the direction: ``v_i = a_i + c1 (v_i - c2 b_i)`` (``v = p``,
      ``a = res``, ``b`` the last operator image, ``c1 = beta``, ``c2 = omega``);
    * ``mode == 2``, the half step: ``z_i += c1 b_i`` and ``v_i -= c1 a_i`` (``v =
      res``, ``a`` the operator image of ``b = p``, ``c1 = alpha``);
    * any other ``mode``: none (:func:`unsplit`).

    The sweep reads the blocks' diagonals and upper triangles only
    (:mod:`numeric.exact.triangles`); it waits on memory, so the update costs little
    more than the vectors' reads, where its own pass read and wrote them all again.
    Every position is an unsigned integer (:data:`U`), so no index is checked for
    wrapping around."""
    indptr, indices, data, _lower, upper, dstart, block = m
    S, ur, ub = U(v.shape[0]), U(r), U(block)
    k = U(dstart.shape[0])
    while k > U(0):
        k -= U(1)
        r0 = k * ub
        r1 = min(S, r0 + ub)
        pu = U(indptr[r1])
        d0 = U(dstart[k]) - r0
        i = r1
        while i > r0:
            i -= U(1)
            if mode == 1:
                v[i] = a[i] + c1 * (v[i] - c2 * b[i])
            elif mode == 2:
                z[i] += c1 * b[i]
                v[i] -= c1 * a[i]
            s = pu - U(upper[i])
            if i == ur:
                t[i] = v[i]
            else:
                acc = 0.0
                q = pu
                while q > s:
                    q -= U(1)
                    acc += data[q] * t[U(indices[q])]
                d = data[d0 + i]
                t[i] = (d * v[i] - acc) / d
            pu = s


@numba.njit(cache=True)
def forward(m, r, v, t, out, a, b, split):
    """The forward sweep (rows from the first, each row's entries left of the
    diagonal in order; ``L`` those entries, none in the pinned row, whose diagonal is
    1; the blocks' lower triangles and diagonals only, :mod:`numeric.exact.triangles`).

    Without ``split``: ``out = (D + L)^-1 v`` (``t`` must be ``out``; ``a``, ``b`` not
    read), the first half of :func:`sgs_in_place`, ``v_i`` less each product in turn,
    then divided by ``D_ii``.

    With ``split``: ``out = t + (D + L)^-1 D (v - t)``, the second half of
    :func:`split_apply` (``t = (D + U)^-1 D v`` on entry).  Row ``i`` reads ``t`` only
    at ``i``, so the sweep's own value ``w_i = (D_ii (v_i - t_i) - sum_j L_ij w_j) /
    D_ii`` (the products' sum subtracted at once) is kept in ``t_i``, where later rows
    read it, and ``out_i = w_i + t_i`` written at once: no pass adding ``t``
    afterwards.  Returns ``(sum_i out_i a_i, sum_i out_i b_i)``, summed from the first
    row as the inner products' own passes summed them (the same bits); ``(0, 0)``
    without ``split``."""
    indptr, indices, data, lower, _upper, dstart, block = m
    S, ur, ub = U(v.shape[0]), U(r), U(block)
    sa = 0.0
    sb = 0.0
    for k in range(dstart.shape[0]):
        r0 = U(k) * ub
        r1 = min(S, r0 + ub)
        pl = U(indptr[r0])
        d0 = U(dstart[k]) - r0
        i = r0
        while i < r1:
            e = pl + U(lower[i])
            if i == ur:
                w = v[i] - t[i] if split else v[i]
            else:
                acc = 0.0 if split else v[i]
                q = pl
                while q < e:
                    if split:
                        acc += data[q] * t[U(indices[q])]
                    else:
                        acc -= data[q] * t[U(indices[q])]
                    q += U(1)
                d = data[d0 + i]
                w = (d * (v[i] - t[i]) - acc if split else acc) / d
            pl = e
            if split:
                o = w + t[i]
                t[i] = w
                out[i] = o
                sa += o * a[i]
                sb += o * b[i]
            else:
                out[i] = w
            i += U(1)
    return sa, sb


@numba.njit(cache=True)
def _dot(a, b):
    """``sum_i a_i b_i`` from the first entry (not NumPy's pairwise sum: the bits of
    the inner products :func:`split_step` keeps)."""
    acc = 0.0
    for i in range(a.shape[0]):
        acc += a[i] * b[i]
    return acc


@numba.njit(cache=True)
def split_start(m, r, x, z, res, rhat, p, v, sc):
    """A run of :func:`split_step` from ``x``: ``z = D^-1 (D + U) x`` (so that ``x =
    (D + U)^-1 D z``), ``res = (D + L)^-1 (e_r - A x)``, ``rhat = res``, ``p = v = 0``;
    ``sc`` the scalars of the run's start (``rho, alpha, omega = 1`` and the first
    iteration's ``rhat . res``)."""
    indptr, indices, data, lower, upper, dstart, block = m
    n = x.shape[0]
    matvec(m, r, x, res)
    for i in range(n):
        res[i] = -res[i]
        p[i] = 0.0
        v[i] = 0.0
        z[i] = x[i]
    res[r] += 1.0
    ub, ur = U(block), U(r)
    for k in range(dstart.shape[0]):
        r0 = U(k) * ub
        r1 = min(U(n), r0 + ub)
        pl, pd = U(indptr[r0]), U(dstart[k])
        pu = pd + (r1 - r0)
        for i in range(r0, r1):
            nl, nu = U(lower[i]), U(upper[i])
            if i != ur:
                up = 0.0
                acc = 0.0
                for q in range(pl, pl + nl):
                    acc += data[q] * res[U(indices[q])]
                for q in range(pu, pu + nu):
                    up += data[q] * x[U(indices[q])]
                z[i] = x[i] + up / data[pd]
                res[i] = (res[i] - acc) / data[pd]
            pl, pd, pu = pl + nl, pd + U(1), pu + nu
    rhat[:] = res
    sc[RHO] = sc[ALPHA] = sc[OMEGA] = 1.0
    sc[NEXT] = _dot(rhat, res)


@numba.njit(cache=True)
def split_step(m, r, z, res, rhat, p, v, t, tmp, sc):
    """One BiCGSTAB iteration on the split system ``(D + L)^-1 A (D + U)^-1 D z =
    (D + L)^-1 e_r`` (:func:`split_apply`), in place; ``sc`` holds ``rho, alpha,
    omega`` and the next ``rho`` between calls (:func:`split_start`).  Returns the
    2-norm of the new recursive residual, or ``-1`` at a breakdown (the run must end).

    Five passes over the vectors, four of them the sweeps of the two operator
    applications, into which the iteration's other work is fused (each value computed
    by the same operations and each inner product summed in the same order as in the
    textbook's separate passes, so the iterates are the same bits): the direction
    update in the first backward sweep, the inner product ``rhat . v`` in the first
    forward sweep, the half step in the second backward sweep, ``t . t`` and ``t . s``
    in the second forward sweep; the last pass updates ``z`` and the residual and sums
    the residual's norm and the next iteration's ``rho = rhat . res``."""
    n = z.shape[0]
    rho = sc[NEXT]
    if abs(rho) < TINY or abs(sc[OMEGA]) < TINY:
        return -1.0
    beta = (rho / sc[RHO]) * (sc[ALPHA] / sc[OMEGA])
    _backward_updating(m, r, p, tmp, 1, beta, sc[OMEGA], res, v, z)
    rv = forward(m, r, p, tmp, v, rhat, rhat, True)[0]
    if rv == 0.0:
        return -1.0
    alpha = rho / rv
    # res holds s from here
    _backward_updating(m, r, res, tmp, 2, alpha, 0.0, v, p, z)
    tt, ts = forward(m, r, res, tmp, t, t, res, True)
    omega = ts / tt if tt > 0.0 else 0.0
    norm = 0.0
    nxt = 0.0
    for i in range(U(n)):
        z[i] += omega * res[i]
        res[i] -= omega * t[i]
        norm += res[i] * res[i]
        nxt += rhat[i] * res[i]
    sc[RHO], sc[ALPHA], sc[OMEGA], sc[NEXT] = rho, alpha, omega, nxt
    return np.sqrt(norm)


@numba.njit(cache=True)
def normalised_residual(m, x, pi):
    """``||Q^T pi||_1`` of ``pi = max(x, 0) / sum(max(x, 0))`` (the residual of
    :func:`numeric.exact.solvers.normalise` ``(x)``), ``pi`` a scratch vector that
    receives it; each row's terms summed in the row's order (left of the diagonal,
    the diagonal, right of it), as on the CSR.  ``pi_j = x_j / total`` is the
    division each term ``Q^T_ij pi_j`` made (once per state, not once per entry: the
    same bits), and a term of ``x_j <= 0`` is ``Q^T_ij 0 = +-0``, which leaves the
    row's sum as it was but for the sign of a zero sum, which ``abs`` drops."""
    indptr, indices, data, lower, upper, dstart, block = m
    S = x.shape[0]
    total = 0.0
    for i in range(S):
        if x[i] > 0.0:
            total += x[i]
    for i in range(S):
        pi[i] = x[i] / total if x[i] > 0.0 else 0.0
    acc = 0.0
    ub = U(block)
    for k in range(dstart.shape[0]):
        r0 = U(k) * ub
        r1 = min(U(S), r0 + ub)
        pl, pd = U(indptr[r0]), U(dstart[k])
        pu = pd + (r1 - r0)
        for i in range(r0, r1):
            nl, nu = U(lower[i]), U(upper[i])
            acc += abs(_row(indices, data, pl, pl + nl, pd, pu, pu + nu, pi))
            pl, pd, pu = pl + nl, pd + U(1), pu + nu
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
