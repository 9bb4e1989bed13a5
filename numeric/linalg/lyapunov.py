"""Dense float64 Lyapunov equations by the Bartels--Stewart method, from a real Schur form.

``J X + X J^T = Q`` with ``J = Z T Z^T`` (real Schur form, ``T`` quasi-upper
triangular, ``Z`` orthogonal) becomes ``T Y + Y T^T = Z^T Q Z`` (LAPACK
``trsyl``) and ``X = Z Y Z^T`` (R. H. Bartels and G. W. Stewart, "Solution of
the matrix equation AX + XB = C", Comm. ACM 15(9), 1972).  These are the steps of
:func:`scipy.linalg.solve_continuous_lyapunov`, the same operations in the same
order (so the same numbers), without its argument checks, which cost more than
the arithmetic for small systems, and with the Schur form given when several
right-hand sides share one ``J``.  The real Schur form itself (:func:`real_schur`)
is LAPACK ``dgees`` called as :func:`scipy.linalg.schur` calls it (the same
optimal workspace, queried once per size), without the wrapper's per-call
checks and workspace query.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mfstein.ground.errors import NumericalError

#: SciPy's LAPACK wrappers by name, looked up at their first use (importing this module
#: loads no SciPy; a warm call does no import statement).
_LAPACK: dict[str, Any] = {}


def _lapack(name: str) -> Any:
    """``scipy.linalg.lapack.<name>``."""
    fn = _LAPACK.get(name)
    if fn is None:
        from scipy.linalg import lapack

        fn = _LAPACK[name] = getattr(lapack, name)
    return fn


def lyapunov_real_schur(T: np.ndarray, Z: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """``X`` with ``J X + X J^T = Q`` from the real Schur form ``J = Z T Z^T``:
    ``T Y + Y T^T = Z^T Q Z`` (LAPACK trsyl) and ``X = Z Y Z^T`` (module docstring)."""
    y, scale, info = _lapack("dtrsyl")(T, T, Z.T @ (Q @ Z), tranb="T")
    if info < 0:
        raise NumericalError(f"LAPACK trsyl failed (info = {info}).")
    if info == 1:
        import warnings

        warnings.warn(
            "J has two eigenvalues whose sum is nearly zero: LAPACK trsyl perturbed them.",
            RuntimeWarning,
            stacklevel=2,
        )
    return (Z @ (y / scale)) @ Z.T


#: The optimal ``dgees`` workspace by matrix size (LAPACK's query depends on the size only).
_GEES_LWORK: dict[int, int] = {}


def _no_sort(x: float, y: float | None = None) -> None:
    """``dgees``'s selection callback when nothing is sorted."""
    return None


def real_schur(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(T, Z)`` with ``A = Z T Z^T`` for a dense float64 ``A``: what
    ``scipy.linalg.schur(A, output="real")`` returns (the same LAPACK call with the
    same workspace, so the same numbers), with the workspace query made once per
    size.  ``ValueError`` for a non-finite entry, as SciPy's check."""
    a = np.asarray(A)
    n = a.shape[0] if a.ndim == 2 else 0
    if a.dtype != np.float64 or n == 0 or a.shape != (n, n):
        return _scipy_schur(a)  # the general wrapper
    # the sum of the entries (as Python floats: an overflow gives inf, not NumPy's
    # warning) is finite only when every entry is (one that overflows is looked at
    # entry by entry)
    if not math.isfinite(sum(a.ravel().tolist())) and not np.isfinite(a).all():
        raise ValueError("array must not contain infs or NaNs")
    dgees = _lapack("dgees")
    lwork = _GEES_LWORK.get(n)
    if lwork is None:
        lwork = _GEES_LWORK[n] = int(dgees(_no_sort, a, lwork=-1)[-2][0].real)
    result = dgees(_no_sort, a, lwork=lwork, overwrite_a=False, sort_t=0)
    if result[-1] != 0:  # an illegal argument or no convergence: SciPy's own sentence
        return _scipy_schur(a)
    return result[0], result[-3]


def _scipy_schur(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``scipy.linalg.schur(a, output="real")``."""
    import scipy.linalg

    return scipy.linalg.schur(a, output="real")


def solve_lyapunov64(J: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """``X`` with ``J X + X J^T = Q`` for a dense float64 ``J`` (its real Schur form,
    :func:`real_schur`, then :func:`lyapunov_real_schur`)."""
    return lyapunov_real_schur(*real_schur(J), Q)
