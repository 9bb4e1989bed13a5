"""The float64 route's problem: the prepared problem every route starts from, read in float64.

Every float64 task (:func:`numeric.solve` with ``precision="float64"`` at order 1
and 2, :func:`numeric.sweep`'s float64 rows) starts from the problem every route
starts from (:func:`numeric.prepared.problem.prepare_problem`: the parameter values
read exactly at 30 digits, names and declared ranges checked, the start -- the
caller's, else the model's reference point, else the origin -- checked against the
state space, cached by its inputs, with the start and the kernels' parameter vector
in float64, :attr:`~numeric.prepared.problem.PreparedProblem.s64` and
:attr:`~numeric.prepared.problem.PreparedProblem.p64`).  What the float64 route adds
is kept with that problem (:meth:`~numeric.prepared.problem.PreparedProblem.derived`),
made once: the model's :class:`numeric.meanfield.structure.SparseSystem` at ``p64``
(:func:`system64`: its rate kernels, jump matrix, conservation laws and reduced
coordinates, made once per model; the start checked against the rates there) and the
observable's matrix in float64 (:func:`observable64`).  :func:`prepare` returns the
problem with both made, so a repeated call prepares nothing.

:func:`order1` solves a problem at order 1 for an observable ``M`` (the fixed point,
the kept block, the two Lyapunov equations, ``V`` and the digits:
:func:`numeric.meanfield.float64_point.solve_point64`) and keeps the answer with the
problem (:data:`POINTS` entries), so that order 2 asked after order 1 extends
that answer (:func:`numeric.meanfield.float64_route.order2_point64`) instead of
starting over.  :data:`COUNTS` counts the preparations and the fixed-point
searches of this process (the tests read it).

*Warm start.*  For a model that declares a unique fixed point in its state space
(``ModelInfo.unique_fixed_point``: its factory proves it for every allowed
parameter value), :func:`order1` starts the search at new parameters from the
nearest fixed point this process found for the same model and start (the
:data:`FOUND` latest, nearest in relative parameter distance), by Newton's steps
alone; the point must pass the same checks as any other
(:func:`numeric.meanfield.float64_point.accept`: relative drift residual, state
space, rates, kink, stability), else today's search from the start runs.  The
uniqueness is what makes this the same point: the route reports the fixed point
reached from the start, which for a model with several stable fixed points
depends on the basins, so without the declaration no warm start is taken
(``COUNTS["warm_start"]`` counts those taken).

The problem is immutable: its arrays are read-only, its mappings are read-only
views.  A warm call (a model seen before) runs no SymPy: everything symbolic is
made once per model (:func:`numeric.meanfield.structure.prepared_system`, the
model's reference start in :mod:`numeric.prepared.problem`, its parameter names).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from numeric.meanfield.float64_point import solve_point64
from numeric.meanfield.structure import prepared_system
from numeric.prepared import cache as prepared_cache
from numeric.prepared.cache import observable_key
from numeric.prepared.problem import PreparedProblem, prepare_problem
from numeric.rate_signs import check_values64

#: Order-1 answers kept in this process, by problem and observable (least recently
#: used dropped first).
POINTS = 8
#: Only answers whose kept block has at most this many coordinates are kept, and
#: fixed points of models of at most this many (their dense ``b x b`` arrays stay small).
KEEP_MAX_B = 256
#: Fixed points kept per model and start for warm starts (the latest).
FOUND = 16
#: Models and starts whose fixed points are kept for warm starts (least recently used
#: dropped first).
FOUND_KEYS = 64
#: ``"prepared:problem"``: problems built (:mod:`numeric.prepared.problem`);
#: ``"fixed_point"``: float64 fixed-point searches run
#: (:func:`numeric.meanfield.float64_point.fixed_point` and the order-2 search on a
#: restricted model); ``"warm_start"``: searches that ended by Newton's steps from a
#: fixed point found before (module docstring).  The one counter of
#: :mod:`numeric.prepared.cache`.
COUNTS = prepared_cache.COUNTS
#: Fixed points found, by model and start: (the model, the parameter vectors as rows,
#: the fixed points as rows), the latest :data:`FOUND` of each.
_FOUND: OrderedDict[Hashable, tuple[Any, np.ndarray, np.ndarray]] = OrderedDict()

_POINTS: OrderedDict[Hashable, tuple[PreparedProblem, Any]] = OrderedDict()


def observable_matrix64(M: Any, b: int) -> np.ndarray:
    """The observable's ``b x b`` matrix (:func:`numeric.quadratic_form.quadratic_form`)
    in float64."""
    if M is None or (isinstance(M, str) and M.strip().lower() == "identity"):
        return np.eye(b)
    from numeric.quadratic_form import quadratic_form

    Mb = quadratic_form(M)(b)
    return np.array([[float(Mb[i, j]) for j in range(b)] for i in range(b)])


def _frozen(a: np.ndarray) -> np.ndarray:
    """``a`` (an array made here, not shared) made read-only in place."""
    a.flags.writeable = False
    return a


def _observable_key(M: Any) -> Hashable | None:
    """The key of the observable ``M`` (:func:`numeric.prepared.cache.observable_key`,
    wrapped: the identity's key is not ``None``), ``None`` when it has none (nothing
    is kept)."""
    try:
        key = ("M", observable_key(M))
        hash(key)
    except TypeError:
        return None
    return key


def system64(problem: PreparedProblem) -> Any:
    """The model's :class:`numeric.meanfield.structure.SparseSystem` at the problem's
    float64 parameters (model-level parts made once per model,
    :func:`numeric.meanfield.structure.prepared_system`), kept with the problem; the
    start is first checked against the rates there (one sentence for a rate that is
    negative or not finite)."""

    def make() -> Any:
        model, s0, p64 = problem.model, problem.s64, problem.p64
        system = prepared_system(model, p64)
        check_values64(model, system.rates(s0), s0, p64, "the start")
        return system

    return problem.derived("system64", make)


def observable64(problem: PreparedProblem, M: Any) -> np.ndarray:
    """The observable's ``b x b`` matrix in float64 (:func:`observable_matrix64`,
    read-only), kept with the problem by the observable's key (for a model of at most
    :data:`KEEP_MAX_B` coordinates: a dense matrix stays small)."""
    key = _observable_key(M)
    if key is None or problem.model.n > KEEP_MAX_B:
        return _frozen(observable_matrix64(M, problem.model.n))
    return problem.derived(key, lambda: _frozen(observable_matrix64(M, problem.model.n)))


def prepare(
    model: Any,
    params: Mapping[str, Any] | None,
    start: Sequence[Any] | str | np.ndarray | None = None,
    M: Any = None,
) -> PreparedProblem:
    """The prepared problem of these inputs
    (:func:`numeric.prepared.problem.prepare_problem`, from the cache when prepared
    before) with its float64 system (:func:`system64`) and the observable's matrix
    (:func:`observable64`) made.

    Raises :class:`mfstein.ground.errors.ParameterError` in one sentence for a
    parameter name, value or start the model does not take, for a start at which a
    rate is negative or not finite, and for an observable it does not take.
    """
    problem = prepare_problem(model, params, start)
    system64(problem)
    observable64(problem, M)
    return problem


def order1(
    problem: PreparedProblem,
    M: Any = None,
    *,
    M64: np.ndarray | None = None,
    first: np.ndarray | None = None,
) -> Any:
    """The order-1 answer (:class:`numeric.meanfield.float64_point.Point64`) of
    ``problem`` for the observable ``M`` (``M64``: its float64 matrix when the caller
    has it, as a sweep reads it once for all its points; else :func:`observable64`):
    kept from an earlier call when there was one, else solved (the fixed point
    searched from ``first``, a neighbour's ``s*``, when given, else from the
    problem's start) and kept."""
    # a search from a neighbour's s* is neither looked up nor kept: no key
    obs = _observable_key(M) if first is None else None
    key = None if problem.key is None or obs is None else (problem.key, obs)
    hit = _POINTS.get(key) if key is not None else None
    if hit is not None:
        _POINTS.move_to_end(key)
        return hit[1]
    system = system64(problem)
    if M64 is None:
        M64 = observable64(problem, M)
    s0 = np.array(problem.s64)  # the route's arrays are its own, writable
    COUNTS["fixed_point"] += 1
    warm = _nearest_found(problem) if first is None else None
    pt = solve_point64(system, problem.model, s0, M64, M, first=first, warm=warm)
    if warm is not None and pt.from_neighbour:
        COUNTS["warm_start"] += 1
    _keep_found(problem, pt.s)
    if key is not None and first is None and len(pt.block.K) <= KEEP_MAX_B:
        _POINTS[key] = (problem, pt)  # the problem holds the model its key names
        while len(_POINTS) > POINTS:
            _POINTS.popitem(last=False)
    return pt


def _found_key(problem: PreparedProblem) -> Hashable | None:
    """The key of the fixed points a warm start of ``problem`` may read: its model
    and start (``None`` when the model declares no unique fixed point, or the
    problem has no key)."""
    if problem.key is None or not problem.model.info.unique_fixed_point:
        return None
    return problem.key[:2] + problem.key[3:4]  # id(model), model.key, start


def _nearest_found(problem: PreparedProblem) -> np.ndarray | None:
    """The fixed point found before for ``problem``'s model and start whose parameter
    vector is nearest to ``problem``'s (largest relative difference), or ``None``."""
    key = _found_key(problem)
    hit = _FOUND.get(key) if key is not None else None
    if hit is None:
        return None
    _, ps, ss = hit
    p = problem.p64
    if not p.size:  # no parameters: every point found is the same one
        return ss[-1].copy()
    distance = (np.abs(ps - p) / (np.abs(ps) + np.abs(p) + 1e-300)).max(axis=1)
    return ss[int(np.argmin(distance))].copy()


def _keep_found(problem: PreparedProblem, s: np.ndarray) -> None:
    """Keep the accepted fixed point ``s`` of ``problem`` for later warm starts."""
    key = _found_key(problem)
    if key is None or problem.model.n > KEEP_MAX_B:
        return
    entry = _FOUND.get(key)
    ps, ss = problem.p64[None, :], np.array(s, dtype=float)[None, :]
    if entry is not None:
        ps, ss = np.vstack((entry[1], ps))[-FOUND:], np.vstack((entry[2], ss))[-FOUND:]
    _FOUND[key] = (problem.model, ps, ss)  # the entry holds the model its key names
    _FOUND.move_to_end(key)
    while len(_FOUND) > FOUND_KEYS:
        _FOUND.popitem(last=False)


def forget() -> None:
    """Empty this process's caches of prepared problems (of every route), order-1
    answers and fixed points."""
    prepared_cache.forget_all()
    _POINTS.clear()
    _FOUND.clear()
