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
solved on the free coordinates and ``W``, ``V`` are mapped back exactly.  The
fixed point comes from :mod:`numeric.meanfield.fixed_point`; the linear algebra from
:mod:`numeric.linalg.refinement` (float64 solves refined by exact residuals).

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
from dataclasses import dataclass, fields, replace
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf

from mfstein.ground.errors import NumericalError, ParameterError
from numeric.invariants import model_reduction
from numeric.linalg.refinement import lyapunov_refined, solve_linear
from numeric.meanfield import fixed_point as fp
from numeric.meanfield.solution import MeanFieldSolution, family_fields
from numeric.params import check_names, kernel_vector
from numeric.precision import (
    agreeing_digits,
    check_dps,
    earn_digits,
    guard_ladder,
    row_major,
    to_str,
)
from numeric.prepared.cache import COUNTS, PreparedCache, inputs_key
from numeric.prepared.problem import prepare_problem

# the reading of a start moved to numeric.prepared.start; its names stay here for old imports
from numeric.prepared.start import SNAP_ULPS as SNAP_ULPS
from numeric.prepared.start import snap_into_space as snap_into_space
from numeric.prepared.start import start_point as start_point
from numeric.quadratic_form import quadratic_form
from numeric.rate_signs import check_rates

#: The dense Kronecker route runs for at most this many free coordinates.
KRONECKER_MAX_N = 8


def other_start_note(exc: Exception) -> str:
    """The note of a solution whose fixed point was reached from another start
    than the caller's, because the point reached from the caller's was refused."""
    return (
        f"from the start, {str(exc)[0].lower()}{str(exc)[1:].split(';')[0]}; the solution is "
        "the stable fixed point reached from another start in the state space (random "
        "starts, seed 0)."
    )


def _trace(A: mpmath.matrix, B: mpmath.matrix) -> mpf:
    n = A.rows
    return mpmath.fsum(A[i, j] * B[j, i] for i in range(n) for j in range(n) if A[i, j])


def _sparse_rows(T: list[list[mpf]]) -> list[list[tuple[int, mpf]]]:
    return [[(a, t) for a, t in enumerate(row) if t] for row in T]


def congruence(T: list[list[mpf]], X: mpmath.matrix) -> mpmath.matrix:
    """``T X T^T`` for the sparse ``b x n`` map ``T`` (free rows are unit vectors)."""
    rows = _sparse_rows(T)
    b = len(rows)
    out = mpmath.matrix(b, b)
    for i in range(b):
        for j in range(i + 1):
            v = mpmath.fsum(t * u * X[a, c] for a, t in rows[i] for c, u in rows[j])
            out[i, j] = out[j, i] = v
    return out


def _reduce_form(T: list[list[mpf]], M: mpmath.matrix, n: int) -> mpmath.matrix:
    """``T^T M T``: the quadratic form ``M`` on the free coordinates."""
    rows = _sparse_rows(T)
    b = len(rows)
    out = mpmath.matrix(n, n)
    for i in range(b):
        for j in range(b):
            m = M[i, j]
            if m:
                for a, t in rows[i]:
                    for c, u in rows[j]:
                        out[a, c] += t * m * u
    return out


@dataclass(frozen=True)
class Objects:
    """Every order-1 object at one working precision (:meth:`MeanFieldProblem.at`).

    ``s``, ``p``: the fixed point (all coordinates) and the kernels' parameters;
    ``Jr``, ``Qr``, ``Wr``, ``Mr``: ``J``, ``Q``, ``W`` and the observable on the free
    coordinates; ``Q``, ``W``, ``M``, ``V``: in all coordinates; ``covariance``:
    ``tr(M W)``.  With ``full``: ``Pr`` (Stein's ``P`` on the free coordinates) and
    ``stein = tr(P Q)``; with ``kronecker`` (at most :data:`KRONECKER_MAX_N` free
    coordinates): ``tr(P Q)`` with ``P`` from the dense Kronecker system."""

    s: list[mpf]
    p: list[mpf]
    Jr: mpmath.matrix
    Q: mpmath.matrix
    Qr: mpmath.matrix
    Wr: mpmath.matrix
    W: mpmath.matrix
    M: mpmath.matrix
    Mr: mpmath.matrix
    covariance: mpf
    V: list[mpf]
    Pr: mpmath.matrix | None = None
    stein: mpf | None = None
    kronecker: mpf | None = None

    def copied(self) -> Objects:
        """A copy whose matrices and lists are its own (their numbers are immutable)."""
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, mpmath.matrix):
                v = v.copy()
            elif isinstance(v, list):
                v = list(v)
            out[f.name] = v
        return Objects(**out)

    def merged(self, other: Objects) -> Objects:
        """These objects with the optional ones ``other`` has and these lack (the same
        problem at the same precision)."""
        extra = {k: getattr(other, k) for k in ("Pr", "stein", "kronecker")}
        return replace(
            self, **{k: v for k, v in extra.items() if getattr(self, k) is None and v is not None}
        )


