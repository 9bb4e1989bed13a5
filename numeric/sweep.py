"""Float64 fast path: Theorem 1's constant over many arrival rates at once.

For each ``lam`` (``mu = 1``, sampling with replacement), compiled with numba:

1. ``s*``: start from the shooting recursion with ``s_b^d`` dropped,
   ``s_k = lam s_{k-1}^d`` (stable: it is the infinite-buffer fixed point), and
   polish with Newton's method on the full drift ``f(s) = 0`` using derive's
   generated ``f_into``/``jac_into`` kernels.
2. Truncation: the level-``k`` coordinates beyond the first ``K`` with
   ``J_{K+1,K} = lam d s_K^{d-1} < 1e-20`` are decoupled from the head to far
   below float64 resolution (their covariance is driven only through that
   entry), so ``W`` is solved on the leading ``K x K`` block; ``K = b`` for
   ``d = 1``.
3. ``J W + W J^T + Q = 0`` on that block as a dense linear system in the
   ``K(K+1)/2`` unknowns ``W_ij, i <= j`` (LAPACK ``gesv``), and ``c = tr(W)``
   (duality ``tr(P Q) = tr(W)`` for ``M = I``, design notes).

Rounding in ``s*`` is amplified by ``~ 1/(1 - lam)`` in heavy traffic; points
with ``1 - lam < ILL_CONDITIONED_GAP`` (and ``lam >= 1``) are recomputed with the
mpmath path at 20 digits and reported with an :class:`IllConditionedWarning`.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from derive import supermarket
from derive.errors import ParameterError, check_int
from numeric.precision import IllConditionedWarning

#: Below this distance from 1, lam is handed to the mpmath path (with a warning).
ILL_CONDITIONED_GAP = 1e-6
#: Coupling below which the tail levels are dropped from the float64 Lyapunov solve.
DECOUPLED = 1e-20

_compiled: dict[tuple[int, int], Any] = {}


def _build(b: int, d: int):
    """Compile the per-point kernel for one ``(b, d)``, using derive's numba kernels."""
    import numba

    k = supermarket(b, d).kernels("numba")
    f_into = k.f_into
    jac_into = k.jac_into
    Q_into = k.Q_into

    @numba.njit(cache=False)
    def one(lam: float) -> float:
        p = np.array([lam])
        s = np.empty(b)
        prev = 1.0
        for i in range(b):
            prev = lam * prev**d
            s[i] = prev
        f = np.empty(b)
        J = np.empty((b, b))
        for _ in range(60):
            f_into(s, p, f)
            jac_into(s, p, J)
            step = np.linalg.solve(J, f)
            s -= step
            if np.max(np.abs(step)) <= 1e-16 * np.max(np.abs(s)):
                break
        jac_into(s, p, J)
        Q = np.empty((b, b))
        Q_into(s, p, Q)
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

    @numba.njit(parallel=True, cache=False)
    def many(lams: np.ndarray, out: np.ndarray) -> None:
        for t in numba.prange(lams.shape[0]):
            out[t] = one(lams[t])

    return many


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
        ``c`` with the shape of ``lam``; relative accuracy ~1e-12 for
        ``lam <= 1 - 1e-6``.  Rates closer to 1 (or ``>= 1``) are computed by the
        mpmath path and flagged with :class:`IllConditionedWarning`.
    """
    b = check_int("b", b, 1)
    d = check_int("d", d, 1)
    arr = np.asarray(lam, dtype=np.float64)
    flat = arr.reshape(-1)
    if not np.all(np.isfinite(flat)) or np.any(flat <= 0):
        raise ParameterError("lam must be finite and > 0 at every point.")
    key = (b, d)
    if key not in _compiled:
        _compiled[key] = _build(b, d)
    out = np.empty(flat.shape[0])
    hard = flat >= 1.0 - ILL_CONDITIONED_GAP
    easy = ~hard
    if np.any(easy):
        sub = np.empty(int(easy.sum()))
        _compiled[key](np.ascontiguousarray(flat[easy]), sub)
        out[easy] = sub
    if np.any(hard):
        from numeric.bound import solve

        warnings.warn(
            f"{int(hard.sum())} arrival rate(s) within {ILL_CONDITIONED_GAP:g} of 1 (or above) "
            "are ill-conditioned in float64; they were recomputed with the mpmath path at "
            "20 digits.",
            IllConditionedWarning,
            stacklevel=2,
        )
        for t in np.flatnonzero(hard):
            out[t] = float(
                solve(repr(float(flat[t])), b, d, dps=20, routes=("shooting", "covariance")).constant
            )
    return out.reshape(arr.shape)
