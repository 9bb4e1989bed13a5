"""Float64 numbers handed over as mpmath numbers, exactly and without a fixed cost.

A :class:`numeric.meanfield.solution.MeanFieldSolution` holds ``mpf`` numbers and mpmath
matrices whatever route made it.  The float64 route's numbers are doubles: each
becomes the ``mpf`` of the same value (:func:`mpf64`, exact at any working
precision), and its matrices are :class:`Float64Matrix` -- mpmath matrices whose
entries are converted on first read, so a caller that reads only ``c`` (a warm
call in a loop, a sweep's row) pays nothing for ``W``, ``P``, ``J`` and ``Q``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf
from mpmath.libmp import from_float

_make = mpmath.mp.make_mpf


def mpf64(x: float) -> mpf:
    """The ``mpf`` equal to the double ``x`` (exact: no rounding to the working
    precision)."""
    return _make(from_float(float(x)))


def mpf64_list(xs: Iterable[float]) -> list[mpf]:
    """:func:`mpf64` of each entry of ``xs``."""
    return [_make(from_float(x)) for x in np.asarray(xs, dtype=float).tolist()]


class Float64Matrix(mpmath.matrix):
    """An mpmath matrix made from a float64 array; its nonzero entries become
    ``mpf`` (:func:`mpf64`) the first time any entry is read.

    mpmath keeps a matrix's entries in the dict ``_matrix__data`` (its private
    ``__data``); here that name is a property filling the dict from the array on
    first access, so every mpmath operation sees an ordinary matrix.
    """

    def __init__(self, rows: int, cols: int, pending: Any = None) -> None:
        """A ``rows x cols`` matrix whose entries come from ``pending``: a function
        returning ``(i, j, values)`` arrays (row and column indices of the nonzero
        entries and their float64 values), called at the first read."""
        super().__init__(rows, cols)
        self._pending = pending

    @property
    def _matrix__data(self) -> dict[tuple[int, int], mpf]:
        pending = self.__dict__.get("_pending")
        if pending is not None:
            self._pending = None
            i, j, v = pending()
            self.__dict__["_entries"] = {
                (a, c): _make(from_float(x))
                for a, c, x in zip(i.tolist(), j.tolist(), v.tolist(), strict=True)
                if x
            }
        return self.__dict__["_entries"]

    @_matrix__data.setter
    def _matrix__data(self, value: dict[tuple[int, int], mpf]) -> None:
        self.__dict__["_pending"] = None
        self.__dict__["_entries"] = value

    def __getstate__(self) -> dict[str, Any]:
        """Pickled with its entries converted (the pending function stays here)."""
        state = dict(self.__dict__)
        state["_entries"] = dict(self._matrix__data)  # converted; a copy owns its entries
        state["_pending"] = None
        return state

    @classmethod
    def dense(cls, A: np.ndarray, rows: list[int] | None, b: int) -> Float64Matrix:
        """The ``b x b`` matrix with ``A`` on ``rows x rows`` (all rows when ``None``),
        zeros elsewhere."""
        A = np.array(A, dtype=float)
        kept = None if rows is None else tuple(rows)  # the caller's list may change

        def entries() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            a, c = np.nonzero(A)
            if kept is None:
                return a, c, A[a, c]
            idx = np.asarray(kept, dtype=np.int64)
            return idx[a], idx[c], A[a, c]

        return cls(b, b, entries)

    @classmethod
    def sparse(cls, A: Any, b: int) -> Float64Matrix:
        """The ``b x b`` matrix of a dense array or a SciPy sparse matrix ``A``."""
        if isinstance(A, np.ndarray):
            return cls.dense(A, None, b)
        import scipy.sparse as sps

        coo = sps.coo_matrix(A, copy=True)
        return cls(b, b, lambda: (coo.row, coo.col, coo.data))
