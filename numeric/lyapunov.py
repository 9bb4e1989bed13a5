"""Lyapunov equations ``X A + A^T X + C = 0`` for tridiagonal ``A``, at any precision.

Three independent routes (seed 000, Theorem 1 and Lemma 13; design notes):

``shooting``  (structure-aware, ``O(b^3)``)
    Column ``j`` of ``X A + A^T X + C = 0`` reads
    ``(A^T + a_jj I) x_j + a_{j-1,j} x_{j-1} + a_{j+1,j} x_{j+1} + c_j = 0``.
    Taking the last column ``x_b`` as unknown, the recursion runs backwards
    dividing only by the super-diagonal ``a_{j-1,j}`` (``= mu`` for the
    supermarket Jacobian, never small) and the first column's equation leaves a
    ``b x b`` linear system.  Rounding grows by at most ``max_j ||A^T + a_jj I||``
    per step, so the caller carries ``~ b log10`` of that in guard digits.
``spectral``
    ``A = D^-1 T D`` with ``T`` symmetric tridiagonal (possible because
    ``a_{j,j+1} a_{j+1,j} > 0``), ``T = U diag(mu) U^T``, and
    ``X = D U X~ U^T D`` with ``X~_ij = -(U^T D^-1 C D^-1 U)_ij / (mu_i + mu_j)``.
    Cancellation costs ``2 log10(max D / min D)`` digits, which are added as
    guard digits; it is offered only when that stays moderate.
``kronecker``
    The paper's vectorised system ``(A^T (x) I + I (x) A^T) vec X = -vec C``,
    dense, ``b^2 x b^2`` (small ``b`` only).

Matrices are ``mpmath.matrix``; all arithmetic is in the current ``mpmath.mp``
precision.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
from mpmath import mpf

from numeric.precision import NumericalError

try:  # gmpy2's integers multiply long operands faster than Python's
    from gmpy2 import mpz as _INT
except ImportError:  # pragma: no cover - gmpy2 is a declared dependency
    _INT = int


def tridiagonal_parts(A: mpmath.matrix) -> tuple[list[mpf], list[mpf], list[mpf]]:
    """Diagonal, super-diagonal and sub-diagonal of a tridiagonal matrix.

    Raises :class:`NumericalError` if ``A`` has entries outside the three bands.
    """
    n = A.rows
    data = getattr(A, "_matrix__data", None)  # mpmath's sparse storage {(i, j): value}
    keys = data.keys() if isinstance(data, dict) else [(i, j) for i in range(n) for j in range(n)]
    for i, j in keys:
        if abs(i - j) > 1 and A[i, j] != 0:
            raise NumericalError("the Jacobian is not tridiagonal; use the kronecker route.")
    diag = [A[i, i] for i in range(n)]
    sup = [A[i, i + 1] for i in range(n - 1)]
    sub = [A[i + 1, i] for i in range(n - 1)]
    return diag, sup, sub


def tridiagonal_solve(A: mpmath.matrix, rhs: list[mpf]) -> list[mpf]:
    """Solve ``A x = rhs`` for tridiagonal ``A`` by elimination without pivoting, O(b).

    Stable for the supermarket Jacobian, which is diagonally dominant by columns
    (its column sums are ``0`` in the interior and negative at both ends).
    """
    diag, sup, sub = tridiagonal_parts(A)
    n = len(diag)
    c = [mpf(0)] * n
    y = [mpf(0)] * n
    piv = diag[0]
    for i in range(n):
        if i > 0:
            piv = diag[i] - sub[i - 1] * c[i - 1]
            y[i] = (rhs[i] - sub[i - 1] * y[i - 1]) / piv
        else:
            y[0] = rhs[0] / piv
        if i < n - 1:
            c[i] = sup[i] / piv
    x = [mpf(0)] * n
    x[n - 1] = y[n - 1]
    for i in range(n - 2, -1, -1):
        x[i] = y[i] - c[i] * x[i + 1]
    return x


def shooting_growth_digits(A: mpmath.matrix) -> int:
    """Digits the shooting recursion can lose: ``sum_j log10(growth_j)``."""
    diag, sup, sub = tridiagonal_parts(A)
    n = len(diag)
    row = [abs(float(diag[i])) for i in range(n)]
    for i in range(n - 1):
        row[i] += abs(float(sub[i]))
        row[i + 1] += abs(float(sup[i]))
    total = 0.0
    for j in range(1, n):
        g = (max(row) + abs(float(diag[j])) + abs(float(sub[j])) if j < n - 1 else 0.0) / abs(
            float(sup[j - 1])
        )
        total += math.log10(max(g, 1.0))
    return math.ceil(total)


def _fixed(x: mpf, F: int) -> int:
    """``round(x 2^F)`` as an integer (fixed point with ``F`` fraction bits).

    A ``gmpy2.mpz`` when gmpy2 is installed (faster on long integers), else ``int``.
    """
    return _INT(int(mpmath.nint(mpmath.ldexp(x, F))))


def _int_array(values, F: int) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = [_fixed(v, F) for v in values]
    return out


def _int_solve(G: np.ndarray, g: np.ndarray, F: int) -> np.ndarray:
    """Gaussian elimination with partial pivoting on fixed-point integers.

    ``G`` (``n x n``) and ``g`` (``n``) hold values times ``2^F``; returns ``x``
    times ``2^F`` with ``G x = g``.
    """
    G = G.copy()
    g = g.copy()
    n = G.shape[0]
    for k in range(n):
        p = k + int(np.argmax(np.abs(G[k:, k])))
        if G[p, k] == 0:
            raise NumericalError("the shooting system is singular at this precision.")
        if p != k:
            G[[k, p]] = G[[p, k]]
            g[[k, p]] = g[[p, k]]
        if k + 1 < n:
            factors = (G[k + 1 :, k] << F) // G[k, k]
            G[k + 1 :, k:] -= (factors[:, None] * G[k, k:][None, :]) >> F
            g[k + 1 :] -= (factors * g[k]) >> F
    x = np.empty(n, dtype=object)
    for k in range(n - 1, -1, -1):
        acc = (g[k] << F) - (G[k, k + 1 :] * x[k + 1 :]).sum() if k + 1 < n else g[k] << F
        x[k] = acc // G[k, k]
    return x


def solve_shooting(A: mpmath.matrix, C: mpmath.matrix) -> mpmath.matrix:
    """Solve ``X A + A^T X + C = 0`` for tridiagonal ``A`` by column shooting.

    The recursion and the final ``b x b`` solve run in fixed-point integer
    arithmetic with ``F`` fraction bits, ``F`` = the current mpmath precision
    plus the bits needed to resolve ``C`` (Python integers in NumPy object
    arrays: exact products, one rounding per operation, no float exponent
    bookkeeping).  The caller provides guard digits for the growth of the
    recursion (:func:`shooting_growth_digits`).

    Parameters
    ----------
    A:
        ``b x b`` tridiagonal with non-vanishing super-diagonal.
    C:
        ``b x b`` right-hand side.

    Returns
    -------
    mpmath.matrix
        ``X`` (symmetric when ``C`` is).
    """
    diag, sup, sub = tridiagonal_parts(A)
    n = len(diag)
    if n == 1:
        return mpmath.matrix([[-C[0, 0] / (2 * diag[0])]])
    cmax = max(abs(C[i, j]) for i in range(n) for j in range(n))
    if cmax == 0:
        return mpmath.matrix(n, n)
    F = mpmath.mp.prec + max(0, -int(mpmath.floor(mpmath.log(cmax, 2)))) + 16
    Cn = np.empty((n, n), dtype=object)
    for i in range(n):
        Cn[i, :] = [_fixed(C[i, j], F) for j in range(n)]
    dg = _int_array(diag, F)
    up = _int_array([mpf(0), *sup], F)  # (A^T y)_i picks sup[i-1] y_{i-1}
    lo = _int_array([*sub, mpf(0)], F)  # ... and sub[i] y_{i+1}
    inv = _int_array([1 / x for x in sup], F)
    sb = _int_array(sub, F)

    unit_up = all(v == 1 for v in sup)
    # sub-diagonal entries below 2^-F vanish in fixed point (the fast-decaying tail of
    # s*); the products with them are skipped
    nz = [i for i in range(n - 1) if lo[i] != 0]
    K0, K = (nz[0], nz[-1] + 1) if nz else (0, 0)

    def at_plus(Y: np.ndarray, j: int) -> np.ndarray:
        """(A^T + a_jj I) Y, fixed point; Y is n x m."""
        out = (dg + dg[j])[:, None] * Y
        if K:
            out[K0:K] += lo[K0:K, None] * Y[K0 + 1 : K + 1]
        if unit_up:
            out >>= F
            out[1:] += Y[:-1]
            return out
        out[1:] += up[1:, None] * Y[:-1]
        return out >> F

    # column j = A_j x + c_j with x = last column; carried as [A_j | c_j]
    nxt = np.empty((n, n + 1), dtype=object)
    nxt[:] = _INT(0)
    for i in range(n):
        nxt[i, i] = _INT(1) << F
    after = None
    sign = 1
    for j in range(n - 1, 0, -1):
        rhs = at_plus(nxt, j)
        if unit_up:
            # carry Z_j = sign_j * (column j) with sign_{j-1} = -sign_j: then
            # Z_{j-1} = (A^T + a_jj) Z_j + sign_j c_j - a_{j+1,j} Z_{j+1}, no negation pass
            rhs[:, n] += Cn[:, j] if sign == 1 else -Cn[:, j]
            if after is not None and sb[j] != 0:
                rhs -= (sb[j] * after) >> F
            after, nxt = nxt, rhs
            sign = -sign
            continue
        rhs[:, n] += Cn[:, j]
        if after is not None and sb[j] != 0:
            rhs += (sb[j] * after) >> F
        after, nxt = nxt, -((rhs * inv[j - 1]) >> F)
    # first column: (A^T + a_00) x_0 + a_10 x_1 + c_0 = 0 (scaled by sign_0)
    cond = at_plus(nxt, 0)
    cond[:, n] += Cn[:, 0] if sign == 1 else -Cn[:, 0]
    if sb[0] != 0:
        term = (sb[0] * after) >> F
        if unit_up:
            cond -= term
        else:
            cond += term
    x = _int_solve(cond[:, :n], -cond[:, n], F)
    cols = [None] * n
    cols[n - 1] = x
    for j in range(n - 1, 0, -1):
        y = at_plus(cols[j][:, None], j)[:, 0] + Cn[:, j]
        if j + 1 < n:
            y = y + ((sb[j] * cols[j + 1]) >> F)
        cols[j - 1] = -y if unit_up else -((y * inv[j - 1]) >> F)
    X = mpmath.matrix(n, n)
    for j in range(n):
        for i in range(n):
            X[i, j] = mpmath.ldexp(mpf(int(cols[j][i])), -F)
    return X


def reverse(X: mpmath.matrix) -> mpmath.matrix:
    """``R X R`` with ``R`` the reversal permutation."""
    n = X.rows
    out = mpmath.matrix(n, n)
    for i in range(n):
        for j in range(n):
            out[i, j] = X[n - 1 - i, n - 1 - j]
    return out


def solve_dual_shooting(A: mpmath.matrix, C: mpmath.matrix) -> mpmath.matrix:
    """Solve ``A Y + Y A^T + C = 0`` (the dual / covariance equation) by shooting.

    With ``R`` the reversal, ``R A^T R`` has ``A``'s super-diagonal as its own, so
    the same division-free-by-small-numbers recursion applies to
    ``Y~ (R A^T R) + (R A^T R)^T Y~ + R C R = 0``, ``Y = R Y~ R``.
    """
    return reverse(solve_shooting(reverse(A.T), reverse(C)))


def symmetrizer(A: mpmath.matrix) -> tuple[list[mpf], mpmath.matrix]:
    """``D`` (diagonal entries) and symmetric tridiagonal ``T`` with ``A = D^-1 T D``."""
    diag, sup, sub = tridiagonal_parts(A)
    n = len(diag)
    D = [mpf(1)]
    T = mpmath.matrix(n, n)
    for i in range(n):
        T[i, i] = diag[i]
    for i in range(n - 1):
        if not sup[i] * sub[i] > 0:
            raise NumericalError("the off-diagonal products of J must be positive.")
        t = mpmath.sqrt(sup[i] * sub[i])
        T[i, i + 1] = T[i + 1, i] = t
        D.append(D[-1] * mpmath.sqrt(sup[i] / sub[i]))
    return D, T


def spectral_guard_digits(A: mpmath.matrix) -> float:
    """``2 log10(max D / min D)``: digits the spectral route loses to cancellation."""
    D, _ = symmetrizer(A)
    logs = [float(mpmath.log10(x)) for x in D]
    return 2 * (max(logs) - min(logs))


def eigenvalues(A: mpmath.matrix) -> list[mpf]:
    """Eigenvalues of a tridiagonal ``A`` with positive off-diagonal products, ascending.

    They are those of the symmetric ``T`` (same diagonal, off-diagonals
    ``sqrt(a_{i,i+1} a_{i+1,i})``), hence real; computed by implicit QL without
    eigenvectors, ``O(b^2)``, with absolute accuracy ``~ eps ||T||``.
    """
    from mpmath.matrices.eigen_symmetric import tridiag_eigen

    diag, sup, sub = tridiagonal_parts(A)
    d = list(diag)
    e = [mpmath.sqrt(sup[i] * sub[i]) for i in range(len(sup))] + [mpf(0)]
    tridiag_eigen(mpmath.mp, d, e, False)
    return sorted(d)


def solve_spectral(A: mpmath.matrix, C: mpmath.matrix) -> mpmath.matrix:
    """Solve ``X A + A^T X + C = 0`` through the symmetrised eigen-decomposition.

    The caller supplies the extra precision :func:`spectral_guard_digits` asks for.
    """
    D, T = symmetrizer(A)
    n = len(D)
    mu, U = mpmath.mp.eigsy(T)
    Dm = mpmath.diag(D)
    Dinv = mpmath.diag([1 / x for x in D])
    core = U.T * Dinv * C * Dinv * U
    Xt = mpmath.matrix(n, n)
    for i in range(n):
        for j in range(n):
            Xt[i, j] = -core[i, j] / (mu[i] + mu[j])
    return Dm * U * Xt * U.T * Dm


def solve_kronecker(A: mpmath.matrix, C: mpmath.matrix) -> mpmath.matrix:
    """Solve ``(A^T (x) I + I (x) A^T) vec X = -vec C`` densely (seed 000, Theorem 1).

    ``vec`` stacks columns; ``vec(X A) = (A^T (x) I) vec X`` and
    ``vec(A^T X) = (I (x) A^T) vec X``.  Lemma 13: the Kronecker sum is invertible
    because every sum of two eigenvalues of ``A`` is negative.
    """
    n = A.rows
    K = kronecker_sum(A)
    rhs = mpmath.matrix([-C[i, j] for j in range(n) for i in range(n)])
    v = mpmath.lu_solve(K, rhs)
    X = mpmath.matrix(n, n)
    for j in range(n):
        for i in range(n):
            X[i, j] = v[j * n + i]
    return X


def kronecker_sum(A: mpmath.matrix) -> mpmath.matrix:
    """``A^T (x) I + I (x) A^T`` (``b^2 x b^2``), the paper's vectorised operator."""
    n = A.rows
    K = mpmath.matrix(n * n, n * n)
    for p in range(n):
        for q in range(n):
            a = A[q, p]  # (A^T)[p, q]
            if a == 0:
                continue
            for i in range(n):
                K[p * n + i, q * n + i] += a  # A^T (x) I
                K[i * n + p, i * n + q] += a  # I (x) A^T
    return K
