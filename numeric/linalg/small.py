"""Small float64 solves and products without the fixed cost of NumPy's and SciPy's wrappers.

A fixed-point search on a model of a few coordinates solves many ``n x n``
systems with ``n`` of about 10, where :func:`numpy.linalg.solve`'s argument
handling and error-state context cost more than LAPACK's ``gesv``.
:func:`solve_vector_quiet` calls the same generalized ufunc
(``_umath_linalg.solve1``: NumPy's own LAPACK, so the same numbers) directly --
without a ``signature=``: on float64 inputs the ufunc picks its float64 loop
itself, the loop NumPy's wrapper names -- and
hands anything unusual -- another dtype or shape, a singular matrix, a result
that is not finite -- to :func:`numpy.linalg.solve`, which then answers (or
raises) exactly as before.  :func:`csr_times` is SciPy's own CSR matrix-vector
kernel (``csr_matvec``, what ``A @ x`` runs) called without the operator's
dispatch, so the same sums in the same order; :func:`csr_product` binds it to one
matrix, whose checks are then made once (a fixed-point search multiplies by the
same ``L^T`` at every step).
"""

from __future__ import annotations

import cmath
import math
from collections.abc import Callable
from typing import Any

import numpy as np

try:
    from numpy.linalg import _umath_linalg

    _SOLVE1 = _umath_linalg.solve1
    _EIGVALS = _umath_linalg.eigvals
    _SVD = _umath_linalg.svd
    _EIGVALSH = _umath_linalg.eigvalsh_lo
except (ImportError, AttributeError):  # another NumPy: the public functions only
    _SOLVE1 = _EIGVALS = _SVD = _EIGVALSH = None

_F64 = np.dtype(np.float64)
#: A result vector of at most this many entries is checked on Python numbers.
SHORT = 64

#: SciPy's ``csr_matvec`` once looked up (``False``: not yet, ``None``: not there).
_CSR_MATVEC: Any = False


def _csr_matvec() -> Any:
    """SciPy's ``csr_matvec`` kernel (``None`` in a SciPy without it), looked up
    at the first product: a caller that never multiplies never loads SciPy."""
    global _CSR_MATVEC
    if _CSR_MATVEC is False:
        try:
            from scipy.sparse import _sparsetools

            _CSR_MATVEC = _sparsetools.csr_matvec
        except (ImportError, AttributeError):  # another SciPy: the operator only
            _CSR_MATVEC = None
    return _CSR_MATVEC


