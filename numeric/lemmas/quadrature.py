"""Lemma 4's integral ``P = int_0^inf e^{J^T t} e^{J t} dt`` by quadrature (no Lyapunov solve,
no eigen-decomposition).

The half-line is cut into the intervals ``[k h, (k+1) h)``.  Because
``e^{J (k h + t)} = e^{J t} e^{J h k}``,

    P = sum_{k >= 0} (A^k)^T P_h A^k,    A = e^{J h},   P_h = int_0^h e^{J^T t} e^{J t} dt,

an exact identity.  ``P_h`` is computed by Gauss-Legendre quadrature on
``[0, h]`` with ``h = 1 / (4 ||J||_inf)``; at every node ``e^{J t}`` is summed from
its Taylor series (``||J t|| <= 1/4``, so the series converges fast and with no
cancellation), using powers of ``J`` computed once.  The rule's degree is raised
until two successive rules agree to the working precision.  The sum over ``k``
is done by doubling, ``S <- S + (A^m)^T S A^m``, ``A^m <- (A^m)^2``, which reaches
``t = 2^j h`` after ``j`` steps; it stops when ``A^m`` has decayed below the
working precision (for a Hurwitz ``J``, ``||A^m|| -> 0`` geometrically in ``m``).

Arithmetic is binary fixed point on Python integers held in NumPy object arrays
(scale ``2^p`` with ``p`` = working precision + 64 guard bits): matrix products
then run at integer speed, about ten times faster than mpmath matrices, and every
operation has absolute error ``2^-p`` -- far below the working precision relative
to ``max |P_ij|``, which is how the result is compared.

References
----------
.. [1] F. Hairi, X. Liu and L. Ying, "Beyond Scaling: Calculable Error Bound of the
   Power-of-Two-Choices Mean-Field Model in Heavy-Traffic", arXiv:2012.06613
   (the core paper).
"""

from __future__ import annotations

import mpmath
import numpy as np
from mpmath.calculus.quadrature import GaussLegendre
from mpmath.libmp import to_fixed

from mfstein.ground.errors import ParameterError


def _to_fixed(x, p: int) -> int:
    return int(to_fixed(mpmath.mpf(x)._mpf_, p))


def _from_fixed(v: int, p: int):
    return mpmath.mpf((int(v), -p))


def _mul(A: np.ndarray, B: np.ndarray, p: int) -> np.ndarray:
    return (A @ B) >> p


def _max_abs(A: np.ndarray) -> int:
    return max(abs(int(v)) for v in A.flat)


def _taylor_coefficients(J: np.ndarray, tmax: int, eps: int, p: int) -> list[np.ndarray]:
    """Fixed-point ``[J^k / k!]`` until ``||J^k tmax^k / k!||_max < eps``."""
    n = J.shape[0]
    one = 1 << p
    coeffs = [np.array([[one if i == j else 0 for j in range(n)] for i in range(n)], dtype=object)]
    tpow = one
    k = 0
    while True:
        k += 1
        nxt = _mul(coeffs[-1], J, p) // k
        coeffs.append(nxt)
        tpow = (tpow * tmax) >> p
        if k > 2 and (_max_abs(nxt) * tpow) >> p < eps:
            return coeffs
        if k > 10_000:  # pragma: no cover - ||J tmax|| <= 1/4 makes this unreachable
            raise ParameterError("the Taylor series of e^{Jt} did not converge.")


def _expm_taylor(coeffs: list[np.ndarray], t: int, p: int) -> np.ndarray:
    """``sum_k coeffs[k] t^k`` by Horner's rule (fixed point)."""
    E = coeffs[-1]
    for C in reversed(coeffs[:-1]):
        E = ((E * t) >> p) + C
    return E


def _gauss_legendre(coeffs, h: int, degree: int, p: int) -> np.ndarray:
    """``int_0^h E(t)^T E(t) dt`` with mpmath's degree-``degree`` Gauss-Legendre rule."""
    with mpmath.workprec(p + 16):
        nodes = GaussLegendre(mpmath.mp).calc_nodes(degree, p + 16)
        hh = _from_fixed(h, p)
        fixed = [(_to_fixed((x + 1) * hh / 2, p), _to_fixed(w * hh / 2, p)) for x, w in nodes]
    n = coeffs[0].shape[0]
    S = np.zeros((n, n), dtype=object)
    S[:] = 0
    for t, w in fixed:
        E = _expm_taylor(coeffs, t, p)
        S = S + ((_mul(E.T, E, p) * w) >> p)
    return S


def lyapunov_integral(J: mpmath.matrix, *, max_doublings: int = 400) -> mpmath.matrix:
    """``int_0^inf e^{J^T t} e^{J t} dt`` at the current mpmath precision (the core paper, Lemma 4).

    Parameters
    ----------
    J:
        A square Hurwitz matrix (all eigenvalues with negative real part).
    max_doublings:
        Give up (ParameterError) if ``e^{J t}`` has not decayed by ``t = 2^max_doublings h``.

    Returns
    -------
    mpmath.matrix
        The integral, symmetric positive definite; absolute error about
        ``2^-prec * max |P_ij|``.
    """
    n = J.rows
    p = mpmath.mp.prec + 64
    eps = 1 << 48  # 2^-(prec + 16) in fixed point
    row_norm = max(mpmath.fsum(abs(J[i, j]) for j in range(n)) for i in range(n))
    if row_norm == 0:
        raise ParameterError("J must be Hurwitz; J = 0 is not.")
    Jf = np.array([[_to_fixed(J[i, j], p) for j in range(n)] for i in range(n)], dtype=object)
    h = _to_fixed(1 / (4 * row_norm), p)
    coeffs = _taylor_coefficients(Jf, h, eps, p)
    degree = 3
    prev = _gauss_legendre(coeffs, h, degree, p)
    while True:
        degree += 1
        cur = _gauss_legendre(coeffs, h, degree, p)
        if _max_abs(cur - prev) <= eps * max(1, _max_abs(cur) >> p) or degree >= 9:
            break
        prev = cur
    S = cur
    A = _expm_taylor(coeffs, h, p)
    for _ in range(max_doublings):
        S = S + _mul(_mul(A.T, S, p), A, p)
        A = _mul(A, A, p)
        if (_max_abs(A) ** 2 >> p) * n < eps:
            S = (S + S.T) // 2
            return mpmath.matrix([[_from_fixed(S[i, j], p) for j in range(n)] for i in range(n)])
    raise ParameterError(
        "J must be Hurwitz: e^{Jt} did not decay within the doubling limit of the quadrature."
    )
