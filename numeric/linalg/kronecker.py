"""Theorem 1's Kronecker system ``(J^T (x) I + I (x) J^T) vec(X) = vec(B)``, solved literally.

The paper writes the constant through the ``b^2 x b^2`` matrix
``A = J^T (x) I + I (x) J^T``.  With ``vec`` stacking columns (entry ``(i, j)`` of
``X`` at position ``i + b j``), ``(J^T (x) I) vec X = vec(X J)`` couples positions
``b`` apart and ``(I (x) J^T) vec X = vec(J^T X)`` couples neighbours, so for a
tridiagonal ``J`` the matrix ``A`` is banded with half-bandwidth ``b``.  Gaussian
elimination with partial pivoting inside the band costs ``O(b^4)`` instead of the
dense ``O(b^6)``, which makes the literal Kronecker route affordable at the
buffer sizes ``b = "auto"`` picks (10 to 20).

References
----------
.. [1] F. Hairi, X. Liu and L. Ying, "Beyond Scaling: Calculable Error Bound of the
   Power-of-Two-Choices Mean-Field Model in Heavy-Traffic", arXiv:2012.06613
   (the core paper).
"""

from __future__ import annotations

import mpmath


def kronecker_sum_rows(J: mpmath.matrix) -> list[list]:
    """Dense rows of ``A = J^T (x) I + I (x) J^T`` (``vec`` stacks columns).

    The operator is :func:`numeric.linalg.tridiagonal.kronecker_sum`, mfstein's one
    numeric implementation of it.
    """
    from numeric.linalg.tridiagonal import kronecker_sum

    return kronecker_sum(J, dense_rows=True)


def banded_solve(A: list[list], rhs: list, p: int) -> list:
    """Solve ``A x = rhs`` for a matrix with half-bandwidth ``p`` (partial pivoting).

    ``A`` is given as dense rows (overwritten copies are used); row interchanges
    within the band widen the upper band to ``2p``, which the loops allow for.
    """
    n = len(rhs)
    A = [row[:] for row in A]
    x = list(rhs)
    for k in range(n):
        last = min(n, k + p + 1)
        piv = max(range(k, last), key=lambda i: abs(A[i][k]))
        if A[piv][k] == 0:
            raise ZeroDivisionError("the Kronecker sum is singular")
        if piv != k:
            A[k], A[piv] = A[piv], A[k]
            x[k], x[piv] = x[piv], x[k]
        top = min(n, k + 2 * p + 1)
        pivot_row = A[k]
        for i in range(k + 1, last):
            f = A[i][k] / pivot_row[k]
            if f:
                row = A[i]
                for j in range(k + 1, top):
                    if pivot_row[j]:
                        row[j] -= f * pivot_row[j]
                row[k] = 0
                x[i] -= f * x[k]
    for k in range(n - 1, -1, -1):
        top = min(n, k + 2 * p + 1)
        s = x[k] - mpmath.fsum(A[k][j] * x[j] for j in range(k + 1, top) if A[k][j])
        x[k] = s / A[k][k]
    return x


def kronecker_solve_identity(J: mpmath.matrix) -> list:
    """``(J^T (x) I + I (x) J^T)^-1 vec(I)`` as a list of length ``b^2``."""
    b = J.rows
    rhs = [mpmath.mpf(1) if i == j else mpmath.mpf(0) for j in range(b) for i in range(b)]
    return banded_solve(kronecker_sum_rows(J), rhs, b)
