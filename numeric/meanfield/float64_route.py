"""The float64 route for any model: ``numeric.solve(..., precision="float64")``.

Same objects as the general route of :mod:`numeric.meanfield.general` (``s*``, ``W``,
``P``, ``V``, ``c = tr(M W) = tr(P Q)``, Theorem 1 of "Beyond Scaling:
Calculable Error Bound of the Power-of-Two-Choices Mean-Field Model in
Heavy-Traffic" with the sign of the Kronecker form corrected; the refined bias
``V`` of N. Gast and B. Van Houdt, "A Refined Mean Field Approximation"), in
float64 and with the structure found from the model (:mod:`numeric.meanfield.structure`):

1. rates and their derivatives by :mod:`derive.sparse` (no numba compile),
   ``f``, ``J``, ``Q`` as sparse matrices (dense arrays for at most
   :data:`numeric.meanfield.structure.DENSE_MAX` coordinates; what depends only on
   the model is prepared once, :mod:`numeric.meanfield.float64_point`); the fixed
   point by the ODE and Newton steps (:func:`numeric.meanfield.structure.fixed_point64`),
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
:func:`numeric.meanfield.stationary.second_order_float64` on the model restricted to the
kept coordinates (:func:`numeric.meanfield.structure.restricted_model`), with digits
estimated in the same way (the two solvers of the third moment, ``schur`` and
``trsyl``, as the independent routes).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf

from mfstein.ground.display import agreement_digits
from numeric.meanfield.acceptance import max_abs
from numeric.meanfield.float64_point import DELTA, MAX_DIGITS
from numeric.meanfield.float64_values import Float64Matrix, mpf64, mpf64_list
from numeric.meanfield.problem import order1, system64
from numeric.meanfield.result_tasks import SOLUTION_TASKS
from numeric.meanfield.solution import Deferred, MeanFieldSolution, family_fields
from numeric.prepared.problem import PreparedProblem, prepare_problem


def solve_float64(
    model: Any,
    params: Mapping[str, Any] | None = None,
    *,
    M: Any = None,
    start: Sequence[Any] | str | None = None,
    order: int = 1,
) -> MeanFieldSolution:
    """The float64 route (module docstring) for a finite :class:`derive.model.Model`:
    :func:`float64_of` the prepared problem of these inputs
    (:func:`numeric.prepared.problem.prepare_problem`)."""
    return float64_of(prepare_problem(model, params, start), M=M, order=order)


def float64_of(problem: PreparedProblem, *, M: Any = None, order: int = 1) -> MeanFieldSolution:
    """The float64 route (module docstring) on a prepared problem (its names, values
    and start read once, not again here): its order-1 answer for ``M``
    (:func:`numeric.meanfield.problem.order1`: kept from an earlier call with the same
    inputs) and, with ``order=2``, the order-2 terms extending it."""
    pt = order1(problem, M)
    o2 = order2_point64(problem, pt) if order == 2 else None
    return record_float64(problem, pt, o2, M)


def record_float64(
    problem: Any, pt: Any, o2: Order2Point64 | None, M: Any = None
) -> MeanFieldSolution:
    """The :class:`MeanFieldSolution` of the float64 point ``pt`` of ``problem`` (a
    :class:`numeric.prepared.problem.PreparedProblem`) for the observable ``M`` and
    its order-2 terms ``o2``, carrying the problem's inputs (model, parameters as
    given, start, ``M``)."""
    sol = _record(problem, pt, M)
    return sol if o2 is None else _with_order2_float64(sol, o2)


def accuracy_note(pt: Any) -> str:
    """The note stating how the float64 digits of ``pt`` were earned."""
    return (
        f"float64 route: {pt.digits} digits claimed from the conditioning (kappa_L = "
        f"{pt.kappa_L:.3g}, cond(J) = {pt.kappa_J:.3g}) and two independent traces "
        f"(tr(MW) and tr(PQ) agree to {agreement_digits(pt.c_w, pt.c_p)} digits)."
    )


def _record(problem: Any, pt: Any, M: Any) -> MeanFieldSolution:
    """The :class:`MeanFieldSolution` of the float64 route at the point ``pt``
    (:class:`numeric.meanfield.float64_point.Point64`) of ``problem`` for the
    observable ``M``, sparse where the objects are; every entry carries the error
    ``e`` times the largest entry of its object.  Built once, with every field (no
    copies by ``replace``)."""
    model, values, sysm = problem.model, problem.values, system64(problem)
    b, red = model.n, sysm.red
    s, V, W_full_R, blk = pt.s, pt.V, pt.W_R, pt.block
    c_w, e, digits = pt.c_w, pt.error, pt.digits
    nK = len(blk.K)

    def errs(vals: np.ndarray) -> list[mpf]:
        return [mpf64(e * max_abs(vals))] * len(vals)

    wtop = max_abs(W_full_R)  # W's error: e times its largest entry
    notes = [accuracy_note(pt)]
    truncated_at = None
    if blk.dropped:
        notes.append(
            f"{len(blk.dropped)} of {b} coordinates are negligible at s* (mass, intensities "
            f"and coupling below {DELTA:g}): solved on the other {nK}; W, V vanish there, J, "
            "Q, P and the eigenvalues of the kept block are reported."
        )
        truncated_at = nK
    names = [getattr(x, "name", x) for x in model.states]  # (a Symbol's name: no printing)
    if red.laws:
        notes.append(
            f"{len(red.laws)} conservation law(s) removed: solved on coordinates "
            f"{', '.join(names[j] for j in blk.F)}."
        )
    # to 15 digits (mpmath.nstr reads the value, not the working precision)
    shown = {k: mpmath.nstr(v, 15) for k, v in values.items()}
    return MeanFieldSolution(
        model=model.name,
        params=shown,
        # the float64 numbers in full (17 significant digits): JSON shows the value
        # computed, and ``digits`` says how many of them are correct
        dps=17,
        n=b,
        # the lists of mpf and the matrices are made when first read (a warm call in a
        # loop reads c), from copies of the arrays
        s_star=Deferred(partial(mpf64_list, np.array(s))),
        J=_matrix_on_read(pt.at.J, None, b),
        ftilde=Deferred(partial(mpf64_list, blk.Qs.diagonal() / 2)),
        Q=_matrix_on_read(blk.Qs, None, b),
        P=_matrix_on_read(blk.PK, blk.K, b),
        W=_matrix_on_read(W_full_R, blk.R, b),
        V=Deferred(partial(mpf64_list, np.array(V))),
        eigenvalues=Deferred(partial(_block_eigenvalues, blk)),
        constant=mpf64(c_w),
        digits=digits,
        routes={"float64:covariance": repr(c_w), "float64:stein": repr(pt.c_p)},
        free=blk.F,
        conservation=red.laws_as_text(),
        notes=[*notes, *pt.notes],
        truncated_at=truncated_at,
        errors={
            "s_star": errs(s),
            "V": errs(V),
            "W": [mpf64(e * wtop)] * (b * b),
        },
        family_fields=family_fields(lam=values.get("lam"), d=model.structure("d")),
        source_model=model,
        tasks=SOLUTION_TASKS,
        inputs=dict(problem.params),
        start=problem.start,
        M=M,
    )


def _matrix_on_read(A: Any, rows: list[int] | None, b: int) -> Deferred:
    """The :class:`Float64Matrix` of ``A`` (:meth:`Float64Matrix.dense` on ``rows``;
    :meth:`Float64Matrix.sparse` when ``rows`` is ``None``), made at the first read
    from a copy of ``A`` taken now."""
    if rows is not None:
        return Deferred(partial(Float64Matrix.dense, np.array(A, dtype=float), list(rows), b))
    A = np.array(A, dtype=float) if isinstance(A, np.ndarray) else A.copy()
    return Deferred(partial(Float64Matrix.sparse, A, b))


def _block_eigenvalues(blk: Any) -> list[Any]:
    """The eigenvalues of the kept block ``blk`` (computed at this first read,
    :attr:`numeric.meanfield.float64_point.Block.eig`) as mpmath numbers: ``mpf``
    (exact) when real, else ``mpc``."""
    return [
        mpf64(v.real) if v.imag == 0 else mpmath.mpc(float(v.real), float(v.imag))
        for v in np.array(blk.eig).tolist()
    ]


@dataclass(frozen=True)
class Order2Point64:
    """``A``, ``B``, ``c2`` in float64 at one point (full coordinates: zero on the
    dropped ones), ``c2`` by the second third-moment solver, the digits of the
    order-2 terms and the absolute errors of ``A``'s and ``B``'s entries."""

    A: np.ndarray
    B: np.ndarray
    c2: float
    c2_trsyl: float
    digits2: int
    error_A: float
    error_B: float
    solved: bool = True


def order2_point64(problem: Any, pt: Any, *, compiled: bool = False) -> Order2Point64:
    """``A``, ``B``, ``c2`` in float64 extending the order-1 answer ``pt`` of
    ``problem`` (:class:`numeric.prepared.problem.PreparedProblem`) on its kept
    coordinates: with none dropped, at the order-1 ``s*`` on the problem's own
    system (no new search); else on the model restricted to the kept coordinates
    (:func:`numeric.meanfield.structure.restricted_model`, made once per model and
    set of dropped coordinates), whose fixed point Newton's method finds from the
    order-1 ``s*``.  Every object is evaluated by lambdified NumPy code
    (:class:`derive.sparse.LambdaKernels`, no numba compile); digits from the
    order-1 estimate and the agreement of two third-moment solvers (``schur``,
    ``trsyl``); ``compiled``: the compiled third-moment kernel at any size
    (:func:`numeric.meanfield.stationary.second_order_float64_solvers`)."""
    from derive.sparse import lambda_kernels
    from numeric.meanfield.problem import COUNTS
    from numeric.meanfield.stationary import Base64, second_order_float64_solvers
    from numeric.meanfield.structure import fixed_point64, prepared_system, restricted_model

    model, p64 = problem.model, problem.p64
    b, e1, dropped = model.n, pt.error, sorted(pt.block.dropped)
    drop = set(dropped)
    kept = [i for i in range(b) if i not in drop]
    if not kept:  # every coordinate negligible at s*: A, B and c2 vanish with W and V
        digits = int(min(MAX_DIGITS, max(0, math.floor(-math.log10(10 * e1)))))
        return Order2Point64(np.zeros(b), np.zeros((b, b)), 0.0, 0.0, digits, 0.0, 0.0, False)
    if dropped:
        sub = restricted_model(model, dropped)
        sysm = prepared_system(sub, p64)  # the restriction keeps the parameters and their order
        # the order-1 s* on the kept coordinates starts Newton's method
        COUNTS["fixed_point"] += 1
        ss = fixed_point64(sysm, np.asarray(pt.s, dtype=float)[kept], near=True)
    else:  # the order-1 fixed point of the same system: polished by Newton already
        sub, sysm, ss = model, system64(problem), np.array(pt.s, dtype=float)
    F = list(sysm.red.free)
    Q = sysm.Q_dense(sysm.rates(ss))
    base = Base64(
        s=ss,
        p=np.array(p64),
        T=sysm.T_dense if sysm.red.laws else None,
        F=F,
        n=len(F),
        J=sysm.reduce_jac_dense(sysm.jac_dense(ss)),
        Q0=Q[np.ix_(F, F)],
        k64=lambda_kernels(sub, "base"),
        fast=False,
    )
    k2 = lambda_kernels(sub, "order2")
    # the two third-moment solvers share what comes before the third moment
    r1, r2 = second_order_float64_solvers(sub, base, ("schur", "trsyl"), k2=k2, compiled=compiled)
    c2 = r1.c2
    disagree = abs(r1.c2 - r2.c2) / max(abs(c2), 1e-300)
    scale = max(max_abs(r1.A), 1e-300)
    disagree = max(disagree, max_abs(r1.A - r2.A) / scale)
    e = max(10 * e1, 10 * disagree)
    digits2 = int(min(MAX_DIGITS, max(0, math.floor(-math.log10(max(e, 1e-300))))))
    A, B = np.zeros(b), np.zeros((b, b))
    A[kept] = r1.A
    B[np.ix_(kept, kept)] = r1.B
    # B's bound, the same way: the two Sylvester solvers' disagreement relative to
    # B's largest entry, and never below ten times the order-1 error.
    scale_b = max(max_abs(r1.B), 1e-300)
    gap_b = max_abs(r1.B - r2.B) / scale_b
    return Order2Point64(
        A, B, float(c2), float(r2.c2), digits2, e * scale, max(10 * e1, 10 * gap_b) * scale_b
    )


def _with_order2_float64(sol: MeanFieldSolution, o2: Order2Point64) -> MeanFieldSolution:
    """``sol`` with ``A``, ``B``, ``c2`` of :func:`order2_point64`."""
    b = len(o2.A)
    B = Float64Matrix.dense(o2.B, None, b)
    errors = {**sol.errors, "A": [mpf64(o2.error_A)] * b, "B": [mpf64(o2.error_B)] * b * b}
    methods = dict(sol.routes)
    if o2.solved:
        methods.update({"c2:float64:schur": repr(o2.c2), "c2:float64:trsyl": repr(o2.c2_trsyl)})
    return replace(
        sol,
        A=mpf64_list(o2.A),
        B=B,
        c2=mpf64(o2.c2),
        digits2=o2.digits2,
        errors=errors,
        routes=methods,
    )
