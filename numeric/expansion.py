"""The 1/N^2 terms of the system-size expansion: A, B and c2, for any model.

``E[S] = s* + V/N + A/N^2 + ...``, ``N Cov-type second moment
E[(S - s*)(S - s*)^T] = W/N + B/N^2 + ...`` and therefore
``N E[(S - s*)^T M (S - s*)] = c + c2/N + O(1/N^2)`` with ``c2 = tr(M B)``.
The equations for the third-moment tensor ``C``, for ``B`` and for ``A`` are
derived (and printed in LaTeX) by :mod:`derive.expansion`; this module solves
them on the model's free coordinates (conservation laws removed as in
:mod:`numeric.invariants`) and maps ``A`` and ``B`` back to all coordinates.

Solving ``(J (+) J (+) J) C = -D`` without the ``n^3 x n^3`` Kronecker matrix:
in an eigenbasis ``J = X L X^-1`` the operator is diagonal,
``C^_abc = -D^_abc / (l_a + l_b + l_c)`` with ``D^ = D x1 X^-1 x2 X^-1 x3 X^-1``
(mode products), which costs ``O(n^4)``.  At working precision the float64
eigen-solve is the correction step of an iterative refinement whose residual
``sum of the three mode products of J with C, plus D`` is computed exactly in
fixed-point integers using the sparsity of ``J`` (``O(nnz(J) n^2)``); the
same refinement solves the Lyapunov equation for ``B`` and the linear system
for ``A`` (:mod:`numeric.refinement`).  For ``n <= KRONECKER_MAX_N`` the dense
Kronecker system of ``C`` is solved in mpmath as an independent second route.

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
from dataclasses import dataclass
from itertools import permutations
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf

from mfstein.errors import NumericalError
from numeric.precision import agreeing_digits, check_dps
from numeric.refinement import _to_float, _to_ints

try:
    from gmpy2 import mpz as _INT
except ImportError:  # pragma: no cover
    _INT = int

#: Dense Kronecker route for C up to this many free coordinates.
KRONECKER_MAX_N = 4
#: Largest number of free coordinates the high-precision order-2 route accepts.
MAX_N = 120


@dataclass
class SecondOrder:
    """The 1/N^2 coefficients in the model's own coordinates."""

    A: list[mpf]
    B: mpmath.matrix
    C: Any  # reduced third-moment tensor (nested lists of mpf), free coordinates
    c2: mpf
    digits: int
    methods: dict[str, str]


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
class _Arith:
    """Float64 (``F is None``) or exact fixed-point integer arithmetic."""

    def __init__(self, F: int | None) -> None:
        self.F = F

    def array(self, values: Any) -> np.ndarray:
        if self.F is None:
            return np.array(values, dtype=float)
        arr = np.asarray(values, dtype=object)
        out = np.empty(arr.shape, dtype=object)
        flat = out.reshape(-1)
        for k, v in enumerate(arr.flat):
            flat[k] = _INT(int(mpmath.nint(mpmath.ldexp(mpf(v), self.F)))) if v else _INT(0)
        return out

    def scalar(self, v: Any) -> Any:
        return float(v) if self.F is None else _INT(int(mpmath.nint(mpmath.ldexp(mpf(v), self.F))))

    def zeros(self, shape: tuple[int, ...]) -> np.ndarray:
        if self.F is None:
            return np.zeros(shape)
        out = np.empty(shape, dtype=object)
        out[...] = _INT(0)
        return out

    def mul(self, a: Any, b: Any) -> Any:
        """Product of two fixed-point quantities (arrays broadcast)."""
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


def _sym3(K: np.ndarray) -> np.ndarray:
    """``K_ijk + K_jik + K_kij`` for ``K`` symmetric in its last two indices."""
    return K + K.transpose(1, 0, 2) + K.transpose(1, 2, 0)


def _assemble_D(ar: _Arith, n: int, W, V, Q0, objs) -> np.ndarray:
    """Right-hand side ``D`` of the third-moment equation (C) (see derive.expansion)."""
    # K_ijk = sum_lm H_ilm E4_lmjk = (sum_lm H_ilm W_lm) W_jk + 2 sum_lm H_ilm W_lj W_mk
    K = ar.zeros((n, n, n))
    for (i, l, m), v in objs["H"]:
        K[i] += ar.mul(ar.mul(v, W[l, m]), W) + 2 * ar.mul(v, ar.outer(W[l], W[m]))
    D = ar.div_int(_sym3(K), 2)
    # P_ijk = Q0_ij V_k + sum_l Q1_ijl W_lk   (symmetric in i, j)
    P = ar.mul(Q0[:, :, None], V[None, None, :])
    for (i, j, l), v in objs["dQ"]:
        P[i, j] += ar.mul(v, W[l])
    D = D + P + P.transpose(0, 2, 1) + P.transpose(2, 1, 0)
    for (i, j, k), v in objs["R"]:
        D[i, j, k] += v
    return D


