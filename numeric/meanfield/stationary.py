"""The 1/N^2 terms of the system-size expansion: A, B and c2, for any model.

``E[S] = s* + V/N + A/N^2 + ...``, ``N Cov-type second moment
E[(S - s*)(S - s*)^T] = W/N + B/N^2 + ...`` and therefore
``N E[(S - s*)^T M (S - s*)] = c + c2/N + O(1/N^2)`` with ``c2 = tr(M B)``.
The equations for the third-moment tensor ``C``, for ``B`` and for ``A`` are
derived (and printed in LaTeX) by :mod:`derive.expansion`; this module solves
them on the model's free coordinates (conservation laws removed as in
:mod:`numeric.invariants`) and maps ``A`` and ``B`` back to all coordinates.

Solving ``(J (+) J (+) J) C = -D`` without the ``n^3 x n^3`` Kronecker matrix:
in the Schur basis ``J = Z T Z^*`` the operator is triangular (in an
eigenbasis, when one exists, diagonal), so ``C`` costs ``O(n^4)`` work
(:class:`_SchurSolver`, :class:`_TridiagonalEigenSolver`).  At working
precision the float64 Schur solve (LAPACK trsyl slices) is the correction step
of an iterative refinement whose residual ``sum of the three mode products of
J with C, plus D`` is computed exactly in fixed-point integers using the
sparsity of ``J`` (``O(nnz(J) n^2)``); the same refinement solves the Lyapunov
equation for ``B`` and the linear system for ``A`` (:mod:`numeric.linalg.refinement`).
For ``n <= KRONECKER_MAX_N`` the dense Kronecker system of ``C`` is solved in
mpmath as an independent second route.  The float64 route
(:func:`second_order_float64`) uses the compiled symmetric back substitution
of :class:`_SchurSolver` (or the tridiagonal eigenbasis where it is well
conditioned) and reads back only the rows of ``C`` that ``B`` and ``A`` use.

Digits.  Everything is computed at two working precisions (the fixed point,
``W`` and ``V`` recomputed at each); ``digits2`` is the number of significant
digits on which ``c2`` agrees between them and with the Kronecker route, and
on which ``A`` and ``B`` agree norm-wise.  Entries far below the largest one
carry the same absolute error (norm-wise accuracy).

References
----------
N. Gast, L. Bortolussi and M. Tribastone, "Size expansions of mean field
approximation: transient and steady-state analysis", Performance Evaluation
129, 2019 (the expansion); "Beyond Scaling: Calculable Error Bound of the
Power-of-Two-Choices Mean-Field Model in Heavy-Traffic" (the generator, Lemma 7).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from itertools import permutations
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf

from mfstein.ground.errors import NumericalError, ParameterError
from numeric.linalg.lyapunov import lyapunov_real_schur
from numeric.linalg.refinement import scaled_float64, scaled_ints
from numeric.meanfield.fast_paths import fast_fixed_point
from numeric.precision import agreeing_digits, check_dps, earn_digits, guard_ladder

try:
    from gmpy2 import mpz as _INT
except ImportError:  # pragma: no cover
    _INT = int

#: Dense Kronecker route for C up to this many free coordinates.
KRONECKER_MAX_N = 4
#: Largest number of free coordinates the high-precision order-2 route accepts.
MAX_N = 120


@dataclass(frozen=True)
class SecondOrder:
    """The 1/N^2 coefficients in the model's own coordinates."""

    A: list[mpf]
    B: mpmath.matrix
    C: Any  # reduced third-moment tensor (nested lists of mpf), free coordinates
    c2: mpf
    digits: int
    methods: dict[str, str]
    #: per-entry absolute error estimates of ``A`` and ``B`` (row-major), from the
    #: two working precisions (:func:`numeric.precision.entry_errors`)
    errors: dict[str, list[mpf]] = field(default_factory=dict)
    free_map: list[list[mpf]] | None = None  # T: free -> all coordinates
    #: the fixed point at the higher working precision (all coordinates)
    s_star: list[mpf] | None = None


# --------------------------------------------------------------------------
# sparse order-2 objects on the free coordinates
# --------------------------------------------------------------------------
def _expand(entries: Sequence[tuple[tuple[int, ...], Any]], free: int) -> list[tuple]:
    """All permutations of the symmetric (derivative) indices of each entry."""
    out = []
    for idx, v in entries:
        head, tail = idx[:free], idx[free:]
        for perm in set(permutations(tail)):
            out.append(((*head, *perm), v))
    return out


def reduced_objects(
    kmp2: Any, s: list[mpf], p: list[mpf], T: list[list[mpf]], free_idx: list[int]
) -> dict[str, list[tuple[tuple[int, ...], mpf]]]:
    """The order-2 objects at ``s`` on the free coordinates, fully expanded.

    Output components are restricted to the free coordinates; every derivative
    index is contracted with the affine map ``T`` (``ds/dx``).
    """
    out: dict[str, list] = {}
    spec = {"d3f": 1, "d4f": 1, "dQ": 2, "d2Q": 2, "R": 3}
    for name, nout in spec.items():
        vals = getattr(kmp2, f"{name}_values")(s, p)
        idx = kmp2.index[name].tolist()
        if name == "dQ" or name == "d2Q":
            # stored with i <= j: add the transposed (j, i) entries
            sym = []
            for ix, v in zip(idx, vals, strict=True):
                sym.append((tuple(ix), v))
                if ix[0] != ix[1]:
                    sym.append(((ix[1], ix[0], *ix[2:]), v))
            entries = _expand(sym, 2)
        elif name == "R":
            entries = _expand([(tuple(ix), v) for ix, v in zip(idx, vals, strict=True)], 0)
        else:
            entries = _expand([(tuple(ix), v) for ix, v in zip(idx, vals, strict=True)], 1)
        out[name] = reduced_tensor(entries, nout, T, free_idx)
    return out


