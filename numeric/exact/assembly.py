"""The transposed generator ``Q^T`` of a searched chain, assembled by compiled loops.

The search (:func:`numeric.exact.lattice.explore`) leaves, per state ``i`` and
transition ``t``, the index ``target[i, t]`` of the state the jump leads to
(``-1``: no jump; 4 bytes) beside the intensity ``R[i, t]``; the entry of the
generator is ``Q[i, target[i, t]] += N R[i, t]``.  :func:`transposed_generator`
writes ``Q^T`` in CSR form straight from them, with 32-bit column indices, the
columns of each row ascending (so the sweeps of :mod:`numeric.exact.fused` split
a row at its diagonal without a search), entries of two transitions between the
same pair of states summed, and the diagonal ``-q_i`` (``q_i`` the exit rate,
summed in transition order) stored in every row; the exit rates are not kept
apart (:func:`numeric.exact.pinned.exit_rates` reads them off the diagonal once the
solve is done: 8 bytes per state less at its peak).  Before, the search wrote
(row, column, value) triples (24 bytes per entry) that SciPy transposed and
added to the diagonal through intermediate matrices: about 3 times the memory of
the result at the peak, and several passes.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sps

from mfstein.ground.jit import numba


@numba.njit(inline="always", cache=True)
def _repeated(target, i, t):
    """Whether transition ``t`` of state ``i`` leads where an earlier one does."""
    for u in range(t):
        if target[i, u] == target[i, t]:
            return True
    return False


@numba.njit(cache=True)
def _row_lengths(target, counts):
    """``counts[j + 1]``: entries of row ``j`` of ``Q^T`` (the diagonal, and one per
    distinct source)."""
    S, nt = target.shape[0], target.shape[1]
    for j in range(S):
        counts[j + 1] = 1
    for i in range(S):
        for t in range(nt):
            j = target[i, t]
            if j >= 0 and not _repeated(target, i, t):
                counts[j + 1] += 1


@numba.njit(cache=True)
def _fill(target, R, N, indptr, indices, data):
    """Fill ``Q^T`` row by row in ascending columns (sources are visited in order),
    with ``indptr[j]`` as row ``j``'s cursor, shifted back to the row starts at the end."""
    S, nt = target.shape[0], target.shape[1]
    for i in range(S):
        q = 0.0
        for t in range(nt):
            if target[i, t] >= 0:
                q += N * R[i, t]
        d = indptr[i]
        indices[d] = i
        data[d] = -q
        indptr[i] = d + 1
        for t in range(nt):
            j = target[i, t]
            if j < 0:
                continue
            if _repeated(target, i, t):
                data[indptr[j] - 1] += N * R[i, t]  # two transitions between the same states
            else:
                w = indptr[j]
                indices[w] = i
                data[w] = N * R[i, t]
                indptr[j] = w + 1
    for j in range(S, 0, -1):
        indptr[j] = indptr[j - 1]
    indptr[0] = 0


def transposed_generator(target: np.ndarray, R: np.ndarray, N: int) -> sps.csr_matrix:
    """``Q^T``: the transposed generator (CSR, int32 columns ascending within rows),
    its diagonal ``-q_i`` with the exit rates ``q_i = sum_t N R[i, t]`` over the jumps
    that exist (:func:`numeric.exact.pinned.exit_rates` reads them back)."""
    S, nt = target.shape
    # a row holds at most nt + 1 entries: with 32-bit positions when that bound fits,
    # so that SciPy keeps this row pointer (before, an int64 one was converted to
    # int32 when the matrix was made, 12 bytes per state at the assembly's peak)
    index_type = np.int32 if S * (nt + 1) < 2**31 else np.int64
    indptr = np.zeros(S + 1, dtype=index_type)
    _row_lengths(target, indptr)
    np.cumsum(indptr, out=indptr, dtype=index_type)
    nnz = int(indptr[-1])
    indices = np.empty(nnz, dtype=index_type)
    data = np.empty(nnz)
    _fill(target, R, float(N), indptr, indices, data)
    QT = sps.csr_matrix((data, indices, indptr), shape=(S, S), copy=False)
    QT.has_sorted_indices = True
    return QT


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


@numba.njit(cache=True)
def all_reach(indptr, indices, root):
    """Whether every state reaches ``root``: a breadth-first search from ``root``
    against the jumps (row ``j`` of ``Q^T`` lists the states ``i`` that jump to
    ``j``), one pass over ``Q^T`` with a queue of 32-bit indices and a flag per state."""
    S = indptr.shape[0] - 1
    seen = np.zeros(S, np.uint8)
    queue = np.empty(S, np.int32)
    seen[root] = 1
    queue[0] = root
    head, tail = 0, 1
    while head < tail:
        j = queue[head]
        head += 1
        for q in range(indptr[j], indptr[j + 1]):
            i = indices[q]
            if seen[i] == 0:
                seen[i] = 1
                queue[tail] = i
                tail += 1
    return tail == S