def _route_values(low: Objects, high: Objects) -> dict[str, mpf]:
    """The values the reference ``stein`` (at the higher precision) is compared with."""
    values = {"covariance": low.covariance, "covariance-high": high.covariance}
    if low.kronecker is not None:
        values["kronecker"] = low.kronecker
    return values


class MeanFieldProblem:
    """One model prepared for the working-precision mean-field routes (this
    module's :func:`solve_general` and :func:`numeric.meanfield.stationary.second_order`;
    the exact chains and simulators read :class:`numeric.exact.prepared.PreparedModel`):
    its parameters checked, conservation laws removed (:mod:`numeric.invariants`),
    start checked against the state space, float64 fixed point found and its
    stability checked; :meth:`at` then computes every object at any precision."""

    def __init__(
        self,
        model: Any,
        params: Mapping[str, Any],
        start: Any,
        M: Any,
        *,
        extra_starts: bool = True,
        guess: np.ndarray | None = None,
    ) -> None:
        self.model = model
        self.params = dict(params)
        #: the objects of :meth:`at` by working precision: (full, kronecker, objects)
        self._done: dict[int, tuple[bool, bool, Objects]] = {}
        self.red = model_reduction(model)
        self.rm = fp.ReducedModel(model, self.red)
        #: the problem every route starts from (:mod:`numeric.prepared.problem`)
        self.problem = prepare_problem(model, params, start)
        s0, p30 = list(self.problem.s0), list(self.problem.p30)
        self.p64 = np.array(self.problem.p64)
        with mpmath.workdps(30):
            check_rates(model, s0, p30, "the start")
        self.start = start
        self.M_of = quadratic_form(M)
        self.M_of(model.n)  # validate now
        info = getattr(model, "info", None)
        if info is not None and info.unique_fixed_point:
            extra_starts = False
        self.q64 = np.array(
            [sum(float(c) * float(s0[j]) for j, c in enumerate(row)) for row in self.red.laws]
        )
        # the scale of J for the stability test where J vanishes (numeric.meanfield.acceptance)
        x0 = np.array([float(s0[j]) for j in self.rm.free])
        with np.errstate(all="ignore"):  # sqrt(y) at y = 0: an infinite entry says nothing
            J0 = np.abs(self.rm.jac64(x0, self.q64, self.p64))
        self.jscale = float(np.max(J0[np.isfinite(J0)], initial=0.0))
        continued = None if guess is None else self._continued(guess, p30)
        if continued is not None:
            COUNTS["continued:general"] += 1
            self.search = continued
            return
        self.search = fp.search(
            self.rm, np.array([float(v) for v in s0]), self.p64, extra_starts=extra_starts
        )
        # refuse a point that is not a stable fixed point in the state space before any
        # high-precision work, unless another start found one
        self.search.primary = self._accepted(p30)[self.rm.free]

    def _continued(self, guess: np.ndarray, p30: Sequence[Any]) -> fp.Float64Search | None:
        """The fixed point reached by Newton's steps alone from ``guess`` (a neighbouring
        parameter point's ``s*``, :func:`numeric.meanfield.fixed_point.continued`) when
        it passes :meth:`_check`, as the search's only point; ``None`` otherwise (the
        caller searches from the start)."""
        x = fp.continued(self.rm, guess, self.q64, self.p64)
        if x is None:
            return None
        s_star = self.rm.full64(x, self.q64)
        try:
            self._check(s_star, p30)
        except (ParameterError, NumericalError):
            return None
        return fp.Float64Search(primary=x, stable=[s_star], notes=[])

    def _check(self, s_star: np.ndarray, p30: Sequence[Any]) -> None:
        """The rates and the checks of :mod:`numeric.meanfield.acceptance` (drift
        residual, state space, kink, stability) at the float64 point ``s_star``."""

        def rates() -> None:
            with mpmath.workdps(30):
                check_rates(self.model, [mpf(float(v)) for v in s_star], p30, "the fixed point")

        fp.check_fixed_point64(self.rm, s_star, self.p64, self.q64, rates, self.jscale)

    def _accepted(self, p30: Sequence[Any]) -> np.ndarray:
        """The point reached from the start when it passes :meth:`_check`; else the
        first stable fixed point found from the other starts that passes it (with a
        note); else the start's refusal."""
        s_star = self.rm.full64(self.search.primary, self.q64)
        try:
            self._check(s_star, p30)
            return s_star
        except (ParameterError, NumericalError) as exc:
            for other in self.search.stable:
                try:
                    self._check(other, p30)
                except (ParameterError, NumericalError):
                    continue
                self.search.notes.append(other_start_note(exc))
                return np.asarray(other, dtype=float)
            raise

    def at(self, wp: int, *, full: bool, kronecker: bool) -> Objects:
        """Every object at ``wp`` significant digits (:meth:`_at`), kept per ``wp``
        for a model of at most :data:`KEEP_AT_MAX_B` coordinates: order 2 at the
        working precisions of order 1 reads order 1's objects instead of solving
        again.  The caller gets its own copies (a solution's matrices are its own)."""
        done = self._done.get(wp)
        want_kron = kronecker and self.red.n <= KRONECKER_MAX_N
        if done is not None and (done[0] or not full) and (done[1] or not want_kron):
            return done[2].copied()
        out = self._at(wp, full=full, kronecker=kronecker)
        COUNTS["objects:general"] += 1
        if self.model.n <= KEEP_AT_MAX_B:
            if done is not None:  # the same objects at the same wp: keep the union
                out = out.merged(done[2])
                full, want_kron = full or done[0], want_kron or done[1]
            self._done[wp] = (full, want_kron, out)
            return out.copied()
        return out

    def _at(self, wp: int, *, full: bool, kronecker: bool) -> Objects:
        """Every object at ``wp`` significant digits."""
        model, red, rm = self.model, self.red, self.rm
        out: dict[str, Any] = {}
        with mpmath.workdps(wp):
            p = kernel_vector(model, self.problem.values_now())
            q = red.values(self.problem.start_now())
            s = fp.newton(rm, self.search.primary, q, p, wp)
            F = list(red.free)
            Jr = rm.jac_mp(s, p)
            Q = rm.kmp.Q(s, p)
            Qr = mpmath.matrix([[Q[i, j] for j in F] for i in F])
            T = rm.Tmp
            M = self.M_of(model.n)
            Mr = _reduce_form(T, M, red.n)
            Wr = lyapunov_refined(Jr, Qr)
            W = congruence(T, Wr)
            out.update(s=s, p=p, Jr=Jr, Q=Q, Qr=Qr, Wr=Wr, W=W, M=M, Mr=Mr)
            out["covariance"] = _trace(Mr, Wr)
            h = [mpf(0)] * model.n
            hess = rm.kmp.hess_values(s, p)
            for (i, j, k), v in zip(rm.k64.hess_index.tolist(), hess, strict=True):
                if v:
                    h[i] += v * W[j, k] / 2
            Vr = solve_linear(Jr, [-h[i] for i in F])
            out["V"] = [mpmath.fsum(T[i][m] * Vr[m] for m in range(red.n)) for i in range(model.n)]
            if full:
                Pr = lyapunov_refined(Jr.T, Mr)
                out["Pr"] = Pr
                out["stein"] = _trace(Pr, Qr)
            if kronecker and red.n <= KRONECKER_MAX_N:
                from numeric.linalg.tridiagonal import solve_vectorised

                out["kronecker"] = _trace(solve_vectorised(Jr, Mr), Qr)
        return Objects(**out)