def _mode_sum(ar: _Arith, Jentries, C: np.ndarray) -> np.ndarray:
    """``(J (+) J (+) J) C = J x1 C + J x2 C + J x3 C`` with sparse ``J``."""
    out = ar.zeros(C.shape)
    for (i, l), v in Jentries:
        out[i] += ar.mul(v, C[l])
        out[:, i] += ar.mul(v, C[:, l])
        out[:, :, i] += ar.mul(v, C[:, :, l])
    return out


class _SchurSolver:
    """Float64 solver of ``(J (+) J (+) J) C = -D`` through the complex Schur form.

    With ``J = Z T Z^*`` (``T`` upper triangular) and ``C^ = C x1 Z^* x2 Z^* x3 Z^*``
    the equation for the slice ``X_i = C^_i..`` is the Sylvester equation
    ``(T + t_ii I) X_i + X_i T^T = -D^_i - sum_{l > i} t_il X_l``, solved for
    ``i = n-1, ..., 0`` (LAPACK trsyl): ``O(n^4)`` work, valid for defective ``J``
    (where an eigenbasis does not exist).
    """

    def __init__(self, J64: np.ndarray) -> None:
        import scipy.linalg

        T, Z = scipy.linalg.schur(J64, output="real")
        # real eigenvalues: the real Schur form is triangular and everything stays real
        self.real = bool(np.all(np.diag(T, -1) == 0))
        if not self.real:
            T, Z = scipy.linalg.schur(J64.astype(complex), output="complex")
        self.T, self.Z = T, Z

    def __call__(self, D: np.ndarray) -> np.ndarray:
        from scipy.linalg.lapack import dtrsyl, ztrsyl

        T, Z = self.T, self.Z
        Zh = Z.conj().T
        Dh = _modes(Zh, D if self.real else D.astype(complex))
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
        return np.real(_modes(Z, Ch))


