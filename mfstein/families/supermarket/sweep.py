"""Float64 fast path: Theorem 1's constant over many arrival rates at once.

For each ``lam`` (``mu = 1``, sampling with replacement), with derive's numba
kernels and a numba-compiled Lyapunov solve:

1. ``s*``: start from the shooting recursion with ``s_b^d`` dropped,
   ``s_k = lam s_{k-1}^d`` (stable: it is the infinite-buffer fixed point), and
   polish with Newton's method on the full drift ``f(s) = 0`` using derive's
   generated ``f_into``/``jac_values_into`` kernels.  ``J`` is tridiagonal and
   diagonally dominant by columns, so each Newton step is an ``O(b)``
   elimination without pivoting (:func:`_tridiagonal_step`), not a dense LU.
2. Truncation: the level-``k`` coordinates beyond the first ``K`` with
   ``J_{K+1,K} = lam d s_K^{d-1} < 1e-20`` are decoupled from the head to far
   below float64 resolution (their covariance is driven only through that
   entry), so ``W`` is solved on the leading ``K x K`` block; ``K = b`` for
   ``d = 1``.
3. ``J W + W J^T + Q = 0`` on that block as a dense linear system in the
   ``K(K+1)/2`` unknowns ``W_ij, i <= j`` (LAPACK ``gesv``), and ``c = tr(W)``
   (duality ``tr(P Q) = tr(W)`` for ``M = I``, ``docs/design.md``).

Rounding in ``s*`` is amplified by ``~ 1/(1 - lam)`` in heavy traffic; points
with ``1 - lam < ILL_CONDITIONED_GAP`` (and ``lam >= 1``) are recomputed with the
mpmath path at 20 digits and reported with an :class:`IllConditionedWarning`.
BLAS threads are limited while it runs (:func:`numeric.precision.limited_blas`).

References
----------
.. [1] "Beyond Scaling: Calculable Error Bound of the Power-of-Two-Choices
   Mean-Field Model in Heavy-Traffic", Theorem 1.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from derive import supermarket
from derive.models.supermarket import occupancy_exponent
from mfstein.ground.errors import ParameterError, check_int
from numeric.precision import IllConditionedWarning, limited_blas

#: Below this distance from 1, lam is handed to the mpmath path (with a warning).
ILL_CONDITIONED_GAP = 1e-5
#: Coupling below which the tail levels are dropped from the float64 Lyapunov solve.
DECOUPLED = 1e-20

_kernels: dict[tuple[int, int], Any] = {}


def _numba_kernels(b: int, d: int):
    k = _kernels.get((b, d))
    if k is None:
        k = _kernels[(b, d)] = supermarket(b, d).kernels("numba")
    return k


def _lyapunov_trace_impl(J: np.ndarray, Q: np.ndarray, d: int) -> float:
    """``tr(W)`` with ``J W + W J^T + Q = 0`` on the coupled leading block (float64)."""
    b = J.shape[0]
    K = b
    if d > 1:
        for i in range(b - 1):
            if J[i + 1, i] < DECOUPLED:
                K = i + 1
                break
    n = K * (K + 1) // 2
    idx = np.empty((K, K), dtype=np.int64)
    m = 0
    for i in range(K):
        for j in range(i, K):
            idx[i, j] = m
            idx[j, i] = m
            m += 1
    A = np.zeros((n, n))
    rhs = np.empty(n)
    for i in range(K):
        for j in range(i, K):
            r = idx[i, j]
            rhs[r] = -Q[i, j]
            for l in range(max(i - 1, 0), min(i + 2, K)):
                A[r, idx[l, j]] += J[i, l]
            for l in range(max(j - 1, 0), min(j + 2, K)):
                A[r, idx[i, l]] += J[j, l]
    w = np.linalg.solve(A, rhs)
    c = 0.0
    for i in range(K):
        c += w[idx[i, i]]
    return c


def _tridiagonal_step_impl(index: np.ndarray, values: np.ndarray, f: np.ndarray) -> float:
    """Solve ``J x = f`` in place of ``f`` for tridiagonal ``J`` given as sparse
    ``(index, values)``; return ``max|x|``.

    Elimination without pivoting, ``O(b)``: stable because ``J`` is diagonally
    dominant by columns.
    """
    b = f.shape[0]
    dg = np.zeros(b)
    up = np.zeros(b)
    lo = np.zeros(b)
    for t in range(index.shape[0]):
        i, j = index[t, 0], index[t, 1]
        if i == j:
            dg[i] = values[t]
        elif j == i + 1:
            up[i] = values[t]
        elif j == i - 1:
            lo[i] = values[t]
    for i in range(1, b):
        m = lo[i] / dg[i - 1]
        dg[i] -= m * up[i - 1]
        f[i] -= m * f[i - 1]
    f[b - 1] /= dg[b - 1]
    biggest = abs(f[b - 1])
    for i in range(b - 2, -1, -1):
        f[i] = (f[i] - up[i] * f[i + 1]) / dg[i]
        biggest = max(biggest, abs(f[i]))
    return biggest


_compiled: dict[str, Any] = {}


def _compiled_kernels():
    """numba-compiled ``(one, trace)`` (compiled on first use, cached on disk)."""
    if not _compiled:
        from mfstein.ground.jit import numba

        global _tridiagonal_step
        _tridiagonal_step = numba.njit(cache=True)(_tridiagonal_step_impl)
        _compiled["trace"] = numba.njit(cache=True)(_lyapunov_trace_impl)
    return _compiled["trace"]


def _one(lam: float, b: int, d: int, k, trace) -> float:
    """Float64 ``c`` at one arrival rate (see the module docstring)."""
    p = np.array([lam])
    s = np.empty(b)
    prev = 1.0
    for i in range(b):
        prev = lam * prev**d
        s[i] = prev
    f = np.empty(b)
    jv = np.empty(k.jac_index.shape[0])
    for _ in range(60):
        k.f_into(s, p, f)
        k.jac_values_into(s, p, jv)
        size = _tridiagonal_step(k.jac_index, jv, f)
        s -= f
        if size <= 1e-16 * np.max(np.abs(s)):
            break
    # only the leading K x K block enters the trace (module docstring, step 2);
    # Q = 2 diag(f~) for the supermarket model (every transition moves one level)
    K = _coupled_levels(s, lam, d)
    k.jac_values_into(s, p, jv)
    J = np.zeros((K, K))
    rows, cols = k.jac_index[:, 0], k.jac_index[:, 1]
    keep = (rows < K) & (cols < K)
    J[rows[keep], cols[keep]] = jv[keep]
    ft = np.empty(b)
    k.ftilde_into(s, p, ft)
    return trace(J, np.diag(2.0 * ft[:K]), 1)


#: Levels whose infinite-buffer occupancy is below this are dropped by the float64
#: path: everything they feed into c (through s*, Q and the coupling of J) is
#: smaller still, far below float64 resolution.
FLOAT_NEGLIGIBLE = 1e-60


def _float_levels(lam: float, b: int, d: int) -> int:
    """Buffer the float64 path solves: ``b``, or fewer levels when the occupancy
    ``lam^(e_k)`` (:func:`derive.models.supermarket.occupancy_exponent`) of the
    infinite-buffer fixed point falls below :data:`FLOAT_NEGLIGIBLE` (``lam < 1``),
    plus two."""
    if lam >= 1.0:
        return b
    log_s, k = 0.0, 0
    log_floor = np.log(FLOAT_NEGLIGIBLE)
    while k < b and log_s > log_floor:
        k += 1
        log_s = np.log(lam) * occupancy_exponent(d, k)
    return min(b, k + 2)


def _coupled_levels(s: np.ndarray, lam: float, d: int) -> int:
    """The leading block size ``K`` of step 2 (``b`` for ``d = 1``)."""
    b = s.shape[0]
    if d == 1:
        return b
    for i in range(b - 1):
        if lam * d * s[i] ** (d - 1) < DECOUPLED:
            return i + 1
    return b


def constant_float64(lam: Any, b: int, d: int = 2) -> np.ndarray:
    """Theorem 1's constant ``c`` in float64 for an array of arrival rates.

    Parameters
    ----------
    lam:
        Scalar or array of arrival rates ``> 0`` (``mu = 1``, with replacement).
    b:
        Buffer size ``>= 1``.
    d:
        Servers sampled per arrival, ``>= 1``.

    Returns
    -------
    numpy.ndarray
        ``c`` with the shape of ``lam``; relative accuracy ~1e-11 or better for
        ``lam <= 1 - 1e-5``.  Rates closer to 1 (or ``>= 1``) are computed by the
        mpmath path and flagged with :class:`IllConditionedWarning`.
    """
    b = check_int("b", b, 1)
    d = check_int("d", d, 1)
    try:
        arr = np.asarray(lam, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ParameterError(
            f"lam must be a real number or an array of real numbers, got {lam!r}."
        ) from None
    flat = arr.reshape(-1)
    if not np.all(np.isfinite(flat)) or np.any(flat <= 0):
        raise ParameterError("lam must be finite and > 0 at every point.")
    from mfstein.ground.limits import MAX_D, NUMERIC_MAX_B

    b = check_int("b", b, 1, NUMERIC_MAX_B)
    d = check_int("d", d, 1, MAX_D)
    trace = _compiled_kernels()
    out = np.empty(flat.shape[0])
    hard = flat >= 1.0 - ILL_CONDITIONED_GAP
    easy = ~hard
    # compile kernels only for the levels that matter in float64 (first use of a
    # b = 1000 model would otherwise compile 1000-line kernels for minutes)
    beff = max((_float_levels(float(x), b, d) for x in flat[easy]), default=1)
    k = _numba_kernels(beff, d) if np.any(easy) else None
    with limited_blas():
        for t in np.flatnonzero(easy):
            out[t] = _one(float(flat[t]), beff, d, k, trace)
    if np.any(hard):
        from mfstein.families.supermarket.solver import solve_supermarket

        warnings.warn(
            f"{int(hard.sum())} arrival rate(s) within {ILL_CONDITIONED_GAP:g} of 1 (or above) "
            "are ill-conditioned in float64; they were recomputed with the mpmath path at "
            "20 digits.",
            IllConditionedWarning,
            stacklevel=2,
        )
        for t in np.flatnonzero(hard):
            out[t] = float(
                solve_supermarket(
                    repr(float(flat[t])), b, d, dps=20, routes=("shooting", "covariance")
                ).constant
            )
    return out.reshape(arr.shape)