# --------------------------------------------------------------------------
# arithmetic: float64 arrays, or fixed-point integers at scale 2^-F
# --------------------------------------------------------------------------
class Arith:
    """Float64 (``F is None``), ``mpf`` object arrays (``F is None``, ``mp=True``;
    the working precision of ``mpmath.mp``) or exact fixed-point integer
    arithmetic at scale ``2^-F``: the order-2 right-hand sides below are written
    once over this interface."""

    def __init__(self, F: int | None, *, mp: bool = False) -> None:
        self.F = F
        self.mp = mp and F is None

    def array(self, values: Any) -> np.ndarray:
        if self.mp:
            return np.array(values, dtype=object)
        if self.F is None:
            return np.array(values, dtype=float)
        arr = np.asarray(values, dtype=object)
        out = np.empty(arr.shape, dtype=object)
        flat = out.reshape(-1)
        for k, v in enumerate(arr.flat):
            flat[k] = _INT(int(mpmath.nint(mpmath.ldexp(mpf(v), self.F)))) if v else _INT(0)
        return out

    def scalar(self, v: Any) -> Any:
        if self.mp:
            return mpf(v)
        return float(v) if self.F is None else _INT(int(mpmath.nint(mpmath.ldexp(mpf(v), self.F))))

    def zeros(self, shape: tuple[int, ...]) -> np.ndarray:
        if self.mp:
            out = np.empty(shape, dtype=object)
            out[...] = mpf(0)
            return out
        if self.F is None:
            return np.zeros(shape)
        out = np.empty(shape, dtype=object)
        out[...] = _INT(0)
        return out

    def mul(self, a: Any, b: Any) -> Any:
        """Product of two fixed-point quantities (arrays broadcast)."""
        if self.mp and isinstance(b, np.ndarray):
            # ndarray first: ``mpf * ndarray`` would first try (slowly) to convert the array
            return b * a
        return a * b if self.F is None else (a * b) >> self.F

    def outer(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        out = np.multiply.outer(x, y)
        return out if self.F is None else out >> self.F

    def div_int(self, a: Any, k: int) -> Any:
        return a / k if self.F is None else a // k

    def tensordot(self, a: np.ndarray, b: np.ndarray, axes: Any) -> np.ndarray:
        out = np.tensordot(a, b, axes=axes)
        return out if self.F is None else out >> self.F

    def to_mp(self, a: Any) -> Any:
        if self.F is None:
            return a
        return mpmath.ldexp(mpf(int(a)), -self.F)


def sym3(K: np.ndarray) -> np.ndarray:
    """``K_ijk + K_jik + K_kij`` for ``K`` symmetric in its last two indices."""
    out = K + K.transpose(1, 0, 2)
    out += K.transpose(1, 2, 0)
    return out


def _K_float64(n: int, W: np.ndarray, H: list) -> np.ndarray:
    """``K`` of :func:`assemble_D` in float64, with the entries of ``H`` grouped by
    output index: ``K_i = (sum_e v_e W_{l_e m_e}) W + 2 (v W_L)^T W_M`` (one small
    matrix product per ``i`` instead of two ``n x n`` temporaries per entry)."""
    idx = np.array([e[0] for e in H])
    vals = np.array([e[1] for e in H])
    order = np.argsort(idx[:, 0], kind="stable")
    idx, vals = idx[order], vals[order]
    lhs = W[idx[:, 1]] * vals[:, None]
    rhs = 2.0 * W[idx[:, 2]]
    trace = np.zeros(n)
    np.add.at(trace, idx[:, 0], vals * W[idx[:, 1], idx[:, 2]])
    K = trace[:, None, None] * W[None, :, :]
    bounds = np.flatnonzero(np.diff(idx[:, 0])) + 1
    for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, len(idx)], strict=True):
        K[idx[lo, 0]] += lhs[lo:hi].T @ rhs[lo:hi]
    return K


def assemble_D(ar: Arith, n: int, W, V, Q0, objs) -> np.ndarray:
    """Right-hand side ``D`` of the third-moment equation (C) (see derive.expansion)."""
    # K_ijk = sum_lm H_ilm E4_lmjk = (sum_lm H_ilm W_lm) W_jk + 2 sum_lm H_ilm W_lj W_mk
    if ar.F is None and not ar.mp and objs["H"]:
        K = _K_float64(n, W, objs["H"])
    else:
        K = ar.zeros((n, n, n))
        for (i, l, m), v in objs["H"]:
            K[i] += ar.mul(ar.mul(v, W[l, m]), W) + 2 * ar.mul(v, ar.outer(W[l], W[m]))
    D = ar.div_int(sym3(K), 2)
    # P_ijk = Q0_ij V_k + sum_l Q1_ijl W_lk   (symmetric in i, j)
    P = ar.mul(Q0[:, :, None], V[None, None, :])
    for (i, j, l), v in objs["dQ"]:
        P[i, j] += ar.mul(v, W[l])
    D += P  # in place: n^3 temporaries are what this costs at large n
    D += P.transpose(0, 2, 1)
    D += P.transpose(2, 1, 0)
    for (i, j, k), v in objs["R"]:
        D[i, j, k] += v
    return D


def _mode_sum(ar: Arith, Jentries, C: np.ndarray) -> np.ndarray:
    """``(J (+) J (+) J) C = J x1 C + J x2 C + J x3 C`` with sparse ``J``."""
    out = ar.zeros(C.shape)
    for (i, l), v in Jentries:
        out[i] += ar.mul(v, C[l])
        out[:, i] += ar.mul(v, C[:, l])
        out[:, :, i] += ar.mul(v, C[:, :, l])
    return out


class _SchurSolver:
    """Float64 solver of ``(J (+) J (+) J) C = -D`` through the Schur form.

    With ``J = Z T Z^*`` (``T`` upper triangular; real when every eigenvalue is
    real, complex otherwise) and ``C^ = C x1 Z^* x2 Z^* x3 Z^*`` the operator is
    triangular: ``(T (+) T (+) T) C^ = -D^``.  Valid for defective ``J`` (where
    an eigenbasis does not exist) and backward stable, since ``Z`` is unitary.
    Two ways to solve the triangular system, both ``O(n^4)``:

    * ``symmetric=False`` (any right side): the slice ``X_i = C^_i..`` solves the
      Sylvester equation ``(T + t_ii I) X_i + X_i T^T = -D^_i - sum_{l > i} t_il X_l``
      for ``i = n-1, ..., 0`` (LAPACK trsyl);
    * ``symmetric=True`` (``D`` fully symmetric, so ``C^`` is too): compiled back
      substitution on the *real* Schur form (quasi-triangular: 2x2 diagonal
      blocks for complex pairs, which rounding creates even when every
      eigenvalue of ``J`` is real but ``J`` is far from normal) over the sorted
      block triples ``I >= J >= K`` only, in decreasing lexicographic order.  For
      1x1 blocks
      ``C^_ijk = (R_ijk - sum_{l>i} t_il C^_jkl - sum_{l>j} t_jl C^_ikl
      - sum_{l>k} t_kl C^_ijl) / (t_ii + t_jj + t_kk)``: every entry on the right
      has a sorted index triple that is lexicographically larger, and by symmetry
      each sum runs over a contiguous row; a triple with 2x2 blocks solves its
      (at most 8) entries together.  About ``n^4/4`` real multiply-adds, six
      times fewer than the slices and no complex arithmetic.
    """

    def __init__(
        self,
        J64: np.ndarray,
        *,
        symmetric: bool = False,
        schur: tuple[np.ndarray, np.ndarray] | None = None,
        compiled: bool = False,
    ) -> None:
        import scipy.linalg

        # `compiled`: the compiled third-moment kernel at every size (a caller that
        # solves many points pays its one compile, cached on disk, and gains per point)
        self.compiled = compiled

        # `schur`: the real Schur form (T, Z) of J64 when the caller already has it
        T, Z = scipy.linalg.schur(J64, output="real") if schur is None else schur
        # real eigenvalues: the real Schur form is triangular and everything stays real;
        # the symmetric solver works on the quasi-triangular real form directly
        self.real = symmetric or bool(np.all(np.diag(T, -1) == 0))
        if not self.real:
            T, Z = scipy.linalg.schur(J64.astype(complex), output="complex")
        self.T, self.Z = np.ascontiguousarray(T), np.ascontiguousarray(Z)
        self.symmetric = symmetric

    def _hat(self, D: np.ndarray) -> np.ndarray:
        """``C^`` in the Schur basis."""
        T, Z = self.T, self.Z
        Dh = _modes(np.ascontiguousarray(Z.conj().T), D if self.real else D.astype(complex))
        if self.symmetric:
            # the kernel returns C^ with reversed indices: the basis Z with reversed columns
            kernel = _compiled_triangular() if self.compiled else _triangular(T.shape[0])
            return kernel(T, np.negative(Dh, out=Dh))
        from scipy.linalg.lapack import dtrsyl, ztrsyl

        n = T.shape[0]
        Ch = np.zeros_like(Dh)
        diag = np.diag(T)
        # (T + t_ii) X + X T^T = rhs; for complex T, T^T = conj(T)^H (trsyl's 'C')
        trsyl, B, tranb = (dtrsyl, T, "T") if self.real else (ztrsyl, T.conj(), "C")
        for i in range(n - 1, -1, -1):
            rhs = -Dh[i] - np.tensordot(T[i, i + 1 :], Ch[i + 1 :], axes=(0, 0))
            x, scale, info = trsyl(T + diag[i] * np.eye(n), B, rhs, trana="N", tranb=tranb)
            if info < 0:
                raise NumericalError(f"LAPACK trsyl failed (info = {info}).")
            Ch[i] = x / scale
        return Ch

    def _basis(self) -> np.ndarray:
        """The basis of :meth:`_hat`'s output: ``Z``, with its columns reversed for the
        compiled kernel (which returns ``C^`` with reversed indices)."""
        return np.ascontiguousarray(self.Z[:, ::-1]) if self.symmetric else self.Z

    def __call__(self, D: np.ndarray) -> np.ndarray:
        """The full tensor ``C``."""
        return np.real(_modes(self._basis(), self._hat(D)))

    def rows(self, D: np.ndarray, pairs: Sequence[tuple[int, int]]) -> _PairRows:
        """Only the rows ``C[k, l, :]`` for ``(k, l)`` in ``pairs`` (see :func:`_pair_rows`)."""
        return _pair_rows(self._basis(), self._hat(D), pairs)