#: Working-precision problems kept in this process (least recently used dropped first).
PROBLEMS = 8
#: The objects of :meth:`MeanFieldProblem.at` are kept for models of at most this
#: many coordinates (dense mpmath matrices at several precisions).
KEEP_AT_MAX_B = 64
_PROBLEMS: PreparedCache[MeanFieldProblem] = PreparedCache("prepared:general", PROBLEMS)


def prepared_problem(
    model: Any, params: Mapping[str, Any] | None, start: Any, M: Any, *, extra_starts: bool = True
) -> MeanFieldProblem:
    """The :class:`MeanFieldProblem` of these inputs, from this process's cache when
    prepared before (:mod:`numeric.prepared.cache`): order 1, order 2 and
    the float64 order 2's general start (``extra_starts=False``) share it.  Inside a
    sweep's :func:`numeric.meanfield.fixed_point.continuing` its fixed point is first
    sought from the neighbour's (:meth:`MeanFieldProblem._continued`); that problem is
    kept apart from the one a single solve prepares (its key holds the guess)."""
    params = check_names(model, params)
    key = inputs_key(model, params, start, M)
    guess = fp.neighbour(model)  # a sweep's continuation (kept apart from single solves)
    if key is not None:
        key = (*key, extra_starts, None if guess is None else guess.tobytes())
    return _PROBLEMS.get(
        key,
        lambda: MeanFieldProblem(model, params, start, M, extra_starts=extra_starts, guess=guess),
        keep=model.n <= KEEP_AT_MAX_B,
    )


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
    params = check_names(model, params)
    prob = prepared_problem(model, params, start, M)

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
        lambda wp: prob.at(wp, full=False, kronecker=True),
        lambda wp: prob.at(wp, full=True, kronecker=False),
        agreement,
        who="the routes",
        where=f"model {model.name}",
    )
    low, high, digits, wp2 = earned.low, earned.high, earned.digits, earned.wp_high
    ref = high.stein
    values = _route_values(low, high)
    red = prob.red
    eig = fp.check_stable(prob.rm, high.s, prob.p64, prob.q64, prob.jscale)
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
        J = prob.rm.kmp.jac(s, high.p)
        ftilde = prob.rm.kmp.ftilde(s, high.p)
    others = [
        [float(v) for v in t]
        for t in prob.search.stable
        if np.max(np.abs(t - np.array([float(v) for v in s]))) > 1e-6
    ]
    notes = list(prob.search.notes)
    notes.append("eigenvalues of J(s*) are float64 values (about 15 significant digits).")
    if red.laws:
        notes.append(
            f"{len(red.laws)} conservation law(s) removed: solved on coordinates "
            f"{', '.join(str(model.states[j]) for j in red.free)}; W and V are exact images in "
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
        vals = prob.problem.values_now()
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
