"""The prepared problem of the float64 route: built once from (model, params, start, M).

Every float64 task (:func:`numeric.solve` with ``precision="float64"`` at order 1
and 2, :func:`numeric.sweep`'s float64 rows) starts from the same inputs and the
same preparation: the problem every route starts from
(:func:`numeric.prepared.problem.prepare_problem`: the parameter values read
exactly at 30 digits, names and declared ranges checked, the start -- the
caller's, else the model's reference point, else the origin -- checked against
the state space) in float64, the start checked against the rates, the
observable's matrix in float64, and the model's
:class:`numeric.meanfield.structure.SparseSystem` at those parameters (its rate
kernels, jump matrix, conservation laws and reduced coordinates, made once per
model).  :func:`prepare` returns them as one immutable :class:`Problem64`, cached
by its inputs in this process (:data:`PROBLEMS` entries, least recently used
first out, of at most :data:`KEEP_MAX_B` coordinates), so a repeated call prepares
nothing.

:func:`order1` solves a problem at order 1 (the fixed point, the kept block, the
two Lyapunov equations, ``V`` and the digits:
:func:`numeric.meanfield.float64_point.solve_point64`) and keeps the answer with
the problem (:data:`POINTS` entries), so that order 2 asked after order 1 extends
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
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import mpmath
import numpy as np
from mpmath import mpf

from numeric.params import kernel_vector, parse_params
from numeric.prepared import cache as prepared_cache
from numeric.prepared.cache import PreparedCache, inputs_key
from numeric.prepared.problem import prepare_problem, read_only64

#: Problems kept in this process (least recently used dropped first).
PROBLEMS = 64
#: Order-1 answers kept in this process, by problem (least recently used dropped first).
POINTS = 8
#: Only problems of at most this many coordinates, and answers whose kept block has at
#: most this many, are kept (their dense ``b x b`` arrays stay small).
KEEP_MAX_B = 256
#: Fixed points kept per model and start for warm starts (the latest).
FOUND = 16
#: ``"prepared"``: problems built (cache misses); ``"fixed_point"``: float64
#: fixed-point searches run (:func:`numeric.meanfield.float64_point.fixed_point` and
#: the order-2 search on a restricted model); ``"warm_start"``: searches that
#: ended by Newton's steps from a fixed point found before (module docstring).
#: The one counter of :mod:`numeric.prepared.cache`.
COUNTS = prepared_cache.COUNTS
#: Fixed points found, by model and start: (the model, the parameter vectors as rows,
#: the fixed points as rows), the latest :data:`FOUND` of each.
_FOUND: OrderedDict[Hashable, tuple[Any, np.ndarray, np.ndarray]] = OrderedDict()

_PROBLEMS: PreparedCache[Problem64] = PreparedCache("prepared", PROBLEMS)
_POINTS: OrderedDict[Hashable, tuple[Problem64, Any]] = OrderedDict()


def float64_inputs(
    model: Any, params: Mapping[str, Any], start: Sequence[Any] | str | np.ndarray | None
) -> tuple[dict[str, mpf], np.ndarray, np.ndarray]:
    """The parsed parameter values (30 digits), the start ``s0`` and the kernels'
    parameter vector, both in float64 and read-only: those of the problem every route
    starts from (:func:`numeric.prepared.problem.prepare_problem`, shared with it), or
    for a start already read in float64 (a sweep's), a copy of that start."""
    if isinstance(start, np.ndarray):
        with mpmath.workdps(30):
            values = parse_params(model, params)
            p64 = [float(v) for v in kernel_vector(model, values)]
        return values, read_only64(start), read_only64(p64)
    problem = prepare_problem(model, params, start)
    return dict(problem.values), problem.s64, problem.p64


def observable_matrix64(M: Any, b: int) -> np.ndarray:
    """The observable's ``b x b`` matrix (:func:`numeric.quadratic_form.quadratic_form`)
    in float64."""
    from numeric.quadratic_form import quadratic_form

    if M is None or (isinstance(M, str) and M.strip().lower() == "identity"):
        return np.eye(b)
    Mb = quadratic_form(M)(b)
    return np.array([[float(Mb[i, j]) for j in range(b)] for i in range(b)])


@dataclass(frozen=True)
class Problem64:
    """What the float64 route reads at one parameter point, prepared once."""

    #: The finite :class:`derive.model.Model`.
    model: Any
    #: Parameter name -> value as given (read-only).
    params: Mapping[str, Any]
    #: The caller's start
    #: (``None``: the model's reference point) and quadratic observable (``None``: the
    #: identity), as given.
    start: Any
    #: See :attr:`start`.
    M: Any
    #: Parameter name -> value parsed exactly at 30 digits (read-only).
    values: Mapping[str, Any]
    #: The kernels' parameter vector in float64.
    p64: np.ndarray
    #: The start in float64, checked against the state space and the rates.
    s0: np.ndarray
    #: The model's :class:`numeric.meanfield.structure.SparseSystem` at
    #: ``p64``: rate kernels, jump matrix ``L``, the conservation laws and the map
    #: ``T`` from the reduced (free) coordinates.
    system: Any
    #: The observable's ``b x b`` matrix in float64.
    M64: np.ndarray
    #: The inputs' key (``None`` when an input is not
    #: hashable: not cached).
    key: Hashable | None

    @property
    def reduction(self) -> Any:
        """The conservation laws and the free coordinates
        (:class:`numeric.invariants.Reduction`)."""
        return self.system.red


def _frozen(a: np.ndarray) -> np.ndarray:
    """``a`` (an array made here, not shared) made read-only in place."""
    a.flags.writeable = False
    return a


def prepare(
    model: Any,
    params: Mapping[str, Any] | None,
    start: Sequence[Any] | str | np.ndarray | None = None,
    M: Any = None,
    *,
    M64: np.ndarray | None = None,
) -> Problem64:
    """The :class:`Problem64` of these inputs (from the cache when prepared before).

    ``M64``: the observable's float64 matrix when the caller has it (a sweep reads
    it once for all its points).  Raises :class:`mfstein.ground.errors.ParameterError` in
    one sentence for a parameter name, value or start the model does not take, and
    for a start at which a rate is negative or not finite.
    """
    from numeric.meanfield.structure import prepared_system
    from numeric.params import check_names
    from numeric.rate_signs import check_values64

    given = check_names(model, params)
    key = inputs_key(model, given, start, M)

    def build() -> Problem64:
        values, s0, p64 = float64_inputs(model, given, start)
        system = prepared_system(model, p64)
        check_values64(model, system.rates(s0), s0, p64, "the start")
        return Problem64(
            model=model,
            params=MappingProxyType(dict(given)),
            start=start,
            M=M,
            values=MappingProxyType(values),
            p64=p64,  # read-only (float64_inputs)
            s0=s0,
            system=system,
            M64=_frozen(observable_matrix64(M, model.n)) if M64 is None else read_only64(M64),
            key=key,
        )

    return _PROBLEMS.get(key, build, keep=model.n <= KEEP_MAX_B)


def order1(problem: Problem64, first: np.ndarray | None = None) -> Any:
    """The order-1 answer (:class:`numeric.meanfield.float64_point.Point64`) of
    ``problem``: kept from an earlier call when there was one, else solved (the
    fixed point searched from ``first``, a neighbour's ``s*``, when given, else
    from the problem's start) and kept."""
    from numeric.meanfield.float64_point import solve_point64

    key = problem.key
    hit = _POINTS.get(key) if key is not None and first is None else None
    if hit is not None:
        _POINTS.move_to_end(key)
        return hit[1]
    s0 = np.array(problem.s0)  # the route's arrays are its own, writable
    COUNTS["fixed_point"] += 1
    warm = _nearest_found(problem) if first is None else None
    pt = solve_point64(
        problem.system, problem.model, s0, problem.M64, problem.M, first=first, warm=warm
    )
    if warm is not None and pt.from_neighbour:
        COUNTS["warm_start"] += 1
    _keep_found(problem, pt.s)
    if key is not None and first is None and len(pt.block.K) <= KEEP_MAX_B:
        _POINTS[key] = (problem, pt)  # the problem holds the model its key names
        while len(_POINTS) > POINTS:
            _POINTS.popitem(last=False)
    return pt


def _found_key(problem: Problem64) -> Hashable | None:
    """The key of the fixed points a warm start of ``problem`` may read: its model
    and start (``None`` when the model declares no unique fixed point, or the
    problem has no key)."""
    if problem.key is None or not problem.model.info.unique_fixed_point:
        return None
    return problem.key[:2] + problem.key[3:4]  # id(model), model.key, start


def _nearest_found(problem: Problem64) -> np.ndarray | None:
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


def _keep_found(problem: Problem64, s: np.ndarray) -> None:
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
    while len(_FOUND) > PROBLEMS:
        _FOUND.popitem(last=False)


def forget() -> None:
    """Empty this process's caches of prepared problems (of every route), order-1
    answers and fixed points."""
    prepared_cache.forget_all()
    _POINTS.clear()
    _FOUND.clear()
