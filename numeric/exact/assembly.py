"""The transposed generator ``Q^T`` of a searched chain, assembled by compiled loops.

The search (:func:`numeric.exact.lattice.explore`) leaves, per state ``i`` and
transition ``t``, the index ``target[i, t]`` of the state the jump leads to
(``-1``: no jump; 4 bytes) beside the intensity ``R[i, t]``; the entry of the
generator is ``Q[i, target[i, t]] += N R[i, t]``.  :func:`transposed_generator`
writes ``Q^T`` in CSR form straight from them, with 32-bit column indices, the
columns of each row ascending (so the sweeps of :mod:`numeric.exact.fused` split
a row at its diagonal without a search), entries of two transitions between the
same pair of states summed, and the diagonal ``-q_i`` (``q_i`` the exit rate,
summed in transition order) stored in every row.  Before, the search wrote
(row, column, value) triples (24 bytes per entry) that SciPy transposed and
added to the diagonal through intermediate matrices: about 3 times the memory of
the result at the peak, and several passes.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sps

from mfstein.jit import numba


@numba.njit(cache=True)
def _row_lengths(target, S):
    """Entries per row of ``Q^T`` (the diagonal, and one per distinct source)."""
    nt = target.shape[1]
    count = np.ones(S, np.int64)
    last = np.full(S, -1, np.int64)
    for i in range(S):
        for t in range(nt):
            j = target[i, t]
            if j >= 0 and last[j] != i:
                last[j] = i
                count[j] += 1
    return count


@numba.njit(cache=True)
def _fill(target, R, N, indptr, indices, data, exit_rate):
    """Fill ``Q^T`` row by row in ascending columns (sources are visited in order)."""
    S, nt = target.shape[0], target.shape[1]
    pos = indptr[:-1].copy()
    for i in range(S):
        q = 0.0
        for t in range(nt):
            if target[i, t] >= 0:
                q += N * R[i, t]
        exit_rate[i] = q
        d = pos[i]
        indices[d] = i
        data[d] = -q
        pos[i] = d + 1
        for t in range(nt):
            j = target[i, t]
            if j < 0:
                continue
            w = pos[j]
            if w > indptr[j] and indices[w - 1] == i:
                data[w - 1] += N * R[i, t]  # a second transition between the same states
            else:
                indices[w] = i
                data[w] = N * R[i, t]
                pos[j] = w + 1


def transposed_generator(
    target: np.ndarray, R: np.ndarray, N: int
) -> tuple[sps.csr_matrix, np.ndarray]:
    """``(Q^T, q)``: the transposed generator (CSR, int32 columns ascending within
    rows) and the exit rates ``q_i = sum_t N R[i, t]`` over the jumps that exist."""
    S = target.shape[0]
    count = _row_lengths(target, S)
    indptr = np.zeros(S + 1, dtype=np.int64)
    np.cumsum(count, out=indptr[1:])
    del count
    nnz = int(indptr[-1])
    index_type = np.int32 if max(S, nnz) < 2**31 else np.int64
    indices = np.empty(nnz, dtype=index_type)
    data = np.empty(nnz)
    exit_rate = np.empty(S)
    _fill(target, R, float(N), indptr, indices, data, exit_rate)
    QT = sps.csr_matrix((data, indices, indptr), shape=(S, S), copy=False)
    QT.has_sorted_indices = True
    return QT, exit_rate


@numba.njit(cache=True)
def leaving(indptr, indices, labels, n):
    """``out[c]``: whether a jump leaves component ``c`` (an entry of ``Q^T`` in row
    ``j``, column ``i`` is the jump ``i -> j``)."""
    out = np.zeros(n, np.bool_)
    for j in range(indptr.shape[0] - 1):
        for q in range(indptr[j], indptr[j + 1]):
            i = indices[q]
            if labels[i] != labels[j]:
                out[labels[i]] = True
    return out