def _small_solve_impl(M, x, p):
    """Solve ``M[:p, :p] y = x[:p]`` in place (``y`` overwrites ``x``; ``M`` is
    destroyed) by Gaussian elimination with partial pivoting: the diagonal
    systems of at most 8 unknowns of the quasi-triangular back substitution,
    without LAPACK's per-call overhead."""
    for c in range(p):
        piv = c
        for r in range(c + 1, p):
            if abs(M[r, c]) > abs(M[piv, c]):
                piv = r
        if piv != c:
            for q in range(c, p):
                M[c, q], M[piv, q] = M[piv, q], M[c, q]
            x[c], x[piv] = x[piv], x[c]
        for r in range(c + 1, p):
            f = M[r, c] / M[c, c]
            if f != 0.0:
                for q in range(c + 1, p):
                    M[r, q] -= f * M[c, q]
                x[r] -= f * x[c]
    for c in range(p - 1, -1, -1):
        acc = x[c]
        for q in range(c + 1, p):
            acc -= M[c, q] * x[q]
        x[c] = acc / M[c, c]


def _tail_dot_impl(Tr, r, nr, Cr, a, b, lo):
    """``(sum_{m >= lo} T[r, m] C[a, b, m], sum_{m >= lo} T[r + 1, m] C[a, b, m])``
    (the second only for ``nr == 2``, else 0) from the index-reversed copies
    ``Tr[r, q] = T[r, n-1-q]`` and ``Cr[a, b, q] = C[n-1-a, n-1-b, n-1-q]``: one
    forward pass over a row prefix of ``Cr`` for both rows of a 2x2 diagonal
    block.  Compiled with reassociation allowed, so that the reductions
    vectorise (the result differs from the sequential sum by round-off only)."""
    n = Tr.shape[1]
    row = Cr[n - 1 - a, n - 1 - b]
    acc0 = 0.0
    acc1 = 0.0
    if nr == 2:
        for q in range(n - lo):
            c = row[q]
            acc0 += Tr[r, q] * c
            acc1 += Tr[r + 1, q] * c
    else:
        for q in range(n - lo):
            acc0 += Tr[r, q] * row[q]
    return acc0, acc1


def _store_impl(Cr, i, j, k, v):
    """Store ``C_ijk = v`` at the placements ``C[a, b, c]`` with ``a >= b``, in the
    index-reversed array ``Cr[a, b, c] = C[n-1-a, n-1-b, n-1-c]``."""
    n1 = Cr.shape[0] - 1
    x, y, z = i, j, k
    if x < y:
        x, y = y, x
    if y < z:
        y, z = z, y
    if x < y:
        x, y = y, x
    Cr[n1 - x, n1 - y, n1 - z] = v
    Cr[n1 - x, n1 - z, n1 - y] = v
    Cr[n1 - y, n1 - z, n1 - x] = v


def _quasi_triangular_third_moment_impl(T, R):
    """``C`` with ``(T (+) T (+) T) C = R`` for a real quasi-triangular ``T`` (real
    Schur form: 1x1 and 2x2 diagonal blocks) and fully symmetric ``R``; see
    :class:`_SchurSolver`.  Block triples ``I >= J >= K`` in decreasing
    lexicographic order; the entries of one triple solve a system of size at
    most 8 (``T_II (+) T_JJ (+) T_KK``).

    Returns ``C`` with every index reversed (``out[a, b, c] = C[n-1-a, n-1-b,
    n-1-c]``): stored that way, the rows read by the decreasing sweep lie at
    increasing addresses and the sums run over row prefixes (memory order the
    hardware prefetches; about twice as fast at ``n = 200`` as the natural order)."""
    n = T.shape[0]
    Tr = np.ascontiguousarray(T[:, ::-1])
    starts = np.empty(n, np.int64)
    sizes = np.empty(n, np.int64)
    nb = 0
    a = 0
    while a < n:
        starts[nb] = a
        if a + 1 < n and T[a + 1, a] != 0.0:
            sizes[nb] = 2
        else:
            sizes[nb] = 1
        a += sizes[nb]
        nb += 1
    C = np.zeros_like(R)
    M = np.zeros((8, 8))
    rhs = np.zeros(8)
    for bi in range(nb - 1, -1, -1):
        i0, ni = starts[bi], sizes[bi]
        for bj in range(bi, -1, -1):
            j0, nj = starts[bj], sizes[bj]
            for bk in range(bj, -1, -1):
                k0, nk = starts[bk], sizes[bk]
                p = ni * nj * nk
                # entry e = (i nj + j) nk + k of the block triple; the three sums in
                # turn, each row of C (stored for C[a, b, :] with a >= b only) read
                # once for the (one or two) rows of T of its block
                for i in range(ni):
                    for j in range(nj):
                        for k in range(nk):
                            rhs[(i * nj + j) * nk + k] = R[i0 + i, j0 + j, k0 + k]
                for j in range(nj):
                    for k in range(nk):
                        a1, b1 = max(j0 + j, k0 + k), min(j0 + j, k0 + k)
                        x0, x1 = _tail_dot(Tr, i0, ni, C, a1, b1, i0 + ni)
                        rhs[j * nk + k] -= x0
                        if ni == 2:
                            rhs[(nj + j) * nk + k] -= x1
                for i in range(ni):
                    for k in range(nk):
                        a1, b1 = max(i0 + i, k0 + k), min(i0 + i, k0 + k)
                        x0, x1 = _tail_dot(Tr, j0, nj, C, a1, b1, j0 + nj)
                        rhs[i * nj * nk + k] -= x0
                        if nj == 2:
                            rhs[(i * nj + 1) * nk + k] -= x1
                for i in range(ni):
                    for j in range(nj):
                        a1, b1 = max(i0 + i, j0 + j), min(i0 + i, j0 + j)
                        x0, x1 = _tail_dot(Tr, k0, nk, C, a1, b1, k0 + nk)
                        rhs[(i * nj + j) * nk] -= x0
                        if nk == 2:
                            rhs[(i * nj + j) * nk + 1] -= x1
                if p == 1:
                    v = rhs[0] / (T[i0, i0] + T[j0, j0] + T[k0, k0])
                    _store(C, i0, j0, k0, v)
                    continue
                for e in range(p):
                    for u in range(p):
                        M[e, u] = 0.0
                e = 0
                for i in range(ni):
                    for j in range(nj):
                        for k in range(nk):
                            for u_i in range(ni):
                                M[e, (u_i * nj + j) * nk + k] += T[i0 + i, i0 + u_i]
                            for u_j in range(nj):
                                M[e, (i * nj + u_j) * nk + k] += T[j0 + j, j0 + u_j]
                            for u_k in range(nk):
                                M[e, (i * nj + j) * nk + u_k] += T[k0 + k, k0 + u_k]
                            e += 1
                _small_solve(M, rhs, p)
                e = 0
                for i in range(i0, i0 + ni):
                    for j in range(j0, j0 + nj):
                        for k in range(k0, k0 + nk):
                            _store(C, i, j, k, rhs[e])
                            e += 1
    # C[a, b, :] = C[b, a, :] for a < b; in reversed indices, for A > B
    for a in range(n):
        for b in range(a):
            for m in range(n):
                C[a, b, m] = C[b, a, m]
    return C


