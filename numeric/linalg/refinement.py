"""Linear systems and Lyapunov equations of a general matrix at any precision.

For a model without the supermarket's tridiagonal structure the Jacobian ``A``
is an arbitrary (non-symmetric, Hurwitz) matrix.  Both solvers here use
*iterative refinement*: a float64 solve ``L64^{-1}`` gives a correction, and the
residual it corrects is computed exactly in fixed-point integer arithmetic at the
working precision of :data:`mpmath.mp`:

    X_0 = 0,   R_k = A X_k + X_k A^T + C,   X_{k+1} = X_k + L64^{-1}(-R_k).

The float64 solves are NumPy's LAPACK (:func:`numpy.linalg.solve`, LU with partial
pivoting): for a linear system directly, and for a Lyapunov equation of size
``n <=`` :data:`KRONECKER_MAX_N` through its Kronecker form

    (A (x) I + I (x) A) vec(X) = -vec(R)      (row-major ``vec``; ``n^2`` unknowns),

whose matrix has the condition number of the Lyapunov operator itself.  Larger
Lyapunov equations take the Bartels--Stewart Schur method of
:func:`scipy.linalg.solve_continuous_lyapunov` (``O(n^3)`` rather than ``O(n^6)``).
A float64 solve only seeds and corrects: any backward-stable one converges to the
same solution at the working precision, and a small model's first solve in a new
process does not import :mod:`scipy.linalg` (about 0.15 s of CPU).

If ``kappa`` is the condition number of the operator, every step multiplies
the error by about ``kappa * 2^-53``; the loop stops when the last correction
is below ``2^-prec`` of the solution (then the solution is correct to about
``kappa * 2^-prec`` relative to its largest entry) and raises
:class:`mfstein.ground.errors.NumericalError` when the corrections stop shrinking
(``kappa`` near ``2^53``).  Accuracy is norm-wise: entries far below the
largest one are correct to the same *absolute* error.

Residuals are formed with NumPy object arrays of Python integers (values times
``2^F``), so a ``100 x 100`` product costs ``10^6`` exact integer
multiply-adds in C loops rather than as many ``mpf`` objects.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf

from mfstein.ground.errors import NumericalError
from numeric.linalg.mp_entries import matrix_of, nonzero_entries
from numeric.linalg.raw_mpf import exponent, float_of_scaled, mpf_of_int, scaled_int
from numeric.precision import limited_blas

try:  # gmpy2's integers multiply long operands faster than Python's
    from gmpy2 import mpz as _INT
except ImportError:  # pragma: no cover - gmpy2 is a declared dependency
    _INT = int

#: Most refinement steps before giving up (each gains ~ 53 - log2(kappa) bits).
MAX_STEPS = 200

#: Largest ``n`` whose Lyapunov corrections solve the ``n^2 x n^2`` Kronecker system
#: in NumPy (at ``n = 12`` one solve costs about 0.2 ms, the Schur route's 0.1 ms).
KRONECKER_MAX_N = 12


def _objects(values: Iterable[Any], count: int) -> np.ndarray:
    """A 1-D object array of ``count`` integers.  Filled from an iterator: NumPy
    converting a *list* of gmpy2 integers probes each one as a possible sequence
    or buffer (about 3 us an entry, ten times the integer work here)."""
    return np.fromiter(values, dtype=object, count=count)


class Fixed:
    """A matrix of integers ``M`` standing for ``M * 2^-F`` (exact products)."""

    def __init__(self, ints: np.ndarray, F: int) -> None:
        self.ints = ints
        self.F = F

    @classmethod
    def from_mp(cls, A: mpmath.matrix | list, bits: int) -> Fixed:
        """Round ``A`` to ``bits`` bits below its largest entry (a matrix's zero
        entries, absent from its entry dict, are zero integers)."""
        if isinstance(A, mpmath.matrix):
            entries = nonzero_entries(A)
            F = bits - exponent(entries.values())
            ints = np.empty((A.rows, A.cols), dtype=object)
            ints[...] = _INT(0)
            for key, v in entries.items():
                ints[key] = _INT(scaled_int(v, F))
            return cls(ints, F)
        rows = [list(r) for r in A]
        flat = [v for r in rows for v in r]
        F = bits - exponent(flat)
        shape = (len(rows), len(rows[0]) if rows else 0)
        ints = _objects((_INT(scaled_int(v, F)) for v in flat), len(flat)).reshape(shape)
        return cls(ints, F)

    def matmul(self, other: Fixed) -> Fixed:
        """The exact product, with ``F`` the sum of both fraction-bit counts."""
        return Fixed(self.ints.dot(other.ints), self.F + other.F)

    def shifted(self, F: int) -> np.ndarray:
        """The integers rescaled to ``2^-F`` (rounding toward -inf when dropping bits)."""
        d = F - self.F
        return self.ints * (_INT(1) << d) if d >= 0 else self.ints >> (-d)


def to_float64(A: mpmath.matrix) -> np.ndarray:
    """``A`` rounded to float64 (its nonzero entries converted, the rest zero)."""
    out = np.zeros((A.rows, A.cols))
    for key, v in nonzero_entries(A).items():
        out[key] = float(v)
    return out


def _finite64(A: mpmath.matrix, what: str) -> np.ndarray:
    """``A`` rounded to float64; :class:`NumericalError` if an entry overflows."""
    a = to_float64(A)
    if not np.isfinite(a).all():
        raise NumericalError(f"{what} has entries beyond float64's range.")
    return a


def _solver64(a: np.ndarray, what: str) -> Callable[[np.ndarray], np.ndarray]:
    """``r -> a^{-1} r`` in float64 (NumPy's LU with partial pivoting);
    :class:`NumericalError` when ``a`` is singular to float64 precision."""

    def solve(r: np.ndarray) -> np.ndarray:
        try:
            x = np.linalg.solve(a, r)
        except np.linalg.LinAlgError:
            x = np.full_like(r, np.nan)
        if not np.all(np.isfinite(x)):
            raise NumericalError(f"{what} is singular to float64 precision.")
        return x

    return solve


def _lyapunov64(a: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """``R -> E`` with ``a E + E a^T = -R`` (symmetrised) in float64: the Kronecker
    form for ``n <=`` :data:`KRONECKER_MAX_N`, else Bartels--Stewart through the
    real Schur form ``a = Z T Z^T`` (module docstring)."""
    n = a.shape[0]
    if n <= KRONECKER_MAX_N:
        eye = np.eye(n)
        solve = _solver64(np.kron(a, eye) + np.kron(eye, a), "the Lyapunov equation")

        def kron64(R: np.ndarray) -> np.ndarray:
            E = solve(-R.reshape(-1)).reshape(n, n)
            return (E + E.T) / 2

        return kron64
    import scipy.linalg

    T, Z = scipy.linalg.schur(a, output="real")

    def schur64(R: np.ndarray) -> np.ndarray:
        Y = scipy.linalg.solve_continuous_lyapunov(T, -(Z.T @ R @ Z))
        E = Z @ Y @ Z.T
        E = (E + E.T) / 2
        if not np.all(np.isfinite(E)):
            raise NumericalError("the Lyapunov equation is singular to float64 precision.")
        return E

    return schur64


def _max_abs_int(a: np.ndarray) -> int:
    """The largest ``|v|`` of an object array of integers (``0`` when empty), by
    NumPy's loops over the objects."""
    return int(np.abs(a).max()) if a.size else 0


def scaled_float64(a: np.ndarray) -> tuple[np.ndarray, int]:
    """``(m, top)``: float64 ``m`` with ``a = m * 2^top`` (to 53 bits), for an object
    array ``a`` of integers (a fixed-point residual); the inverse of :func:`scaled_ints`.

    ``a >> top`` (floor) has at most 60 bits, so it is exact in int64, whose
    conversion to float64 rounds to nearest as ``float(int)`` does."""
    top = max(_max_abs_int(a).bit_length() - 60, 0)
    m = (a >> top if top else a).astype(np.int64).astype(float)
    return m, top


def scaled_ints(x: np.ndarray, shift: int) -> np.ndarray:
    """``round(x * 2^shift)`` exactly, as integers (an object array): a float64
    correction brought into fixed point (the inverse of :func:`scaled_float64`)."""
    mant, exp = np.frexp(np.asarray(x, dtype=float))
    m = (mant * 2.0**53).astype(np.int64).ravel().tolist()  # exact: |mant| < 1
    e = (exp - 53 + shift).ravel().tolist()
    flat = (_INT(a) << b if b >= 0 else _INT(a) >> -b for a, b in zip(m, e, strict=True))
    return _objects(flat, len(m)).reshape(x.shape)


def _scale_of(values) -> int:
    """``floor(log2 max|v|)`` of float64 values (``None``-safe: 0 if all vanish)."""
    big = float(np.max(np.abs(values))) if np.size(values) else 0.0
    return math.frexp(big)[1] - 1 if big > 0 else 0


def _check_progress(size: int, xmax: int, prev: int | None, what: str) -> bool:
    """``True`` when converged; raises NumericalError when refinement stalls."""
    if size == 0 or size.bit_length() <= xmax.bit_length() - mpmath.mp.prec - 4:
        return True
    if prev is not None and size.bit_length() >= prev.bit_length():
        raise NumericalError(
            f"iterative refinement of {what} stopped converging (too ill-conditioned for "
            "float64 corrections)."
        )
    return False


@limited_blas()
def solve_linear(A: mpmath.matrix, rhs: list[mpf]) -> list[mpf]:
    """Solve ``A x = rhs`` to the working precision by iterative refinement."""
    n = A.rows
    bits = mpmath.mp.prec + 24
    solve64 = _solver64(_finite64(A, "the linear system"), "the linear system")
    Af = Fixed.from_mp(A, bits)
    bscale = exponent(rhs)
    b64 = np.array([float_of_scaled(v, -bscale) for v in rhs])
    x64 = solve64(b64)
    if not np.any(x64):
        return [mpf(0)] * n
    Fx = bits - (_scale_of(x64) + bscale)
    bint = _objects((_INT(scaled_int(v, Af.F + Fx)) for v in rhs), len(rhs))
    x = np.zeros(n, dtype=object)
    x[:] = _INT(0)
    x = _refine(
        x,
        lambda x: bint - Af.ints.dot(x),  # at scale 2^-(Af.F + Fx)
        solve64,
        Af.F,
        "a linear solve",
    )
    return [mpf_of_int(v, Fx) for v in x]


def _refine(
    x: np.ndarray,
    residual: Callable[[np.ndarray], np.ndarray],
    solve64: Callable[[np.ndarray], np.ndarray],
    shift: int,
    what: str,
) -> np.ndarray:
    """The refinement loop of the module docstring, in fixed point.

    ``x`` holds integers; ``residual(x)`` is the exact integer residual ``R_k``
    (at scale ``2^-(shift + F_x)``), ``solve64`` applies the float64 inverse
    ``L64^{-1}`` to it (rounded to float64 by :func:`scaled_float64`), and the
    correction is added back exactly (:func:`scaled_ints`).  Stops when the
    residual vanishes or the correction no longer matters
    (:func:`_check_progress`); :class:`NumericalError` after :data:`MAX_STEPS`.
    """
    prev = None
    for _ in range(MAX_STEPS):
        r64, top = scaled_float64(residual(x))
        if not np.any(r64):
            break
        corr = scaled_ints(solve64(r64), top - shift)
        x = x + corr
        size = _max_abs_int(corr)
        if _check_progress(size, _max_abs_int(x), prev, what):
            break
        prev = size
    else:
        raise NumericalError(f"iterative refinement of {what} did not converge.")
    return x


@limited_blas()
def lyapunov_refined(A: mpmath.matrix, C: mpmath.matrix) -> mpmath.matrix:
    """Solve ``A X + X A^T + C = 0`` (symmetric ``C``) by iterative refinement.

    ``A`` must be Hurwitz (every eigenvalue with negative real part), so that
    the equation has a unique solution; ``X`` is symmetric.
    """
    n = A.rows
    bits = mpmath.mp.prec + 24
    lyap64 = _lyapunov64(_finite64(A, "the Lyapunov equation"))
    Af = Fixed.from_mp(A, bits)
    Cf = Fixed.from_mp(C, bits)
    c64, ctop = scaled_float64(Cf.ints)
    X64 = lyap64(c64)
    if not np.any(X64):
        return mpmath.matrix(n, n)
    Fx = bits - (_scale_of(X64) + ctop - Cf.F)
    Cs = Cf.shifted(Af.F + Fx)
    X = np.zeros((n, n), dtype=object)
    X[:] = _INT(0)

    def residual(X: np.ndarray) -> np.ndarray:
        AX = Af.ints.dot(X)  # at scale 2^-(Af.F + Fx)
        return AX + AX.T + Cs

    X = _refine(X, residual, lyap64, Af.F, "a Lyapunov equation")
    ints = X.tolist()
    return matrix_of(
        n, n, {(i, j): mpf_of_int(v, Fx) for i, r in enumerate(ints) for j, v in enumerate(r) if v}
    )
