"""``Q^T``'s triangles stored apart, in place, for the compiled BiCGSTAB's sweeps.

A forward Gauss--Seidel sweep reads only the entries left of each row's diagonal
and the diagonal, a backward sweep only those right of it and the diagonal; but
in CSR a row's entries (about 7 on the supermarket's lattice, 84 bytes) share
cache lines, so each sweep streams the whole matrix from memory.  The sweeps wait
on memory (at ``N = 200``, ``b = 3``, a backward sweep over the upper triangle
and a diagonal array takes 14.6 ms of CPU where the one over whole rows takes
19.1 ms), so :func:`split` rearranges ``Q^T``'s own ``data`` and ``indices``,
block of :data:`BLOCK` rows by block, into the entries left of the diagonal of
the block's rows (row after row, in their order within the row), then the
block's diagonals (one per row), then the entries right of the diagonal (row
after row, in order): ``[L_b | D_b | U_b]``.  A sweep reads the blocks' ``L``
and ``D`` parts (forward) or ``D`` and ``U`` parts (backward) and skips the
others a few hundred kilobytes at a time.  Every row's entries keep their order,
so every sum the kernels of :mod:`numeric.exact.fused` take is the same sum in
the same order as on the CSR: the same bits.

Memory: none beyond two bytes per state (the counts of each row's entries left
and right of its diagonal) and one block's copy as scratch; ``indptr`` is not
touched (the blocks start where their first rows did), and :func:`split` puts
the arrays back in CSR order when its block ends, also on an exception (a
Ctrl-C in the solver).  A row without a stored diagonal gets an explicit zero
one in a copy (the assembly stores every diagonal; a matrix from elsewhere may
not), so the layout always has one diagonal per row.

The layout, as the kernels take it: the tuple ``(indptr, indices, data, lower,
upper, dstart, block)``, ``lower[i]`` and ``upper[i]`` the counts of row ``i``'s
entries left and right of its diagonal, ``dstart[k]`` the position of block
``k``'s first diagonal; block ``k`` holds rows ``k block`` to ``(k + 1) block -
1`` (fewer in the last) and starts at ``indptr[k block]`` (``block`` is
:data:`BLOCK`, passed to the kernels, whose compiled cache would not see a
change of a constant of this module).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import scipy.sparse as sps

from mfstein.ground.jit import numba
from numeric.exact.fused import U

#: Rows per block: the ``L`` and ``U`` parts of a block are some 150 kB each on the
#: supermarket's lattice, long enough streams for the hardware prefetcher, and a
#: block's scratch copy (``_rearrange``) small.
BLOCK = 4096

#: :func:`_count`'s answers.
FITS, NO_DIAGONAL, TOO_LONG = 0, 1, 2


@numba.njit(cache=True)
def _count(indptr, indices, lower, upper, most):
    """``lower[i]``, ``upper[i]``: row ``i``'s entries left and right of its diagonal
    (sorted rows).  Returns :data:`FITS`, :data:`NO_DIAGONAL` (a row stores no
    diagonal) or :data:`TOO_LONG` (a count above ``most``)."""
    for i in range(lower.shape[0]):
        a, e = indptr[i], indptr[i + 1]
        q = a
        while q < e and indices[q] < i:
            q += 1
        if q == e or indices[q] != i:
            return NO_DIAGONAL
        if q - a > most or e - q - 1 > most:
            return TOO_LONG
        lower[i] = q - a
        upper[i] = e - q - 1
    return FITS


@numba.njit(inline="always", cache=True)
def _put(data, indices, sd, si, base, q, p, apart):
    """Entry ``q`` of a block in CSR order to place ``p`` of its layout (``apart``),
    or back, from the block's scratch copy (both counted from the block's start
    ``base``; unsigned positions, :data:`numeric.exact.fused.U`)."""
    if apart:
        data[base + p] = sd[q]
        indices[base + p] = si[q]
    else:
        data[base + q] = sd[p]
        indices[base + q] = si[p]


@numba.njit(cache=True)
def _rearrange(indptr, indices, data, lower, upper, dstart, block, sd, si, apart):
    """CSR order to ``[L_b | D_b | U_b]`` per block (module docstring; ``apart``,
    which sets ``dstart``) or back, in place through the scratch ``sd``, ``si`` (one
    block's entries).  Positions are unsigned (:data:`U`): no index is checked for
    counting from the end."""
    S, ub = U(lower.shape[0]), U(block)
    for k in range(dstart.shape[0]):
        r0 = U(k) * ub
        r1 = min(S, r0 + ub)
        base = U(indptr[r0])
        for q in range(U(indptr[r1]) - base):
            sd[q] = data[base + q]
            si[q] = indices[base + q]
        pd = U(0)
        for i in range(r0, r1):
            pd += U(lower[i])
        if apart:
            dstart[k] = base + pd
        pl, pu, q = U(0), pd + (r1 - r0), U(0)
        for i in range(r0, r1):
            for _ in range(U(lower[i])):
                _put(data, indices, sd, si, base, q, pl, apart)
                pl += U(1)
                q += U(1)
            _put(data, indices, sd, si, base, q, pd, apart)
            pd += U(1)
            q += U(1)
            for _ in range(U(upper[i])):
                _put(data, indices, sd, si, base, q, pu, apart)
                pu += U(1)
                q += U(1)


def with_diagonal(QT: sps.csr_matrix) -> sps.csr_matrix:
    """A copy of ``QT`` (sorted rows) storing an explicit zero on every diagonal it
    lacks: the same matrix, one diagonal per row, the others' entries in order."""
    S = QT.shape[0]
    rows = np.repeat(np.arange(S), np.diff(QT.indptr))
    has = np.zeros(S, dtype=bool)
    has[rows[QT.indices == rows]] = True
    missing = np.flatnonzero(~has)
    out = sps.csr_matrix(
        (
            np.concatenate([QT.data, np.zeros(missing.size)]),
            (np.concatenate([rows, missing]), np.concatenate([QT.indices, missing])),
        ),
        shape=QT.shape,
    )
    out.sort_indices()
    return out


def _counts(QT: sps.csr_matrix) -> tuple[sps.csr_matrix, np.ndarray, np.ndarray]:
    """``(QT, lower, upper)``: the counts as bytes (as int32 where a row has more
    than 255 entries on a side), ``QT`` a copy with explicit diagonals if it lacked one."""
    S = QT.shape[0]
    for dtype in (np.uint8, np.int32):
        lower, upper = np.empty(S, dtype=dtype), np.empty(S, dtype=dtype)
        status = _count(QT.indptr, QT.indices, lower, upper, np.iinfo(dtype).max)
        if status == NO_DIAGONAL:
            QT = with_diagonal(QT)
            status = _count(QT.indptr, QT.indices, lower, upper, np.iinfo(dtype).max)
        if status == FITS:
            return QT, lower, upper
    raise ValueError("a row of Q^T has more than 2^31 entries")  # pragma: no cover


@contextmanager
def split(QT: sps.csr_matrix, block: int = BLOCK) -> Iterator[tuple[Any, ...]]:
    """``Q^T`` (sorted rows) in the triangles' layout (module docstring) with blocks
    of ``block`` rows for the ``with`` block, the layout's tuple as its value; CSR
    order again after it.  Inside the block neither ``QT`` nor any matrix sharing its
    arrays (e.g. :func:`numeric.exact.pinned.pinned`'s) may be read as a matrix."""
    QT, lower, upper = _counts(QT)
    S = QT.shape[0]
    ip = QT.indptr
    bounds = ip[np.minimum(np.arange(0, S + block, block), S)]
    longest = int(np.diff(bounds).max()) if S else 0
    sd, si = np.empty(longest), np.empty(longest, dtype=QT.indices.dtype)
    dstart = np.empty(-(-S // block), dtype=np.int64)
    layout = (ip, QT.indices, QT.data, lower, upper, dstart, block)
    _rearrange(*layout, sd, si, True)
    try:
        yield layout
    finally:
        _rearrange(*layout, sd, si, False)
