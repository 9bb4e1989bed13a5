"""The points of a sweep (:mod:`numeric.meanfield.sweep`), one after another.

:class:`Float64Points` prepares the model once and runs the float64 route's work
at each point (:func:`numeric.meanfield.float64_point.solve_point64`), its fixed
point continued from the previous ones; :class:`WorkingPrecisionPoints` runs
:func:`numeric.solve` at ``dps`` digits.  Both give one
:class:`numeric.meanfield.sweep_result.SweepPoint` per point, or the point's
refusal in one sentence.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from mfstein.ground.errors import NumericalError, ParameterError
from numeric.meanfield.acceptance import max_abs
from numeric.meanfield.sweep_result import SweepPoint

#: An order-2 float64 sweep of at least this many points uses the compiled
#: third-moment kernel (:func:`numeric.meanfield.stationary.second_order_float64_at`).
COMPILE_MIN_POINTS = 200


def _texts(params: Mapping[str, Any]) -> dict[str, str]:
    """The parameter values of a row as text."""
    return {k: str(v) for k, v in params.items()}


def predict(history: list[tuple[np.ndarray, np.ndarray]], p64: np.ndarray) -> np.ndarray | None:
    """The start of the next fixed-point search at the parameter vector ``p64``, from
    ``history`` (the last points' parameter vectors and ``s*``): the last ``s*`` moved
    along the secant of the last two (when the parameters move on in the same
    direction), the last ``s*`` otherwise; ``None`` without history."""
    if not history:
        return None
    p1, s1 = history[-1]
    if len(history) < 2:
        return s1
    p0, s0 = history[-2]
    t = _along(p0, p1, p64)
    if t is None:
        return s1  # not on the line of the last two points: no extrapolation
    return s1 + t * (s1 - s0)


def _along(p0: np.ndarray, p1: np.ndarray, p64: np.ndarray) -> float | None:
    """``t`` with ``p64 = p1 + t (p1 - p0)`` when ``0 < t <= 2`` and ``p64`` lies on
    that line (up to ``1e-9`` of its largest entry), else ``None``.  A model of one
    parameter computes on Python floats: a dot product of one entry is one rounded
    product, so these are the same numbers as NumPy's, without its per-call cost."""
    if p64.shape == (1,) and p0.shape == (1,) and p1.shape == (1,):
        (a,), (b,), (c,) = p0.tolist(), p1.tolist(), p64.tolist()
        d, ahead = b - a, c - b
        dd = d * d
        t = ahead * d / dd if dd > 0 else 0.0
        off, top = abs(ahead - t * d), abs(c)
    else:
        d = p1 - p0
        dd = float(d @ d)
        ahead = p64 - p1
        t = float(ahead @ d) / dd if dd > 0 else 0.0
        off, top = max_abs(ahead - t * d), max_abs(p64)
    return None if not 0.0 < t <= 2.0 or off > 1e-9 * top else t


class Float64Points:
    """The float64 route over a sequence of points of one model."""

    def __init__(self, model: Any, options: Any) -> None:
        from numeric.meanfield.entry import parse_observables
        from numeric.meanfield.problem import observable_matrix64, order1
        from numeric.prepared.problem import prepare_problem

        # the functions every point calls, looked up once (no import statement per point)
        self._prepare, self._order1 = prepare_problem, order1
        self.model = model
        self.options = options
        self.M64 = observable_matrix64(options.M, model.n)
        self.wanted = parse_observables(model, list(options.observables))
        self.history: list[tuple[np.ndarray, np.ndarray]] = []
        # many points at order 2: the compiled third-moment kernel (one compile, cached)
        self.compiled = options.order == 2 and options.points >= COMPILE_MIN_POINTS

    def predict(self, p64: np.ndarray) -> np.ndarray | None:
        """The start of the next fixed-point search (:func:`predict`)."""
        return predict(self.history, p64)

    def row(self, params: Mapping[str, Any]) -> SweepPoint:
        """The row of one point; its refusal (one sentence) when the point has no answer."""
        try:
            return self._solve(params)
        except (ParameterError, NumericalError) as exc:
            self.history.clear()
            return SweepPoint.refused(_texts(params), str(exc))

    def _solve(self, params: Mapping[str, Any]) -> SweepPoint:
        opts = self.options
        problem = self._prepare(self.model, params, opts.start)
        p64 = problem.p64
        pt = self._order1(problem, opts.M, M64=self.M64, first=self.predict(p64))
        self.history = [*self.history[-1:], (p64, pt.s)]
        o2 = None
        if opts.order == 2:
            from numeric.meanfield.float64_route import order2_point64

            o2 = order2_point64(problem, pt, compiled=self.compiled)
        observables = {}
        if self.wanted:
            from numeric.meanfield.float64_route import record_float64
            from numeric.meanfield.observables import expand

            sol = record_float64(problem, pt, o2, opts.M)  # carries the model and the inputs
            observables = {g.name: expand(sol, self.model, g, params) for g in self.wanted}
        return SweepPoint(
            params=_texts(params),
            c=pt.c_w,
            digits=pt.digits,
            s_star=tuple(pt.s.tolist()),
            V=tuple(pt.V.tolist()),
            # one error for all entries: the relative error times the largest entry
            errors={"s_star": pt.error * max_abs(pt.s), "V": pt.error * max_abs(pt.V)},
            c2=None if o2 is None else o2.c2,
            digits2=None if o2 is None else o2.digits2,
            observables=observables,
            notes=tuple(pt.notes),
        )


class WorkingPrecisionPoints:
    """:func:`numeric.solve` at ``dps`` digits over a sequence of points of one model,
    each fixed point continued from the previous ones: the general route's search
    starts by Newton's steps from their secant prediction (:func:`predict`,
    :func:`numeric.meanfield.fixed_point.continuing`), kept only when it passes the
    search's checks.  A point refused, or one where other stable fixed points were
    found, is not continued from: the next point is searched as a single solve does."""

    def __init__(self, model: Any, options: Any) -> None:
        self.model = model
        self.options = options
        self.history: list[tuple[np.ndarray, np.ndarray]] = []

    def row(self, params: Mapping[str, Any]) -> SweepPoint:
        """The row of one point; its refusal (one sentence) when the point has no answer."""
        from numeric.meanfield.entry import solve
        from numeric.meanfield.fixed_point import continuing

        opts = self.options
        p64 = self._parameters(params)
        guess = None if p64 is None else predict(self.history, p64)
        try:
            with continuing(self.model, guess):
                sol = solve(
                    self.model,
                    dict(params),
                    dps=opts.dps,
                    order=opts.order,
                    M=opts.M,
                    start=opts.start,
                    observables=list(opts.observables),
                )
        except (ParameterError, NumericalError) as exc:
            self.history.clear()
            return SweepPoint.refused(_texts(params), str(exc))
        if p64 is None or sol.fixed_points:  # several stable fixed points: search again
            self.history.clear()
        else:
            s = np.array([float(v) for v in sol.s_star])
            self.history = [*self.history[-1:], (p64, s)]
        return SweepPoint.of_solution(_texts(params), sol)

    def _parameters(self, params: Mapping[str, Any]) -> np.ndarray | None:
        """The point's parameter values in float64 (the secant's coordinates), from the
        parameter level the point's solve reads too
        (:func:`numeric.prepared.parameters.prepare_params`: 30 digits); ``None`` for a
        model the general route's continuation does not serve."""
        from numeric.heterogeneous.entry import is_heterogeneous
        from numeric.prepared.parameters import prepare_params

        if is_heterogeneous(self.model) or not hasattr(self.model, "n"):
            return None
        values = prepare_params(self.model, dict(params)).values
        return np.array([float(values[k]) for k in sorted(values)])
