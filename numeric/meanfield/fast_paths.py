"""Structure-aware mean-field solvers by family: the mean field's fast paths.

A model family whose ``info.fast_path`` names a fast path in the one table
(:mod:`mfstein.ground.fast_paths`: the built-in :data:`~mfstein.ground.fast_paths.FAST_PATHS`
and the families registered at run time with
:func:`mfstein.ground.fast_paths.register`) is solved by it in :func:`numeric.solve`
unless ``route="general"`` or a ``start`` is given (the general route of
:mod:`numeric.meanfield.general` runs otherwise).  Each route takes the problem
``numeric.solve`` prepared (:class:`numeric.prepared.problem.PreparedProblem`:
``problem.model``, its values ``problem.values``, read once):

``f(problem, *, dps, M) -> MeanFieldSolution`` (``mean_field``), optionally with
the family's own float64 fixed point ``g(problem) -> array | None``
(``fixed_point``: the family reads the values parsed once there,
``problem.values_now()`` at any precision), used by the float64 order 2 instead of
the general ODE search (``None`` for a member without a structured fixed point),
and its restriction ``r(problem, kept) -> Model | None`` (``restriction``: the
member of the family on the coordinates ``kept``, so that the truncated order 2 of
:mod:`numeric.meanfield.truncation` keeps the fast path and its compiled kernels).

:func:`register_fast_path` (``numeric.register_fast_path``) is the older form of
the registration, a deprecated wrapper onto :func:`mfstein.ground.fast_paths.register`;
it still takes the older route forms ``f(model, params, *, dps, M)``,
``g(model, params)`` and ``r(model, kept)`` (each wrapped, with a
:class:`DeprecationWarning`).  The exact task has the same table for its chains
(:mod:`numeric.exact.fast_paths`).  This module names no family and imports
nothing heavy.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from mfstein.ground.fast_paths import load, register, registered, takes_problem


def register_fast_path(
    name: str,
    solver: Callable[..., Any],
    *,
    fixed_point: Callable[..., Any] | None = None,
    restrict: Callable[..., Any] | None = None,
) -> None:
    """Deprecated: ``mfstein.ground.fast_paths.register(name, FastPath(mean_field=solver,
    fixed_point=fixed_point, restriction=...))``, which registers every task of a
    family at once.  Registers ``solver`` (and optionally the family's float64 fixed
    point and its restriction ``restrict(model, kept)``, the older form) for models
    whose ``info.fast_path`` is ``name``, keeping the other tasks of an earlier
    registration of ``name``."""
    warnings.warn(
        "numeric.register_fast_path is deprecated; use mfstein.ground.fast_paths.register("
        "name, FastPath(mean_field=f, fixed_point=g, restriction=r)), whose routes take "
        "the prepared problem.",
        DeprecationWarning,
        stacklevel=2,
    )
    routes: dict[str, Any] = {"mean_field": _solver_of_problem(solver)}
    if fixed_point is not None:
        routes["fixed_point"] = _of_problem(fixed_point)
    if restrict is not None:
        routes["restriction"] = lambda problem, kept: restrict(problem.model, kept)
    register(name, replace(registered(name), **routes))


def _name(model: Any) -> str:
    return getattr(getattr(model, "info", None), "fast_path", None) or ""


def fast_path(model: Any) -> Callable[..., Any] | None:
    """The mean-field solver of ``model``'s family (registered, else built in), or ``None``."""
    return load(_name(model), "mean_field")


def _solver_of_problem(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` as a solver of the prepared problem: itself when it takes the problem,
    else (the old form ``f(model, params, *, dps, M)``) a wrapper, with a warning."""
    if takes_problem(f, dps=None, M=None):
        return f
    warnings.warn(
        "a fast path f(model, params, *, dps, M) is deprecated; register f(problem, *, dps, M), "
        "which reads the prepared problem (problem.model, problem.values).",
        DeprecationWarning,
        stacklevel=3,
    )
    return lambda problem, *, dps, M: f(problem.model, dict(problem.params), dps=dps, M=M)


def _of_problem(g: Callable[..., Any]) -> Callable[..., Any]:
    """``g`` as a fixed point of the prepared problem: itself when it takes one
    argument, else (the old form ``g(model, params)``) a wrapper, with a warning."""
    if takes_problem(g):
        return g
    warnings.warn(
        "a fast fixed point g(model, params) is deprecated; register g(problem), which "
        "reads the prepared problem (problem.model, problem.values).",
        DeprecationWarning,
        stacklevel=3,
    )
    return lambda problem: g(problem.model, dict(problem.params))


def fast_fixed_point(problem: Any, params: Mapping[str, Any] | None = None) -> Any:
    """The fixed point of the prepared problem ``problem``
    (:class:`numeric.prepared.problem.PreparedProblem`) from its model's family's fast
    path as a float64 array, or ``None`` when the model has none.
    ``fast_fixed_point(model, params)`` (the old form) prepares the problem first
    and warns."""
    if params is not None:
        from numeric.prepared.problem import problem_of_older_call

        problem = problem_of_older_call("fast_fixed_point", problem, params)
    g = load(_name(problem.model), "fixed_point")
    return None if g is None else g(problem)


def family_restriction(problem: Any, kept: list[int]) -> Any:
    """The member of the family of the prepared problem's model on the coordinates
    ``kept`` (the others zero) from its family's restriction ``r(problem, kept)``, or
    ``None``."""
    r = load(_name(problem.model), "restriction")
    return None if r is None else r(problem, kept)
