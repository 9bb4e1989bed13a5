"""Fixed point, ``P``, ``W``, ``V`` and the constant ``c`` of any model, at any precision.

For a density-dependent population process with drift ``f``, diffusion
``Q = sum_l l l^T beta_l`` and a stable fixed point ``s*`` (Section 3 and
Theorem 1 of "Beyond Scaling: Calculable Error Bound of the
Power-of-Two-Choices Mean-Field Model in Heavy-Traffic", with the sign of the
Kronecker form corrected):

* ``J = Df(s*)``; ``W`` solves ``J W + W J^T + Q(s*) = 0`` (covariance of the
  Ornstein--Uhlenbeck limit of ``sqrt(N)(S - s*)``);
* ``P`` solves ``P J + J^T P + M = 0`` (Stein's equation for
  ``g(s) = -(s - s*)^T P (s - s*)``);
* ``c = tr(P Q) = tr(M W)``, so ``E[(S - s*)^T M (S - s*)] = c/N + o(1/N)``;
* ``V = -J^{-1} h`` with ``h_i = 1/2 sum_jk (d^2 f_i/ds_j ds_k)(s*) W_jk``, so
  ``E[S] = s* + V/N + O(1/N^2)`` (N. Gast and B. Van Houdt, "A Refined Mean
  Field Approximation", Proc. ACM Meas. Anal. Comput. Syst. 1(2), 2017).

Conservation laws are removed first (:mod:`numeric.invariants`): everything is
solved on the free coordinates and ``W``, ``V`` are mapped back exactly.  The model
is prepared once (:class:`numeric.prepared.problem.PreparedProblem`: values, start,
reduction, reduced model); the route's own state -- the accepted float64 fixed point
(:mod:`numeric.meanfield.fixed_point`) and the objects at each precision
(:mod:`numeric.meanfield.working_objects`) -- is one frozen record,
:class:`numeric.meanfield.working_route.WorkingRoute`, which order 2 reads too.  The
linear algebra is :mod:`numeric.linalg.refinement`'s (float64 solves refined by exact
residuals).

Routes and digits.  The reference value ``stein`` = ``tr(P Q)`` and every
reported object are computed at ``wp2`` digits, and the ``covariance`` route
``tr(M W)`` at ``wp1 < wp2`` (the fixed point recomputed at each precision);
for at most :data:`KRONECKER_MAX_N` free coordinates the dense Kronecker system
(:func:`numeric.linalg.tridiagonal.solve_vectorised`) is a third, independent route.
``digits`` is the number of significant digits on which all routes agree and
on which ``W`` and ``V`` agree between the two precisions (norm-wise), capped at
the requested ``dps``; every entry of ``s*``, ``V`` and ``W`` carries its own
error estimate, the difference between the two precisions
(``MeanFieldSolution.errors``); if that falls short after raising the guard digits
twice, :class:`mfstein.ground.errors.NumericalError` is raised and nothing is returned
(:func:`numeric.precision.earn_digits`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf

from mfstein.ground.display import family_fields
from numeric.meanfield import fixed_point as fp
from numeric.meanfield.solution import MeanFieldSolution

# the objects at one precision moved to numeric.meanfield.working_objects and the
# route's record to numeric.meanfield.working_route; their names stay here for old imports
from numeric.meanfield.working_objects import KRONECKER_MAX_N as KRONECKER_MAX_N
from numeric.meanfield.working_objects import Objects as Objects
from numeric.meanfield.working_objects import congruence as congruence
from numeric.meanfield.working_route import other_start_note as other_start_note
from numeric.meanfield.working_route import route_of
from numeric.precision import (
    agreeing_digits,
    check_dps,
    earn_digits,
    guard_ladder,
    row_major,
    to_str,
)
from numeric.prepared.problem import PreparedProblem, prepare_problem

# the reading of a start moved to numeric.prepared.start; its names stay here for old imports
from numeric.prepared.start import SNAP_ULPS as SNAP_ULPS
from numeric.prepared.start import snap_into_space as snap_into_space
from numeric.prepared.start import start_point as start_point


def _route_values(low: Objects, high: Objects) -> dict[str, mpf]:
    """The values the reference ``stein`` (at the higher precision) is compared with."""
    values = {"covariance": low.covariance, "covariance-high": high.covariance}
    if low.kronecker is not None:
        values["kronecker"] = low.kronecker
    return values


def solve_general(
    model: Any,
    params: Mapping[str, Any] | None = None,
    *,
    dps: int = 30,
    M: Any = None,
    start: Sequence[Any] | str | None = None,
) -> MeanFieldSolution:
    """The general (structure-free) route for a finite :class:`derive.Model`.

    Parameters
    ----------
    model:
        A :class:`derive.model.Model`.
    params:
        Parameter name -> value (strings parsed exactly).
    dps:
        Requested significant digits of ``c``, ``>= 5``.
    M:
        The quadratic observable (:func:`numeric.quadratic_form.quadratic_form`)
        (``None``/``"identity"``, ``"diag:a,b,..."`` or a symmetric ``b x b`` matrix).
    start:
        Initial state in the model's coordinates; it starts the fixed-point
        search and fixes the values of the conservation laws.
    """
    dps = check_dps(dps)
    return general_of(prepare_problem(model, params, start), dps=dps, M=M)


def general_of(problem: PreparedProblem, *, dps: int = 30, M: Any = None) -> MeanFieldSolution:
    """:func:`solve_general` of a prepared problem
    (:class:`numeric.prepared.problem.PreparedProblem`: its names, values and start
    read once, not again here)."""
    dps = check_dps(dps)
    model, route = problem.model, route_of(problem, M)

    def agreement(low: Objects, high: Objects) -> int:
        values = _route_values(low, high)
        return min(
            min(agreeing_digits(high.stein, v) for v in values.values()),
            agreeing_digits(row_major(high.W), row_major(low.W)),
            agreeing_digits(high.V, low.V),
        )

    earned = earn_digits(
        dps,
        guard_ladder(dps),
        lambda wp: route.at(wp, full=False, kronecker=True),
        lambda wp: route.at(wp, full=True, kronecker=False),
        agreement,
        who="the routes",
        where=f"model {model.name}",
    )
    low, high, digits, wp2 = earned.low, earned.high, earned.digits, earned.wp_high
    ref = high.stein
    values = _route_values(low, high)
    red, rm = problem.reduction, problem.reduced
    eig = fp.check_stable(rm, high.s, problem.p64, problem.q64, problem.jscale)
    with mpmath.workdps(dps + 10):
        s = high.s
        P = mpmath.matrix(model.n, model.n)
        for a, i in enumerate(red.free):
            for c, j in enumerate(red.free):
                P[i, j] = high.Pr[a, c]
        eigenvalues = [
            mpf(float(v.real)) if v.imag == 0 else mpmath.mpc(float(v.real), float(v.imag))
            for v in eig
        ]
        J = rm.kmp.jac(s, high.p)
        ftilde = rm.kmp.ftilde(s, high.p)
    others = [
        [float(v) for v in t]
        for t in route.stable
        if np.max(np.abs(t - np.array([float(v) for v in s]))) > 1e-6
    ]
    notes = list(route.notes)
    notes.append("eigenvalues of J(s*) are float64 values (about 15 significant digits).")
    names = [getattr(x, "name", x) for x in model.states]  # (a Symbol's name: no printing)
    if red.laws:
        notes.append(
            f"{len(red.laws)} conservation law(s) removed: solved on coordinates "
            f"{', '.join(names[j] for j in red.free)}; W and V are exact images in "
            "all coordinates, P acts on the free ones."
        )
    methods = {"stein": to_str(ref, dps)}
    methods.update({k: to_str(v, dps) for k, v in values.items()})
    errors = {
        "s_star": earned.errors(high.s, low.s),
        "V": earned.errors(high.V, low.V),
        "W": earned.errors(row_major(high.W), row_major(low.W)),
    }
    with mpmath.workdps(wp2):
        vals = problem.values_now()
    return MeanFieldSolution(
        model=model.name,
        params={k: mpmath.nstr(v, dps) for k, v in vals.items()},
        dps=dps,
        n=model.n,
        s_star=s,
        J=J,
        ftilde=ftilde,
        Q=high.Q,
        P=P,
        W=high.W,
        V=high.V,
        eigenvalues=eigenvalues,
        constant=ref,
        digits=min(digits, dps),
        routes=methods,
        free=list(red.free),
        conservation=red.laws_as_text(),
        fixed_points=others,
        notes=notes,
        errors=errors,
        family_fields=family_fields(lam=vals.get("lam"), d=model.structure("d")),
    )
