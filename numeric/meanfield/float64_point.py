"""The float64 route's work at one parameter point (:mod:`numeric.meanfield.float64_route`
is the route: its docstring states the method and the accuracy estimate).

Everything that depends only on the model -- the sparse rate kernels, the jump
matrix, the conservation laws, the dense forms used for small systems -- is
prepared once per model (:func:`numeric.meanfield.structure.prepared_system`); a
point costs only NumPy and LAPACK: the fixed point, the acceptance checks, the
kept block, two Lyapunov solves, ``V`` and the digits.  The objects at ``s*``
(rates, drift, ``J``, the reduced ``J``) are evaluated once (:class:`AtPoint`)
and read by every step.  :func:`solve_point64` returns a typed :class:`Point64`
that the route turns into a :class:`numeric.meanfield.solution.MeanFieldSolution` and the
sweep (:mod:`numeric.meanfield.sweep`) into one row of its curves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mfstein.ground.errors import NumericalError, ParameterError
from numeric.linalg.lyapunov import solve_lyapunov64
from numeric.linalg.small import (
    eigenvalues_quiet,
    singular_values_quiet,
    solve_vector_quiet,
    symmetric_eigenvalues_quiet,
)
from numeric.meanfield import acceptance
from numeric.meanfield.acceptance import max_abs, term_scale
from numeric.meanfield.structure import DENSE_MAX, fixed_point64, negligible
from numeric.rate_signs import check_values64

#: Coordinates whose mass, intensities and coupling are below this (relative) are dropped.
DELTA = 1e-24
#: At most this many digits are claimed by a float64 computation.
MAX_DIGITS = 14
_U = 2.0**-53
_SUM = np.add.reduce
_MAX = np.maximum.reduce


@dataclass(frozen=True)
class AtPoint:
    """The float64 objects at one state ``s`` (full coordinates), evaluated once:
    the rates, the drift, ``J`` (sparse) and the reduced ``J`` (sparse)."""

    s: np.ndarray
    rates: np.ndarray
    f: np.ndarray
    J: Any
    Jr: Any
    #: What :func:`accept` computed here that later steps may read again, ``"stability"``
    #: (the dense matrix whose eigenvalues it took, and them; :func:`kept_block`),
    #: ``"scale"`` (the size of the drift's terms) and ``"residual"`` (``max |f|`` on
    #: the free coordinates; both read by :func:`relative_residual`), and ``"absJ"``
    #: (``|J|`` of a dense ``J`` that is its own reduced ``J``; read by
    #: :func:`_stability_eigenvalues` and :func:`kept_block`).
    seen: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(
        cls, sysm: Any, s: np.ndarray, rates: np.ndarray | None = None, f: np.ndarray | None = None
    ) -> AtPoint:
        """The objects at ``s``: dense arrays for a small system (at most
        :data:`numeric.meanfield.structure.DENSE_MAX` coordinates), sparse otherwise
        (``rates``, ``f``: the rates and the drift ``L^T rates`` at ``s`` when the
        caller has evaluated them; ``f`` is read only with ``rates``)."""
        if rates is None:
            rates, f = sysm.rates(s), None
        if f is None:
            f = sysm.LT_times(rates)
        if len(s) <= DENSE_MAX:
            J = sysm.jac_dense(s)
            return cls(s, rates, f, J, sysm.reduce_jac_dense(J))
        J = sysm.jac(s)
        return cls(s, rates, f, J, sysm.reduce_jac(J))

    @property
    def dense(self) -> bool:
        """Whether ``J`` and the reduced ``J`` are dense arrays."""
        return isinstance(self.J, np.ndarray)

    def Q(self, sysm: Any) -> Any:
        """``Q`` at ``s`` (dense or sparse as ``J``)."""
        return sysm.Q_dense(self.rates) if self.dense else sysm.Q_from_rates(self.rates)

    def residual(self, red: Any) -> float:
        """``max |f|`` on the free coordinates of the reduction ``red`` (all of them,
        in order, without a conservation law)."""
        return max_abs(self.f[list(red.free)] if red.laws else self.f)


def largest_entry(A: Any) -> float:
    """``max |A_ij|`` of a dense or SciPy sparse matrix (0 when it has no entry)."""
    data = A if isinstance(A, np.ndarray) else A.data
    return max_abs(data)


def eigenvalues_by_blocks(Jr: Any) -> np.ndarray:
    """Every eigenvalue of the sparse reduced Jacobian ``Jr``, by increasing real part:
    entries below ``DELTA`` times the largest are set to zero (the perturbation the
    dropped coordinates already carry), the rest split into strongly connected
    components (a block triangular form), and each diagonal block's eigenvalues
    computed densely -- the dropped tail of a large model is then a set of 1 x 1
    blocks, not one dense eigenproblem."""
    import scipy.sparse as sps
    from scipy.sparse.csgraph import connected_components

    if isinstance(Jr, np.ndarray):  # a small system: one dense eigenproblem
        return _dense_eigenvalues(np.where(np.abs(Jr) <= DELTA * largest_entry(Jr), 0.0, Jr))
    A = sps.csr_matrix(Jr, copy=True)  # thresholded below: the caller's Jr stays
    n = A.shape[0]
    if n == 0:
        return np.zeros(0)
    jmax = max_abs(A.data)
    A.data[np.abs(A.data) <= DELTA * jmax] = 0.0
    A.eliminate_zeros()
    count, labels = connected_components(A, directed=True, connection="strong")
    if count == 1:  # one block: the whole (small or irreducible) matrix
        eig = np.linalg.eigvals(A.toarray())
        return eig[np.argsort(eig.real)]
    sizes = np.bincount(labels, minlength=count)
    diag = A.diagonal()
    parts = [diag[sizes[labels] == 1].astype(complex)]
    for comp in np.flatnonzero(sizes > 1).tolist():
        idx = np.flatnonzero(labels == comp)
        parts.append(np.linalg.eigvals(A[idx][:, idx].toarray()))
    eig = np.concatenate(parts)
    return eig[np.argsort(eig.real)]


def _dense_eigenvalues(A: np.ndarray) -> np.ndarray:
    """The eigenvalues of the dense ``A`` by increasing real part."""
    eig = eigenvalues_quiet(A) if A.size else np.zeros(0)
    return eig[np.argsort(eig.real)]


def accept(sysm: Any, model: Any, at: AtPoint, jscale: float) -> None:
    """The checks of :mod:`numeric.meanfield.acceptance` at ``at.s`` (the same as the
    default route's): drift residual relative to the size of its terms, state
    space, finite rates >= 0, no kink, stability of the whole reduced Jacobian
    (``jscale``: its largest entry at the start)."""
    s = at.s
    # a dense J is its own reduced J without a law: |J| taken once for the scale of the
    # drift's terms, the largest entry and the stability test's small entries
    absJ = np.abs(at.J) if at.dense and at.Jr is at.J else None
    scale = at.seen["scale"] = acceptance.term_scale(at.rates, at.J, s, absJ)
    if absJ is None:
        jr_max = largest_entry(at.Jr)
    else:  # max_abs's reduction of |J|
        jr_max = float(_MAX(absJ, axis=None)) if absJ.size else 0.0
        at.seen["absJ"] = absJ
    acceptance.check(
        model,
        s,
        sysm.p,
        residual=_residual(sysm, at),
        scale=scale,
        eig=_stability_eigenvalues(at, jr_max),
        jmax=max(jr_max, jscale),
        has_laws=bool(sysm.red.laws),
        check_rates=lambda: check_values64(model, at.rates, s, sysm.p, "the fixed point"),
    )


def _stability_eigenvalues(at: AtPoint, jr_max: float) -> np.ndarray:
    """:func:`eigenvalues_by_blocks` of ``at.Jr`` (``jr_max``: its largest entry),
    kept in ``at.seen`` with the dense matrix they belong to (small systems), so that
    :func:`kept_block` does not compute them again when its block is that matrix."""
    if not at.dense:
        return eigenvalues_by_blocks(at.Jr)
    Jr = at.Jr
    absJr = at.seen.get("absJ")  # |J| when J is the reduced J (accept)
    A = np.where((np.abs(Jr) if absJr is None else absJr) <= DELTA * jr_max, 0.0, Jr)
    eig = _dense_eigenvalues(A)
    at.seen["stability"] = (A, eig)
    return eig


def _accepted_from(
    sysm: Any,
    model: Any,
    start: np.ndarray,
    jscale: float,
    near: bool = False,
    newton_only: bool = False,
    jac_start: np.ndarray | None = None,
) -> AtPoint:
    """The fixed point reached from ``start`` (full coordinates; ``near``: a
    neighbour's fixed point, ``newton_only``: by Newton's steps alone,
    :func:`numeric.meanfield.structure.fixed_point64`; ``jac_start``: the reduced
    Jacobian at ``start``, when evaluated), refused in one sentence unless it passes
    :func:`accept`."""
    evaluated: dict[str, Any] = {}
    s = fixed_point64(
        sysm,
        np.asarray(start, dtype=float),
        near=near,
        newton_only=newton_only,
        jac_start=jac_start,
        evaluated=evaluated,
    )
    at = AtPoint.of(sysm, s, evaluated.get("rates"), evaluated.get("f"))
    accept(sysm, model, at, jscale)
    return at


def fixed_point(
    sysm: Any,
    model: Any,
    s0: np.ndarray,
    first: np.ndarray | None = None,
    *,
    warm: np.ndarray | None = None,
) -> tuple[AtPoint, list[str], bool]:
    """The fixed point reached from ``first`` (a neighbouring point's ``s*`` with the
    same conserved values, when given), else by Newton's steps alone from ``warm``
    (a fixed point found before at other parameters of a model with a unique fixed
    point, same conserved values), or else from ``s0`` when it is accepted;
    else the first accepted one reached from the random starts in the state space
    with the same conserved values (:func:`numeric.meanfield.fixed_point.random_starts`,
    seed 0, as the default route's search), with a note; else the refusal of the
    point reached from ``s0``.  The stability margin's scale is ``J`` at ``s0``
    either way; every point passes the same checks (:func:`accept`).  The third
    element says whether ``first`` or ``warm`` gave the point."""

    J0 = None  # the reduced J at s0, read again by the search from s0 (dense, no laws)
    if model.n <= DENSE_MAX:
        Jr0 = sysm.reduce_jac_dense(sysm.jac_dense(s0))
        jscale = largest_entry(Jr0)
        # with no law, L^T's rows on the free coordinates are L^T: the same product
        J0 = None if sysm.red.laws else Jr0
    else:
        jscale = largest_entry(sysm.jac_reduced(s0))
    # a neighbour's fixed point starts this search only on the same invariant set
    first, warm = (_same_invariant_set(sysm, s0, x) for x in (first, warm))
    for near, newton_only in ((first, False), (warm, True)):
        if near is None:
            continue
        try:
            return _accepted_from(sysm, model, near, jscale, True, newton_only), [], True
        except (ParameterError, NumericalError):
            pass  # the neighbour's branch ended: search as a single solve does
    try:
        return _accepted_from(sysm, model, s0, jscale, jac_start=J0), [], False
    except (ParameterError, NumericalError) as exc:
        refusal = exc
    import warnings

    from numeric.meanfield.fixed_point import random_starts
    from numeric.meanfield.general import other_start_note

    rng = np.random.default_rng(0)
    for start in random_starts(model, sysm.red, sysm.laws64(s0), rng):
        # a start whose trajectory runs away overflows on the way: only its end counts
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                at = _accepted_from(sysm, model, start, jscale)
            except (ParameterError, NumericalError):
                continue
            return at, [other_start_note(refusal)], False
    raise refusal


def _same_invariant_set(sysm: Any, s0: np.ndarray, x: np.ndarray | None) -> np.ndarray | None:
    """``x`` when it has the conserved values of ``s0`` (or there are no
    conservation laws), else ``None``."""
    if x is None or not sysm.red.laws:
        return x
    same = np.allclose(sysm.laws64(x), sysm.laws64(s0), rtol=1e-13, atol=1e-300)
    return x if same else None


@dataclass
class Block:
    """The kept block of the float64 route: free coordinates ``F``, kept ones ``K``
    (``kr``: their positions in ``F``), the rows ``R`` of the full state that the
    kept block reaches, ``J``, ``Q``, ``M`` on the block, the map ``T`` from the
    block to the full state, the solutions ``W``, ``P`` of the two Lyapunov
    equations, and the eigenvalues of ``J`` on the block (:attr:`eig`)."""

    F: list[int]
    K: list[int]
    kr: list[int]
    R: list[int]
    dropped: set[int]
    JK: np.ndarray
    QK: np.ndarray
    Qs: Any
    TK: np.ndarray
    MK: np.ndarray
    WK: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    PK: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    #: the dense matrix whose eigenvalues :func:`accept` took and them (``AtPoint.seen``)
    stability: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False)
    #: the eigenvalues once :attr:`eig` has been read
    known_eig: np.ndarray | None = field(default=None, repr=False)
    #: ``max |J_ij|`` on the block once :func:`lyapunov` has taken it
    jmax: float | None = field(default=None, repr=False)

    @property
    def eig(self) -> np.ndarray:
        """The eigenvalues of ``JK`` by increasing real part: :func:`accept`'s when its
        matrix is ``JK`` (np.array_equal's test), else computed; made at the first read
        (only the reported solution reads them: a sweep's row or a loop that reads
        ``c`` never does) and kept."""
        if self.known_eig is None:
            seen = self.stability
            A = self.JK
            if seen is not None and seen[0].shape == A.shape and bool((seen[0] == A).all()):
                self.known_eig = seen[1].copy()
            else:
                self.known_eig = _dense_eigenvalues(A)
        return self.known_eig


def square_part(A: np.ndarray, idx: list[int]) -> np.ndarray:
    """``A[np.ix_(idx, idx)]`` (a new C-ordered array), by two ``take`` calls
    without ``np.ix_``'s argument handling."""
    return A.take(idx, axis=0).take(idx, axis=1)


def kept_block(sysm: Any, at: AtPoint, M64: np.ndarray) -> Block:
    """Drop the negligible coordinates at ``at.s`` and restrict ``J``, ``Q``, ``M``
    (``M64``: the observable's ``b x b`` matrix in float64) to the rest."""
    s = at.s
    F = list(sysm.red.free)
    dropped = set(negligible(sysm, s, DELTA, J=at.J, rates=at.rates, absJ=at.seen.get("absJ")))
    kr = [a for a, i in enumerate(F) if i not in dropped]  # kept, in reduced coordinates
    K = [F[a] for a in kr]
    Qs = at.Q(sysm)
    whole = at.dense and not dropped and not sysm.red.laws  # the block is everything
    if whole:  # the same arrays as the selections below (copies: the block owns them)
        JK, QK = at.Jr.copy(), Qs.copy()
    else:
        JK = square_part(at.Jr if at.dense else at.Jr.toarray(), kr)
        QK = square_part(Qs if at.dense else Qs.toarray(), K)
    TK = sysm.T_dense[:, kr]  # b x nK
    if whole:  # T is the identity: every row is reached and M's block is M
        R = list(range(len(F)))
        MK = M64.copy()
    elif not sysm.red.laws:  # T is the identity: the rows reached are K, and M's block
        # is M on them (TR is the identity, so TR^T M_RR TR is M_RR entry for entry)
        R = list(K)
        MK = square_part(M64, R)
    else:
        R = np.flatnonzero(TK.any(axis=1)).tolist()
        TR = TK[R]
        MK = TR.T @ square_part(M64, R) @ TR
    # the eigenvalues are computed when first read (Block.eig), or are accept's
    return Block(F, K, kr, R, dropped, JK, QK, Qs, TK, MK, stability=at.seen.get("stability"))


def lyapunov(blk: Block) -> tuple[float, float]:
    """``W`` from ``J W + W J^T + Q = 0`` and ``P`` from ``P J + J^T P + M = 0``
    (Bartels--Stewart) on the block; ``c`` by the two traces ``tr(M W)``, ``tr(P Q)``."""
    if not blk.K:  # every coordinate negligible: W = 0, P = 0 on an empty block
        return 0.0, 0.0
    # both equations divided by a = max |J_ij| (W and a P are unchanged by the scale of
    # the rates; a J of size 1e-300 would otherwise leave the float64 range of the solver)
    a = blk.jmax = max_abs(blk.JK)
    Ja = blk.JK / a
    Qa = blk.QK / a  # -(Q/a) is (-Q)/a: a quotient's sign is its dividend's
    WK = solve_lyapunov64(Ja, -Qa)
    blk.WK = (WK + WK.T) / 2
    PaK = solve_lyapunov64(Ja.T, -blk.MK)  # a P
    PaK = (PaK + PaK.T) / 2
    blk.PK = PaK / a
    # np.sum's reduction (the same pairwise sums) without its wrapper
    return float(_SUM(blk.MK * blk.WK, axis=None)), float(_SUM(PaK * Qa, axis=None))


def bias(sysm: Any, s: np.ndarray, blk: Block) -> tuple[np.ndarray, np.ndarray]:
    """``V = -J^{-1} h`` with ``h_i = 1/2 sum_jk H_ijk W_jk`` (Theorem 1 of Beyond
    Scaling), and ``W`` on the rows ``R``."""
    TR = blk.TK[blk.R]
    W_full_R = TR @ blk.WK @ TR.T
    b = sysm.red.b
    if len(blk.R) == b:  # R is every row (ascending): the full W is W_R itself
        W = W_full_R
    else:
        W = np.zeros((b, b))
        R = np.asarray(blk.R, dtype=np.intp)
        W[R[:, None], R] = W_full_R  # the rows and columns R (np.ix_'s selection)
    # entries j <= k of the Hessian, j < k counted twice (rows outside R carry W = 0)
    (i, j, k), weight = sysm.hess_layout
    # summed in order into zeros, as np.add.at sums (bincount is its fast form)
    h = np.bincount(i, weights=sysm.hess_values(s) * weight * W[j, k], minlength=b)
    hK = h if len(blk.K) == b else h[blk.K]  # K is every coordinate (ascending): h
    with np.errstate(all="ignore"):  # a singular J: numpy.linalg.solve's error, no warning
        VK = solve_vector_quiet(blk.JK, -hK) if blk.JK.size else np.zeros(0)
    return blk.TK @ VK, W_full_R


def accuracy(
    blk: Block, M: Any, c_w: float, c_p: float, residual: float
) -> tuple[float, int, float, float]:
    """The relative error estimate ``e`` of the route's docstring, step 3, the digits
    it earns, ``kappa_L`` and ``kappa_J`` (``residual``: the drift at ``s*`` relative
    to the size of its terms, which moves ``s*`` by up to ``kappa_J`` times as much)."""
    JK, nK = blk.JK, len(blk.K)
    if nK:  # scale-free: with a = max |J_ij|, kappa_L = 2 ||J/a|| ||a P_I||
        a = max_abs(JK) if blk.jmax is None else blk.jmax
        aPI = a * blk.PK if M is None else solve_lyapunov64(JK.T / a, -np.eye(nK))
        sv = singular_values_quiet(JK)  # ||J||_2 and cond_2(J) from one SVD
        kappa_L = 2 * (sv[0] / a) * _norm2(aPI, symmetric=M is None)
        kappa_J = sv[0] / sv[-1] if sv[-1] > 0 else np.inf
    else:
        kappa_L = kappa_J = 1.0
    disagree = abs(c_w - c_p) / max(abs(c_w), 1e-300)
    e = max(
        10 * max(nK, 1) * _U * (kappa_L + kappa_J),
        10 * disagree,
        DELTA * kappa_L,
        10 * kappa_J * residual,
    )
    digits = int(min(MAX_DIGITS, max(0, math.floor(-math.log10(e)))))
    return e, digits, kappa_L, kappa_J


def _norm2(A: np.ndarray, symmetric: bool) -> float:
    """``||A||_2``: the largest ``|eigenvalue|`` of a symmetric ``A`` (LAPACK ``syevd``,
    about half the time of an SVD for small ``A``), else its largest singular value
    (what ``np.linalg.norm(A, 2)`` computes)."""
    if symmetric:
        return max_abs(symmetric_eigenvalues_quiet(A))
    return float(singular_values_quiet(A).max())


def _residual(sysm: Any, at: AtPoint) -> float:
    """``max |f(s)|`` on the free coordinates (:meth:`AtPoint.residual`), taken once
    at a point and kept in ``at.seen`` (:func:`accept` and :func:`relative_residual`
    both read it)."""
    r = at.seen.get("residual")
    if r is None:
        r = at.seen["residual"] = at.residual(sysm.red)
    return r


def relative_residual(sysm: Any, at: AtPoint) -> float:
    """``max |f(s)|`` on the free coordinates over the size of the drift's terms
    (:func:`numeric.meanfield.acceptance.term_scale`)."""
    scale = at.seen.get("scale")  # computed by accept at this point
    if scale is None:
        scale = term_scale(at.rates, at.J, at.s)
    return _residual(sysm, at) / scale if scale > 0 else 0.0


@dataclass
class Point64:
    """The float64 route's answer at one parameter point: ``s*`` (full coordinates),
    the objects there, the kept block with ``W`` and ``P``, ``V``, ``W`` on the rows
    ``R``, the two traces of ``c``, the relative error ``e`` and its digits, the
    condition numbers, the notes of the fixed-point search, and whether the
    search started from a neighbour's fixed point (:func:`fixed_point`)."""

    at: AtPoint
    block: Block
    V: np.ndarray
    W_R: np.ndarray
    c_w: float
    c_p: float
    error: float
    digits: int
    kappa_L: float
    kappa_J: float
    notes: list[str]
    from_neighbour: bool = False

    @property
    def s(self) -> np.ndarray:
        """The fixed point ``s*``."""
        return self.at.s


def solve_point64(
    sysm: Any,
    model: Any,
    s0: np.ndarray,
    M64: np.ndarray,
    M: Any,
    first: np.ndarray | None = None,
    warm: np.ndarray | None = None,
) -> Point64:
    """The float64 route at the parameters of ``sysm`` (a prepared
    :class:`numeric.meanfield.structure.SparseSystem`): the fixed point searched from
    ``first`` (a neighbour's ``s*``, optional), ``warm`` (Newton's steps from a fixed
    point found before, optional) or ``s0`` (:func:`fixed_point`), the
    kept block, ``W``, ``P``, ``c``, ``V`` and the digits; ``M64`` is the
    observable's matrix in float64 and ``M`` the caller's (``None``: the identity)."""
    at, notes, from_neighbour = fixed_point(sysm, model, s0, first, warm=warm)
    blk = kept_block(sysm, at, M64)
    c_w, c_p = lyapunov(blk)
    V, W_R = bias(sysm, at.s, blk)
    e, digits, kappa_L, kappa_J = accuracy(blk, M, c_w, c_p, relative_residual(sysm, at))
    return Point64(at, blk, V, W_R, c_w, c_p, e, digits, kappa_L, kappa_J, notes, from_neighbour)
