"""Dense float64 Lyapunov equations by the Bartels--Stewart method, from a real Schur form.

``J X + X J^T = Q`` with ``J = Z T Z^T`` (real Schur form, ``T`` quasi-upper
triangular, ``Z`` orthogonal) becomes ``T Y + Y T^T = Z^T Q Z`` (LAPACK
``trsyl``) and ``X = Z Y Z^T`` (R. H. Bartels and G. W. Stewart, "Solution of
the matrix equation AX + XB = C", Comm. ACM 15(9), 1972).  These are the steps of
:func:`scipy.linalg.solve_continuous_lyapunov`, the same operations in the same
order (so the same numbers), without its argument checks, which cost more than
the arithmetic for small systems, and with the Schur form given when several
right-hand sides share one ``J``.
"""

from __future__ import annotations

import numpy as np

from mfstein.ground.errors import NumericalError


def lyapunov_real_schur(T: np.ndarray, Z: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """``X`` with ``J X + X J^T = Q`` from the real Schur form ``J = Z T Z^T``:
    ``T Y + Y T^T = Z^T Q Z`` (LAPACK trsyl) and ``X = Z Y Z^T`` (module docstring)."""
    from scipy.linalg.lapack import dtrsyl

    y, scale, info = dtrsyl(T, T, Z.T @ (Q @ Z), tranb="T")
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


def solve_lyapunov64(J: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """``X`` with ``J X + X J^T = Q`` for a dense float64 ``J`` (its real Schur form,
    then :func:`lyapunov_real_schur`)."""
    import scipy.linalg

    return lyapunov_real_schur(*scipy.linalg.schur(J, output="real"), Q)
