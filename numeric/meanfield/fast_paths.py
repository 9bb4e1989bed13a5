"""Structure-aware mean-field solvers by family: the registry of fast paths.

A model family whose ``info.fast_path`` names a registered solver is solved by
it in :func:`numeric.solve` unless ``route="general"`` or a ``start`` is given
(the general route of :mod:`numeric.meanfield.general` runs otherwise).  A fast path is

``f(model, params, *, dps, M) -> MeanFieldSolution``

optionally with the family's own float64 fixed point
``g(model, params) -> array | None`` (used by the float64 order 2 instead of
the general ODE search; ``None`` for a member without a structured fixed
point).  The exact task has the same registry for its chains
(:mod:`numeric.exact.fast_paths`).

The supermarket family (and JSQ(L)) is registered here; its solvers live in
:mod:`numeric.supermarket.solver` and are imported only when first called, so this
module imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

#: Structure-aware solvers by name: ``f(model, params, dps=, M=) -> MeanFieldSolution``.
FAST_PATHS: dict[str, Callable[..., Any]] = {}

#: Optional float64 fixed points of the fast paths: ``g(model, params) -> array | None``.
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
    FAST_PATHS[name] = solver
    if fixed_point is not None:
        FAST_FIXED_POINTS[name] = fixed_point
    if restrict is not None:
        FAST_RESTRICTIONS[name] = restrict


def fast_path(model: Any) -> Callable[..., Any] | None:
    """The registered solver of ``model``'s family, or ``None``."""
    return FAST_PATHS.get(model.info.fast_path or "")


def fast_fixed_point(model: Any, params: Mapping[str, Any]) -> Any:
    """The fixed point of ``model`` from its registered fast path as a float64
    array, or ``None`` when the model has none."""
    g = FAST_FIXED_POINTS.get(model.info.fast_path or "")
    return None if g is None else g(model, params)


def family_restriction(model: Any, kept: list[int]) -> Any:
    """The member of ``model``'s family on the coordinates ``kept`` (the others zero)
    from its registered restriction, or ``None``."""
    r = FAST_RESTRICTIONS.get(model.info.fast_path or "")
    return None if r is None else r(model, kept)


def _supermarket_solve(model: Any, params: Mapping[str, Any], *, dps: int, M: Any) -> Any:
    from numeric.supermarket.solver import solve_model

    return solve_model(model, params, dps=dps, M=M)


def _supermarket_fixed_point(model: Any, params: Mapping[str, Any]) -> Any:
    from numeric.supermarket.solver import shooting_point64

    return shooting_point64(model, params)


def _supermarket_restrict(model: Any, kept: list[int]) -> Any:
    """The same member with buffer ``K`` when ``kept`` are the first ``K`` levels."""
    if not kept or kept != list(range(len(kept))):
        return None
    from derive.models.supermarket import with_buffer

    return with_buffer(model, len(kept))


register_fast_path(
    "supermarket",
    _supermarket_solve,
    fixed_point=_supermarket_fixed_point,
    restrict=_supermarket_restrict,
)
