"""The exact maximum of ``||<x, Hess f x>|| / ||x||^2`` over ``x != 0`` (the core paper, Lemma 8).

Write ``q_i(x) = x^T H_i x`` with ``H_i = Hess f_i(s*)``.  When every ``H_i`` is
diagonal -- true for the supermarket model, whose ``f_i`` is a sum of functions of
one coordinate each (``lam s_{i-1}^d``, ``-lam s_i^d``, linear terms) -- put
``y = x o x`` (entrywise square).  Then ``q(x) = A y`` with ``A_ij = H_i[j, j]``,
and ``y`` ranges over the cone ``y >= 0`` with ``sum(y) = ||x||^2``.  So

    max_x ||q(x)||_2 / ||x||_2^2 = max_{y in simplex} ||A y||_2 = max_j ||A e_j||_2,

because a norm of a linear map is convex and a convex function on a polytope
attains its maximum at a vertex; the simplex's vertices are the ``e_j``
(``x = e_j``).  Vertex enumeration is therefore exact and costs ``O(nnz)``.
For the core paper (``d = 2``), column ``j < b`` of ``A`` is ``(-2 lam, 2 lam)`` in rows
``j, j+1`` and the maximum is exactly ``2 sqrt(2) lam`` -- Lemma 8's constant is
attained (at ``x = e_j``), the inequality is tight.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mpmath

from mfstein.ground.errors import NumericalError, ParameterError


def max_quadratic_ratio(
    index: Sequence[tuple[int, int, int]], values: Sequence, b: int
) -> tuple[object, int]:
    """Return ``(max_x ||(x^T H_i x)_i||_2 / ||x||^2, argmax j)`` for diagonal ``H_i``.

    Parameters
    ----------
    index:
        Structural non-zeros ``(i, j, k)`` of the Hessian ``H[i, j, k] = d^2 f_i/ds_j ds_k``
        (derive's ``hess_index``).
    values:
        The matching values (derive's ``hess_values``), mpmath numbers.
    b:
        Dimension.

    Returns
    -------
    tuple
        The maximum (mpmath) and the coordinate ``j`` with ``x = e_j`` attaining it.
    """
    cols: list[dict[int, object]] = [{} for _ in range(b)]
    for (i, j, k), v in zip(index, values, strict=True):
        if v == 0:
            continue
        if j != k:
            raise ParameterError(
                "the Hessian must be diagonal in (j, k) for the exact vertex maximisation; "
                f"entry ({i}, {j}, {k}) is non-zero."
            )
        cols[j][i] = cols[j].get(i, 0) + v
    best = mpmath.mpf(0)
    arg = 0
    for j, col in enumerate(cols):
        norm = mpmath.sqrt(mpmath.fsum(mpmath.mpf(v) ** 2 for v in col.values()))
        if norm > best:
            best, arg = norm, j
    return best, arg


def max_column_norm(index: Sequence[Sequence[int]], values: Sequence, zero: Any) -> Any:
    """The same maximum in Arb balls: ``max_j ||A e_j||_2``, a ball enclosing it.

    ``values`` are Arb balls (derive's ``"arb"`` kernels) at the structural non-zeros
    ``index``; ``zero`` is the ball ``0`` each column's sum of squares starts from.
    Raises :class:`NumericalError` when an off-diagonal ``(j, k)`` entry is not zero.
    """
    from numeric.certified.arb import max_ball

    cols: dict[int, list[Any]] = {}
    for (_i, j, k), v in zip(index, values, strict=True):
        if j != k and not v.is_zero():
            raise NumericalError("the Hessian is not diagonal in (j, k)")
        cols.setdefault(j, []).append(v)
    return max_ball([sum((v * v for v in col), zero).sqrt() for col in cols.values()])