#: Up to this many free coordinates the third-moment kernel runs as plain Python
#: (about ``n^4/4`` multiply-adds: 0.1 s at ``n = 24``) instead of being compiled
#: by numba (several seconds with an empty cache, whatever ``n``); docs/design.md,
#: "Compiling bounded".
INTERPRETED_MAX_N = 24

# the helpers the kernel calls, as plain Python; the compiled kernel gets compiled
# ones in a namespace of its own (:func:`_compiled_triangular`), so the plain
# kernel never calls compiled code and its result does not depend on what the
# process compiled before
_tail_dot = _tail_dot_impl
_store = _store_impl
_small_solve = _small_solve_impl

_COMPILED: dict[str, Any] = {}


def _triangular(n: int) -> Any:
    """The third-moment kernel for ``n`` coordinates: plain Python up to
    :data:`INTERPRETED_MAX_N`, compiled above."""
    if n <= INTERPRETED_MAX_N:
        return _quasi_triangular_third_moment_impl
    return _compiled_triangular()


def _compiled_triangular() -> Any:
    """:func:`_quasi_triangular_third_moment_impl` compiled by numba (cached on disk)."""
    fn = _COMPILED.get("triangular")
    if fn is None:
        import types

        from mfstein.ground.jit import numba

        impl = _quasi_triangular_third_moment_impl
        space = dict(impl.__globals__)
        space.update(
            _tail_dot=numba.njit(cache=True, fastmath={"reassoc", "contract"})(_tail_dot_impl),
            _store=numba.njit(cache=True)(_store_impl),
            _small_solve=numba.njit(cache=True)(_small_solve_impl),
        )
        copy = types.FunctionType(impl.__code__, space, impl.__name__)
        copy.__qualname__, copy.__doc__ = impl.__qualname__, impl.__doc__
        fn = _COMPILED["triangular"] = numba.njit(cache=True)(copy)
    return fn


