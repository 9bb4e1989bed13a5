"""The working-precision route's own state at one prepared problem, made once.

The model-level work -- parameters, start, conservation laws, the reduced model,
``q = C s0`` and the stability scale -- is the prepared problem's
(:class:`numeric.prepared.problem.PreparedProblem`).  What the route adds is here:
the float64 fixed point it accepted (the global search of
:func:`numeric.meanfield.fixed_point.search`, or inside a sweep Newton's steps from
the neighbour's point, :func:`numeric.meanfield.fixed_point.continued`; checked by
:mod:`numeric.meanfield.acceptance`) and the observable ``M``.  :func:`working_route`
returns it as one frozen :class:`WorkingRoute`, cached by its inputs
(``COUNTS["prepared:general"]``); its :meth:`WorkingRoute.at` keeps the objects of
each working precision (:mod:`numeric.meanfield.working_objects`), so order 2 after
order 1 (:func:`numeric.meanfield.stationary.second_order`) reads the same record
and order 1's objects: no second search, no second setup.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf

from mfstein.ground.errors import NumericalError, ParameterError
from numeric.meanfield import fixed_point as fp
from numeric.meanfield.working_objects import KRONECKER_MAX_N, Objects, objects_at
from numeric.prepared.cache import COUNTS, PreparedCache, inputs_key
from numeric.prepared.problem import PreparedProblem, prepare_problem, read_only64
from numeric.quadratic_form import quadratic_form
from numeric.rate_signs import check_rates

#: Route records kept in this process (least recently used dropped first).
PROBLEMS = 8
#: The objects of :meth:`WorkingRoute.at` are kept for models of at most this many
#: coordinates (dense mpmath matrices at several precisions).
KEEP_AT_MAX_B = 64


def other_start_note(exc: Exception) -> str:
    """The note of a solution whose fixed point was reached from another start
    than the caller's, because the point reached from the caller's was refused."""
    return (
        f"from the start, {str(exc)[0].lower()}{str(exc)[1:].split(';')[0]}; the solution is "
        "the stable fixed point reached from another start in the state space (random "
        "starts, seed 0)."
    )


@dataclass(frozen=True)
class WorkingRoute:
    """The working-precision route at one prepared problem (module docstring)."""

    #: The prepared problem (model, values, start, reduction, reduced model, ``q64``).
    problem: PreparedProblem
    #: The quadratic observable (:func:`numeric.quadratic_form.quadratic_form`).
    M_of: Callable[[int], mpmath.matrix]
    #: The accepted float64 fixed point on the free coordinates (read-only).
    primary: np.ndarray
    #: Every distinct stable fixed point the search found (all coordinates).
    stable: tuple[np.ndarray, ...]
    #: What the search says about the point (another start, several points).
    notes: tuple[str, ...]
    #: The objects of :meth:`at` by working precision, as ``(full, kronecker, objects)``.
    _done: dict[int, tuple[bool, bool, Objects]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @property
    def model(self) -> Any:
        return self.problem.model

    @property
    def red(self) -> Any:
        """The conservation laws and free coordinates (the problem's)."""
        return self.problem.reduction

    @property
    def rm(self) -> Any:
        """The reduced model (the problem's, one per model)."""
        return self.problem.reduced

    def at(self, wp: int, *, full: bool, kronecker: bool) -> Objects:
        """Every object at ``wp`` significant digits
        (:func:`numeric.meanfield.working_objects.objects_at`), kept per ``wp`` for a
        model of at most :data:`KEEP_AT_MAX_B` coordinates: order 2 at the working
        precisions of order 1 reads order 1's objects instead of solving again.  The
        caller gets its own copies (a solution's matrices are its own)."""
        done = self._done.get(wp)
        want_kron = kronecker and self.red.n <= KRONECKER_MAX_N
        if done is not None and (done[0] or not full) and (done[1] or not want_kron):
            return done[2].copied()
        out = objects_at(self, wp, full=full, kronecker=kronecker)
        COUNTS["objects:general"] += 1
        if self.model.n <= KEEP_AT_MAX_B:
            if done is not None:  # the same objects at the same wp: keep the union
                out = out.merged(done[2])
                full, want_kron = full or done[0], want_kron or done[1]
            self._done[wp] = (full, want_kron, out)
            return out.copied()
        return out


def _check(problem: PreparedProblem, s_star: np.ndarray) -> None:
    """The rates and the checks of :mod:`numeric.meanfield.acceptance` (drift
    residual, state space, kink, stability) at the float64 point ``s_star``."""
    p30 = list(problem.p30)

    def rates() -> None:
        with mpmath.workdps(30):
            check_rates(problem.model, [mpf(float(v)) for v in s_star], p30, "the fixed point")

    fp.check_fixed_point64(problem.reduced, s_star, problem.p64, problem.q64, rates, problem.jscale)


def _continued(problem: PreparedProblem, guess: np.ndarray) -> fp.Float64Search | None:
    """The fixed point reached by Newton's steps alone from ``guess`` (a neighbouring
    parameter point's ``s*``, :func:`numeric.meanfield.fixed_point.continued`) when
    it passes :func:`_check`, as the search's only point; ``None`` otherwise (the
    caller searches from the start)."""
    rm = problem.reduced
    x = fp.continued(rm, guess, problem.q64, problem.p64)
    if x is None:
        return None
    s_star = rm.full64(x, problem.q64)
    try:
        _check(problem, s_star)
    except (ParameterError, NumericalError):
        return None
    return fp.Float64Search(primary=x, stable=[s_star], notes=[])


def _accepted(problem: PreparedProblem, search: fp.Float64Search) -> fp.Float64Search:
    """The search with its point: the one reached from the start when it passes
    :func:`_check`; else the first stable fixed point found from the other starts that
    passes it (with a note); else the start's refusal is raised."""
    rm = problem.reduced
    s_star = rm.full64(search.primary, problem.q64)
    try:
        _check(problem, s_star)
        return fp.Float64Search(s_star[rm.free], search.stable, search.notes)
    except (ParameterError, NumericalError) as exc:
        for other in search.stable:
            try:
                _check(problem, other)
            except (ParameterError, NumericalError):
                continue
            notes = [*search.notes, other_start_note(exc)]
            return fp.Float64Search(np.asarray(other, dtype=float)[rm.free], search.stable, notes)
        raise


def make_route(
    problem: PreparedProblem,
    M: Any,
    *,
    extra_starts: bool = True,
    guess: np.ndarray | None = None,
) -> WorkingRoute:
    """The :class:`WorkingRoute` of ``problem``: the start's rates checked, the
    observable ``M`` checked, then the float64 fixed point -- continued from ``guess``
    when that passes the checks (``COUNTS["continued:general"]``), else searched from
    the start (and, unless ``extra_starts`` is false or the model declares a unique
    fixed point, from random starts) and accepted.  A point that is not a stable fixed
    point in the state space is refused here, before any high-precision work."""
    model = problem.model
    problem.check_start_rates()
    M_of = quadratic_form(M)
    M_of(model.n)  # validate now
    info = getattr(model, "info", None)
    if info is not None and info.unique_fixed_point:
        extra_starts = False
    search = None if guess is None else _continued(problem, guess)
    if search is not None:
        COUNTS["continued:general"] += 1
    else:
        s0 = np.array([float(v) for v in problem.s0])
        found = fp.search(problem.reduced, s0, problem.p64, extra_starts=extra_starts)
        search = _accepted(problem, found)
    return WorkingRoute(
        problem=problem,
        M_of=M_of,
        primary=read_only64(search.primary),
        stable=tuple(search.stable),
        notes=tuple(search.notes),
    )


_ROUTES: PreparedCache[WorkingRoute] = PreparedCache("prepared:general", PROBLEMS)


def working_route(
    model: Any, params: Mapping[str, Any] | None, start: Any, M: Any, *, extra_starts: bool = True
) -> WorkingRoute:
    """The :class:`WorkingRoute` of these inputs, from this process's cache when made
    before (:mod:`numeric.prepared.cache`): order 1, order 2 and the float64 order 2's
    general start (``extra_starts=False``) share it.  Inside a sweep's
    :func:`numeric.meanfield.fixed_point.continuing` its fixed point is first sought
    from the neighbour's; that record is kept apart from the one a single solve makes
    (its key holds the guess)."""
    problem = prepare_problem(model, params, start)  # names checked, values read once
    return route_of(problem, M, extra_starts=extra_starts)


def route_of(problem: PreparedProblem, M: Any, *, extra_starts: bool = True) -> WorkingRoute:
    """:func:`working_route` of a prepared problem (its inputs not read again)."""
    model = problem.model
    key = inputs_key(model, problem.params, problem.start, M)
    guess = fp.neighbour(model)  # a sweep's continuation (kept apart from single solves)
    if key is not None:
        key = (*key, extra_starts, None if guess is None else guess.tobytes())

    def build() -> WorkingRoute:
        return make_route(problem, M, extra_starts=extra_starts, guess=guess)

    return _ROUTES.get(key, build, keep=model.n <= KEEP_AT_MAX_B)
