"""Lyapunov equations ``X A + A^T X + C = 0`` for tridiagonal ``A``, at any precision.

Four routes (Theorem 1 and Lemma 13 of the core paper; the mathematics is
collected in ``docs/design.md``):

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
``iterative``  (structure-aware, ``O(b^2)`` big-number operations per sweep)
    Mixed-precision iterative refinement: the residual
    ``R = C + X A + A^T X`` is evaluated exactly in fixed point (``A`` is
    tridiagonal and ``X`` symmetric, so ``A^T X = (X A)^T`` and ``R`` costs
    three scaled column sums, ``O(b^2)``), and the correction
    ``dX A + A^T dX = -R`` is solved in float64 by Bartels--Stewart from one
    real Schur form ``A = U T U^T`` computed once (``O(b^3)`` *float64* flops
    per sweep, LAPACK ``trsyl``).  Each sweep multiplies the error by about
    ``eps64 kappa`` (``kappa`` the condition of the Lyapunov operator), so the
    number of sweeps is ``~ precision / (16 - log10 kappa)``; there is no
    exponential growth to pay for with guard digits.  Converged iterates are
    certified by the exact residual.  The same Schur form serves the dual
    equation ``A Y + Y A^T + C = 0`` (``trsyl`` with the transposes swapped).
``kronecker``
    The paper's vectorised system ``(A^T (x) I + I (x) A^T) vec X = -vec C``,
    dense, ``b^2 x b^2`` (small ``b`` only).  :func:`kronecker_sum` is the one
    numeric implementation of that operator in mfstein (the lemma checks and
    the benchmarks use it too).

Matrices are ``mpmath.matrix``; all arithmetic is in the current ``mpmath.mp``
precision.

References
----------
.. [1] "Beyond Scaling: Calculable Error Bound of the Power-of-Two-Choices
   Mean-Field Model in Heavy-Traffic" (Theorem 1 and Lemma 13).
.. [2] R. H. Bartels and G. W. Stewart, "Solution of the matrix equation
   AX + XB = C", Comm. ACM 15(9), 1972.
.. [3] N. J. Higham, "Accuracy and Stability of Numerical Algorithms",
   2nd ed., SIAM, 2002, ch. 12 (iterative refinement).
"""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf

from numeric.precision import NumericalError, limited_blas

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
    """``2 log10(max D / min D)``: digits the spectral route loses to cancellation.

    Infinite when ``A`` has an off-diagonal product ``<= 0`` (it is then not
    similar to a symmetric matrix by a diagonal scaling), so callers skip the
    spectral route: this happens for sampling without replacement at small N,
    where an intensity's derivative can vanish at the fixed point.
    """
    _, sup, sub = tridiagonal_parts(A)
    if not all(u * v > 0 for u, v in zip(sup, sub, strict=True)):
        return math.inf
    D, _ = symmetrizer(A)
    logs = [float(mpmath.log10(x)) for x in D]
    return 2 * (max(logs) - min(logs))


def eigenvalues(A: mpmath.matrix) -> list[mpf]:
    """Eigenvalues of a tridiagonal ``A`` with positive off-diagonal products, ascending.

    They are those of the symmetric ``T`` (same diagonal, off-diagonals
    ``sqrt(a_{i,i+1} a_{i+1,i})``), hence real; computed by implicit QL without
    eigenvectors, ``O(b^2)``, with absolute accuracy ``~ eps ||T||``.  When some
    off-diagonal product is ``<= 0`` (sampling without replacement at small N)
    the eigenvalues may be complex: the real parts of the general eigenvalues
    (:func:`mpmath.eig`, ``O(b^3)``) are returned instead, which is what a
    stability check needs.
    """
    from mpmath.matrices.eigen_symmetric import tridiag_eigen

    diag, sup, sub = tridiagonal_parts(A)
    if not all(u * v > 0 for u, v in zip(sup, sub, strict=True)):
        return sorted(mpmath.re(z) for z in mpmath.eig(A, left=False, right=False))
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


