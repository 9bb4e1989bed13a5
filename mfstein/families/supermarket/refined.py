"""Refined mean-field correction (Gast and Van Houdt).

``E[S] = s* + V/N + O(1/N^2)`` with ``V = -J^{-1} h`` and
``h_i = 1/2 sum_{j,k} (d^2 f_i / ds_j ds_k)(s*) W_jk``, where ``W`` is the
stationary covariance of the Ornstein--Uhlenbeck limit of ``sqrt(N)(S - s*)``
(``J W + W J^T + Q = 0``).  Hessian values come from derive's generated kernel.

References
----------
.. [1] N. Gast and B. Van Houdt, "A Refined Mean Field Approximation",
   Proc. ACM Meas. Anal. Comput. Syst. 1(2), 2017.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import mpmath
from mpmath import mpf

from numeric.linalg.tridiagonal import tridiagonal_solve

if TYPE_CHECKING:
    import numpy as np


def hessian_contraction(
    hess_index: np.ndarray, hess_values: Sequence[mpf], W: mpmath.matrix, b: int
) -> list[mpf]:
    """``h_i = 1/2 sum_jk H_ijk W_jk`` from the Hessian's sparse values."""
    h = [mpf(0)] * b
    for (i, j, k), v in zip(hess_index.tolist(), hess_values, strict=True):
        h[i] += v * W[j, k] / 2
    return h


def refined_bias(
    J: mpmath.matrix, W: mpmath.matrix, hess_index: np.ndarray, hess_values: Sequence[mpf]
) -> list[mpf]:
    """``V = -J^{-1} h`` (current mpmath precision).

    Parameters
    ----------
    J:
        Jacobian at the fixed point (Hurwitz, hence invertible; tridiagonal).
    W:
        Solution of ``J W + W J^T + Q = 0``.
    hess_index, hess_values:
        derive's ``Kernels.hess_index`` and ``Kernels.hess_values(s*, p)``.
    """
    b = J.rows
    h = hessian_contraction(hess_index, hess_values, W, b)
    return tridiagonal_solve(J, [-x for x in h])
