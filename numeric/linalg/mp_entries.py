"""The entries of an ``mpmath.matrix`` read and written through its entry dict.

An ``mpmath.matrix`` keeps its nonzero entries in a dict ``{(i, j): mpf}`` (absent
keys are zero); ``A[i, j]`` checks the key's type and bounds each time and
``A[i, j] = v`` converts ``v`` and resets a cached LU factorisation.  The
working-precision route reads and builds matrices entry by entry thousands of
times per sweep point (Jacobians, Lyapunov solutions), so these helpers go to the
dict directly: the same entries, objects and zero pattern as indexing gives.  With
another matrix layout (the dict not found) they index as before.
"""

from __future__ import annotations

from typing import Any

import mpmath
from mpmath import mpf


def _store(A: Any) -> dict | None:
    """The entry dict of the ``mpmath.matrix`` ``A`` (``None`` if not found)."""
    data = getattr(A, "_matrix__data", None)
    return data if isinstance(data, dict) else None


def nonzero_entries(A: mpmath.matrix) -> dict[tuple[int, int], mpf]:
    """``{(i, j): A[i, j]}`` over the nonzero entries of ``A`` (a new dict)."""
    data = _store(A)
    if data is not None:
        return {k: v for k, v in data.items() if v}
    return {(i, j): A[i, j] for i in range(A.rows) for j in range(A.cols) if A[i, j]}


def rows_of(A: mpmath.matrix) -> list[list[mpf]]:
    """The entries of ``A`` as lists of rows (``A[i, j]`` for each ``(i, j)``)."""
    data = _store(A)
    if data is None:
        return [[A[i, j] for j in range(A.cols)] for i in range(A.rows)]
    get, zero, cols = data.get, A.ctx.zero, range(A.cols)
    return [[get((i, j), zero) for j in cols] for i in range(A.rows)]


def matrix_of(rows: int, cols: int, entries: dict[tuple[int, int], Any]) -> mpmath.matrix:
    """A ``rows x cols`` matrix with ``entries`` (``(i, j) -> value``, in range), the
    others zero: as ``A[i, j] = value`` for each, which stores nonzero ``mpf`` values
    as they are and converts anything else."""
    out = mpmath.matrix(rows, cols)
    data = _store(out)
    if data is None or not all(type(v) is mpf for v in entries.values()):
        for key, v in entries.items():
            out[key] = v
        return out
    data.update((k, v) for k, v in entries.items() if v)
    return out


def transposed(A: mpmath.matrix) -> mpmath.matrix:
    """``A.T`` (the same entries, swapped)."""
    if _store(A) is None:
        return A.T
    return matrix_of(A.cols, A.rows, {(j, i): v for (i, j), v in nonzero_entries(A).items()})