def _pair_rows(X: np.ndarray, Ch: np.ndarray, pairs: Sequence[tuple[int, int]]) -> _PairRows:
    """Rows ``C[k, l, :]`` of ``C = C^ x1 X x2 X x3 X`` for ``(k, l)`` in ``pairs``:
    ``C_klj = sum_abc X_ka X_lb X_jc C^_abc``, as one product of the
    ``(pairs x n^2)`` Khatri-Rao rows ``X_k (x) X_l`` with ``C^`` (``O(P n^3)``
    for ``P`` pairs instead of ``O(n^4)`` for the whole tensor); real part."""
    n = X.shape[0]
    pairs = sorted(set(pairs))
    if not pairs:
        return _PairRows({})
    k = np.array([p[0] for p in pairs])
    l = np.array([p[1] for p in pairs])
    out = np.empty((len(pairs), n), dtype=np.result_type(X, Ch))
    step = max(1, 2**22 // (n * n))  # Khatri-Rao blocks of at most 2^22 entries
    flat = Ch.reshape(n * n, n)
    for lo in range(0, len(pairs), step):
        kr = (X[k[lo : lo + step], :, None] * X[l[lo : lo + step], None, :]).reshape(-1, n * n)
        out[lo : lo + step] = (kr @ flat) @ X.T
    out = np.real(out)
    return _PairRows({p: out[i] for i, p in enumerate(pairs)})


class _TridiagonalEigenSolver:
    """Float64 solver of ``(J (+) J (+) J) C = -D`` for a tridiagonal ``J`` whose
    off-diagonal products ``J_{k+1,k} J_{k,k+1}`` are all positive (the
    supermarket family: arrivals push up, services pull down).

    Such a ``J`` is similar to a symmetric tridiagonal matrix through a diagonal
    scaling: with ``sigma_1 = 1``, ``sigma_{k+1} = sigma_k sqrt(J_{k+1,k} / J_{k,k+1})``
    and ``S = diag(sigma)``, ``J_s = S^-1 J S`` has off-diagonal entries
    ``+-sqrt(J_{k+1,k} J_{k,k+1})``.  Its orthogonal eigenbasis ``J_s = U L U^T``
    (LAPACK stemr via :func:`scipy.linalg.eigh_tridiagonal`) gives
    ``J = X L X^-1`` with ``X = S U`` and ``X^-1 = U^T S^-1``: the eigenvalues
    are real and the third-moment operator is diagonal in this basis,
    ``C^_abc = -D^_abc / (l_a + l_b + l_c)``, ``D^ = D x1 X^-1 x2 X^-1 x3 X^-1``.
    Each mode product is one BLAS matrix product (``O(n^4)`` flops, no Python
    loop over ``n^3`` entries); the back transform is needed only on the rows
    ``C[k, l, :]`` that the ``B`` and ``A`` equations read (:meth:`rows`), which
    costs one more matrix product.

    Conditioning.  ``U`` is orthogonal but ``X = S U`` is not: its condition
    number is about ``max(sigma) / min(sigma)``, which grows geometrically in
    ``b`` when ``lam d s_k^(d-1) / mu`` stays away from 1 (``sqrt(2.2)`` per
    level at ``lam = 1.1``, ``d = 2``).  Measured against the Schur route, the
    relative error of ``c2`` is about ``1e-16 * span^1.7`` (``span = 10^4.8``:
    ``1e-14``; ``10^8.2``: ``4e-11``; ``10^11.6``: ``3e-3``).  :meth:`build`
    therefore refuses ``J`` whose span exceeds ``10^MAX_SPAN_DIGITS``.
    """

    #: Largest ratio (in decimal digits) between the scaling factors accepted:
    #: ``10^3`` keeps the measured loss below about ``1e-11`` relative.
    MAX_SPAN_DIGITS = 3

    def __init__(self, lam: np.ndarray, X: np.ndarray, Xinv: np.ndarray) -> None:
        self.lam, self.X, self.Xinv = lam, X, Xinv

    @classmethod
    def build(cls, J: np.ndarray) -> _TridiagonalEigenSolver | None:
        """The solver for ``J``, or ``None`` when ``J`` lacks the structure."""
        import scipy.linalg

        n = J.shape[0]
        if n < 2 or np.any(np.triu(J, 2)) or np.any(np.tril(J, -2)):
            return None
        low, up = np.diag(J, -1), np.diag(J, 1)
        prod = low * up
        if not np.all(prod > 0):
            return None
        logs = np.concatenate([[0.0], np.cumsum(0.5 * (np.log(np.abs(low)) - np.log(np.abs(up))))])
        if (logs.max() - logs.min()) / np.log(10) > cls.MAX_SPAN_DIGITS:
            return None
        sigma = np.exp(logs - (logs.max() + logs.min()) / 2)
        lam, U = scipy.linalg.eigh_tridiagonal(np.diag(J).copy(), np.sign(low) * np.sqrt(prod))
        if not np.all(lam < 0):
            raise NumericalError(
                "the Jacobian at the fixed point is not Hurwitz (largest eigenvalue "
                f"{lam.max():.3g})."
            )
        return cls(lam, sigma[:, None] * U, U.T / sigma[None, :])

    def _hat(self, D: np.ndarray) -> np.ndarray:
        """``C^ = -D^ / (l_a + l_b + l_c)`` in the eigenbasis."""
        Dh = _modes(self.Xinv, D)
        lam = self.lam
        Dh /= lam[:, None, None] + lam[None, :, None] + lam[None, None, :]
        return np.negative(Dh, out=Dh)

    def __call__(self, D: np.ndarray) -> np.ndarray:
        """The full tensor ``C`` (``O(n^4)``)."""
        return _modes(self.X, self._hat(D))

    def rows(self, D: np.ndarray, pairs: Sequence[tuple[int, int]]) -> _PairRows:
        """Only the rows ``C[k, l, :]`` for ``(k, l)`` in ``pairs`` (see :func:`_pair_rows`)."""
        return _pair_rows(self.X, self._hat(D), pairs)


class _PairRows:
    """Rows ``C[k, l, :]`` of a symmetric tensor, indexed like the full array
    (``C[k, l]`` is a row, ``C[k, l, m]`` an entry)."""

    def __init__(self, rows: dict[tuple[int, int], np.ndarray]) -> None:
        self._rows = rows

    def __getitem__(self, key: tuple[int, ...]) -> Any:
        row = self._rows[(key[0], key[1])]
        return row[key[2]] if len(key) == 3 else row


def _modes(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """``C x1 X x2 X x3 X``: ``out_abc = sum_ijk X_ai X_bj X_ck C_ijk``, as three
    matrix products on contiguous reshapes (no transposed copies)."""
    n0, m = X.shape
    out = (C.reshape(-1, m) @ X.T).reshape(m, m, n0)  # i j c
    out = np.matmul(X, out)  # i b c  (one product per i)
    return (X @ out.reshape(m, -1)).reshape(n0, n0, n0)  # a b c


def solve_third_moment(ar: Arith, Jentries, J64: np.ndarray, D: np.ndarray) -> np.ndarray:
    """``C`` with ``(J (+) J (+) J) C + D = 0`` (refined to the fixed-point scale)."""
    eig = _SchurSolver(J64)
    if ar.F is None:
        return eig(D)
    C = ar.zeros(D.shape)
    prev = None
    for _ in range(200):
        R = _mode_sum(ar, Jentries, C) + D
        R64, top = scaled_float64(R)
        if not np.any(R64):
            break
        corr = scaled_ints(eig(R64), top)
        C = C + corr
        size = max((abs(int(v)) for v in corr.flat), default=0)
        cmax = max((abs(int(v)) for v in C.flat), default=0)
        if size == 0 or size.bit_length() <= cmax.bit_length() - mpmath.mp.prec - 4:
            break
        if prev is not None and size.bit_length() >= prev.bit_length():
            raise NumericalError(
                "iterative refinement of the third-moment equation stopped converging."
            )
        prev = size
    else:
        raise NumericalError("iterative refinement of the third-moment equation did not converge.")
    return C


def G_and_A_terms(ar: Arith, n: int, W, V, C, objs) -> tuple[np.ndarray, np.ndarray]:
    """``G`` of equation (B) and the part of (A)'s right side that does not need B."""
    half = ar.zeros((n, n))
    for (i, k, l), v in objs["H"]:
        half[i] += ar.mul(v, C[k, l])
    half = ar.div_int(half, 2)
    t3 = ar.zeros((n, n))
    for (i, k, l, m), v in objs["d3f"]:
        t3[i] += 3 * ar.mul(ar.mul(v, W[k, l]), W[m])
    half = half + ar.div_int(t3, 6)
    G = half + half.T
    for (i, j, k), v in objs["dQ"]:
        G[i, j] += ar.mul(v, V[k])
    for (i, j, k, l), v in objs["d2Q"]:
        G[i, j] += ar.div_int(ar.mul(v, W[k, l]), 2)
    a = ar.zeros((n,))
    for (i, k, l, m), v in objs["d3f"]:
        a[i] += ar.div_int(ar.mul(v, C[k, l, m]), 6)
    for (i, k, l, m, o), v in objs["d4f"]:
        a[i] += ar.div_int(3 * ar.mul(ar.mul(v, W[k, l]), W[m, o]), 24)
    return G, a


def _prepare(ar: Arith, objs: dict, Hentries) -> dict:
    conv = {}
    for name, entries in objs.items():
        conv[name] = [(k, ar.scalar(v)) for k, v in entries]
    conv["H"] = [(k, ar.scalar(v)) for k, v in Hentries]
    return conv


@dataclass(frozen=True)
class Order2Objects:
    """``A``, ``B`` (all coordinates), the third moment ``C`` (free coordinates),
    ``c2 = tr(M B)``, the fixed point ``s`` and, for at most :data:`KRONECKER_MAX_N`
    free coordinates when asked, ``c2`` with ``C`` from the dense Kronecker system, at
    one working precision (:func:`order2_at`)."""

    A: list[mpf]
    B: mpmath.matrix
    C: list[list[list[mpf]]]
    c2: mpf
    s: list[mpf]
    kronecker: mpf | None = None


def order2_at(prob: Any, wp: int, *, kronecker: bool) -> Order2Objects:
    """``A``, ``B``, ``C`` and ``c2`` at ``wp`` digits for the working-precision route
    record ``prob`` (:class:`numeric.meanfield.working_route.WorkingRoute`), extending
    its order-1 objects at ``wp`` (:meth:`~numeric.meanfield.working_route.WorkingRoute.at`,
    kept from order 1 when it ran at ``wp``: no second search, no second setup)."""
    from derive.kernels import kernels
    from mfstein.ground.progress import stage
    from numeric.linalg.refinement import lyapunov_refined, solve_linear

    stage(f"order 2 on {prob.red.n} coordinates at {wp} digits")

    model, red, rm = prob.model, prob.red, prob.rm
    first = prob.at(wp, full=False, kronecker=False)
    n = red.n
    F_idx = list(red.free)
    with mpmath.workdps(wp):
        s, p = first.s, first.p
        kmp2 = kernels(model, "mpmath", "order2")
        objs = reduced_objects(kmp2, s, p, rm.Tmp, F_idx)
        hvals = rm.kmp.hess_values(s, p)
        H = _expand(
            [
                (tuple(ix), v)
                for ix, v in zip(rm.k64.hess_index.tolist(), hvals, strict=True)
                if ix[1] <= ix[2]
            ],
            1,
        )
        # H on free coordinates (derivative indices through T)
        Hred = reduced_tensor(H, 1, rm.Tmp, F_idx)
        Jr, Wr = first.Jr, first.Wr
        Vr = [first.V[j] for j in F_idx]
        Q0 = first.Qr
        scale = max(
            [mpf(1)] + [abs(Wr[i, j]) for i in range(n) for j in range(n)] + [abs(v) for v in Vr]
        )
        F = mpmath.mp.prec + 40 - int(mpmath.log(scale, 2))
        ar = Arith(F)
        W_ = ar.array([[Wr[i, j] for j in range(n)] for i in range(n)])
        V_ = ar.array(Vr)
        Q_ = ar.array([[Q0[i, j] for j in range(n)] for i in range(n)])
        o = _prepare(ar, objs, Hred)
        Jentries = [((i, j), ar.scalar(Jr[i, j])) for i in range(n) for j in range(n) if Jr[i, j]]
        J64 = np.array([[float(Jr[i, j]) for j in range(n)] for i in range(n)])
        D = assemble_D(ar, n, W_, V_, Q_, o)
        C = solve_third_moment(ar, Jentries, J64, D)
        G, a_part = G_and_A_terms(ar, n, W_, V_, C, o)
        Gm = mpmath.matrix([[ar.to_mp(G[i, j]) for j in range(n)] for i in range(n)])
        Gm = (Gm + Gm.T) / 2
        Br = lyapunov_refined(Jr, Gm)
        rhs = []
        for i in range(n):
            acc = ar.to_mp(a_part[i])
            for (ii, k, l), v in Hred:
                if ii == i:
                    acc += v * Br[k, l] / 2
            rhs.append(-acc)
        Ar = solve_linear(Jr, rhs)
        T = rm.Tmp
        b = model.n
        A = [mpmath.fsum(T[i][m] * Ar[m] for m in range(n) if T[i][m]) for i in range(b)]
        from numeric.meanfield.working_objects import congruence

        B = congruence(T, Br)
        M = prob.M_of(b)
        c2 = mpmath.fsum(M[i, j] * B[j, i] for i in range(b) for j in range(b) if M[i, j])
        Cm = [[[ar.to_mp(C[i, j, k]) for k in range(n)] for j in range(n)] for i in range(n)]
        kron = None
        if kronecker and n <= KRONECKER_MAX_N:
            kron = _c2_kronecker(n, Jr, ar, D, o, Hred, W_, V_, M, T, b)
    return Order2Objects(A=A, B=B, C=Cm, c2=c2, s=list(s), kronecker=kron)


def reduced_tensor(entries, nout: int, T: list[list[mpf]], free_idx: list[int]) -> list:
    """Restrict output indices to the free coordinates and contract derivative
    indices with ``T`` (fully expanded entries in, fully expanded entries out)."""
    pos = {j: i for i, j in enumerate(free_idx)}
    Trows = [{a: t for a, t in enumerate(row) if t} for row in T]
    acc: dict[tuple, mpf] = {}
    for ix, v in entries:
        if not v or any(h not in pos for h in ix[:nout]):
            continue
        head = tuple(pos[h] for h in ix[:nout])
        tails = [((), v)]
        for j in ix[nout:]:
            tails = [((*t, a), w * ta) for t, w in tails for a, ta in Trows[j].items()]
        for tail, w in tails:
            key = (*head, *tail)
            acc[key] = acc.get(key, mpf(0)) + w
    return [(k, v) for k, v in acc.items() if v]


def _c2_kronecker(n, Jr, ar, D, o, Hred, W_, V_, M, T, b) -> mpf:
    """c2 with C from the dense n^3 x n^3 Kronecker system (independent route)."""
    from numeric.linalg.refinement import lyapunov_refined

    N3 = n**3
    K = mpmath.matrix(N3, N3)

    def at(i, j, k):
        return (i * n + j) * n + k

    for i in range(n):
        for j in range(n):
            for k in range(n):
                r = at(i, j, k)
                for l in range(n):
                    if Jr[i, l]:
                        K[r, at(l, j, k)] += Jr[i, l]
                    if Jr[j, l]:
                        K[r, at(i, l, k)] += Jr[j, l]
                    if Jr[k, l]:
                        K[r, at(i, j, l)] += Jr[k, l]
    rhs = mpmath.matrix(
        [-ar.to_mp(D[i, j, k]) for i in range(n) for j in range(n) for k in range(n)]
    )
    x = mpmath.lu_solve(K, rhs)
    C = ar.zeros((n, n, n))
    for i in range(n):
        for j in range(n):
            for k in range(n):
                C[i, j, k] = ar.scalar(x[at(i, j, k)])
    G, _ = G_and_A_terms(ar, n, W_, V_, C, o)
    Gm = mpmath.matrix([[ar.to_mp(G[i, j]) for j in range(n)] for i in range(n)])
    Br = lyapunov_refined(Jr, (Gm + Gm.T) / 2)
    from numeric.meanfield.working_objects import congruence

    B = congruence(T, Br)
    return mpmath.fsum(M[i, j] * B[j, i] for i in range(b) for j in range(b) if M[i, j])


def check_order2_cost(name: str, n: int, dps: int, solves: int = 1) -> None:
    """Refuse ``solves`` order-2 expansions of model ``name`` on ``n`` free coordinates
    at ``dps`` digits whose estimated time (:func:`mfstein.ground.limits.order2_seconds`)
    exceeds the budget, before any high-precision work."""
    from mfstein.ground.limits import check_time, order2_seconds

    check_time(
        f"the order-2 expansion of model {name} ({n} free coordinates, dps {dps})",
        order2_seconds(n, dps, solves),
        "give a smaller dps or a smaller model, or use the float64 route "
        "(precision='float64'; --float64 on the command line).",
    )


def second_order(
    model: Any,
    params: Mapping[str, Any],
    *,
    dps: int = 30,
    M: Any = None,
    start: Any = None,
) -> SecondOrder:
    """``A``, ``B`` and ``c2 = tr(M B)`` of ``model`` with ``digits`` earned by two
    working precisions (and the Kronecker route for small dimension)."""
    from numeric.prepared.problem import prepare_problem

    dps = check_dps(dps)
    return order2_working(prepare_problem(model, params, start), dps=dps, M=M)


def order2_working(problem: Any, *, dps: int = 30, M: Any = None) -> SecondOrder:
    """:func:`second_order` of a prepared problem
    (:class:`numeric.prepared.problem.PreparedProblem`, its inputs not read again): the
    working-precision route's record of order 1 is read, not made again."""
    from numeric.meanfield.working_route import route_of
    from numeric.precision import to_str

    dps = check_dps(dps)
    model, prob = problem.model, route_of(problem, M)
    if prob.red.n > MAX_N:
        raise ParameterError(
            f"the order-2 expansion handles at most {MAX_N} free coordinates at high "
            f"precision (model {model.name} has {prob.red.n}); use "
            "numeric.solve(..., precision='float64', order=2) for larger ones."
        )
    check_order2_cost(model.name, prob.red.n, dps)
    b = model.n

    def flat_b(X: Any) -> list[mpf]:
        return [X[i, j] for i in range(b) for j in range(b)]

    def route_values(low: Order2Objects) -> dict[str, mpf]:
        values = {"refined-low": low.c2}
        if low.kronecker is not None:
            values["kronecker"] = low.kronecker
        return values

    def agreement(low: Order2Objects, high: Order2Objects) -> int:
        return min(
            min(agreeing_digits(high.c2, v) for v in route_values(low).values()),
            agreeing_digits(high.A, low.A),
            agreeing_digits(flat_b(high.B), flat_b(low.B)),
            agreeing_digits(_flat3(high.C), _flat3(low.C)),
        )

    earned = earn_digits(
        dps,
        guard_ladder(dps),
        lambda wp: order2_at(prob, wp, kronecker=True),
        lambda wp: order2_at(prob, wp, kronecker=False),
        agreement,
        who="the order-2 routes",
        where=f"model {model.name}",
    )
    low, high, digits = earned.low, earned.high, earned.digits
    values = route_values(low)
    methods = {"refined": to_str(high.c2, dps)}
    methods.update({k: to_str(v, dps) for k, v in values.items()})
    errors = {
        "A": earned.errors(high.A, low.A),
        "B": earned.errors(flat_b(high.B), flat_b(low.B)),
    }
    return SecondOrder(
        A=high.A,
        B=high.B,
        C=high.C,
        c2=high.c2,
        digits=min(digits, dps),
        methods=methods,
        errors=errors,
        free_map=prob.rm.Tmp,
        s_star=high.s,
    )


def _flat3(C: Any) -> list[mpf]:
    return [v for plane in C for row in plane for v in row]


def second_order_float64(
    model: Any, params: Mapping[str, Any], *, start: Any = None, solver: str = "auto"
) -> dict[str, Any]:
    """``c``, ``c2``, ``V``, ``A`` in float64 (about 10-13 correct digits for a
    well-conditioned ``J``; no digits are claimed), for quick sweeps and large ``n``.

    ``W`` and ``B`` come from the Bartels--Stewart method (LAPACK trsyl) on one
    real Schur form of ``J``, which the ``schur`` route below reuses; ``V`` and
    ``A`` from an LU solve, the order-2 objects from the numba kernels.  The fixed
    point: the family's own float64 fixed point where its fast path registers one
    (e.g. the supermarket's ``O(b)`` shooting, sampling with replacement, no ``start``),
    otherwise the float64 search of :mod:`numeric.meanfield.fixed_point`.  ``C``:

    * ``solver="eigen"``: the tridiagonal eigenbasis of
      :class:`_TridiagonalEigenSolver` (``J`` tridiagonal with positive
      off-diagonal products and a well-conditioned symmetrising scaling);
    * ``solver="schur"``: the Schur form with the compiled symmetric back
      substitution (:class:`_SchurSolver`, any ``J``);
    * ``solver="trsyl"``: the Schur form solved slice by slice with LAPACK trsyl
      (the slow, independent route, for checks);
    * ``solver="auto"`` (default): ``eigen`` at a family's own fixed point when
      :meth:`_TridiagonalEigenSolver.build` accepts ``J``, ``schur`` otherwise.

    ``eigen`` and ``schur`` read back only the rows ``C[k, l, :]`` that the
    ``B`` and ``A`` equations use.  The result's ``third_moment`` names the
    route that ran.

    Returns the fields of :class:`Order2Float64` as a dict (its
    :meth:`~Order2Float64.to_dict`; the public form, read by key by callers), with
    ``truncated_at`` added when a smaller member of the family was solved.
    """
    if solver not in ("auto", "eigen", "schur", "trsyl"):
        raise ParameterError(f"solver must be auto, eigen, schur or trsyl, got {solver!r}.")
    from numeric.prepared.problem import prepare_problem

    problem = prepare_problem(model, params, start)
    smaller = _negligible_tail(problem) if start is None else None
    if smaller is not None:
        # the family's coordinates beyond the smaller member's are negligible below
        # float64 resolution: it gives the same numbers (padded with zeros)
        small = second_order_float64(smaller, params, solver=solver)
        return _pad(small, model.n)
    return order2_float64(problem, solver=solver)


def order2_float64(problem: Any, *, solver: str = "auto") -> dict[str, Any]:
    """:func:`second_order_float64` of a prepared problem
    (:class:`numeric.prepared.problem.PreparedProblem`): at its float64 base
    (:func:`base64_of`, made once and kept with the problem), so a second call -- or
    one after the working-precision route on the same inputs -- prepares nothing and
    searches no fixed point again."""
    from numeric.precision import limited_blas

    with limited_blas():
        return second_order_float64_at(problem.model, base64_of(problem), solver=solver)


def second_order_float64_at(
    model: Any,
    base: Base64,
    *,
    solver: str = "auto",
    k2: Any = None,
    compiled: bool = False,
) -> dict[str, Any]:
    """The body of :func:`second_order_float64` at a given fixed point: ``base`` as
    :func:`_base64` makes it (``s``, ``p``, ``T``, ``F``, ``n``, reduced ``J`` and
    ``Q0``, base kernels ``k64``, ``fast``); ``k2`` the order-2 kernels (default
    the generated numba ones; :class:`derive.sparse.LambdaKernels` avoids the
    compile); ``compiled``: the compiled third-moment kernel whatever the size
    (for callers that solve many points, e.g. a sweep)."""
    (one,) = second_order_float64_solvers(model, base, (solver,), k2=k2, compiled=compiled)
    return one.to_dict()


@dataclass(frozen=True)
class Order2Float64:
    """One float64 order-2 solution (:func:`second_order_float64_solvers`), on all ``b``
    coordinates: ``E[S_N] = s* + V/N + A/N^2 + ...`` and ``N Cov(S_N) = W + B/N + ...``
    (the expansion of the core paper's Theorem 1 to order 2), ``c = tr W``,
    ``c2 = tr B``.  :func:`second_order_float64` returns its :meth:`to_dict`."""

    #: The fixed point ``s*``.
    s_star: np.ndarray
    #: The ``1/N`` term of the mean.
    V: np.ndarray
    #: The ``1/N^2`` term of the mean.
    A: np.ndarray
    #: The covariance at order 1 (Lyapunov equation ``J W + W J^T + Q = 0``).
    W: np.ndarray
    #: The ``1/N`` term of ``N Cov``.
    B: np.ndarray
    #: ``tr W``.
    c: float
    #: ``tr B``.
    c2: float
    #: The number of free coordinates.
    n: int
    #: The number of coordinates.
    b: int
    #: The third-moment solver that ran (``"eigen"``, ``"schur"``, ``"trsyl"``).
    third_moment: str

    def to_dict(self) -> dict[str, Any]:
        """The fields by name (the arrays themselves, not copies)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def second_order_float64_solvers(
    model: Any,
    base: Base64,
    solvers: Sequence[str],
    *,
    k2: Any = None,
    compiled: bool = False,
) -> list[Order2Float64]:
    """:func:`second_order_float64_at` with each third-moment solver of ``solvers``
    (``"schur"``, ``"trsyl"``, ``"eigen"``, ``"auto"``), one result each: what comes
    before the third moment -- the real Schur form of ``J``, ``W``, the order-2
    objects, ``V`` and the right-hand side ``D`` -- is computed once and read by
    every solver (each solver's own work, from ``D`` on, stays independent)."""
    import scipy.linalg

    from numeric.precision import limited_blas

    with limited_blas():
        n, J, Q0 = base.n, base.J, base.Q0
        # one real Schur form of J serves W, the third moment and B
        schur = scipy.linalg.schur(J, output="real")
        W = lyapunov_real_schur(*schur, -Q0)
        W = (W + W.T) / 2
        objs = _objects64(model, base, k2)
        h = np.zeros(n)
        for (i, k, l), v in objs["H"]:
            h[i] += v * W[k, l] / 2
        V = np.linalg.solve(J, -h)
        D = assemble_D(Arith(None), n, W, V, Q0, objs)
        common = {"schur": schur, "W": W, "V": V, "objs": objs}
        raw = [
            _order2_with_solver(model, base, common, D.copy(), solver, compiled)
            for solver in solvers
        ]
    T = base.T
    out = []
    for A, B, method in raw:
        if T is None:
            Vf, Af, Wf, Bf = V, A, W, B
        else:
            Vf, Af, Wf, Bf = T @ V, T @ A, T @ W @ T.T, T @ B @ T.T
        out.append(
            Order2Float64(
                s_star=np.array(base.s),  # the caller's own (the base is kept)
                V=Vf,
                A=Af,
                W=Wf,
                B=Bf,
                c=float(np.trace(Wf)),
                c2=float(np.trace(Bf)),
                n=n,
                b=model.n,
                third_moment=method,
            )
        )
    return out


def _order2_with_solver(
    model: Any,
    base: Base64,
    common: dict[str, Any],
    D: np.ndarray,
    solver: str,
    compiled: bool,
) -> tuple[np.ndarray, np.ndarray, str]:
    """The third moment ``C`` by ``solver`` from the right-hand side ``D``, then ``A``
    and ``B`` on the free coordinates and the solver's name
    (:func:`second_order_float64_solvers`; inside its ``limited_blas``)."""
    n, J = base.n, base.J
    schur, W, V, objs = common["schur"], common["W"], common["V"], common["objs"]
    ar = Arith(None)
    eig = None
    if solver == "eigen" or (solver == "auto" and base.fast):
        eig = _TridiagonalEigenSolver.build(J)
        if eig is None and solver == "eigen":
            raise ParameterError(
                "solver eigen needs a tridiagonal Jacobian with positive off-diagonal "
                "products and a symmetrising scaling within "
                f"10^{_TridiagonalEigenSolver.MAX_SPAN_DIGITS} at the fixed point "
                f"(model {model.name}); use schur or auto."
            )
    pairs = [(k, l) for (_, k, l), _ in objs["H"]]
    pairs += [(k, l) for (_, k, l, _), _ in objs["d3f"]]
    if eig is not None:
        C, method = eig.rows(D, pairs), "eigen"
    elif solver == "trsyl":
        C, method = _SchurSolver(J)(D), "trsyl"
    else:
        schur_solver = _SchurSolver(J, symmetric=True, schur=schur, compiled=compiled)
        C, method = schur_solver.rows(D, pairs), "schur"
    G, a_part = G_and_A_terms(ar, n, W, V, C, objs)
    G = (G + G.T) / 2
    B = lyapunov_real_schur(*schur, -G)
    B = (B + B.T) / 2
    rhs = a_part.copy()
    for (i, k, l), v in objs["H"]:
        rhs[i] += v * B[k, l] / 2
    return np.linalg.solve(J, -rhs), B, method


@dataclass(frozen=True)
class Base64:
    """What the float64 order 2 reads at a fixed point (:func:`second_order_float64_at`)."""

    #: The fixed point ``s*`` (all ``b`` coordinates).
    s: np.ndarray
    #: The kernels' parameter vector.
    p: np.ndarray
    #: The ``b x n`` map from the free coordinates to all of them (conservation laws,
    #: :mod:`numeric.invariants`); ``None`` when every coordinate is free.
    T: np.ndarray | None
    #: The free coordinates' indices.
    F: list[int]
    #: The number of free coordinates.
    n: int
    #: ``J = Df(s*)`` on the free coordinates.
    J: np.ndarray
    #: ``Q(s*)`` on the free coordinates.
    Q0: np.ndarray
    #: The model's float64 base kernels (rates' Hessian).
    k64: Any
    #: Whether ``s*`` is the family's own fixed point (its registered fast
    #: path): ``solver="auto"`` then tries the tridiagonal eigenbasis first.
    fast: bool


def _base64(model: Any, params: Mapping[str, Any], start: Any) -> Base64:
    """:func:`base64_of` the prepared problem of these inputs."""
    from numeric.prepared.problem import prepare_problem

    return base64_of(prepare_problem(model, params, start))


def base64_of(problem: Any) -> Base64:
    """What the float64 order 2 reads at the fixed point of ``problem`` (a
    :class:`numeric.prepared.problem.PreparedProblem`): the fixed point ``s``, the
    kernels' parameter vector ``p``, reduced ``J`` and ``Q``, the map ``T`` (``None``
    when every coordinate is free) and the free indices.  Made once and kept with the
    problem (:meth:`~numeric.prepared.problem.PreparedProblem.derived`) for a model of
    at most :data:`numeric.meanfield.working_route.KEEP_AT_MAX_B` coordinates, its
    arrays read-only; inside a sweep's continuation (a neighbour's point to start
    from) it is made afresh."""
    from numeric.meanfield import fixed_point as fp
    from numeric.meanfield.working_route import KEEP_AT_MAX_B

    guess = fp.neighbour(problem.model)
    if guess is not None or problem.model.n > KEEP_AT_MAX_B:
        return _make_base64(problem, guess)
    return problem.derived("base64", lambda: _make_base64(problem, None))


def _make_base64(problem: Any, guess: np.ndarray | None) -> Base64:
    """:func:`base64_of` made: at the family's own float64 fixed point when its fast
    path registers one and no start was given, else at the working-precision route's
    float64 point (:func:`numeric.meanfield.working_route.make_route`, one start, from
    ``guess`` when given)."""
    from numeric.prepared.problem import read_only64

    model = problem.model
    s = fast_fixed_point(problem) if problem.start is None else None
    if s is not None:
        p = np.array(problem.p64)
        k64 = model.kernels("numba")
        return Base64(
            s=read_only64(s),
            p=read_only64(p),
            T=None,
            F=list(range(model.n)),
            n=model.n,
            J=read_only64(k64.jac(s, p)),
            Q0=read_only64(k64.Q(s, p)),
            k64=k64,
            fast=True,
        )
    from numeric.meanfield.working_route import make_route

    route = make_route(problem, None, extra_starts=False, guess=guess)
    rm, red, q64, p64 = problem.reduced, problem.reduction, problem.q64, np.array(problem.p64)
    x = route.primary
    s = rm.full64(x, q64)
    F = list(red.free)
    Q = rm.k64.Q(s, p64)
    return Base64(
        s=read_only64(s),
        p=read_only64(p64),
        T=rm.T64,
        F=F,
        n=red.n,
        J=read_only64(rm.jac64(x, q64, p64)),
        Q0=read_only64(Q[np.ix_(F, F)]),
        k64=rm.k64,
        fast=False,
    )


def _objects64(model: Any, base: Base64, k2: Any = None) -> dict[str, list]:
    """The Hessian ``H`` and the order-2 objects at ``s`` in float64 on the free
    coordinates, fully expanded (see :func:`reduced_objects`)."""
    from derive.kernels import kernels

    s, p, T, F = base.s, base.p, base.T, base.F
    k64 = base.k64
    k2 = kernels(model, "numba", "order2") if k2 is None else k2
    Tmp = None if T is None else [[mpf(float(v)) for v in row] for row in T]

    def reduce(entries: list, nout: int) -> list:
        if Tmp is None:
            return [(k, float(v)) for k, v in entries if v]
        return [(k, float(v)) for k, v in reduced_tensor(entries, nout, Tmp, F)]

    hv = k64.hess_values(s, p)
    objs = {
        "H": reduce([(tuple(ix), v) for ix, v in zip(k64.hess_index.tolist(), hv, strict=True)], 1)
    }
    for name, nout in {"d3f": 1, "d4f": 1, "dQ": 2, "d2Q": 2, "R": 3}.items():
        vals = getattr(k2, f"{name}_values")(s, p)
        idx = k2.index[name].tolist()
        raw = [(tuple(ix), float(v)) for ix, v in zip(idx, vals, strict=True)]
        if name in ("dQ", "d2Q"):
            raw = raw + [((ix[1], ix[0], *ix[2:]), v) for ix, v in raw if ix[0] != ix[1]]
        ent = _expand(raw, 0 if name == "R" else (2 if name in ("dQ", "d2Q") else 1))
        objs[name] = reduce(ent, nout)
    return objs


def _negligible_tail(problem: Any) -> Any:
    """The member of the prepared problem's family on fewer coordinates that gives the
    same float64 order-2 numbers (its ``negligible_tail`` route ``t(problem)`` in
    :mod:`mfstein.ground.fast_paths`, e.g.
    :func:`mfstein.families.supermarket.tail.negligible_tail`), or ``None``."""
    from mfstein.ground.fast_paths import load

    tail = load(problem.model.info.fast_path, "negligible_tail")
    return None if tail is None else tail(problem)


def _pad(res: dict[str, Any], b: int) -> dict[str, Any]:
    """Extend a truncated float64 order-2 result to ``b`` levels with zeros."""
    k = res["b"]
    out = dict(res)
    for name in ("s_star", "V", "A"):
        v = np.zeros(b)
        v[:k] = res[name]
        out[name] = v
    for name in ("W", "B"):
        m = np.zeros((b, b))
        m[:k, :k] = res[name]
        out[name] = m
    out["b"] = b
    out["truncated_at"] = k
    return out
