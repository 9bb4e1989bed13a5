"""Structure-aware mean-field solvers by family: the registry of fast paths.

A model family whose ``info.fast_path`` names a registered solver is solved by
it in :func:`numeric.solve` unless ``route="general"`` or a ``start`` is given
(the general route of :mod:`numeric.meanfield.general` runs otherwise).  A fast path is

``f(problem, *, dps, M) -> MeanFieldSolution``

of the problem ``numeric.solve`` prepared
(:class:`numeric.prepared.problem.PreparedProblem`: ``problem.model``, its values
``problem.values``, read once), optionally with the family's own float64 fixed point
``g(problem) -> array | None`` of the prepared problem
(:class:`numeric.prepared.problem.PreparedProblem`: the family reads the values
parsed once there, ``problem.values_now()`` at any precision, instead of parsing
the parameters again), used by the float64 order 2 instead of the general ODE
search; ``None`` for a member without a structured fixed point.  A fixed point
registered in the old form ``g(model, params)`` still works (it is called with
the problem's model and parameters, with a :class:`DeprecationWarning` when it
is registered); so does a solver registered in the old form
``f(model, params, *, dps, M)``.  The exact task has the same registry for its chains
(:mod:`numeric.exact.fast_paths`).

The built-in ones are the ``mean_field``, ``fixed_point`` and ``restriction``
routes of the one table :data:`mfstein.ground.fast_paths.FAST_PATHS`, imported on the
first lookup of their name; a user's family registers here with
:func:`register_fast_path`, which is consulted first.  This module names no
family and imports nothing heavy.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from mfstein.ground.fast_paths import load

#: Structure-aware solvers by name: ``f(problem, *, dps, M) -> MeanFieldSolution``.
FAST_PATHS: dict[str, Callable[..., Any]] = {}

#: Optional float64 fixed points of the fast paths: ``g(problem) -> array | None``.
FAST_FIXED_POINTS: dict[str, Callable[..., Any]] = {}

#: Optional restrictions of the fast paths: ``r(model, kept) -> Model | None``, the
#: family member on the coordinates ``kept`` (the others set to zero), or ``None``.
FAST_RESTRICTIONS: dict[str, Callable[..., Any]] = {}


def register_fast_path(
    name: str,
    solver: Callable[..., Any],
    *,
    fixed_point: Callable[..., Any] | None = None,
    restrict: Callable[..., Any] | None = None,
) -> None:
    """Register ``solver`` for models whose ``info.fast_path`` is ``name``, and
    optionally the family's own float64 fixed point and its restriction to a
    subset of the coordinates (a member of the family, so that the truncated
    order 2 of :mod:`numeric.meanfield.truncation` keeps the fast path and its
    compiled kernels)."""
    FAST_PATHS[name] = _solver_of_problem(solver)
    if fixed_point is not None:
        FAST_FIXED_POINTS[name] = _of_problem(fixed_point)
    if restrict is not None:
        FAST_RESTRICTIONS[name] = restrict


def _name(model: Any) -> str:
    return getattr(getattr(model, "info", None), "fast_path", None) or ""


def _found(registered: Mapping[str, Callable[..., Any]], model: Any, task: str) -> Any:
    """The run-time registration of ``model``'s family for ``task``, else the table's."""
    name = _name(model)
    return registered[name] if name in registered else load(name, task)


def fast_path(model: Any) -> Callable[..., Any] | None:
    """The solver of ``model``'s family (registered, else built in), or ``None``."""
    return _found(FAST_PATHS, model, "mean_field")


def _takes_problem(f: Callable[..., Any], **keywords: Any) -> bool:
    """Whether ``f`` takes the prepared problem alone (with ``keywords``); a callable
    without a signature to read is taken as written for the protocol."""
    try:
        inspect.signature(f).bind(None, **keywords)
    except TypeError:
        return False
    except ValueError:
        return True
    return True


def _solver_of_problem(f: Callable[..., Any]) -> Callable[..., Any]:
    """``f`` as a solver of the prepared problem: itself when it takes the problem,
    else (the old form ``f(model, params, *, dps, M)``) a wrapper, with a warning."""
    if _takes_problem(f, dps=None, M=None):
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
    if _takes_problem(g):
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
        from numeric.prepared.problem import prepare_problem

        warnings.warn(
            "fast_fixed_point(model, params) is deprecated; pass the prepared problem.",
            DeprecationWarning,
            stacklevel=2,
        )
        problem = prepare_problem(problem, params)
    g = _found(FAST_FIXED_POINTS, problem.model, "fixed_point")
    return None if g is None else g(problem)


def family_restriction(model: Any, kept: list[int]) -> Any:
    """The member of ``model``'s family on the coordinates ``kept`` (the others zero)
    from its family's restriction, or ``None``."""
    r = _found(FAST_RESTRICTIONS, model, "restriction")
    return None if r is None else r(model, kept)