def solve_vector_quiet(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``x`` with ``A x = b`` for a float64 ``n x n`` array ``A`` and vector ``b``:
    :func:`numpy.linalg.solve`'s result (and its :class:`numpy.linalg.LinAlgError`
    for a singular ``A``), without its per-call wrapper when nothing is unusual.

    For callers inside ``np.errstate(invalid="ignore")`` (a fixed-point search):
    a singular ``A`` sets the invalid flag here before the wrapper raises."""
    if (
        _SOLVE1 is None
        or type(A) is not np.ndarray
        or type(b) is not np.ndarray
        or b.ndim != 1
        or not b.shape[0]
        or A.shape != (b.shape[0], b.shape[0])
        or A.dtype != _F64
        or b.dtype != _F64
    ):
        return np.linalg.solve(A, b)
    x = _SOLVE1(A, b)  # float64 inputs: the loop "dd->d", found by the ufunc itself
    # the sum of the entries (a short x: as Python floats) or x @ x is not finite for a
    # NaN or infinite entry (and for a huge one, which the wrapper then solves again:
    # the same numbers)
    check = sum(x.tolist()) if x.shape[0] <= SHORT else x @ x
    return x if math.isfinite(check) else np.linalg.solve(A, b)


def _plain_square(A: Any) -> bool:
    """Whether ``A`` is a float64 ``n x n`` array (``n >= 1``) whose entries sum to a
    finite number (so every entry is finite; a huge finite sum that overflows only
    sends the caller to NumPy's own function).  For callers inside
    ``np.errstate(all="ignore")`` (an overflowing sum warns nothing)."""
    return (
        type(A) is np.ndarray
        and A.dtype == np.float64
        and A.ndim == 2
        and A.shape[0] == A.shape[1]
        and A.shape[0] > 0
        and math.isfinite(_ADD(A, axis=None))
    )


_ADD = np.add.reduce


def _finite(x: np.ndarray) -> bool:
    """Whether every entry of the 1-d float64 (or complex) result ``x`` is finite: a
    short one by the sum of its entries as Python numbers (finite only when every
    entry is; a sum that overflows is looked at entry by entry), a longer one by
    ``np.isfinite``."""
    if x.shape[0] <= SHORT and cmath.isfinite(sum(x.tolist())):
        return True
    return bool(np.isfinite(x).all())


def eigenvalues_quiet(A: np.ndarray) -> np.ndarray:
    """:func:`numpy.linalg.eigvals` of ``A`` (LAPACK ``dgeev`` by NumPy's own gufunc:
    the same numbers, real when every imaginary part is 0), without its per-call
    checks; anything unusual -- another dtype or shape, a non-finite entry, no
    convergence (a NaN) -- is answered by :func:`numpy.linalg.eigvals` itself.
    A short result is read once as Python complex numbers: their sum says whether
    every entry is finite (:func:`_finite`), their imaginary parts whether one is
    not real (``w.imag.any()``)."""
    with np.errstate(all="ignore"):
        w = _EIGVALS(A) if _EIGVALS and _plain_square(A) else None
    if w is None:
        return np.linalg.eigvals(A)
    if w.shape[0] <= SHORT:
        values = w.tolist()
        if not cmath.isfinite(sum(values)) and not _finite(w):
            return np.linalg.eigvals(A)
        return w if any(z.imag for z in values) else w.real
    if not _finite(w):
        return np.linalg.eigvals(A)
    return w if w.imag.any() else w.real


def singular_values_quiet(A: np.ndarray) -> np.ndarray:
    """``numpy.linalg.svd(A, compute_uv=False)`` (descending) of a float64 ``n x n``
    ``A``, without the wrapper's per-call checks (as :func:`eigenvalues_quiet`)."""
    with np.errstate(all="ignore"):
        s = _SVD(A) if _SVD and _plain_square(A) else None
    return s if s is not None and _finite(s) else np.linalg.svd(A, compute_uv=False)


def symmetric_eigenvalues_quiet(A: np.ndarray) -> np.ndarray:
    """:func:`numpy.linalg.eigvalsh` of a float64 ``n x n`` ``A`` (its lower
    triangle, ascending), without the wrapper's per-call checks (as
    :func:`eigenvalues_quiet`)."""
    with np.errstate(all="ignore"):
        w = _EIGVALSH(A) if _EIGVALSH and _plain_square(A) else None
    return w if w is not None and _finite(w) else np.linalg.eigvalsh(A)


def csr_times(A: Any, x: np.ndarray) -> np.ndarray:
    """``A @ x`` for a SciPy CSR matrix ``A`` and a vector ``x``, both float64:
    SciPy's ``csr_matvec`` on a zero vector (as the operator computes it, so the
    same numbers) without the operator's dispatch; anything else -- another
    format, dtype or shape -- by ``A @ x`` itself."""
    return csr_product(A)(x)


def csr_product(A: Any) -> Callable[[np.ndarray], np.ndarray]:
    """``x -> A @ x`` as :func:`csr_times` computes it, with the checks on ``A`` made
    once (``A`` must not change afterwards); each ``x`` is still checked."""
    kernel = _csr_matvec() if _CSR_MATVEC is False else _CSR_MATVEC
    if (
        kernel is None
        or getattr(A, "format", None) != "csr"
        or A.dtype != np.float64
        or A.ndim != 2
    ):
        return lambda x: A @ x
    m, n = A.shape
    indptr, indices, data = A.indptr, A.indices, A.data

    def times(x: np.ndarray) -> np.ndarray:
        if (
            type(x) is not np.ndarray
            or x.dtype != np.float64
            or x.ndim != 1
            or not x.flags.c_contiguous
            or x.shape[0] != n
        ):
            return A @ x
        out = np.zeros(m)
        kernel(m, n, indptr, indices, data, x, out)
        return out

    return times