def _modes(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """``C x1 X x2 X x3 X``: ``out_abc = sum_ijk X_ai X_bj X_ck C_ijk``."""
    out = np.tensordot(X, C, axes=(1, 0))  # a j k
    out = np.tensordot(X, out, axes=(1, 1)).transpose(1, 0, 2)  # a b k
    return np.tensordot(out, X, axes=(2, 1))  # a b c


def solve_third_moment(ar: _Arith, Jentries, J64: np.ndarray, D: np.ndarray) -> np.ndarray:
    """``C`` with ``(J (+) J (+) J) C + D = 0`` (refined to the fixed-point scale)."""
    eig = _SchurSolver(J64)
    if ar.F is None:
        return eig(D)
    C = ar.zeros(D.shape)
    prev = None
    for _ in range(200):
        R = _mode_sum(ar, Jentries, C) + D
        R64, top = _to_float(R)
        if not np.any(R64):
            break
        corr = _to_ints(eig(R64), top)
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


def _G_and_A_terms(ar: _Arith, n: int, W, V, C, objs) -> tuple[np.ndarray, np.ndarray]:
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


def _prepare(ar: _Arith, objs: dict, Hentries) -> dict:
    conv = {}
    for name, entries in objs.items():
        conv[name] = [(k, ar.scalar(v)) for k, v in entries]
    conv["H"] = [(k, ar.scalar(v)) for k, v in Hentries]
    return conv


def order2_at(prob: Any, wp: int, *, kronecker: bool) -> dict[str, Any]:
    """``A``, ``B``, ``C`` and ``c2`` at ``wp`` digits for a prepared general problem
    (:class:`numeric.general._Problem`)."""
    from derive.kernels import kernels
    from numeric.refinement import solve_linear, solve_lyapunov

    model, red, rm = prob.model, prob.red, prob.rm
    first = prob.at(wp, full=False, kronecker=False)
    n = red.n
    F_idx = list(red.free)
    with mpmath.workdps(wp):
        s, p = first["s"], first["p"]
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
        Jr, Wr = first["Jr"], first["Wr"]
        Vr = [first["V"][j] for j in F_idx]
        Q0 = first["Qr"]
        scale = max(
            [mpf(1)] + [abs(Wr[i, j]) for i in range(n) for j in range(n)] + [abs(v) for v in Vr]
        )
        F = mpmath.mp.prec + 40 - int(mpmath.log(scale, 2))
        ar = _Arith(F)
        W_ = ar.array([[Wr[i, j] for j in range(n)] for i in range(n)])
        V_ = ar.array(Vr)
        Q_ = ar.array([[Q0[i, j] for j in range(n)] for i in range(n)])
        o = _prepare(ar, objs, Hred)
        Jentries = [((i, j), ar.scalar(Jr[i, j])) for i in range(n) for j in range(n) if Jr[i, j]]
        J64 = np.array([[float(Jr[i, j]) for j in range(n)] for i in range(n)])
        D = _assemble_D(ar, n, W_, V_, Q_, o)
        C = solve_third_moment(ar, Jentries, J64, D)
        G, a_part = _G_and_A_terms(ar, n, W_, V_, C, o)
        Gm = mpmath.matrix([[ar.to_mp(G[i, j]) for j in range(n)] for i in range(n)])
        Gm = (Gm + Gm.T) / 2
        Br = solve_lyapunov(Jr, Gm)
        rhs = []
        for i in range(n):
            acc = ar.to_mp(a_part[i])
            for (ii, k, l), v in Hred:
                if ii == i:
                    acc += v * Br[k, l] / 2
            rhs.append(-acc)
        Ar = solve_linear(Jr, rhs)
        T = rm.Tmp
        b = model.b
        A = [mpmath.fsum(T[i][m] * Ar[m] for m in range(n) if T[i][m]) for i in range(b)]
        from numeric.general import congruence

        B = congruence(T, Br)
        M = prob.M_of(b)
        c2 = mpmath.fsum(M[i, j] * B[j, i] for i in range(b) for j in range(b) if M[i, j])
        Cm = [[[ar.to_mp(C[i, j, k]) for k in range(n)] for j in range(n)] for i in range(n)]
        out = {"A": A, "B": B, "C": Cm, "c2": c2}
        if kronecker and n <= KRONECKER_MAX_N:
            out["kronecker"] = _c2_kronecker(n, Jr, ar, D, o, Hred, W_, V_, M, T, b)
    return out


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
    from numeric.refinement import solve_lyapunov

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
    G, _ = _G_and_A_terms(ar, n, W_, V_, C, o)
    Gm = mpmath.matrix([[ar.to_mp(G[i, j]) for j in range(n)] for i in range(n)])
    Br = solve_lyapunov(Jr, (Gm + Gm.T) / 2)
    from numeric.general import congruence

    B = congruence(T, Br)
    return mpmath.fsum(M[i, j] * B[j, i] for i in range(b) for j in range(b) if M[i, j])


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
    from numeric.general import _norm_digits, _Problem
    from numeric.precision import to_str

    dps = check_dps(dps)
    prob = _Problem(model, params, start, M)
    if prob.red.n > MAX_N:
        from mfstein.errors import ParameterError

        raise ParameterError(
            f"the order-2 expansion handles at most {MAX_N} free coordinates at high "
            f"precision (model {model.name} has {prob.red.n}); use order2_float64 for larger ones."
        )
    guard = 10
    digits = 0
    for _ in range(3):
        wp1 = dps + guard
        wp2 = wp1 + max(10, dps // 10)
        low = order2_at(prob, wp1, kronecker=True)
        high = order2_at(prob, wp2, kronecker=False)
        values = {"refined-low": low["c2"]}
        if "kronecker" in low:
            values["kronecker"] = low["kronecker"]
        digits = min(agreeing_digits(high["c2"], v) for v in values.values())
        b = model.b
        digits = min(
            digits,
            _norm_digits(high["A"], low["A"]),
            _norm_digits(
                [high["B"][i, j] for i in range(b) for j in range(b)],
                [low["B"][i, j] for i in range(b) for j in range(b)],
            ),
        )
        if digits >= dps:
            break
        guard += dps + 20
    else:
        raise NumericalError(
            f"the order-2 routes agree on only {digits} of the {dps} requested digits "
            f"(model {model.name}); no result is reported."
        )
    methods = {"refined": to_str(high["c2"], dps)}
    methods.update({k: to_str(v, dps) for k, v in values.items()})
    return SecondOrder(
        A=high["A"],
        B=high["B"],
        C=high["C"],
        c2=high["c2"],
        digits=min(digits, dps),
        methods=methods,
    )


def second_order_float64(
    model: Any, params: Mapping[str, Any], *, start: Any = None
) -> dict[str, Any]:
    """``c``, ``c2``, ``V``, ``A`` in float64 (about 10-13 correct digits for a
    well-conditioned ``J``; no digits are claimed), for quick sweeps and large ``n``.

    The fixed point comes from the float64 search of :mod:`numeric.fixed_point`;
    ``W`` and ``B`` from SciPy's Bartels--Stewart solver; ``C`` from the
    eigenbasis solve; the order-2 objects from the numba kernels.
    """
    import scipy.linalg

    from derive.kernels import kernels
    from numeric.general import _Problem

    cut = _negligible_tail(model, params) if start is None else None
    if cut is not None:
        # levels above `cut` contribute less than 1e-20 to every moment equation
        # (see _negligible_tail), below float64 resolution: the model with buffer
        # `cut` gives the same numbers (padded with zeros)
        from derive.models.supermarket import with_buffer

        small = second_order_float64(with_buffer(model, cut), params)
        return _pad(small, model.b)
    prob = _Problem(model, params, start, None, extra_starts=False)
    rm, red = prob.rm, prob.red
    n, b = red.n, model.b
    p = prob.p64
    x = prob.search.primary
    s = rm.full64(x, prob.q64)
    T = rm.T64
    F_idx = list(red.free)
    J = rm.jac64(x, prob.q64, p)
    Qfull = rm.k64.Q(s, p)
    Q0 = Qfull[np.ix_(F_idx, F_idx)]
    W = scipy.linalg.solve_continuous_lyapunov(J, -Q0)
    W = (W + W.T) / 2
    hv = rm.k64.hess_values(s, p)
    Hfull = [(tuple(ix), v) for ix, v in zip(rm.k64.hess_index.tolist(), hv, strict=True)]
    Tmp = [[mpf(float(v)) for v in row] for row in T]
    Hred = [(k, float(v)) for k, v in reduced_tensor(Hfull, 1, Tmp, F_idx)]
    h = np.zeros(n)
    for (i, k, l), v in Hred:
        h[i] += v * W[k, l] / 2
    V = np.linalg.solve(J, -h)
    k2 = kernels(model, "numba", "order2")
    objs = {}
    for name, nout in {"d3f": 1, "d4f": 1, "dQ": 2, "d2Q": 2, "R": 3}.items():
        vals = getattr(k2, f"{name}_values")(s, p)
        idx = k2.index[name].tolist()
        raw = [(tuple(ix), float(v)) for ix, v in zip(idx, vals, strict=True)]
        if name in ("dQ", "d2Q"):
            raw = raw + [((ix[1], ix[0], *ix[2:]), v) for ix, v in raw if ix[0] != ix[1]]
        ent = _expand(raw, 0 if name == "R" else (2 if name in ("dQ", "d2Q") else 1))
        objs[name] = [(k, float(v)) for k, v in reduced_tensor(ent, nout, Tmp, F_idx)]
    objs["H"] = Hred
    ar = _Arith(None)
    D = _assemble_D(ar, n, W, V, Q0, objs)
    C = _SchurSolver(J)(D)
    G, a_part = _G_and_A_terms(ar, n, W, V, C, objs)
    G = (G + G.T) / 2
    B = scipy.linalg.solve_continuous_lyapunov(J, -G)
    B = (B + B.T) / 2
    rhs = a_part.copy()
    for (i, k, l), v in Hred:
        rhs[i] += v * B[k, l] / 2
    A = np.linalg.solve(J, -rhs)
    Wf, Bf = T @ W @ T.T, T @ B @ T.T
    return {
        "s_star": s,
        "V": T @ V,
        "A": T @ A,
        "W": Wf,
        "B": Bf,
        "c": float(np.trace(Wf)),
        "c2": float(np.trace(Bf)),
        "n": n,
        "b": b,
    }


def _negligible_tail(model: Any, params: Mapping[str, Any]) -> int | None:
    """For the supermarket family with replacement: a buffer ``K < b`` beyond which
    every level's contribution is below 1e-20 (float64 resolution is 1e-16), or
    ``None`` when there is none.  ``s*`` comes from the family's O(b) shooting
    solver (:func:`numeric.equilibrium.equilibrium`)."""
    st = model.info.structure
    if model.info.fast_path != "supermarket" or not st.get("replacement", False):
        return None
    from numeric.equilibrium import equilibrium

    service = st.get("service")
    mu = params[service] if service else str(st["mu"])
    s = equilibrium(params[st["arrival"]], model.b, st["d"], dps=20, mu=mu)
    small = [k for k, v in enumerate(s) if abs(v) < 1e-20]
    # level k0 + 1 holds < 1e-20; the bias and the 1/N^2 terms of a level are driven
    # by the variance of the level below (V_{k+1} ~ W_kk ~ s*_k), so two more levels
    # are kept: everything neglected is then below 1e-20
    if not small or small[0] + 3 >= model.b:
        return None
    return int(small[0] + 3)


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
