"""The float64 route for any model: ``numeric.solve(..., precision="float64")``.

Same objects as the general route of :mod:`numeric.general` (``s*``, ``W``,
``P``, ``V``, ``c = tr(M W) = tr(P Q)``, Theorem 1 of "Beyond Scaling:
Calculable Error Bound of the Power-of-Two-Choices Mean-Field Model in
Heavy-Traffic" with the sign of the Kronecker form corrected; the refined bias
``V`` of N. Gast and B. Van Houdt, "A Refined Mean Field Approximation"), in
float64 and with the structure found from the model (:mod:`numeric.structure`):

1. rates and their derivatives by :mod:`derive.sparse` (no numba compile),
   ``f``, ``J``, ``Q`` as sparse matrices; the fixed point by the ODE and
   sparse Newton steps (:func:`numeric.structure.fixed_point64`);
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
   delta kappa_L)`` -- backward-stable solves give errors ``O(u kappa)``, the
   two traces are independent routes (``W`` from ``J``, ``P`` from ``J^T``), and
   the last term is the truncation bound of :mod:`numeric.structure`.
   ``digits = floor(-log10 e)``, at most :data:`MAX_DIGITS`; every entry of
   ``s*``, ``V`` and ``W`` carries the error ``e`` times the largest entry of its
   object (``MeanFieldSolution.errors``).  The tests hold the claim against the
   30-digit general route on models of every kind.

``order=2`` adds ``A``, ``B``, ``c2`` from
:func:`numeric.expansion.second_order_float64` on the model restricted to the
kept coordinates (:func:`numeric.structure.restricted_model`), with digits
estimated in the same way (the two solvers of the third moment, ``schur`` and
``trsyl``, as the independent routes).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf

from mfstein.errors import ParameterError
from numeric.model_params import check_names, kernel_vector, parse_params
from numeric.solution import MeanFieldSolution

#: Coordinates whose mass, intensities and coupling are below this (relative) are dropped.
DELTA = 1e-24
#: At most this many digits are claimed by a float64 computation.
MAX_DIGITS = 14
_U = 2.0**-53


def _check_rates64(model: Any, rates: np.ndarray, s: np.ndarray, where: str) -> None:
    """One sentence naming a transition whose intensity is negative or not finite."""
    scale = max(1.0, float(np.max(np.abs(rates[np.isfinite(rates)]), initial=0.0)))
    for t, v in zip(model.transitions, rates.tolist(), strict=True):
        bad = not math.isfinite(v) or v < -1e-12 * scale
        if bad:
            state = ", ".join(f"{x} = {float(u):.8g}" for x, u in zip(model.states, s, strict=True))
            what = "not finite" if not math.isfinite(v) else f"negative ({v:.6g})"
            raise ParameterError(
                f"transition {t.label or t.jump} of model {model.name} has a rate that is "
                f"{what} at {where} ({state}); a population process needs finite rates >= 0."
            )


def _stable(JK: np.ndarray, model: Any, s: np.ndarray) -> np.ndarray:
    eig = np.linalg.eigvals(JK) if JK.size else np.zeros(0)
    eig = eig[np.argsort(eig.real)]
    margin = 1e-9 * max(1.0, float(np.max(np.abs(JK), initial=0.0)))
    if eig.size and eig.real.max() >= -margin:
        where = ", ".join(f"{float(v):.6g}" for v in s[:12]) + (", ..." if s.size > 12 else "")
        raise ParameterError(
            f"the fixed point s* = ({where}) of model {model.name} is not stable: J(s*) has "
            f"an eigenvalue with real part {eig.real.max():.3g} >= 0; the mean-field error "
            "constants need a stable hyperbolic fixed point (change the parameters or the start)."
        )
    return eig


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


def solve_float64(
    model: Any,
    params: Mapping[str, Any] | None = None,
    *,
    M: Any = None,
    start: Sequence[Any] | str | None = None,
    order: int = 1,
) -> MeanFieldSolution:
    """The float64 route (module docstring) for a finite :class:`derive.model.Model`."""
    import scipy.linalg as sla

    from numeric.general import start_point
    from numeric.quadratic_form import quadratic_form
    from numeric.structure import SparseSystem, fixed_point64, negligible

    params = check_names(model, params)
    with mpmath.workdps(30):
        values = parse_params(model, params)
        s0 = np.array([float(v) for v in start_point(model, start, values)])
        p64 = np.array([float(v) for v in kernel_vector(model, values)])
    M_of = quadratic_form(M)
    Mb = M_of(model.b)
    sysm = SparseSystem.build(model, p64)
    _check_rates64(model, sysm.rates(s0), s0, "the start")
    s = fixed_point64(sysm, s0)
    _check_rates64(model, sysm.rates(s), s, "the fixed point")
    b, red = model.b, sysm.red
    F = list(red.free)
    dropped = set(negligible(sysm, s, DELTA))
    kr = [a for a, i in enumerate(F) if i not in dropped]  # kept, in reduced coordinates
    K = [F[a] for a in kr]
    Jr = sysm.jac_reduced(s)
    JK = Jr[kr, :][:, kr].toarray()
    Qs = sysm.Q(s)
    QK = Qs[K, :][:, K].toarray()
    eig = _stable(JK, model, s)
    TK = sysm.T[:, kr].toarray()  # b x nK
    R = [i for i in range(b) if np.any(TK[i])]
    MR = np.array([[float(Mb[i, j]) for j in R] for i in R])
    MK = TK[R].T @ MR @ TK[R]
    WK = sla.solve_continuous_lyapunov(JK, -QK)
    WK = (WK + WK.T) / 2
    PK = sla.solve_continuous_lyapunov(JK.T, -MK)
    PK = (PK + PK.T) / 2
    c_w = float(np.sum(MK * WK))
    c_p = float(np.sum(PK * QK))
    # h_i = 1/2 sum_jk H_ijk W_jk, entries j <= k (j < k counted twice)
    W_full_R = TK[R] @ WK @ TK[R].T
    posR = {i: a for a, i in enumerate(R)}
    hidx, hval = sysm.hess_entries(s)
    h = np.zeros(b)
    for (i, j, k), v in zip(hidx.tolist(), hval.tolist(), strict=True):
        if j in posR and k in posR:
            w = W_full_R[posR[j], posR[k]]
            h[i] += v * w * (0.5 if j == k else 1.0)
    hK = h[K]
    VK = np.linalg.solve(JK, -hK) if JK.size else np.zeros(0)
    V = TK @ VK
    # accuracy estimate (module docstring, step 3)
    nK = len(K)
    PI = PK if M is None else sla.solve_continuous_lyapunov(JK.T, -np.eye(nK))
    kappa_L = 2 * np.linalg.norm(JK, 2) * np.linalg.norm(PI, 2) if nK else 1.0
    kappa_J = np.linalg.cond(JK) if nK else 1.0
    c = c_w
    disagree = abs(c_w - c_p) / max(abs(c), 1e-300)
    e = max(10 * max(nK, 1) * _U * (kappa_L + kappa_J), 10 * disagree, DELTA * kappa_L)
    digits = int(min(MAX_DIGITS, max(0, math.floor(-math.log10(e)))))
    # the record, sparse where the objects are
    Wm = mpmath.matrix(b, b)
    for a, i in enumerate(R):
        for cidx, j in enumerate(R):
            v = W_full_R[a, cidx]
            if v:
                Wm[i, j] = mpf(float(v))
    Pm = mpmath.matrix(b, b)
    for a, i in enumerate(K):
        for cidx, j in enumerate(K):
            Pm[i, j] = mpf(float(PK[a, cidx]))
    Qm = _sparse_mp(Qs, b)
    Jm = _sparse_mp(sysm.jac(s), b)
    ftilde = [mpf(float(v)) / 2 for v in Qs.diagonal()]
    s_mp = [mpf(float(v)) for v in s]
    V_mp = [mpf(float(v)) for v in V]

    def errs(vals: Sequence[float]) -> list[mpf]:
        top = max((abs(float(v)) for v in vals), default=0.0)
        return [mpf(e * top)] * len(vals)

    wtop = float(np.max(np.abs(W_full_R), initial=0.0))  # W's error: e times its largest entry
    notes = [
        f"float64 route: {digits} digits claimed from the conditioning (kappa_L = "
        f"{kappa_L:.3g}, cond(J) = {kappa_J:.3g}) and two independent traces "
        f"(tr(MW) - tr(PQ) = {c_w - c_p:.2e})."
    ]
    truncated_at = None
    if dropped:
        notes.append(
            f"{len(dropped)} of {b} coordinates are negligible at s* (mass, intensities and "
            f"coupling below {DELTA:g}): solved on the other {nK}; W, V vanish there, J, Q, "
            "P and the eigenvalues of the kept block are reported."
        )
        truncated_at = nK
    if red.laws:
        notes.append(
            f"{len(red.laws)} conservation law(s) removed: solved on coordinates "
            f"{', '.join(str(model.states[j]) for j in F)}."
        )
    with mpmath.workdps(30):
        shown = {k: mpmath.nstr(v, 15) for k, v in values.items()}
    sol = MeanFieldSolution(
        lam=values.get("lam"),
        b=b,
        d=model.structure("d"),
        # the float64 numbers in full (17 significant digits): JSON shows the value
        # computed, and ``digits`` says how many of them are correct
        dps=17,
        s_star=s_mp,
        J=Jm,
        ftilde=ftilde,
        Q=Qm,
        P=Pm,
        W=Wm,
        V=V_mp,
        eigenvalues=[
            mpf(float(v.real)) if v.imag == 0 else mpmath.mpc(float(v.real), float(v.imag))
            for v in eig
        ],
        constant=mpf(c),
        digits=digits,
        methods={"float64:covariance": repr(c_w), "float64:stein": repr(c_p)},
        model=model.name,
        params=shown,
        free=F,
        conservation=red.laws_as_text(),
        notes=notes,
        truncated_at=truncated_at,
        errors={
            "s_star": errs(s),
            "V": errs(V),
            "W": [mpf(e * wtop)] * (b * b),
        },
    )
    if order == 2:
        _add_order2_float64(sol, model, params, s, sorted(dropped), e)
    return sol


def _add_order2_float64(
    sol: MeanFieldSolution,
    model: Any,
    params: Mapping[str, Any],
    s: np.ndarray,
    dropped: list[int],
    e1: float,
) -> None:
    """``A``, ``B``, ``c2`` in float64 on the kept coordinates (the model restricted
    to them, :func:`numeric.structure.restricted_model`), every object evaluated by
    lambdified NumPy code (:class:`derive.sparse.LambdaKernels`, no numba compile);
    digits from the order-1 estimate and the agreement of two third-moment solvers
    (``schur``, ``trsyl``)."""
    from derive.sparse import lambda_kernels
    from numeric.expansion import second_order_float64_at
    from numeric.structure import SparseSystem, fixed_point64, restricted_model

    b = model.b
    drop = set(dropped)
    kept = [i for i in range(b) if i not in drop]
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
    sol.methods.update({"c2:float64:schur": repr(r1["c2"]), "c2:float64:trsyl": repr(r2["c2"])})
