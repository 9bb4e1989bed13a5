"""The float64 route for any model: ``numeric.solve(..., precision="float64")``.

Same objects as the general route of :mod:`numeric.meanfield.general` (``s*``, ``W``,
``P``, ``V``, ``c = tr(M W) = tr(P Q)``, Theorem 1 of "Beyond Scaling:
Calculable Error Bound of the Power-of-Two-Choices Mean-Field Model in
Heavy-Traffic" with the sign of the Kronecker form corrected; the refined bias
``V`` of N. Gast and B. Van Houdt, "A Refined Mean Field Approximation"), in
float64 and with the structure found from the model (:mod:`numeric.meanfield.structure`):

1. rates and their derivatives by :mod:`derive.sparse` (no numba compile),
   ``f``, ``J``, ``Q`` as sparse matrices; the fixed point by the ODE and
   sparse Newton steps (:func:`numeric.meanfield.structure.fixed_point64`),
   accepted only when it passes the default route's checks
   (:mod:`numeric.meanfield.acceptance`: relative drift residual, state space,
   rates, kink, stability of the whole reduced ``J``), else searched again from
   the random starts of :func:`numeric.meanfield.fixed_point.random_starts`;
2. negligible coordinates dropped with ``delta =`` :data:`DELTA` (their mass,
   the intensities moving them and the Jacobian's coupling into them are below
   ``delta`` relative to the largest ones), so the dense Lyapunov solves
   (Bartels--Stewart, ``scipy.linalg.solve_continuous_lyapunov``) run on the
   kept block only;
3. ``digits``: the accuracy is estimated, not assumed.  With ``u = 2^-53``,
   ``n`` kept coordinates, ``kappa_L = 2 ||J|| ||P_I||`` (the Lyapunov
   operator's condition, ``P_I`` solving ``P J + J^T P = -I``) and
   ``kappa_J = cond_2(J)``, the relative error of ``c``, ``W``, ``V`` is
   estimated as ``e = max(10 n u (kappa_L + kappa_J), 10 |tr(M W) - tr(P Q)|/|c|,
   delta kappa_L, 10 kappa_J r)`` -- backward-stable solves give errors
   ``O(u kappa)``, the two traces are independent routes (``W`` from ``J``, ``P``
   from ``J^T``), the third term is the truncation bound of
   :mod:`numeric.meanfield.structure`, and ``r`` is the drift at ``s*`` relative
   to the size of its terms.
   ``digits = floor(-log10 e)``, at most :data:`MAX_DIGITS`; every entry of
   ``s*``, ``V`` and ``W`` carries the error ``e`` times the largest entry of its
   object (``MeanFieldSolution.errors``).  The tests hold the claim against the
   30-digit general route on models of every kind.

``order=2`` adds ``A``, ``B``, ``c2`` from
:func:`numeric.expansion.stationary.second_order_float64` on the model restricted to the
kept coordinates (:func:`numeric.meanfield.structure.restricted_model`), with digits
estimated in the same way (the two solvers of the third moment, ``schur`` and
``trsyl``, as the independent routes).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf

from mfstein.errors import NumericalError, ParameterError
from numeric.meanfield.params import check_names, kernel_vector, parse_params
from numeric.rate_signs import check_values
from numeric.solution import MeanFieldSolution

#: Coordinates whose mass, intensities and coupling are below this (relative) are dropped.
DELTA = 1e-24
#: At most this many digits are claimed by a float64 computation.
MAX_DIGITS = 14
_U = 2.0**-53


def _eigenvalues_by_blocks(Jr: Any) -> np.ndarray:
    """Every eigenvalue of the sparse reduced Jacobian ``Jr``, by increasing real part:
    entries below ``DELTA`` times the largest are set to zero (the perturbation the
    dropped coordinates already carry, module docstring step 2), the rest split into
    strongly connected components (a block triangular form), and each diagonal
    block's eigenvalues computed densely -- the dropped tail of a large model is
    then a set of 1 x 1 blocks, not one dense eigenproblem."""
    import scipy.sparse as sps
    from scipy.sparse.csgraph import connected_components

    A = sps.csr_matrix(Jr)
    n = A.shape[0]
    if n == 0:
        return np.zeros(0)
    jmax = float(np.max(np.abs(A.data), initial=0.0))
    A.data[np.abs(A.data) <= DELTA * jmax] = 0.0
    A.eliminate_zeros()
    count, labels = connected_components(A, directed=True, connection="strong")
    sizes = np.bincount(labels, minlength=count)
    diag = A.diagonal()
    parts = [diag[sizes[labels] == 1].astype(complex)]
    for comp in np.flatnonzero(sizes > 1).tolist():
        idx = np.flatnonzero(labels == comp)
        parts.append(np.linalg.eigvals(A[idx][:, idx].toarray()))
    eig = np.concatenate(parts)
    return eig[np.argsort(eig.real)]


def _accept(sysm: Any, model: Any, s: np.ndarray, jscale: float) -> None:
    """The checks of :mod:`numeric.meanfield.acceptance` at ``s`` (the same as the
    default route's): drift residual relative to the size of its terms, state
    space, finite rates >= 0, no kink, stability of the whole reduced Jacobian
    (``jscale``: its largest entry at the start)."""
    from numeric.meanfield import acceptance

    Jr = sysm.jac_reduced(s)
    acceptance.check(
        model,
        s,
        sysm.p,
        residual=float(np.max(np.abs(sysm.f(s)[list(sysm.red.free)]), initial=0.0)),
        scale=acceptance.term_scale(sysm.rates(s), sysm.jac(s), s),
        eig=_eigenvalues_by_blocks(Jr),
        jmax=max(float(np.max(np.abs(Jr.data), initial=0.0)), jscale),
        has_laws=bool(sysm.red.laws),
        check_rates=lambda: check_values(
            model, sysm.rates(s).tolist(), s.tolist(), sysm.p.tolist(), "the fixed point"
        ),
    )


def _accepted_from(sysm: Any, model: Any, start: np.ndarray, jscale: float) -> np.ndarray:
    """The fixed point reached from ``start`` (full coordinates), refused in one
    sentence unless it passes :func:`_accept`."""
    from numeric.meanfield.structure import fixed_point64

    s = fixed_point64(sysm, np.asarray(start, dtype=float))
    _accept(sysm, model, s, jscale)
    return s


def _fixed_point(sysm: Any, model: Any, s0: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """The fixed point reached from ``s0`` when it is accepted (:func:`_accepted_from`);
    else the first accepted one reached from the random starts in the state space
    with the same conserved values (:func:`numeric.meanfield.fixed_point.random_starts`,
    seed 0, as the default route's search), with a note; else the refusal of the
    point reached from ``s0``."""
    from numeric.meanfield.fixed_point import random_starts
    from numeric.meanfield.general import other_start_note

    jscale = float(np.max(np.abs(sysm.jac_reduced(s0).data), initial=0.0))
    try:
        return _accepted_from(sysm, model, s0, jscale), []
    except (ParameterError, NumericalError) as exc:
        refusal = exc
    import warnings

    rng = np.random.default_rng(0)
    for start in random_starts(model, sysm.red, sysm.laws64(s0), rng):
        # a start whose trajectory runs away overflows on the way: only its end counts
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                return _accepted_from(sysm, model, start, jscale), [other_start_note(refusal)]
            except (ParameterError, NumericalError):
                continue
    raise refusal


def _sparse_mp(A: Any, b: int) -> mpmath.matrix:
    """A SciPy sparse or dense float64 matrix as an mpmath matrix storing only its
    nonzero entries."""
    import scipy.sparse as sps

    out = mpmath.matrix(b, b)
    coo = sps.coo_matrix(A)
    for i, j, v in zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist(), strict=True):
        if v:
            out[i, j] = mpf(v)
    return out


@dataclass
class _Block:
    """The kept block of the float64 route (module docstring, step 2): free
    coordinates ``F``, kept ones ``K`` (``kr``: their positions in ``F``), the
    rows ``R`` of the full state that the kept block reaches, ``J``, ``Q``,
    ``M`` on the block, the map ``T`` from the block to the full state, and
    the solutions ``W``, ``P`` of the two Lyapunov equations."""

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
    eig: np.ndarray
    WK: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    PK: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))


def _kept_block(sysm: Any, model: Any, s: np.ndarray, Mb: Any) -> _Block:
    """Drop the negligible coordinates at ``s`` and restrict ``J``, ``Q``, ``M`` to
    the rest; refuse an unstable fixed point."""
    from numeric.meanfield.structure import negligible

    b = model.b
    F = list(sysm.red.free)
    dropped = set(negligible(sysm, s, DELTA))
    kr = [a for a, i in enumerate(F) if i not in dropped]  # kept, in reduced coordinates
    K = [F[a] for a in kr]
    Jr = sysm.jac_reduced(s)
    JK = Jr[kr, :][:, kr].toarray()
    Qs = sysm.Q(s)
    QK = Qs[K, :][:, K].toarray()
    eig = np.linalg.eigvals(JK) if JK.size else np.zeros(0)
    eig = eig[np.argsort(eig.real)]
    TK = sysm.T[:, kr].toarray()  # b x nK
    R = [i for i in range(b) if np.any(TK[i])]
    MR = np.array([[float(Mb[i, j]) for j in R] for i in R])
    MK = TK[R].T @ MR @ TK[R]
    return _Block(F, K, kr, R, dropped, JK, QK, Qs, TK, MK, eig)


def _lyapunov(blk: _Block) -> tuple[float, float]:
    """``W`` from ``J W + W J^T + Q = 0`` and ``P`` from ``P J + J^T P + M = 0``
    (Bartels--Stewart) on the block; ``c`` by the two traces ``tr(M W)``, ``tr(P Q)``."""
    import scipy.linalg as sla

    if not blk.K:  # every coordinate negligible: W = 0, P = 0 on an empty block
        return 0.0, 0.0
    # both equations divided by a = max |J_ij| (W and a P are unchanged by the scale of
    # the rates; a J of size 1e-300 would otherwise leave the float64 range of the solver)
    a = float(np.max(np.abs(blk.JK)))
    Ja = blk.JK / a
    WK = sla.solve_continuous_lyapunov(Ja, -blk.QK / a)
    blk.WK = (WK + WK.T) / 2
    PaK = sla.solve_continuous_lyapunov(Ja.T, -blk.MK)  # a P
    PaK = (PaK + PaK.T) / 2
    blk.PK = PaK / a
    return float(np.sum(blk.MK * blk.WK)), float(np.sum(PaK * (blk.QK / a)))


def _bias(sysm: Any, s: np.ndarray, blk: _Block, b: int) -> tuple[np.ndarray, np.ndarray]:
    """``V = -J^{-1} h`` with ``h_i = 1/2 sum_jk H_ijk W_jk`` (Theorem 1 of Beyond
    Scaling), and ``W`` on the rows ``R``."""
    # entries j <= k of the Hessian, j < k counted twice
    W_full_R = blk.TK[blk.R] @ blk.WK @ blk.TK[blk.R].T
    posR = {i: a for a, i in enumerate(blk.R)}
    hidx, hval = sysm.hess_entries(s)
    h = np.zeros(b)
    for (i, j, k), v in zip(hidx.tolist(), hval.tolist(), strict=True):
        if j in posR and k in posR:
            w = W_full_R[posR[j], posR[k]]
            h[i] += v * w * (0.5 if j == k else 1.0)
    hK = h[blk.K]
    VK = np.linalg.solve(blk.JK, -hK) if blk.JK.size else np.zeros(0)
    return blk.TK @ VK, W_full_R


def _accuracy(
    blk: _Block, M: Any, c_w: float, c_p: float, residual: float
) -> tuple[float, int, float, float]:
    """The relative error estimate ``e`` of module docstring step 3, the digits it
    earns, ``kappa_L`` and ``kappa_J`` (``residual``: the drift at ``s*`` relative to
    the size of its terms, which moves ``s*`` by up to ``kappa_J`` times as much)."""
    import scipy.linalg as sla

    JK, nK = blk.JK, len(blk.K)
    if nK:  # scale-free: with a = max |J_ij|, kappa_L = 2 ||J/a|| ||a P_I||
        a = float(np.max(np.abs(JK)))
        aPI = a * blk.PK if M is None else sla.solve_continuous_lyapunov(JK.T / a, -np.eye(nK))
        kappa_L = 2 * np.linalg.norm(JK / a, 2) * np.linalg.norm(aPI, 2)
    else:
        kappa_L = 1.0
    kappa_J = np.linalg.cond(JK) if nK else 1.0
    disagree = abs(c_w - c_p) / max(abs(c_w), 1e-300)
    e = max(
        10 * max(nK, 1) * _U * (kappa_L + kappa_J),
        10 * disagree,
        DELTA * kappa_L,
        10 * kappa_J * residual,
    )
    digits = int(min(MAX_DIGITS, max(0, math.floor(-math.log10(e)))))
    return e, digits, kappa_L, kappa_J


def _dense_mp(A: np.ndarray, rows: list[int], b: int, skip_zeros: bool) -> mpmath.matrix:
    """The ``b x b`` mpmath matrix with ``A`` on ``rows x rows`` (zeros elsewhere)."""
    out = mpmath.matrix(b, b)
    for a, i in enumerate(rows):
        for cidx, j in enumerate(rows):
            v = A[a, cidx]
            if v or not skip_zeros:
                out[i, j] = mpf(float(v))
    return out


def solve_float64(
    model: Any,
    params: Mapping[str, Any] | None = None,
    *,
    M: Any = None,
    start: Sequence[Any] | str | None = None,
    order: int = 1,
) -> MeanFieldSolution:
    """The float64 route (module docstring) for a finite :class:`derive.model.Model`."""
    from numeric.meanfield.general import start_point
    from numeric.meanfield.structure import SparseSystem
    from numeric.quadratic_form import quadratic_form

    params = check_names(model, params)
    with mpmath.workdps(30):
        values = parse_params(model, params)
        s0 = np.array([float(v) for v in start_point(model, start, values)])
        p64 = np.array([float(v) for v in kernel_vector(model, values)])
    Mb = quadratic_form(M)(model.b)
    sysm = SparseSystem.build(model, p64)
    check_values(model, sysm.rates(s0).tolist(), s0.tolist(), p64.tolist(), "the start")
    s, search_notes = _fixed_point(sysm, model, s0)
    b = model.b
    blk = _kept_block(sysm, model, s, Mb)
    c_w, c_p = _lyapunov(blk)
    V, W_full_R = _bias(sysm, s, blk, b)
    e, digits, kappa_L, kappa_J = _accuracy(blk, M, c_w, c_p, _relative_residual(sysm, s))
    note = (
        f"float64 route: {digits} digits claimed from the conditioning (kappa_L = "
        f"{kappa_L:.3g}, cond(J) = {kappa_J:.3g}) and two independent traces "
        f"(tr(MW) - tr(PQ) = {c_w - c_p:.2e})."
    )
    sol = _record(model, values, sysm, s, V, W_full_R, blk, (c_w, c_p), (e, digits), note)
    sol.notes.extend(search_notes)
    if order == 2:
        _add_order2_float64(sol, model, params, s, sorted(blk.dropped), e)
    return sol


def _relative_residual(sysm: Any, s: np.ndarray) -> float:
    """``max |f(s)|`` on the free coordinates over the size of the drift's terms
    (:func:`numeric.meanfield.acceptance.term_scale`)."""
    from numeric.meanfield.acceptance import term_scale

    res = float(np.max(np.abs(sysm.f(s)[list(sysm.red.free)]), initial=0.0))
    scale = term_scale(sysm.rates(s), sysm.jac(s), s)
    return res / scale if scale > 0 else 0.0


def _record(
    model: Any,
    values: Mapping[str, Any],
    sysm: Any,
    s: np.ndarray,
    V: np.ndarray,
    W_full_R: np.ndarray,
    blk: _Block,
    traces: tuple[float, float],
    accuracy: tuple[float, int],
    note: str,
) -> MeanFieldSolution:
    """The :class:`MeanFieldSolution` of the float64 route, sparse where the objects
    are; every entry carries the error ``e`` times the largest entry of its object."""
    b, red = model.b, sysm.red
    (c_w, c_p), (e, digits) = traces, accuracy
    nK = len(blk.K)
    Wm = _dense_mp(W_full_R, blk.R, b, skip_zeros=True)
    Pm = _dense_mp(blk.PK, blk.K, b, skip_zeros=False)

    def errs(vals: Sequence[float]) -> list[mpf]:
        top = max((abs(float(v)) for v in vals), default=0.0)
        return [mpf(e * top)] * len(vals)

    wtop = float(np.max(np.abs(W_full_R), initial=0.0))  # W's error: e times its largest entry
    notes = [note]
    truncated_at = None
    if blk.dropped:
        notes.append(
            f"{len(blk.dropped)} of {b} coordinates are negligible at s* (mass, intensities "
            f"and coupling below {DELTA:g}): solved on the other {nK}; W, V vanish there, J, "
            "Q, P and the eigenvalues of the kept block are reported."
        )
        truncated_at = nK
    if red.laws:
        notes.append(
            f"{len(red.laws)} conservation law(s) removed: solved on coordinates "
            f"{', '.join(str(model.states[j]) for j in blk.F)}."
        )
    with mpmath.workdps(30):
        shown = {k: mpmath.nstr(v, 15) for k, v in values.items()}
    return MeanFieldSolution(
        lam=values.get("lam"),
        b=b,
        d=model.structure("d"),
        # the float64 numbers in full (17 significant digits): JSON shows the value
        # computed, and ``digits`` says how many of them are correct
        dps=17,
        s_star=[mpf(float(v)) for v in s],
        J=_sparse_mp(sysm.jac(s), b),
        ftilde=[mpf(float(v)) / 2 for v in blk.Qs.diagonal()],
        Q=_sparse_mp(blk.Qs, b),
        P=Pm,
        W=Wm,
        V=[mpf(float(v)) for v in V],
        eigenvalues=[
            mpf(float(v.real)) if v.imag == 0 else mpmath.mpc(float(v.real), float(v.imag))
            for v in blk.eig
        ],
        constant=mpf(c_w),
        digits=digits,
        methods={"float64:covariance": repr(c_w), "float64:stein": repr(c_p)},
        model=model.name,
        params=shown,
        free=blk.F,
        conservation=red.laws_as_text(),
        notes=notes,
        truncated_at=truncated_at,
        errors={
            "s_star": errs(s),
            "V": errs(V),
            "W": [mpf(e * wtop)] * (b * b),
        },
    )


def _add_order2_float64(
    sol: MeanFieldSolution,
    model: Any,
    params: Mapping[str, Any],
    s: np.ndarray,
    dropped: list[int],
    e1: float,
) -> None:
    """``A``, ``B``, ``c2`` in float64 on the kept coordinates (the model restricted
    to them, :func:`numeric.meanfield.structure.restricted_model`), every object evaluated by
    lambdified NumPy code (:class:`derive.sparse.LambdaKernels`, no numba compile);
    digits from the order-1 estimate and the agreement of two third-moment solvers
    (``schur``, ``trsyl``)."""
    from derive.sparse import lambda_kernels
    from numeric.expansion.stationary import second_order_float64_at
    from numeric.meanfield.structure import SparseSystem, fixed_point64, restricted_model

    b = model.b
    drop = set(dropped)
    kept = [i for i in range(b) if i not in drop]
    if not kept:  # every coordinate negligible at s*: A, B and c2 vanish with W and V
        sol.A, sol.B, sol.c2 = [mpf(0)] * b, mpmath.matrix(b, b), mpf(0)
        sol.digits2 = int(min(MAX_DIGITS, max(0, math.floor(-math.log10(10 * e1)))))
        sol.errors["A"], sol.errors["B"] = [mpf(0)] * b, [mpf(0)] * (b * b)
        return
    sub = restricted_model(model, dropped) if dropped else model
    with mpmath.workdps(30):
        p64 = np.array([float(v) for v in kernel_vector(sub, parse_params(sub, params))])
    sysm = SparseSystem.build(sub, p64)
    ss = fixed_point64(sysm, np.asarray(s, dtype=float)[kept])
    F = list(sysm.red.free)
    Q = sysm.Q(ss).toarray()
    base = {
        "s": ss,
        "p": p64,
        "T": sysm.T.toarray() if sysm.red.laws else None,
        "F": F,
        "n": len(F),
        "J": sysm.jac_reduced(ss).toarray(),
        "Q0": Q[np.ix_(F, F)],
        "k64": lambda_kernels(sub, "base"),
        "fast": False,
    }
    k2 = lambda_kernels(sub, "order2")
    r1 = second_order_float64_at(sub, base, solver="schur", k2=k2)
    r2 = second_order_float64_at(sub, base, solver="trsyl", k2=k2)
    c2 = r1["c2"]
    disagree = abs(r1["c2"] - r2["c2"]) / max(abs(c2), 1e-300)
    scale = max(float(np.max(np.abs(r1["A"]), initial=0.0)), 1e-300)
    disagree = max(disagree, float(np.max(np.abs(r1["A"] - r2["A"]), initial=0.0)) / scale)
    e = max(10 * e1, 10 * disagree)
    digits2 = int(min(MAX_DIGITS, max(0, math.floor(-math.log10(max(e, 1e-300))))))
    A = [mpf(0)] * b
    B = mpmath.matrix(b, b)
    for a, i in enumerate(kept):
        A[i] = mpf(float(r1["A"][a]))
        for cidx, j in enumerate(kept):
            v = float(r1["B"][a, cidx])
            if v:
                B[i, j] = mpf(v)
    sol.A, sol.B, sol.c2, sol.digits2 = A, B, mpf(c2), digits2
    sol.errors["A"] = [mpf(e * scale)] * b
    # B's bound, the same way: the two Sylvester solvers' disagreement relative to
    # B's largest entry, and never below ten times the order-1 error.
    scale_b = max(float(np.max(np.abs(r1["B"]), initial=0.0)), 1e-300)
    gap_b = float(np.max(np.abs(r1["B"] - r2["B"]), initial=0.0)) / scale_b
    sol.errors["B"] = [mpf(max(10 * e1, 10 * gap_b) * scale_b)] * (b * b)
    sol.methods.update({"c2:float64:schur": repr(r1["c2"]), "c2:float64:trsyl": repr(r2["c2"])})