def solve_vectorised(A: mpmath.matrix, C: mpmath.matrix) -> mpmath.matrix:
    """Solve ``X A + A^T X + C = 0`` through the dense vectorised system.

    ``(A^T (x) I + I (x) A^T) vec X = -vec C`` (the core paper's Theorem 1
    form; named apart from ``derive.solve_kronecker``, which solves the same
    system symbolically for a model).

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


def kronecker_entries(A: Any) -> list[tuple[int, int, Any]]:
    """Nonzero entries ``(row, col, value)`` of ``A^T (x) I + I (x) A^T`` (``b^2 x b^2``).

    ``vec`` stacks columns (entry ``(i, j)`` of ``X`` at position ``i + b j``):
    ``(A^T (x) I) vec X = vec(X A)`` and ``(I (x) A^T) vec X = vec(A^T X)``.
    Repeated positions (the diagonal) appear once per term; callers add them.
    ``A`` may be an ``mpmath.matrix`` or a NumPy array.
    """
    n = A.rows if hasattr(A, "rows") else A.shape[0]
    out = []
    for p in range(n):
        for q in range(n):
            a = A[q, p]  # (A^T)[p, q]
            if a == 0:
                continue
            for i in range(n):
                out.append((i + n * p, i + n * q, a))  # (X A)_{ip} = sum_q X_iq A_qp
                out.append((p + n * i, q + n * i, a))  # (A^T X)_{pi} = sum_q A_qp X_qi
    return out


def kronecker_sum(A: Any, *, dense_rows: bool = False) -> Any:
    """``A^T (x) I + I (x) A^T`` (``b^2 x b^2``), the paper's vectorised operator.

    Returns an ``mpmath.matrix`` for an ``mpmath.matrix`` ``A``, a float64
    array for a NumPy ``A``, or (``dense_rows=True``) a list of row lists.
    """
    n = A.rows if hasattr(A, "rows") else A.shape[0]
    if isinstance(A, np.ndarray):
        K = np.zeros((n * n, n * n))
    elif dense_rows:
        zero = mpf(0)
        K = [[zero] * (n * n) for _ in range(n * n)]
    else:
        K = mpmath.matrix(n * n, n * n)
    for r, c, a in kronecker_entries(A):
        if dense_rows:
            K[r][c] += a
        else:
            K[r, c] += a
    return K


#: Largest number of refinement sweeps :func:`solve_iterative` may take.
ITERATIVE_MAX_SWEEPS = 400


class Schur64:
    """Real Schur form ``A = U T U^T`` of a float64 matrix, for Bartels--Stewart corrections.

    One factorisation serves both ``X A + A^T X = -R`` (``dual=False``) and
    ``A Y + Y A^T = -R`` (``dual=True``).  The triangular Sylvester equations
    are solved by a recursive blocked algorithm (Jonsson and Kagstrom's
    RECSY): splitting the larger triangular factor in halves turns almost all
    of the work into matrix products (level-3 BLAS), with LAPACK ``trsyl`` on
    blocks of at most :data:`SYLVESTER_BLOCK` rows and columns.
    """

    def __init__(self, A: np.ndarray) -> None:
        import scipy.linalg as sl

        with limited_blas():
            self.T, self.U = sl.schur(np.asarray(A, dtype=np.float64), output="real")
        n = self.T.shape[0]
        # dual form T Z + Z T^T = C: with the reversal R and S = R T^T R (upper
        # triangular), Z = R Y R where S^T Y + Y S = R C R
        self.S = self.T.T[::-1, ::-1].copy()
        (self._trsyl,) = sl.get_lapack_funcs(("trsyl",), (self.T,))
        self.n = n

    def _split(self, A: np.ndarray) -> int:
        """A split point of the quasi-triangular ``A`` that does not cut a 2 x 2 block."""
        k = A.shape[0] // 2
        return k + 1 if A[k, k - 1] != 0 else k

    def _sylvester(self, A: np.ndarray, B: np.ndarray, C: np.ndarray) -> np.ndarray:
        """``Z`` with ``A^T Z + Z B = C`` for upper quasi-triangular ``A``, ``B``."""
        m, n = C.shape
        if m <= SYLVESTER_BLOCK and n <= SYLVESTER_BLOCK:
            Z, scale, info = self._trsyl(A, B, C, trana="T", tranb="N")
            if info < 0:  # pragma: no cover - an argument error, i.e. a bug
                raise NumericalError(f"LAPACK trsyl failed (info = {info}).")
            return Z / scale
        if m >= n:
            k = self._split(A)
            Z1 = self._sylvester(A[:k, :k], B, C[:k])
            Z2 = self._sylvester(A[k:, k:], B, C[k:] - A[:k, k:].T @ Z1)
            return np.vstack([Z1, Z2])
        k = self._split(B)
        Z1 = self._sylvester(A, B[:k, :k], C[:, :k])
        Z2 = self._sylvester(A, B[k:, k:], C[:, k:] - Z1 @ B[:k, k:])
        return np.hstack([Z1, Z2])

    def correction(self, R: np.ndarray, dual: bool) -> np.ndarray:
        """Float64 ``dX`` with ``dX A + A^T dX = -R`` (or the dual), symmetrised."""
        U = self.U
        with limited_blas():
            rhs = -(U.T @ R @ U)
            if dual:
                Z = self._sylvester(self.S, self.S, rhs[::-1, ::-1].copy())[::-1, ::-1]
            else:
                Z = self._sylvester(self.T, self.T, rhs)
            dX = U @ Z @ U.T
        return (dX + dX.T) / 2


#: Largest block handed to LAPACK ``trsyl`` by :class:`Schur64`.
SYLVESTER_BLOCK = 48


def _to_fixed_matrix(X: np.ndarray, shift: int) -> np.ndarray:
    """``round(X 2^shift)`` of a float64 array as an object array of Python ints."""
    amax = float(np.max(np.abs(X))) if X.size else 0.0
    if amax == 0.0:
        out = np.empty(X.shape, dtype=object)
        out[...] = 0
        return out
    k = 61 - math.frexp(amax)[1]  # |X 2^k| < 2^61: exact in int64 after rounding
    ints = np.rint(np.ldexp(X, k)).astype(np.int64).astype(object)
    return ints << (shift - k) if shift >= k else ints >> (k - shift)


def _to_float_matrix(X: np.ndarray) -> tuple[np.ndarray, int]:
    """``(Y, e)`` with ``Y`` float64 and ``X ~ Y 2^e`` for an object array of ints."""
    try:
        return X.astype(np.float64), 0
    except OverflowError:
        top = max(int(v).bit_length() for v in (X.max(), X.min()))
        e = max(0, top - 62)
        return (X >> e).astype(np.float64), e


def solve_iterative(
    A: mpmath.matrix, C: mpmath.matrix, *, dual: bool = False, schur: Schur64 | None = None
) -> tuple[mpmath.matrix, int]:
    """Solve ``X A + A^T X + C = 0`` (or ``A X + X A^T + C = 0`` with ``dual``) by
    mixed-precision iterative refinement, for tridiagonal ``A`` and symmetric ``C``.

    The iterate is kept in fixed point with ``F`` fraction bits (``F`` = the
    current mpmath precision plus the bits that resolve the scale of ``X``);
    each sweep evaluates the residual exactly in ``O(b^2)`` integer operations
    and adds the float64 Bartels--Stewart correction.  The loop stops when a
    correction is below ``2^-prec max|X|`` (the iterate no longer changes at
    the working precision), or when the geometric contraction of the last two
    corrections puts the next one below ``2^-(prec+8) max|X|``; if the
    corrections stop shrinking by half first, :class:`NumericalError` is
    raised.  (:func:`mfstein.families.supermarket.solver.solve_supermarket` checks the result
    independently: two routes at two working precisions must agree.)

    Parameters
    ----------
    A:
        ``b x b`` tridiagonal, Hurwitz.
    C:
        ``b x b`` symmetric right-hand side.
    dual:
        Solve the covariance form ``A X + X A^T + C = 0`` instead.
    schur:
        A :class:`Schur64` of ``float64(A)`` to reuse (computed when omitted).

    Returns
    -------
    (mpmath.matrix, int)
        ``X`` and the number of sweeps taken.
    """
    diag, sup, sub = tridiagonal_parts(A)
    n = len(diag)
    if schur is None:
        schur = Schur64(float64_matrix(A))
    if dual:  # A X + X A^T = X (A^T) + (A^T)^T X: the primal form with A^T
        sup, sub = sub, sup
    centries = {key: v for key, v in stored_entries(C).items() if v != 0}
    if not centries:
        return mpmath.matrix(n, n), 0
    C64 = np.zeros((n, n))
    for (i, j), v in centries.items():
        C64[i, j] = float(v)
    X64 = schur.correction(C64, dual)
    xscale = float(np.max(np.abs(X64)))
    scale = max(xscale, max(abs(float(v)) for v in centries.values()))
    prec = mpmath.mp.prec
    F = prec + 16 + max(0, -math.frexp(scale)[1])

    def fixed(v: mpf) -> int:
        return int(mpmath.nint(mpmath.ldexp(v, F)))

    dg = [fixed(v) for v in diag]
    up = [fixed(v) for v in sup]
    lo = [fixed(v) for v in sub]
    unit_up = all(v == 1 << F for v in up)
    # X is symmetric, so only its upper triangle (i <= j) is kept, packed, with one
    # zero slot at the end for neighbours outside the matrix.  Entry (i, j) of
    # R = C + X A + A^T X reads
    #   X_ij (A_ii + A_jj) + A_{j-1,j} X_{i,j-1} + A_{j+1,j} X_{i,j+1}
    #                      + A_{i-1,i} X_{i-1,j} + A_{i+1,i} X_{i+1,j},
    # the neighbours found in the triangle through the symmetry X_ij = X_ji.
    rows, cols = np.triu_indices(n)
    m = rows.size
    slot = np.full((n + 2, n + 2), m, dtype=np.int64)  # slot of X[i - 1, j - 1]
    slot[rows + 1, cols + 1] = np.arange(m)
    slot[cols + 1, rows + 1] = np.arange(m)
    left, right = slot[rows + 1, cols], slot[rows + 1, cols + 2]
    above, below = slot[rows, cols + 1], slot[rows + 2, cols + 1]

    def coefficients(values: list[int], at: np.ndarray) -> np.ndarray:
        return np.array([_INT(0), *values, _INT(0)], dtype=object)[at]

    dsum = coefficients(dg, rows + 1) + coefficients(dg, cols + 1)
    c_left, c_right = coefficients([0, *up], cols + 1), coefficients(lo, cols + 1)
    c_above, c_below = coefficients([0, *up], rows + 1), coefficients(lo, rows + 1)
    cpacked = [(int(slot[i + 1, j + 1]), fixed(v)) for (i, j), v in centries.items() if i <= j]
    X = np.empty(m + 1, dtype=object)
    X[:m] = _to_fixed_matrix(X64[rows, cols], F)
    X[m] = _INT(0)
    Rf = np.empty((n, n))
    # stop once a correction is below 2^-prec max|X| (log2, in units of 2^-F)
    done_log2 = F + math.frexp(xscale)[1] - prec
    previous = F + math.frexp(xscale)[1]  # the float64 start counts as the first correction
    for sweep in range(1, ITERATIVE_MAX_SWEEPS + 1):
        R = X[:m] * dsum + X[right] * c_right + X[below] * c_below
        if unit_up:
            R >>= F
            R += X[left]
            R += X[above]
        else:
            R += X[left] * c_left + X[above] * c_above
            R >>= F
        for k, v in cpacked:  # C is sparse (often diagonal): add its entries only
            R[k] += v
        Rp, e = _to_float_matrix(R)
        Rf[rows, cols] = Rp
        Rf[cols, rows] = Rp
        dXf = schur.correction(Rf, dual)[rows, cols]
        amax = float(np.max(np.abs(dXf)))
        size = math.frexp(amax)[1] + e if amax > 0 else -math.inf
        X[:m] += _to_fixed_matrix(dXf, e)
        if size <= max(2, done_log2):
            break
        if size > previous - 1:
            raise NumericalError(
                "the iterative Lyapunov refinement stopped converging "
                f"(correction 2^{size - F} after {sweep} sweeps)."
            )
        # the error contracts geometrically: the next correction would be about
        # 2^(2 size - previous); when that is below the target with 8 bits to
        # spare, the iterate already meets it (saves the confirming sweep)
        if 2 * size - previous <= max(2, done_log2) - 8:
            break
        previous = size
    else:  # pragma: no cover - bounded by the halving test above
        raise NumericalError("the iterative Lyapunov refinement did not converge.")
    return _symmetric_to_mp(X[:m], rows, cols, n, F), sweep


def stored_entries(A: mpmath.matrix) -> dict[tuple[int, int], Any]:
    """The stored entries of an ``mpmath.matrix`` (its sparse dictionary), or all entries."""
    data = getattr(A, "_matrix__data", None)
    if isinstance(data, dict):
        return data
    return {(i, j): A[i, j] for i in range(A.rows) for j in range(A.cols)}


def _symmetric_to_mp(
    X: np.ndarray, rows: np.ndarray, cols: np.ndarray, n: int, F: int
) -> mpmath.matrix:
    """The symmetric ``n x n`` ``mpmath.matrix`` whose entries ``(rows[k], cols[k])``
    and ``(cols[k], rows[k])`` are the fixed-point integers ``X[k] 2^-F`` rounded
    to mp.prec (one conversion per pair, the same ``mpf`` stored twice)."""
    from mpmath.libmp import from_man_exp

    prec = mpmath.mp.prec
    make = mpmath.mp.make_mpf
    out = mpmath.matrix(n, n)
    data = out._matrix__data
    for i, j, v in zip(rows.tolist(), cols.tolist(), X.tolist(), strict=True):
        if v:
            x = data[i, j] = make(from_man_exp(int(v), -F, prec, "n"))
            data[j, i] = x
    return out


def float64_matrix(A: mpmath.matrix) -> np.ndarray:
    """``A`` as a float64 array (its stored entries only)."""
    out = np.zeros((A.rows, A.cols))
    for (i, j), v in stored_entries(A).items():
        out[i, j] = float(v)
    return out


def eigenvalues_float64(A: mpmath.matrix) -> list[mpf]:
    """Eigenvalues of a tridiagonal ``A`` with positive off-diagonal products, ascending,
    to float64 accuracy (absolute ``~ 1e-16 ||T||``; LAPACK on the symmetrised ``T``).

    The ``O(b^2)`` high-precision QL of :func:`eigenvalues` costs minutes at
    ``b = 1000``; the eigenvalues serve only the Hurwitz check and display.
    """
    from scipy.linalg import eigvalsh_tridiagonal

    diag, sup, sub = tridiagonal_parts(A)
    d = np.array([float(x) for x in diag])
    e = np.array([math.sqrt(float(sup[i]) * float(sub[i])) for i in range(len(sup))])
    with limited_blas():
        mu = eigvalsh_tridiagonal(d, e)
    return [mpf(float(x)) for x in sorted(mu)]
